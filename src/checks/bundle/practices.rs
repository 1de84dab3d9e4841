//! Good practices (GP codes).

#[allow(unused_imports)]
use super::Ctx;
use crate::diag::Severity::{Error, Warning};

codes! {
    PLACEHOLDER_GP = "GP001", Warning, "placeholder";
}

pub(super) fn check(_cx: &mut Ctx<'_>) {}
