//! A `multipart/byteranges` answer, streamed as Go streams it (`net/http` fs.go ::
//! serveContent: for several ranges a goroutine writes the parts with `mime/multipart`'s
//! writer into an `io.Pipe` as the client reads; `rangesMIMESize` counts their length first
//! with the same writer and a counting `io.Writer`).
//!
//! Here a part's header is made when it is its turn to be sent, from the ranges read again
//! from the `Range` header as sent, and the length is counted by writing every header to a
//! counter: what an answer holds does not grow with its number of ranges. (Made before
//! sending, every part header of a 60 KB header of 20,000 ranges held about 6.5 MB per
//! connection until the client read them.)

use std::fmt;

use bytes::Bytes;

use super::body::Piece;
use super::index::Section;
use super::precond::{ByteRange, RANGES_START, next_range};

/// The parts' `Content-Type`: the answer's own, which `handleV1All` sets before
/// `ServeContent` (`httpRange.mimeHeader`).
const PART_TYPE: &str = "application/jsonl";

/// A multipart answer: the `Range` header it answers and what the parts are made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Multipart {
    /// The `Range` header, as sent (accepted by `precond::scan_range`).
    header: Bytes,
    /// The content's size.
    size: u64,
    /// The boundary.
    boundary: String,
    /// The body's length.
    len: u64,
}

/// A `fmt::Write` that counts what is written (`rangesMIMESize`'s `countingWriter`).
struct Count(u64);

impl fmt::Write for Count {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0 += s.len() as u64;
        Ok(())
    }
}

/// `Writer.CreatePart`'s bytes for range `r` of `size`: the boundary (after a CRLF ending the
/// previous part unless `first`), the part's headers in sorted order, a blank line.
fn write_head(
    out: &mut impl fmt::Write,
    boundary: &str,
    first: bool,
    r: ByteRange,
    size: u64,
) -> fmt::Result {
    let sep = if first { "" } else { "\r\n" };
    write!(out, "{sep}--{boundary}\r\nContent-Range: ")?;
    r.write_content_range(out, size)?;
    write!(out, "\r\nContent-Type: {PART_TYPE}\r\n\r\n")
}

/// `Writer.Close`'s bytes.
fn write_close(out: &mut impl fmt::Write, boundary: &str) -> fmt::Result {
    write!(out, "\r\n--{boundary}--\r\n")
}

/// A boundary: 60 hex digits, from the ranges asked and the file's time and size. Go's is 30
/// random bytes in hex (`randomBoundary`); this one is 30 bytes of the SHA-256 of the `Range`
/// header, the time and the size, so that an answer is reproducible.
fn boundary(header: &[u8], modtime: i64, size: u64) -> String {
    let mut h = crate::oci::digest::Hasher::default();
    h.update(header);
    h.update(format!("\n{modtime}\n{size}").as_bytes());
    h.finish()
        .trim_start_matches("sha256:")
        .chars()
        .take(60)
        .collect()
}

impl Multipart {
    /// The answer to `header`, a `Range` header `scan_range` accepted (of two ranges or more),
    /// over `size` bytes modified at `modtime` (seconds).
    pub fn new(header: Bytes, size: u64, modtime: i64) -> Self {
        let boundary = boundary(&header, modtime, size);
        let mut count = Count(0);
        let (mut at, mut first) = (RANGES_START, true);
        while let Some(r) = next_range(&header, &mut at, size) {
            // Count does not fail.
            let _ = write_head(&mut count, &boundary, first, r, size);
            count.0 += r.length;
            first = false;
        }
        let _ = write_close(&mut count, &boundary);
        Multipart {
            header,
            size,
            boundary,
            len: count.0,
        }
    }

    /// The boundary, for `Content-Type: multipart/byteranges; boundary=`.
    pub fn boundary(&self) -> &str {
        &self.boundary
    }

    /// The body's length.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the body is empty (never: there is at least the closing boundary).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The body's pieces, each made when it is asked for.
    pub fn parts(self) -> Parts {
        Parts {
            multipart: self,
            at: RANGES_START,
            first: true,
            section: None,
            closed: false,
        }
    }
}

/// The pieces of a [`Multipart`] body in order: a part's header, its section of the file,
/// ..., the closing boundary.
#[derive(Debug)]
pub struct Parts {
    multipart: Multipart,
    /// Where the next range starts in the header.
    at: usize,
    /// No part sent yet.
    first: bool,
    /// The section of the part whose header was the last piece.
    section: Option<Section>,
    /// The closing boundary was the last piece.
    closed: bool,
}

impl Iterator for Parts {
    type Item = Piece;

    fn next(&mut self) -> Option<Piece> {
        if let Some(s) = self.section.take() {
            return Some(Piece::File(s));
        }
        if self.closed {
            return None;
        }
        let m = &self.multipart;
        let mut text = String::new();
        // Writing to a String does not fail.
        match next_range(&m.header, &mut self.at, m.size) {
            Some(r) => {
                let _ = write_head(&mut text, &m.boundary, self.first, r, m.size);
                self.first = false;
                self.section = Some(Section {
                    offset: r.start,
                    length: r.length,
                });
            }
            None => {
                let _ = write_close(&mut text, &m.boundary);
                self.closed = true;
            }
        }
        Some(Piece::Text(text.into_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_length_is_that_of_the_parts() {
        for header in ["bytes=0-1,5-", "bytes=-0,0-0", "bytes=1-2, ,9-,3-3,"] {
            let m = Multipart::new(Bytes::from(header), 9, 7);
            let len = m.len();
            let sent: u64 = m
                .parts()
                .map(|p| match p {
                    Piece::Text(t) => t.len() as u64,
                    Piece::File(s) => s.length,
                })
                .sum();
            assert_eq!(len, sent, "{header}");
        }
    }

    #[test]
    fn parts_are_made_one_at_a_time() {
        let m = Multipart::new(Bytes::from("bytes=0-1,-1"), 10, 0);
        let b = m.boundary().to_string();
        assert_eq!(b.len(), 60);
        let pieces: Vec<Piece> = m.parts().collect();
        let text = |s: String| Piece::Text(s.into_bytes());
        let file = |offset, length| Piece::File(Section { offset, length });
        assert_eq!(
            pieces,
            vec![
                text(format!(
                    "--{b}\r\nContent-Range: bytes 0-1/10\r\nContent-Type: application/jsonl\r\n\r\n"
                )),
                file(0, 2),
                text(format!(
                    "\r\n--{b}\r\nContent-Range: bytes 9-9/10\r\nContent-Type: application/jsonl\r\n\r\n"
                )),
                file(9, 1),
                text(format!("\r\n--{b}--\r\n")),
            ]
        );
    }
}
