//! A reply's body streamed from `catalog.jsonl`: bytes and sections read from the file a chunk
//! at a time (adjacent sections read as one), gzip-compressed on the way when asked.
//! Memory per response is one chunk (and the compressor's state).

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write as _;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use flate2::write::GzEncoder;
use http_body::{Body, Frame, SizeHint};

use super::index::Section;
use super::store::read_at;

/// Bytes read from the file at once.
pub const CHUNK: u64 = 32 << 10;

/// A piece of a body: bytes, or a section of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Sent as they are.
    Text(Vec<u8>),
    /// Read from the file.
    File(Section),
}

enum Queued {
    Text(Bytes),
    File(Section),
}

/// The body of one reply.
pub struct Payload {
    file: Arc<File>,
    pieces: VecDeque<Queued>,
    gzip: Option<GzEncoder<Vec<u8>>>,
    /// Bytes still to send when not compressed.
    remaining: u64,
}

impl Payload {
    /// `pieces` in order (adjacent sections of `file` read as one); compressed with gzip when
    /// `gzip`.
    pub fn new(file: Arc<File>, pieces: Vec<Piece>, gzip: bool) -> Self {
        let mut queued: VecDeque<Queued> = VecDeque::new();
        let mut remaining = 0;
        for p in pieces {
            match p {
                Piece::Text(t) if !t.is_empty() => {
                    remaining += t.len() as u64;
                    queued.push_back(Queued::Text(Bytes::from(t)));
                }
                Piece::File(s) if s.length > 0 => {
                    remaining += s.length;
                    match queued.back_mut() {
                        Some(Queued::File(last)) if last.offset + last.length == s.offset => {
                            last.length += s.length
                        }
                        _ => queued.push_back(Queued::File(s)),
                    }
                }
                _ => {}
            }
        }
        Payload {
            file,
            pieces: queued,
            gzip: gzip.then(|| GzEncoder::new(Vec::new(), flate2::Compression::default())),
            remaining,
        }
    }

    /// The next bytes to send before compression, `None` at the end.
    fn next_plain(&mut self) -> Option<std::io::Result<Bytes>> {
        let s = match self.pieces.front_mut()? {
            Queued::Text(_) => {
                let Some(Queued::Text(t)) = self.pieces.pop_front() else {
                    return None;
                };
                return Some(Ok(t));
            }
            Queued::File(s) => s,
        };
        let n = s.length.min(CHUNK);
        let mut buf = vec![0; n as usize];
        let got = match read_at(&self.file, s.offset, &mut buf) {
            Ok(got) => got,
            Err(e) => return Some(Err(e)),
        };
        if got as u64 != n {
            return Some(Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "catalog.jsonl is shorter than its index",
            )));
        }
        s.offset += n;
        s.length -= n;
        if s.length == 0 {
            self.pieces.pop_front();
        }
        Some(Ok(Bytes::from(buf)))
    }

    /// The next data to send, `None` at the end.
    fn next_data(&mut self) -> Option<std::io::Result<Bytes>> {
        loop {
            let plain = self.next_plain();
            let Some(gz) = self.gzip.as_mut() else {
                if let Some(Ok(b)) = &plain {
                    self.remaining -= b.len() as u64;
                }
                return plain;
            };
            match plain {
                Some(Ok(b)) => {
                    if let Err(e) = gz.write_all(&b) {
                        return Some(Err(e));
                    }
                    let out = std::mem::take(gz.get_mut());
                    if !out.is_empty() {
                        return Some(Ok(Bytes::from(out)));
                    }
                }
                Some(Err(e)) => return Some(Err(e)),
                None => {
                    let gz = self.gzip.take()?;
                    return match gz.finish() {
                        Ok(out) => Some(Ok(Bytes::from(out))),
                        Err(e) => Some(Err(e)),
                    };
                }
            }
        }
    }
}

impl Body for Payload {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        // Reads from a regular file: the page cache answers, as Go's handlers read it too.
        let this = self.get_mut();
        Poll::Ready(this.next_data().map(|r| r.map(Frame::data)))
    }

    fn is_end_stream(&self) -> bool {
        self.pieces.is_empty() && self.gzip.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        if self.gzip.is_some() {
            SizeHint::default()
        } else {
            SizeHint::with_exact(self.remaining)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read as _;

    fn collect(mut p: Payload) -> Vec<u8> {
        let mut out = Vec::new();
        while let Some(d) = p.next_data() {
            out.extend_from_slice(&d.unwrap());
        }
        out
    }

    fn file(bytes: &[u8]) -> Arc<File> {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(bytes).unwrap();
        Arc::new(f)
    }

    #[test]
    fn sections_are_sent_in_order_and_compressed_on_request() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let f = file(&data);
        let secs = [
            Section {
                offset: 10,
                length: 5,
            },
            Section {
                offset: 15,
                length: 200_000,
            },
            Section {
                offset: 250_000,
                length: 3,
            },
        ];
        let mut want = b"head".to_vec();
        want.extend_from_slice(&data[10..200_015]);
        want.extend_from_slice(&data[250_000..250_003]);
        let pieces = |secs: &[Section]| {
            let mut v = vec![Piece::Text(b"head".to_vec())];
            v.extend(secs.iter().map(|s| Piece::File(*s)));
            v
        };
        let p = Payload::new(f.clone(), pieces(&secs), false);
        assert_eq!(p.size_hint().exact(), Some(want.len() as u64));
        assert_eq!(collect(p), want);
        let gz = collect(Payload::new(f, pieces(&secs), true));
        let mut got = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut got)
            .unwrap();
        assert_eq!(got, want);
    }

    #[test]
    fn a_file_shorter_than_its_index_is_an_error() {
        let mut p = Payload::new(
            file(b"abc"),
            vec![Piece::File(Section {
                offset: 1,
                length: 5,
            })],
            false,
        );
        assert!(p.next_data().unwrap().is_err());
    }
}
