//! Walking JSON text without building it: the members of an object and the elements of an
//! array are handed over one at a time as their own text (`serde_json::value::RawValue`,
//! borrowed from the input, so nothing is copied or kept), answers are written into a buffer
//! with a fixed bound, and the nesting depth of a text is found by one scan. What the
//! conversion webhook reads and answers a ConversionReview with, so that a review is never held
//! as a tree (a `serde_json::Value` is 16 to 50 times the size of `[]` or `0,` it is read from).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer as _, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// What a callback returns; its error is kept as it is (no position is added).
pub type Step = Result<(), String>;

/// A member name: borrowed from the text unless it has escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

/// Hands each member or element to its callback; a callback's error stops the walk and is kept
/// in `failed` (serde's error would carry a position instead of the message).
struct Walk<'f, F> {
    f: &'f mut F,
    failed: &'f mut Option<String>,
}

impl<'a, F: FnMut(&str, &'a RawValue) -> Step> Visitor<'a> for Walk<'_, F> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'a>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(k) = map.next_key::<Key<'a>>()? {
            let v: &'a RawValue = map.next_value()?;
            if let Err(e) = (self.f)(&k.0, v) {
                *self.failed = Some(e);
                return Err(de::Error::custom("stopped"));
            }
        }
        Ok(())
    }
}

struct Elements<'f, F> {
    f: &'f mut F,
    failed: &'f mut Option<String>,
}

impl<'a, F: FnMut(&'a RawValue) -> Step> Visitor<'a> for Elements<'_, F> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'a>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(v) = seq.next_element::<&'a RawValue>()? {
            if let Err(e) = (self.f)(v) {
                *self.failed = Some(e);
                return Err(de::Error::custom("stopped"));
            }
        }
        Ok(())
    }
}

fn opens(raw: &RawValue, bracket: char) -> bool {
    raw.get().trim_start().starts_with(bracket)
}

/// Whether `raw` is an object.
pub fn is_object(raw: &RawValue) -> bool {
    opens(raw, '{')
}

/// Whether `raw` is an array.
pub fn is_array(raw: &RawValue) -> bool {
    opens(raw, '[')
}

fn finish(r: Result<(), serde_json::Error>, failed: Option<String>) -> Result<bool, String> {
    match (failed, r) {
        (Some(e), _) => Err(e),
        (None, Err(e)) => Err(e.to_string()),
        (None, Ok(())) => Ok(true),
    }
}

/// Calls `f` with each member of the object `raw`, in order (a repeated name each time);
/// `Ok(false)` when `raw` is not an object. The first error `f` returns stops the walk and is
/// returned.
pub fn members<'a>(
    raw: &'a RawValue,
    mut f: impl FnMut(&str, &'a RawValue) -> Step,
) -> Result<bool, String> {
    if !is_object(raw) {
        return Ok(false);
    }
    let mut failed = None;
    let r = serde_json::Deserializer::from_str(raw.get()).deserialize_map(Walk {
        f: &mut f,
        failed: &mut failed,
    });
    finish(r, failed)
}

/// Calls `f` with each element of the array `raw`, in order; `Ok(false)` when `raw` is not an
/// array. The first error `f` returns stops the walk and is returned.
pub fn elements<'a>(
    raw: &'a RawValue,
    mut f: impl FnMut(&'a RawValue) -> Step,
) -> Result<bool, String> {
    if !is_array(raw) {
        return Ok(false);
    }
    let mut failed = None;
    let r = serde_json::Deserializer::from_str(raw.get()).deserialize_seq(Elements {
        f: &mut f,
        failed: &mut failed,
    });
    finish(r, failed)
}

/// The string member `name` of the object `raw` (the last one when repeated), `None` when it
/// is missing, not a string, or `raw` is not an object.
pub fn string_member(raw: &RawValue, name: &str) -> Option<String> {
    let mut found = None;
    let _ = members(raw, |k, v| {
        if k == name {
            found = serde_json::from_str::<String>(v.get()).ok();
        }
        Ok(())
    });
    found
}

/// Whether the JSON text `s` nests arrays and objects more than `max` deep (strings are
/// skipped; the text is not otherwise checked).
pub fn deeper_than(s: &[u8], max: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in s {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// An answer being written, at most `cap` bytes.
#[derive(Debug)]
pub struct Out {
    buf: Vec<u8>,
    cap: usize,
}

impl Out {
    /// An empty answer of at most `cap` bytes, with room for `hint` of them.
    pub fn new(cap: usize, hint: usize) -> Out {
        Out {
            buf: Vec::with_capacity(hint.min(cap)),
            cap,
        }
    }

    /// Bytes written.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether nothing is written.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Appends `b`; an error (and nothing appended) when the answer would pass its bound.
    pub fn push(&mut self, b: &[u8]) -> Step {
        let len = self.buf.len() + b.len();
        if len > self.cap {
            return Err(format!("the answer would be more than {} bytes", self.cap));
        }
        if len > self.buf.capacity() {
            // Doubling, but never past the bound.
            let want = (self.buf.capacity() * 2).clamp(len, self.cap);
            self.buf.reserve_exact(want - self.buf.len());
        }
        self.buf.extend_from_slice(b);
        Ok(())
    }

    /// Appends `s` as a JSON string.
    pub fn push_str(&mut self, s: &str) -> Step {
        self.push_json(&s)
    }

    /// Appends `v` as JSON.
    pub fn push_json<T: serde::Serialize + ?Sized>(&mut self, v: &T) -> Step {
        let text = serde_json::to_vec(v).map_err(|e| e.to_string())?;
        self.push(&text)
    }

    /// Appends `b` past the bound (for the few bytes that close an answer).
    pub fn push_unbounded(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    /// The bytes written.
    pub fn into_inner(self) -> Vec<u8> {
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> &RawValue {
        serde_json::from_str(s).expect("json")
    }

    #[test]
    fn walks_members_and_elements_in_order() {
        let mut seen = Vec::new();
        let r = raw(r#" {"a": [1, 2], "b\u0041": {"c": null}, "a": "x"}"#);
        assert_eq!(
            members(r, |k, v| {
                seen.push(format!("{k}={}", v.get()));
                Ok(())
            }),
            Ok(true)
        );
        assert_eq!(seen, ["a=[1, 2]", r#"bA={"c": null}"#, r#"a="x""#]);
        assert_eq!(members(raw("[1]"), |_, _| Ok(())), Ok(false));
        assert_eq!(
            members(r, |k, _| if k == "bA" {
                Err("stop".into())
            } else {
                Ok(())
            }),
            Err("stop".to_string())
        );
        let mut n = 0;
        assert_eq!(
            elements(raw("[[], {}, 0]"), |_| {
                n += 1;
                Ok(())
            }),
            Ok(true)
        );
        assert_eq!(n, 3);
        assert_eq!(elements(raw(r#""[""#), |_| Ok(())), Ok(false));
        assert_eq!(string_member(r, "a").as_deref(), Some("x"));
        assert_eq!(string_member(r, "bA"), None);
    }

    #[test]
    fn finds_the_depth_outside_strings() {
        assert!(!deeper_than(br#"[[{"a": "[[[[["}]]"#, 3));
        assert!(deeper_than(br#"[[{"a": [[]]}]]"#, 4));
        assert!(!deeper_than(br#"["\"[[[[[[" ]"#, 1));
    }

    #[test]
    fn the_answer_stays_within_its_bound() {
        let mut out = Out::new(10, 2);
        out.push(b"12345").expect("fits");
        out.push_str("ab").expect("fits");
        assert!(out.push(b"xyz").is_err());
        assert_eq!(out.len(), 9);
        out.push_unbounded(b"...");
        assert_eq!(out.into_inner(), b"12345\"ab\"...");
    }
}
