//! What OLM v0 finds only at install time and OLM v1 registry+v1 rules (OLM codes).

#[allow(unused_imports)]
use super::Ctx;
use crate::diag::Severity::{Error, Warning};

codes! {
    PLACEHOLDER_OLM = "OLM001", Error, "placeholder";
}

pub(super) fn check(_cx: &mut Ctx<'_>) {}
