//! Kubernetes APIs removed in 1.16 to 1.32 (API codes).

#[allow(unused_imports)]
use super::Ctx;
use crate::diag::Severity::{Error, Warning};

codes! {
    PLACEHOLDER_API = "API001", Error, "placeholder";
}

pub(super) fn check(_cx: &mut Ctx<'_>) {}
