//! The catalog model: the declarative config grouped by package, with the channel rules OLM
//! applies (heads, the replaces chain). Mirrors operator-registry's `alpha/model` layer; the
//! FBC checks (`checks::fbc`, a layer above) report what violates it. The grouping itself,
//! [`Index`], belongs to the format layer ([`crate::fbc::index`]), as opm's `declcfg` groups by
//! package when it writes.

pub mod chain;

pub use crate::fbc::index::{Index, PackageView};
