//! File-Based Catalogs: the on-disk format (parsing, typed blobs, loading, writing).
//!
//! Layering follows operator-registry: this module is the declarative-config layer (what the
//! files say, with positions); `crate::model` builds the validated model on top of it.

pub mod decl;
pub mod decode;
pub mod dockerfile;
pub mod emit_yaml;
pub mod index;
pub mod json;
pub mod layout;
pub mod lines;
pub mod load;
pub mod node;
pub mod property;
pub mod write;
pub mod yaml;

use std::fmt;

use node::Pos;

/// A syntax error inside one file, with a 1-based position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line (0 when unknown).
    pub line: u32,
    /// 1-based column (0 when unknown).
    pub column: u32,
    /// What is wrong.
    pub message: String,
}

impl ParseError {
    /// An error at `pos`.
    pub fn at(pos: Pos, message: impl Into<String>) -> Self {
        ParseError {
            line: pos.line,
            column: pos.col,
            message: message.into(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for ParseError {}
