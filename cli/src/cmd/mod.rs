//! One module per command group (`catalog` and `bundle` hold their subcommands modules).
//! No command module imports another: what several need is in the crate's shared modules.

pub mod bundle;
pub mod catalog;
pub mod check;
pub mod gate;
pub mod image;
pub mod install;
pub mod manage;
pub mod resolve;
pub mod shell;
pub mod status;
