//! Kubernetes object names as the API server validates them, and as client-go puts them in a
//! request's path: a name olmctl writes into a manifest, a comment or a URL is checked here
//! first, so that no input (a flag, a bundle's annotation, a CSV) can leave its place.
//!
//! The rules and their messages are apimachinery's (`k8s.io/apimachinery/pkg/util/validation/
//! validation.go :: IsDNS1123Label, IsDNS1123Subdomain, IsQualifiedName, IsValidLabelValue,
//! MaxLenError, RegexError`; `pkg/api/validation/path/name.go :: IsValidPathSegmentName`), and which rule
//! a kind's names follow is its strategy's (`ValidateObjectMeta` with `NameIsDNSSubdomain` for
//! most kinds and every custom resource, `ValidateNamespaceName` = `IsDNS1123Label`,
//! `ValidateRBACName` = `IsValidPathSegmentName`).

use std::fmt;

pub mod object;

/// `DNS1123LabelMaxLength`.
pub const LABEL_MAX: usize = 63;
/// `DNS1123SubdomainMaxLength`.
pub const SUBDOMAIN_MAX: usize = 253;
/// `LabelValueMaxLength`.
pub const LABEL_VALUE_MAX: usize = 63;

const LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
/// `qualifiedNameMaxLength`.
pub const QUALIFIED_NAME_MAX: usize = 63;
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// Which of the API server's rules a name follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// `IsDNS1123Label`: Namespaces (and so every namespace a flag names).
    Label,
    /// `IsDNS1123Subdomain`: most kinds (ServiceAccounts, CSVs, Subscriptions, CatalogSources,
    /// ClusterExtensions, ClusterCatalogs, CRDs, every custom resource).
    Subdomain,
    /// `IsValidPathSegmentName`: RBAC's Roles, ClusterRoles and bindings.
    PathSegment,
    /// `IsValidLabelValue`: a label's value.
    LabelValue,
    /// `IsQualifiedName`: a label key, and (lower-cased, as `ValidateAnnotations` checks it)
    /// an annotation key: an optional DNS subdomain prefix and `/`, then a name of at most 63
    /// alphanumerics, `-`, `_` or `.`, starting and ending with an alphanumeric.
    QualifiedName,
}

/// `RegexError`: the message, the examples, and the expression.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut m = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            m.push_str(" or ");
        }
        m.push_str(&format!("'{e}', "));
    }
    m.push_str(&format!("regex used for validation is '{fmt}')"));
    m
}

/// `MaxLenError`.
fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// Whether `s` matches `[a-z0-9]([-a-z0-9]*[a-z0-9])?` whole.
fn is_label_form(s: &str) -> bool {
    let b = s.as_bytes();
    let inner = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-';
    !b.is_empty() && b.iter().all(|&c| inner(c)) && b[0] != b'-' && b[b.len() - 1] != b'-'
}

/// Whether `s` matches the subdomain expression whole (labels joined by dots).
fn is_subdomain_form(s: &str) -> bool {
    s.split('.').all(is_label_form)
}

/// Whether `s` matches `(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?` whole.
fn is_label_value_form(s: &str) -> bool {
    let b = s.as_bytes();
    let inner = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.');
    b.is_empty()
        || (b.iter().all(|&c| inner(c))
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric())
}

/// The API server's messages for `value` under `rule`; empty when it is valid.
pub fn problems(rule: Rule, value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    match rule {
        Rule::Label => {
            if value.len() > LABEL_MAX {
                errs.push(max_len_error(LABEL_MAX));
            }
            if !is_label_form(value) {
                if is_subdomain_form(value) {
                    // A valid subdomain and not a label: the length was checked, so dots.
                    errs.push("must not contain dots".to_string());
                } else {
                    errs.push(regex_error(LABEL_MSG, LABEL_FMT, &["my-name", "123-abc"]));
                }
            }
        }
        Rule::Subdomain => {
            if value.len() > SUBDOMAIN_MAX {
                errs.push(max_len_error(SUBDOMAIN_MAX));
            }
            if !is_subdomain_form(value) {
                errs.push(regex_error(
                    SUBDOMAIN_MSG,
                    &format!("{LABEL_FMT}(\\.{LABEL_FMT})*"),
                    &["example.com"],
                ));
            }
        }
        Rule::PathSegment => {
            for bad in [".", ".."] {
                if value == bad {
                    return vec![format!("may not be '{bad}'")];
                }
            }
            for bad in ["/", "%"] {
                if value.contains(bad) {
                    errs.push(format!("may not contain '{bad}'"));
                }
            }
        }
        Rule::QualifiedName => {
            let parts: Vec<&str> = value.split('/').collect();
            let name = match parts[..] {
                [name] => name,
                [prefix, name] => {
                    if prefix.is_empty() {
                        errs.push("prefix part must be non-empty".to_string());
                    } else {
                        errs.extend(
                            problems(Rule::Subdomain, prefix)
                                .into_iter()
                                .map(|m| format!("prefix part {m}")),
                        );
                    }
                    name
                }
                _ => {
                    return vec![format!(
                        "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                        regex_error(
                            QUALIFIED_NAME_MSG,
                            QUALIFIED_NAME_FMT,
                            &["MyName", "my.name", "123-abc"]
                        )
                    )];
                }
            };
            if name.is_empty() {
                errs.push("name part must be non-empty".to_string());
            } else if name.len() > QUALIFIED_NAME_MAX {
                errs.push(format!("name part {}", max_len_error(QUALIFIED_NAME_MAX)));
            }
            if !is_label_value_form(name) || name.is_empty() {
                errs.push(format!(
                    "name part {}",
                    regex_error(
                        QUALIFIED_NAME_MSG,
                        QUALIFIED_NAME_FMT,
                        &["MyName", "my.name", "123-abc"]
                    )
                ));
            }
        }
        Rule::LabelValue => {
            if value.len() > LABEL_VALUE_MAX {
                errs.push(max_len_error(LABEL_VALUE_MAX));
            }
            if !is_label_value_form(value) {
                errs.push(regex_error(
                    LABEL_VALUE_MSG,
                    LABEL_VALUE_FMT,
                    &["MyValue", "my_value", "12345"],
                ));
            }
        }
    }
    errs
}

/// A name the API server would refuse: what it names, the value, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidName {
    /// What the value is (`--namespace`, `the package name in metadata/annotations.yaml`).
    pub what: String,
    /// The value as given.
    pub value: String,
    /// The API server's messages.
    pub problems: Vec<String>,
}

impl fmt::Display for InvalidName {
    /// `WHAT "VALUE": problem; problem`, the value quoted as Go's `%q` quotes it (so a
    /// newline or an escape sequence in it is shown as `\n`, `\x1b`, never sent raw).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: ", self.what, crate::range::go_quote(&self.value))?;
        if self.value.is_empty() && self.problems.is_empty() {
            return f.write_str("may not be empty");
        }
        f.write_str(&self.problems.join("; "))
    }
}

impl std::error::Error for InvalidName {}

/// `value` if it is valid under `rule` (and not empty), else why not.
pub fn check(rule: Rule, what: impl Into<String>, value: &str) -> Result<(), InvalidName> {
    let problems = problems(rule, value);
    if problems.is_empty() && !value.is_empty() {
        return Ok(());
    }
    Err(InvalidName {
        what: what.into(),
        value: value.to_string(),
        problems,
    })
}

/// A name as a segment of a request's path, as client-go writes it: refused unless it is a
/// valid path segment name (`rest.Request.Name` and `Namespace`: `invalid resource name %q:
/// %v`), then escaped as `url.URL.EscapedPath` escapes a path (`shouldEscape` in
/// `encodePath` mode: every byte but letters, digits, `-._~` and `$&+,/:;=@` as `%XX`).
pub fn path_segment(what: &str, value: &str) -> Result<String, InvalidName> {
    if value.is_empty() {
        return Err(InvalidName {
            what: what.to_string(),
            value: String::new(),
            problems: Vec::new(),
        });
    }
    let problems = problems(Rule::PathSegment, value);
    if !problems.is_empty() {
        return Err(InvalidName {
            what: what.to_string(),
            value: value.to_string(),
            problems,
        });
    }
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~$&+,/:;=@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotation_keys_follow_is_qualified_name() {
        for ok in [
            "com.redhat.openshift.versions",
            "operators.operatorframework.io/builder",
            "MyName",
            "a",
            "example.com/My_Name-1.x",
        ] {
            assert!(problems(Rule::QualifiedName, ok).is_empty(), "{ok}");
        }
        assert_eq!(
            problems(Rule::QualifiedName, "/x"),
            ["prefix part must be non-empty"]
        );
        assert_eq!(
            problems(Rule::QualifiedName, "Example.com/x")[0],
            format!(
                "prefix part {}",
                problems(Rule::Subdomain, "Example.com")[0]
            )
        );
        let e = problems(Rule::QualifiedName, "a/b/c");
        assert!(
            e.len() == 1 && e[0].starts_with("a qualified name must consist of"),
            "{e:?}"
        );
        assert_eq!(problems(Rule::QualifiedName, "x/").len(), 2);
        assert_eq!(problems(Rule::QualifiedName, "-x").len(), 1);
        assert_eq!(problems(Rule::QualifiedName, "a b").len(), 1);
        let e = problems(Rule::QualifiedName, &"a".repeat(64));
        assert_eq!(e, ["name part must be no more than 63 characters"]);
    }

    #[test]
    fn labels_follow_is_dns1123_label() {
        assert!(problems(Rule::Label, "operators").is_empty());
        assert!(problems(Rule::Label, "123-abc").is_empty());
        assert_eq!(problems(Rule::Label, "a.b"), ["must not contain dots"]);
        assert_eq!(
            problems(Rule::Label, "../x"),
            [
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        let long = "a".repeat(64);
        assert_eq!(
            problems(Rule::Label, &long),
            ["must be no more than 63 characters"]
        );
        assert!(problems(Rule::Label, &long[..63]).is_empty());
        assert_eq!(problems(Rule::Label, "").len(), 1);
    }

    #[test]
    fn subdomains_follow_is_dns1123_subdomain() {
        for ok in ["a", "a.b-c.0", "cert-manager.io"] {
            assert!(problems(Rule::Subdomain, ok).is_empty(), "{ok}");
        }
        for bad in [
            "",
            "A",
            "-a",
            "a-",
            "a..b",
            ".a",
            "a_b",
            "a\n---\nkind: X",
            "é",
        ] {
            let p = problems(Rule::Subdomain, bad);
            assert_eq!(p.len(), 1, "{bad:?}");
            assert!(p[0].ends_with("regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"), "{}", p[0]);
            assert!(p[0].contains("(e.g. 'example.com', regex"), "{}", p[0]);
        }
        let p = problems(Rule::Subdomain, &"a".repeat(254));
        assert_eq!(p, ["must be no more than 253 characters"]);
    }

    #[test]
    fn path_segments_and_label_values() {
        assert_eq!(problems(Rule::PathSegment, ".."), ["may not be '..'"]);
        assert_eq!(problems(Rule::PathSegment, "."), ["may not be '.'"]);
        assert_eq!(
            problems(Rule::PathSegment, "a/%b"),
            ["may not contain '/'", "may not contain '%'"]
        );
        assert!(problems(Rule::PathSegment, "system:kube-scheduler").is_empty());
        assert!(problems(Rule::LabelValue, "").is_empty());
        assert!(problems(Rule::LabelValue, "My_value.1").is_empty());
        assert_eq!(problems(Rule::LabelValue, "-a").len(), 1);
        assert_eq!(problems(Rule::LabelValue, &"a".repeat(64)).len(), 1);
    }

    #[test]
    fn errors_quote_the_value_as_go_does() {
        let e = check(Rule::Label, "--namespace", "a\u{1b}]0;x\u{7}\n").unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("--namespace \"a\\x1b]0;x\\a\\n\": a lowercase RFC 1123 label"),
            "{text}"
        );
        assert!(!text.chars().any(crate::text::needs_escape), "{text:?}");
        let e = check(Rule::Subdomain, "--service-account", "").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--service-account \"\": a lowercase RFC 1123 subdomain")
        );
        assert!(check(Rule::Subdomain, "x", "ok.name").is_ok());
    }

    #[test]
    fn path_segments_are_refused_or_escaped_as_client_go_does() {
        assert_eq!(
            path_segment("name", "cert-manager.io").unwrap(),
            "cert-manager.io"
        );
        assert_eq!(path_segment("name", "a?b=c#d").unwrap(), "a%3Fb=c%23d");
        assert_eq!(path_segment("name", "a b\u{e9}").unwrap(), "a%20b%C3%A9");
        let e = path_segment("resource name", "../../api/v1/secrets/x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "resource name \"../../api/v1/secrets/x\": may not contain '/'"
        );
        assert_eq!(
            path_segment("resource name", "..").unwrap_err().to_string(),
            "resource name \"..\": may not be '..'"
        );
        assert!(path_segment("resource name", "").is_err());
    }
}
