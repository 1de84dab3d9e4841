//! What operator-controller's catalog resolver refuses after it has chosen a bundle
//! (`resolve/validation.go :: NoDependencyValidation`, the one `Validations` entry
//! `cmd/operator-controller/main.go` gives `CatalogResolver`): OLM v1 resolves no dependencies.

use crate::range::go_quote;

/// The property types that declare a dependency (`property.TypePackageRequired`,
/// `TypeGVKRequired`, `TypeConstraint`).
pub const DEPENDENCY_TYPES: [&str; 3] =
    ["olm.package.required", "olm.gvk.required", "olm.constraint"];

/// `NoDependencyValidation` on the bundle `name` with its properties' types, in order: the
/// first dependency property found is named, in upstream's words.
pub fn no_dependency<'a>(
    name: &str,
    types: impl IntoIterator<Item = &'a str>,
) -> Result<(), String> {
    match types.into_iter().find(|t| DEPENDENCY_TYPES.contains(t)) {
        Some(t) => Err(format!(
            "bundle {} has a dependency declared via property {} which is currently not supported",
            go_quote(name),
            go_quote(t)
        )),
        None => Ok(()),
    }
}

/// How `CatalogResolver.Resolve` reports a failed validation of the bundle it resolved
/// (`validating bundle %q: %w`).
pub fn resolve_error(name: &str, e: &str) -> String {
    format!("validating bundle {}: {e}", go_quote(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// operator-controller's `TestNoDependencyValidation` cases, names and messages as there.
    #[test]
    fn upstreams_cases() {
        assert_eq!(
            no_dependency(
                "fake-catalog/no-dependencies-package/alpha/1.0.0",
                ["olm.package"]
            ),
            Ok(())
        );
        for (test, t) in [
            ("package-required-test", "olm.package.required"),
            ("gvk-required-test", "olm.gvk.required"),
            ("constraint-test", "olm.constraint"),
        ] {
            let name = format!("fake-catalog/{test}/alpha/1.0.0");
            assert_eq!(
                no_dependency(&name, ["olm.package", t]),
                Err(format!(
                    "bundle \"{name}\" has a dependency declared via property \"{t}\" which is currently not supported"
                ))
            );
        }
        // The first dependency property is named.
        assert_eq!(
            no_dependency("b", ["olm.gvk.required", "olm.package.required"]).expect_err("refused"),
            "bundle \"b\" has a dependency declared via property \"olm.gvk.required\" which is currently not supported"
        );
        assert_eq!(resolve_error("b.v1", "x"), "validating bundle \"b.v1\": x");
    }
}
