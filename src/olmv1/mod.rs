//! OLM v1 (operator-controller and catalogd): what it does with a registry+v1 bundle.
//!
//! - [`render`]: the objects operator-controller applies for a bundle, or why it refuses it;
//! - [`dependencies`]: the dependency properties its catalog resolver refuses;
//! - [`validate`]: the bundle checks its renderer runs first;
//! - [`names`]: the names it gives generated objects (hashes as Go computes them);
//! - [`csv_type`], [`unstructured`]: the CSV read into upstream's Go types, as its bundle source
//!   reads it;
//! - [`gotype`], [`quantity`]: objects as upstream's Go types write them after reading them;
//! - [`config_schema`]: the validation of a ClusterExtension's `deploymentConfig` against the
//!   schema operator-controller holds for registry+v1 bundles.

pub mod config_schema;
pub mod csv_type;
pub mod dependencies;
pub mod deployment_config;
pub mod gotype;
pub mod names;
pub mod quantity;
pub mod render;
pub mod resolve;
pub mod unstructured;
pub mod validate;
