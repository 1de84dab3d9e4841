//! OCI images without a daemon: deterministic layers, bundle and catalog images, registry
//! push and pull, OCI image layouts and safe extraction.
//!
//! Layering follows the domain: [`layer`] and [`image`] build content, [`registry`] and
//! [`layout`] move it, [`extract`] unpacks it, [`bundle_image`] and [`catalog_image`] know
//! what OLM expects inside.

pub mod append;
pub mod auth;
pub mod binary_image;
pub mod bundle_cache;
pub mod bundle_image;
pub mod catalog_image;
pub mod deliver;
pub mod digest;
pub mod events;
pub mod extract;
pub mod image;
pub mod layer;
pub mod layout;
pub mod layout_read;
pub mod media;
pub mod net;
pub mod platforms;
pub mod pull;
pub mod registry;
pub mod transport;
