//! registry+v1 bundles: reading bundle directories, rendering them into FBC.

pub mod csv_types;
pub mod gotype;
pub mod load;
pub mod render;
