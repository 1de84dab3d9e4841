//! Decoding positioned nodes into typed structs with Go `encoding/json` semantics, which is how
//! opm reads FBC blobs: keys match struct fields case-insensitively, unknown keys are dropped,
//! `null` leaves a field unset, and a type mismatch fails the load (here: a recorded problem, and
//! decoding goes on so that every problem in a file is reported in one run).

use super::node::{Entry, Node, Pos, Value};

/// Something the decoder noticed about one key or value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Issue {
    /// A value has the wrong JSON type (opm fails to load the catalog).
    Type {
        /// Dotted path of the field, e.g. `entries[2].replaces`.
        path: String,
        /// What the field needs, e.g. "a string".
        expected: &'static str,
        /// What it got.
        found: &'static str,
        /// Where the value is.
        pos: Pos,
    },
    /// A key that matches no field: opm silently drops it.
    Unknown {
        /// Dotted path of the key.
        path: String,
        /// The closest known field name, if one is close.
        suggestion: Option<&'static str>,
        /// Where the key is.
        pos: Pos,
    },
    /// A key that matches a field only case-insensitively (opm accepts it).
    Miscased {
        /// Dotted path of the key as written.
        path: String,
        /// The field's canonical name.
        canonical: &'static str,
        /// Where the key is.
        pos: Pos,
    },
    /// A value that is well-typed but unusable (e.g. invalid base64 in `icon.base64data`).
    Invalid {
        /// Dotted path of the field.
        path: String,
        /// What is wrong.
        message: String,
        /// Where the value is.
        pos: Pos,
    },
}

/// Reads the fields of one JSON object node.
pub struct Obj<'a> {
    entries: &'a [Entry],
    prefix: String,
}

/// Go's case folding for field names (ASCII letters plus the Kelvin sign and long s, which Go's
/// `foldName` also folds; field names here are ASCII so plain lowercase equality suffices).
fn fold_eq(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.eq_ignore_ascii_case(b)
        || a.chars()
            .flat_map(char::to_lowercase)
            .eq(b.chars().flat_map(char::to_lowercase))
}

impl<'a> Obj<'a> {
    /// Views `node` as an object. Returns `None` (and records a type issue) when it is not one;
    /// `null` yields `None` without an issue.
    pub fn new(node: &'a Node, path: &str, issues: &mut Vec<Issue>) -> Option<Obj<'a>> {
        match &node.value {
            Value::Map(entries) => Some(Obj {
                entries,
                prefix: path.to_string(),
            }),
            Value::Null => None,
            _ => {
                issues.push(Issue::Type {
                    path: path.to_string(),
                    expected: "an object",
                    found: node.kind(),
                    pos: node.pos,
                });
                None
            }
        }
    }

    fn path(&self, key: &str) -> String {
        if self.prefix.is_empty() {
            key.to_string()
        } else {
            format!("{}.{}", self.prefix, key)
        }
    }

    /// The value of field `name`, as opm ends up reading it. Go's decoder maps each key to a
    /// field (by exact name, else case-insensitively) and a later key overwrites an earlier one
    /// (encoding/json `decodeState.object`); but opm decodes a blob only after it went through a
    /// `map[string]interface{}` and back (declcfg `Meta.UnmarshalJSON`; YAML goes through one in
    /// sigs.k8s.io/yaml too), which sorts the keys and keeps the last of identical ones. So the
    /// key that folds to `name` and sorts last wins (`defaultchannel` over `defaultChannel`).
    pub fn get(&self, name: &str) -> Option<&'a Entry> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| fold_eq(&e.key, name))
            .max_by(|(i, a), (j, b)| a.key.cmp(&b.key).then(i.cmp(j)))
            .map(|(_, e)| e)
    }

    /// A string field. `null` and absence give `None`; another type records an issue.
    pub fn string(&self, name: &str, issues: &mut Vec<Issue>) -> Option<(String, Pos)> {
        let e = self.get(name)?;
        match &e.value.value {
            Value::Str(s) => Some((s.clone(), e.value.pos)),
            Value::Null => None,
            _ => {
                issues.push(Issue::Type {
                    path: self.path(name),
                    expected: "a string",
                    found: e.value.kind(),
                    pos: e.value.pos,
                });
                None
            }
        }
    }

    /// A list field. `null` and absence give an empty slice; another type records an issue.
    pub fn list(&self, name: &str, issues: &mut Vec<Issue>) -> &'a [Node] {
        let Some(e) = self.get(name) else { return &[] };
        match &e.value.value {
            Value::Seq(items) => items,
            Value::Null => &[],
            _ => {
                issues.push(Issue::Type {
                    path: self.path(name),
                    expected: "a list",
                    found: e.value.kind(),
                    pos: e.value.pos,
                });
                &[]
            }
        }
    }

    /// A list of strings (each non-string item records an issue and is skipped).
    pub fn strings(&self, name: &str, issues: &mut Vec<Issue>) -> Vec<(String, Pos)> {
        let items = self.list(name, issues);
        let mut out = Vec::with_capacity(items.len());
        for (i, it) in items.iter().enumerate() {
            match &it.value {
                Value::Str(s) => out.push((s.clone(), it.pos)),
                // Go decodes null into a string slot as "".
                Value::Null => out.push((String::new(), it.pos)),
                _ => issues.push(Issue::Type {
                    path: format!("{}[{i}]", self.path(name)),
                    expected: "a string",
                    found: it.kind(),
                    pos: it.pos,
                }),
            }
        }
        out
    }

    /// Records unknown and mis-cased keys against the struct's field list.
    pub fn check_keys(&self, fields: &[&'static str], issues: &mut Vec<Issue>) {
        for e in self.entries {
            if fields.contains(&e.key.as_str()) {
                continue;
            }
            if let Some(f) = fields.iter().find(|f| fold_eq(f, &e.key)) {
                issues.push(Issue::Miscased {
                    path: self.path(&e.key),
                    canonical: f,
                    pos: e.key_pos,
                });
            } else {
                issues.push(Issue::Unknown {
                    path: self.path(&e.key),
                    suggestion: suggest(&e.key, fields),
                    pos: e.key_pos,
                });
            }
        }
    }
}

/// The closest field name to `key` by edit distance, if it is close enough to be a typo.
pub fn suggest(key: &str, fields: &[&'static str]) -> Option<&'static str> {
    let k = key.to_ascii_lowercase();
    fields
        .iter()
        .map(|f| (crate::text::edit_distance(&k, &f.to_ascii_lowercase()), *f))
        .filter(|(d, f)| *d <= 2.max(f.len() / 4) && *d < f.len())
        .min()
        .map(|(_, f)| f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fbc::yaml::parse_documents;

    fn doc(text: &str) -> Node {
        let mut v = Vec::new();
        parse_documents(text, |n| v.push(n)).expect("valid yaml");
        v.remove(0)
    }

    /// The key that sorts last among those folding to the field, as opm reads the blob after
    /// its map round trip.
    #[test]
    fn the_folded_key_that_sorts_last_wins() {
        let mut issues = Vec::new();
        for (text, want) in [
            ("defaultChannel: a\ndefaultchannel: b\n", "b"),
            ("defaultchannel: b\ndefaultChannel: a\n", "b"),
            ("defaultChannel: a\nDefaultChannel: b\n", "a"),
            ("defaultChannel: a\ndefaultChannel: c\n", "c"),
        ] {
            let n = doc(text);
            let o = Obj::new(&n, "", &mut issues).expect("object");
            assert_eq!(
                o.string("defaultChannel", &mut issues).map(|x| x.0),
                Some(want.into()),
                "{text}"
            );
        }
    }

    #[test]
    fn fields_match_case_insensitively_and_miscased_keys_are_reported() {
        let n = doc("DefaultChannel: a\ndefaultChannel: b\nDEFAULTCHANNEL: c\n");
        let mut issues = Vec::new();
        let o = Obj::new(&n, "", &mut issues).expect("object");
        assert_eq!(
            o.string("defaultChannel", &mut issues).map(|x| x.0),
            Some("b".into())
        );
        o.check_keys(&["defaultChannel"], &mut issues);
        let miscased = issues
            .iter()
            .filter(|i| matches!(i, Issue::Miscased { .. }))
            .count();
        assert_eq!(miscased, 2);
    }

    #[test]
    fn unknown_keys_get_suggestions() {
        let n = doc("name: a\nreplace: b\nskip_range: c\nfoo: d\n");
        let mut issues = Vec::new();
        let o = Obj::new(&n, "entries[0]", &mut issues).expect("object");
        o.check_keys(&["name", "replaces", "skips", "skipRange"], &mut issues);
        let got: Vec<(String, Option<&str>)> = issues
            .iter()
            .filter_map(|i| match i {
                Issue::Unknown {
                    path, suggestion, ..
                } => Some((path.clone(), *suggestion)),
                _ => None,
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("entries[0].replace".to_string(), Some("replaces")),
                ("entries[0].skip_range".to_string(), Some("skipRange")),
                ("entries[0].foo".to_string(), None),
            ]
        );
    }

    #[test]
    fn type_mismatch_is_recorded_with_position() {
        let n = doc("name: 12\nskips: x\n");
        let mut issues = Vec::new();
        let o = Obj::new(&n, "", &mut issues).expect("object");
        assert_eq!(o.string("name", &mut issues), None);
        assert!(o.strings("skips", &mut issues).is_empty());
        assert_eq!(
            issues,
            vec![
                Issue::Type {
                    path: "name".into(),
                    expected: "a string",
                    found: "a number",
                    pos: Pos::new(1, 7)
                },
                Issue::Type {
                    path: "skips".into(),
                    expected: "a list",
                    found: "a string",
                    pos: Pos::new(2, 8)
                },
            ]
        );
    }

    #[test]
    fn null_means_unset() {
        let n = doc("name: ~\nskips: null\n");
        let mut issues = Vec::new();
        let o = Obj::new(&n, "", &mut issues).expect("object");
        assert_eq!(o.string("name", &mut issues), None);
        assert!(o.strings("skips", &mut issues).is_empty());
        assert!(issues.is_empty());
    }
}
