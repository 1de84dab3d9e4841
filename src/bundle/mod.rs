//! registry+v1 bundles: reading bundle directories, rendering them into FBC, generating them
//! from plain manifests.

pub mod crd;
pub mod csv_types;
pub mod generate;
pub mod gotype;
pub mod load;
pub mod render;
pub mod tree;
