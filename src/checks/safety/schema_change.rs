//! What the CRD schema comparison ([`super::schema`]) reports, and the knobs it runs with:
//! the SCH codes, one [`Change`] per incompatible difference, and the [`Options`].

use crate::diag::Code;
use crate::diag::Severity::{Error, Warning};
use crate::fbc::node::Pos;

codes! {
    FIELD_REMOVED = "SCH001", Error, "A field of an existing CRD version was removed (crdify existingFieldRemoval): stored objects lose it, clients writing it are rejected or pruned.";
    DEFAULT = "SCH002", Error, "A default was added, changed or removed (crdify default): existing objects change meaning on the next write.";
    ENUM = "SCH003", Error, "An enum constraint was added to a field that had none, or allowed enum values were removed (crdify enum; adding values is allowed).";
    MAXIMUM = "SCH004", Error, "A maximum, maxItems, maxLength or maxProperties was added or lowered (crdify max*): existing values may no longer validate.";
    MINIMUM = "SCH005", Error, "A minimum, minItems, minLength or minProperties was added or raised (crdify min*): existing values may no longer validate.";
    REQUIRED = "SCH006", Error, "A field became required (crdify required): existing objects without it no longer validate.";
    TYPE = "SCH007", Error, "A field's type changed (crdify type).";
    PATTERN = "SCH008", Error, "A pattern was added, changed or removed (crdify pattern).";
    NULLABLE = "SCH009", Error, "nullable was added or removed (crdify nullable).";
    ONE_OF = "SCH010", Error, "A oneOf constraint was added or oneOf schemas were removed (crdify oneOf).";
    CEL = "SCH011", Error, "x-kubernetes-validations (CEL) rules were added or changed: existing objects may fail the new rules (crdify reports these as unhandled).";
    UNHANDLED = "SCH012", Error, "Any other schema change (crdify unhandled), shown as a field-level diff.";
    TOO_DEEP = "SCH013", Error, "A schema nests deeper than the comparison limit and differs below it: the change is not compared, so it is reported rather than passed.";
    PREFLIGHT_ONLY = "SCH014", Warning, "A change OLM v1's CRD preflight (crdify) refuses although it only loosens validation (a CEL rule or exclusiveMaximum/exclusiveMinimum removed, string to int-or-string, a field missing from a higher served version, a change inside additionalProperties reported on its parent, x-kubernetes-list-type between absent and atomic, its default): an error with --preflight olmv1.";
}

/// Knobs of the comparison (OLM v1's preflight settings are the defaults).
#[derive(Debug, Clone)]
pub struct Options {
    /// Adding enum values is allowed (OLM v1: `additionPolicy: Allow`).
    pub enum_additions_allowed: bool,
    /// Report removed fields (true for same-version comparisons; crdify's served-version
    /// validator does not run field removal between different versions, and compares a field
    /// missing from the higher version with an empty schema: SCH014).
    pub field_removal: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            enum_additions_allowed: true,
            field_removal: true,
        }
    }
}

/// One incompatible difference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The SCH code.
    pub code: &'static Code,
    /// The property path in crdify's form: `^` for the root, `^.spec.replicas`,
    /// `^.spec.containers[*].name` for array items, `^.spec.labels[*]` for
    /// additionalProperties values.
    pub path: String,
    /// What changed, worded like crdify (`default value changed: "a" -> "b"`,
    /// `allowed enum values removed: [x]`, `type changed : "string" -> "integer"`, ...).
    pub message: String,
    /// Where the change is in the new schema (the node of the property), or in the old one when
    /// the property is gone.
    pub pos: Pos,
}
