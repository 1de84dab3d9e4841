//! RBAC of a bundle: what its ServiceAccounts are granted ([`grants`], [`rights`]), the review
//! a cluster admin needs before installing or upgrading it ([`review`]), and the RBAC of the
//! ServiceAccount that installs it under OLM v1 up to operator-controller v1.10
//! ([`installer`]); all over Kubernetes' own rule semantics ([`rule`]).
//!
//! The objects come from a renderer (OLM v1's, `olmv1::render`, or [`v0`]'s reading of the
//! CSV as OLM v0 applies it); this module only reads them.

pub mod aggregate;
pub mod cover;
pub mod grants;
pub mod installer;
pub mod make;
pub mod review;
pub mod rights;
pub mod rule;
pub mod scope;
pub mod v0;
