//! OperatorHub metadata, capabilities and categories (HUB codes).

#[allow(unused_imports)]
use super::Ctx;
use crate::diag::Severity::{Error, Warning};

codes! {
    PLACEHOLDER_HUB = "HUB001", Error, "placeholder";
}

pub(super) fn check(_cx: &mut Ctx<'_>) {}
