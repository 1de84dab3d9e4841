//! CustomResourceDefinition rules (CRD codes).

#[allow(unused_imports)]
use super::Ctx;
use crate::diag::Severity::{Error, Warning};

codes! {
    PLACEHOLDER_CRD = "CRD001", Error, "placeholder";
}

pub(super) fn check(_cx: &mut Ctx<'_>) {}
