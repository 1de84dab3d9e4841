//! olmctl: package Kubernetes operators for OLM and manage their lifecycle.
//!
//! The library exposes functions and types only (no command line, no printing, no exit
//! statuses); the `olmctl` binary (`cli/`) is the command line over it.

// First: its `codes!` macro is used by the modules declared after it.
#[macro_use]
pub mod diag;

pub mod baseline;
pub mod build;
pub mod bundle;
pub mod catalog;
pub mod checks;
pub mod codeclimate;
pub mod codes;
pub mod diff;
pub mod encoding;
pub mod fbc;
pub mod gate;
pub mod github;
pub mod gojson;
pub mod gosort;
pub mod graph;
pub mod imageref;
pub mod input;
pub mod install;
pub mod linediff;
pub mod manage;
pub mod markdown;
pub mod model;
pub mod names;
pub mod oci;
pub mod olmv1;
pub mod openshift;
pub mod outdir;
pub mod range;
pub mod rbac;
pub mod resolve;
pub mod sarif;
pub mod serve;
pub mod status;
pub mod template;
pub mod text;
pub mod validate;
