//! Building and editing [`Node`] trees: what the generator needs to assemble a CSV from parsed
//! manifests. Built nodes have no position (line 0).

use crate::fbc::node::{Entry, Node, Pos, Value};

/// A string node.
pub fn s(text: &str) -> Node {
    Node::new(Pos::default(), Value::Str(text.to_string()))
}

/// A number node.
pub fn num(n: f64) -> Node {
    Node::new(Pos::default(), Value::Number(n))
}

/// A boolean node.
pub fn boolean(b: bool) -> Node {
    Node::new(Pos::default(), Value::Bool(b))
}

/// A list node.
pub fn seq(items: Vec<Node>) -> Node {
    Node::new(Pos::default(), Value::Seq(items))
}

/// An object node with `fields` in order.
pub fn obj(fields: Vec<(&str, Node)>) -> Node {
    crate::fbc::write::map(fields)
}

/// An empty object.
pub fn empty() -> Node {
    obj(Vec::new())
}

/// Whether the node is null, an empty string, list or object.
pub fn is_blank(n: &Node) -> bool {
    match &n.value {
        Value::Null => true,
        Value::Str(s) => s.is_empty(),
        Value::Seq(v) => v.is_empty(),
        Value::Map(v) => v.is_empty(),
        _ => false,
    }
}

/// The value of `key` in an object node (the last duplicate), mutably.
pub fn get_mut<'a>(n: &'a mut Node, key: &str) -> Option<&'a mut Node> {
    match &mut n.value {
        Value::Map(entries) => entries
            .iter_mut()
            .rev()
            .find(|e| e.key == key)
            .map(|e| &mut e.value),
        _ => None,
    }
}

/// The items of the list at `key` of an object node, mutably (none when absent or not a list).
pub fn items_mut<'a>(n: &'a mut Node, key: &str) -> std::slice::IterMut<'a, Node> {
    match get_mut(n, key).map(|v| &mut v.value) {
        Some(Value::Seq(items)) => items.iter_mut(),
        _ => [].iter_mut(),
    }
}

/// Sets `key` in an object node, replacing every previous occurrence in place (or appending).
/// A non-object node becomes an object first.
pub fn set(n: &mut Node, key: &str, value: Node) {
    if !matches!(n.value, Value::Map(_)) {
        n.value = Value::Map(Vec::new());
    }
    if let Value::Map(entries) = &mut n.value {
        if let Some(i) = entries.iter().position(|e| e.key == key) {
            entries[i].value = value;
            let mut j = i + 1;
            while j < entries.len() {
                if entries[j].key == key {
                    entries.remove(j);
                } else {
                    j += 1;
                }
            }
        } else {
            entries.push(Entry {
                key: key.to_string(),
                key_pos: Pos::default(),
                value,
            });
        }
    }
}

/// Removes `key` from an object node; returns the last value it had.
pub fn remove(n: &mut Node, key: &str) -> Option<Node> {
    match &mut n.value {
        Value::Map(entries) => {
            let mut last = None;
            entries.retain(|e| {
                if e.key == key {
                    last = Some(e.value.clone());
                    false
                } else {
                    true
                }
            });
            last
        }
        _ => None,
    }
}

/// The object at `path` below `n`, created (as empty objects) where missing or not an object.
pub fn ensure_obj<'a>(n: &'a mut Node, path: &[&str]) -> &'a mut Node {
    let mut cur = n;
    for k in path {
        let exists = matches!(get_mut(cur, k).map(|v| &v.value), Some(Value::Map(_)));
        if !exists {
            set(cur, k, empty());
        }
        cur = get_mut(cur, k).expect("just set");
    }
    cur
}

/// A copy of the node with every position cleared, so that trees built from different files
/// compare equal when their data does.
pub fn strip_pos(n: &Node) -> Node {
    let value = match &n.value {
        Value::Seq(items) => Value::Seq(items.iter().map(strip_pos).collect()),
        Value::Map(entries) => Value::Map(
            entries
                .iter()
                .map(|e| Entry {
                    key: e.key.clone(),
                    key_pos: Pos::default(),
                    value: strip_pos(&e.value),
                })
                .collect(),
        ),
        v => v.clone(),
    };
    Node::new(Pos::default(), value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_replaces_duplicates_and_appends() {
        let mut n = Node::new(
            Pos::default(),
            Value::Map(vec![
                Entry {
                    key: "a".into(),
                    key_pos: Pos::default(),
                    value: s("1"),
                },
                Entry {
                    key: "a".into(),
                    key_pos: Pos::default(),
                    value: s("2"),
                },
            ]),
        );
        set(&mut n, "a", s("3"));
        set(&mut n, "b", s("4"));
        assert_eq!(n.to_json(), r#"{"a":"3","b":"4"}"#);
        assert_eq!(
            remove(&mut n, "a").and_then(|v| v.as_str().map(String::from)),
            Some("3".into())
        );
        ensure_obj(&mut n, &["x", "y"]);
        assert_eq!(n.to_json(), r#"{"b":"4","x":{"y":{}}}"#);
        assert!(is_blank(&empty()));
    }
}
