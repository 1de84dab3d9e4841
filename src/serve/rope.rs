//! Text held as shared pieces. The served catalog keeps each bundle's CSV and manifests as a
//! [`Rope`] whose long pieces (a package icon, a description, `alm-examples`, a CRD that does
//! not change between versions) are interned: every bundle of a package points at one copy of
//! its icon instead of carrying its own.

use std::collections::HashSet;
use std::sync::Arc;

/// A string as a sequence of shared pieces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rope(Arc<[Arc<str>]>);

impl Rope {
    /// The pieces, in order.
    pub fn pieces(&self) -> &[Arc<str>] {
        &self.0
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.0.iter().map(|p| p.len()).sum()
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|p| p.is_empty())
    }

    /// The text in one piece, from one interned piece.
    pub fn whole(text: &str, interner: &mut Interner) -> Rope {
        Rope(Arc::from(vec![interner.intern(text)]))
    }
}

impl std::fmt::Display for Rope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for p in self.0.iter() {
            f.write_str(p)?;
        }
        Ok(())
    }
}

/// Equal pieces, one allocation.
#[derive(Debug, Default)]
pub struct Interner(HashSet<Arc<str>>);

impl Interner {
    /// The shared copy of `s`.
    pub fn intern(&mut self, s: &str) -> Arc<str> {
        if let Some(p) = self.0.get(s) {
            return p.clone();
        }
        let p: Arc<str> = Arc::from(s);
        self.0.insert(p.clone());
        p
    }
}

/// Builds a [`Rope`]: short text accumulates into one piece, a long piece is interned on its
/// own.
pub struct RopeWriter<'a> {
    interner: &'a mut Interner,
    pieces: Vec<Arc<str>>,
    current: String,
}

/// Pieces at least this long are interned on their own.
pub const SHARED_PIECE: usize = 256;

impl<'a> RopeWriter<'a> {
    /// An empty writer.
    pub fn new(interner: &'a mut Interner) -> Self {
        RopeWriter {
            interner,
            pieces: Vec::new(),
            current: String::new(),
        }
    }

    /// Appends text.
    pub fn push_str(&mut self, s: &str) {
        if s.len() >= SHARED_PIECE {
            self.flush();
            self.pieces.push(self.interner.intern(s));
        } else {
            self.current.push_str(s);
        }
    }

    /// Appends a piece that is already shared (no lookup).
    pub fn push_shared(&mut self, piece: Arc<str>) {
        self.flush();
        self.pieces.push(piece);
    }

    fn flush(&mut self) {
        if !self.current.is_empty() {
            let p = self.interner.intern(&self.current);
            self.pieces.push(p);
            self.current.clear();
        }
    }

    /// The rope.
    pub fn finish(mut self) -> Rope {
        self.flush();
        Rope(Arc::from(self.pieces))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_pieces_are_shared_and_the_text_is_kept() {
        let mut i = Interner::default();
        let long = "x".repeat(SHARED_PIECE);
        let build = |i: &mut Interner, name: &str| {
            let mut w = RopeWriter::new(i);
            w.push_str("{\"name\":");
            w.push_str(name);
            w.push_str(",\"icon\":");
            w.push_str(&long);
            w.push_str("}");
            w.finish()
        };
        let a = build(&mut i, "\"a\"");
        let b = build(&mut i, "\"b\"");
        assert_eq!(a.to_string(), format!("{{\"name\":\"a\",\"icon\":{long}}}"));
        assert_eq!(a.len(), a.to_string().len());
        assert_eq!(a.pieces().len(), 3);
        assert!(Arc::ptr_eq(&a.pieces()[1], &b.pieces()[1]));
        assert!(!Arc::ptr_eq(&a.pieces()[0], &b.pieces()[0]));
        assert!(Rope::default().is_empty());
    }
}
