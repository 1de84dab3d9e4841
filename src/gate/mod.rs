//! The upgrade gate (issue 16): the decision whether an OLM InstallPlan may be approved, shared
//! by `olmctl gate evaluate` and the operator. This module grows piece by piece; each piece is a
//! pure function of its inputs (no clock, no cluster), so both callers and the tests agree.

mod budget;
pub mod catalogs;
pub mod convert;
pub mod crds;
pub mod decide;
pub mod dependency;
pub mod extension;
mod fixture;
pub mod jump;
pub mod manifests;
pub mod objects;
pub mod policy;
mod rawjson;
pub mod review;
pub mod successors;
pub mod testing;
pub mod window;
