//! Variable names: OLM's `Identifier` (`pkg/controller/registry/resolver/solver/variable.go`).

use std::fmt;

/// `Identifier`: names one variable among the input of one solve.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Identifier(String);

impl Identifier {
    /// The identifier's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Identifier {
    fn from(s: &str) -> Identifier {
        Identifier(s.to_string())
    }
}

impl From<String> for Identifier {
    fn from(s: String) -> Identifier {
        Identifier(s)
    }
}

impl fmt::Display for Identifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
