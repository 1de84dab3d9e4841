//! catalogd's metas index (`internal/catalogd/storage/index.go :: index`): the byte section of
//! every blob of `catalog.jsonl`, listed by its `schema`, `package` and `name` (only non-empty
//! values are indexed, `newIndex`), a query the intersection of the lists its non-empty
//! parameters name (`getSectionSet`), answered in file order (`Get` sorts by offset).
//!
//! Blobs are numbered in file order and every list is built in that order, so the lists are
//! sorted and an intersection keeps the order without sorting.

use std::collections::HashMap;

use super::meta::MetaKeys;

/// A blob's bytes in `catalog.jsonl` (its JSON and the newline after it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    /// Where it starts.
    pub offset: u64,
    /// How long it is.
    pub length: u64,
}

/// The index of one catalog.
#[derive(Debug, Default)]
pub struct Index {
    sections: Vec<Section>,
    /// Blobs with a non-empty schema: what a query without `schema` starts from
    /// (`getSectionSet` takes the union of `BySchema`).
    with_schema: Vec<u32>,
    by_schema: HashMap<Box<str>, Vec<u32>>,
    by_package: HashMap<Box<str>, Vec<u32>>,
    by_name: HashMap<Box<str>, Vec<u32>>,
}

impl Index {
    /// Appends the next blob of the file, `length` bytes long (`newIndex`).
    pub fn add(&mut self, length: u64, keys: &MetaKeys) {
        let offset = self.sections.last().map_or(0, |s| s.offset + s.length);
        let id = self.sections.len() as u32;
        self.sections.push(Section { offset, length });
        let put = |map: &mut HashMap<Box<str>, Vec<u32>>, v: &str| {
            if !v.is_empty() {
                map.entry(v.into()).or_default().push(id);
            }
        };
        put(&mut self.by_schema, &keys.schema);
        put(&mut self.by_package, &keys.package);
        put(&mut self.by_name, &keys.name);
        if !keys.schema.is_empty() {
            self.with_schema.push(id);
        }
    }

    /// How many blobs.
    pub fn len(&self) -> usize {
        self.sections.len()
    }

    /// Whether there are no blobs.
    pub fn is_empty(&self) -> bool {
        self.sections.is_empty()
    }

    /// The bytes of all blobs.
    pub fn total(&self) -> u64 {
        self.sections.last().map_or(0, |s| s.offset + s.length)
    }

    /// The sections matching every non-empty parameter, in file order (`index.Get`). A value
    /// that is not UTF-8 matches nothing (every indexed value is).
    pub fn get(&self, schema: &[u8], package: &[u8], name: &[u8]) -> Vec<Section> {
        let look = |map: &'_ HashMap<Box<str>, Vec<u32>>, v: &[u8]| -> Option<Vec<u32>> {
            if v.is_empty() {
                return None;
            }
            let found = std::str::from_utf8(v)
                .ok()
                .and_then(|v| map.get(v))
                .cloned()
                .unwrap_or_default();
            Some(found)
        };
        let mut set = look(&self.by_schema, schema).unwrap_or_else(|| self.with_schema.clone());
        for other in [look(&self.by_package, package), look(&self.by_name, name)]
            .into_iter()
            .flatten()
        {
            set = intersect(&set, &other);
        }
        set.into_iter()
            .map(|id| self.sections[id as usize])
            .collect()
    }
}

/// The common ids of two ascending lists, ascending.
fn intersect(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    small
        .iter()
        .copied()
        .filter(|x| large.binary_search(x).is_ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(schema: &str, package: &str, name: &str) -> MetaKeys {
        MetaKeys {
            schema: schema.into(),
            package: package.into(),
            name: name.into(),
        }
    }

    /// Blobs 0..: a package, its channel, two bundles, a schema-less blob, another package's
    /// bundle with the same bundle name.
    fn sample() -> Index {
        let mut i = Index::default();
        for (len, k) in [
            (10, keys("olm.package", "", "p")),
            (20, keys("olm.channel", "p", "stable")),
            (30, keys("olm.bundle", "p", "p.v1")),
            (40, keys("olm.bundle", "p", "p.v2")),
            (5, keys("", "p", "p.v1")),
            (50, keys("olm.bundle", "q", "p.v1")),
        ] {
            i.add(len, &k);
        }
        i
    }

    fn offsets(s: Vec<Section>) -> Vec<u64> {
        s.into_iter().map(|s| s.offset).collect()
    }

    #[test]
    fn sections_follow_each_other_in_file_order() {
        let i = sample();
        assert_eq!(i.len(), 6);
        assert_eq!(i.total(), 155);
        assert_eq!(
            i.get(b"olm.bundle", b"", b""),
            vec![
                Section {
                    offset: 30,
                    length: 30
                },
                Section {
                    offset: 60,
                    length: 40
                },
                Section {
                    offset: 105,
                    length: 50
                }
            ]
        );
    }

    #[test]
    fn parameters_intersect() {
        let i = sample();
        // package=p: the channel and bundles that name it, not the olm.package blob (which has
        // no package key) and not the schema-less blob (a query starts from the schemas).
        assert_eq!(offsets(i.get(b"", b"p", b"")), vec![10, 30, 60]);
        assert_eq!(offsets(i.get(b"olm.package", b"", b"p")), vec![0]);
        assert_eq!(offsets(i.get(b"", b"", b"p.v1")), vec![30, 105]);
        assert_eq!(offsets(i.get(b"olm.bundle", b"p", b"p.v1")), vec![30]);
        assert_eq!(offsets(i.get(b"olm.bundle", b"q", b"")), vec![105]);
        assert!(i.get(b"olm.channel", b"q", b"").is_empty());
        assert!(i.get(b"nope", b"", b"").is_empty());
        // Exact and case-sensitive.
        assert!(i.get(b"OLM.bundle", b"", b"").is_empty());
        assert!(i.get(b"", b"P", b"").is_empty());
        // Not UTF-8: nothing.
        assert!(i.get(b"", b"\xff", b"").is_empty());
        // No parameter: every blob with a schema.
        assert_eq!(offsets(i.get(b"", b"", b"")), vec![0, 10, 30, 60, 105]);
    }

    #[test]
    fn empty_values_are_not_indexed() {
        let mut i = Index::default();
        i.add(3, &keys("", "", ""));
        i.add(4, &keys("s", "", ""));
        assert_eq!(offsets(i.get(b"", b"", b"")), vec![3]);
        assert!(i.by_package.is_empty() && i.by_name.is_empty());
        assert_eq!(i.by_schema.len(), 1);
    }
}
