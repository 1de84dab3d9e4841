//! A reply's body streamed from `catalog.jsonl`: bytes and sections read from the file a chunk
//! at a time (adjacent sections read as one, short pieces joined into one chunk),
//! gzip-compressed on the way when asked. The pieces are taken from their source one at a time
//! as they are sent (a multipart answer makes each when it is its turn), so memory per
//! response is one piece, one chunk and the compressor's state.

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
    Text(Vec<u8>),
    File(Section),
}

/// The body of one reply.
pub struct Payload {
    file: Arc<File>,
    /// Where the pieces come from.
    source: Box<dyn Iterator<Item = Piece> + Send>,
    /// The piece being sent.
    current: Option<Queued>,
    /// The piece after it, taken from the source to see whether its section follows on.
    ahead: Option<Piece>,
    gzip: Option<GzEncoder<Vec<u8>>>,
    /// Bytes still to take from the pieces (before compression).
    remaining: u64,
}

impl Payload {
    /// `pieces` in order (adjacent sections of `file` read as one), `len` bytes in all;
    /// compressed with gzip when `gzip`.
    pub fn new(
        file: Arc<File>,
        pieces: impl Iterator<Item = Piece> + Send + 'static,
        len: u64,
        gzip: bool,
    ) -> Self {
        Payload {
            file,
            source: Box::new(pieces),
            current: None,
            ahead: None,
            gzip: gzip.then(|| GzEncoder::new(Vec::new(), flate2::Compression::default())),
            remaining: len,
        }
    }

    /// The next piece that is not empty, `None` at the end.
    fn take(&mut self) -> Option<Piece> {
        loop {
            match self.ahead.take().or_else(|| self.source.next())? {
                Piece::Text(t) if t.is_empty() => {}
                Piece::File(s) if s.length == 0 => {}
                p => return Some(p),
            }
        }
    }

    /// Makes the next piece current (a section joined with the sections that follow on from
    /// it); false at the end.
    fn advance(&mut self) -> bool {
        if self.current.is_some() {
            return true;
        }
        self.current = match self.take() {
            None => return false,
            Some(Piece::Text(t)) => Some(Queued::Text(t)),
            Some(Piece::File(mut s)) => {
                loop {
                    match self.take() {
                        Some(Piece::File(n)) if s.offset + s.length == n.offset => {
                            s.length += n.length
                        }
                        other => {
                            self.ahead = other;
                            break;
                        }
                    }
                }
                Some(Queued::File(s))
            }
        };
        true
    }

    /// The next bytes to send before compression, `None` at the end: pieces joined up to
    /// [`CHUNK`] bytes (a multipart answer's parts are short: one write for many), a text
    /// longer than that alone.
    fn next_plain(&mut self) -> Option<std::io::Result<Bytes>> {
        let mut buf: Vec<u8> = Vec::new();
        while (buf.len() as u64) < CHUNK && self.advance() {
            match &mut self.current {
                Some(Queued::Text(t)) => {
                    if !buf.is_empty() && (buf.len() + t.len()) as u64 > CHUNK {
                        break;
                    }
                    if buf.is_empty() && t.len() as u64 >= CHUNK {
                        let t = std::mem::take(t);
                        self.current = None;
                        return Some(Ok(Bytes::from(t)));
                    }
                    buf.extend_from_slice(t);
                    self.current = None;
                }
                Some(Queued::File(s)) => {
                    let n = s.length.min(CHUNK - buf.len() as u64);
                    let at = buf.len();
                    buf.resize(at + n as usize, 0);
                    match read_at(&self.file, s.offset, &mut buf[at..]) {
                        Ok(got) if got as u64 == n => {}
                        Ok(_) => {
                            return Some(Err(std::io::Error::new(
                                std::io::ErrorKind::UnexpectedEof,
                                "catalog.jsonl is shorter than its index",
                            )));
                        }
                        Err(e) => return Some(Err(e)),
                    }
                    s.offset += n;
                    s.length -= n;
                    if s.length == 0 {
                        self.current = None;
                    }
                }
                None => break,
            }
        }
        (!buf.is_empty()).then(|| Ok(Bytes::from(buf)))
    }

    /// The next data to send, `None` at the end.
    #[cfg(test)]
    fn next_data(&mut self) -> Option<std::io::Result<Bytes>> {
        loop {
            match self.step() {
                Step::Yield => continue,
                Step::Data(d) => return Some(Ok(d)),
                Step::Failed(e) => return Some(Err(e)),
                Step::End => return None,
            }
        }
    }

    /// One step of the body: data, or the end; or, when compressing took
    /// [`COMPRESS_PER_POLL`] bytes without a byte coming out, a pause (the compressor holds
    /// them), so that one highly compressible answer cannot keep its thread from every other
    /// connection for the whole of its length.
    fn step(&mut self) -> Step {
        let mut fed: u64 = 0;
        loop {
            let plain = self.next_plain();
            if let Some(Ok(b)) = &plain {
                self.remaining = self.remaining.saturating_sub(b.len() as u64);
            }
            let Some(gz) = self.gzip.as_mut() else {
                return match plain {
                    Some(Ok(b)) => Step::Data(b),
                    Some(Err(e)) => Step::Failed(e),
                    None => Step::End,
                };
            };
            match plain {
                Some(Ok(b)) => {
                    if let Err(e) = gz.write_all(&b) {
                        return Step::Failed(e);
                    }
                    let out = std::mem::take(gz.get_mut());
                    if !out.is_empty() {
                        return Step::Data(Bytes::from(out));
                    }
                    fed += b.len() as u64;
                    if fed >= COMPRESS_PER_POLL {
                        return Step::Yield;
                    }
                }
                Some(Err(e)) => return Step::Failed(e),
                None => {
                    let Some(gz) = self.gzip.take() else {
                        return Step::End;
                    };
                    return match gz.finish() {
                        Ok(out) => Step::Data(Bytes::from(out)),
                        Err(e) => Step::Failed(e),
                    };
                }
            }
        }
    }
}

/// Bytes compressed in one poll at most before the body lets other connections run (the
/// task is woken at once and goes on where it stopped).
pub const COMPRESS_PER_POLL: u64 = 8 * CHUNK;

/// What [`Payload::step`] gives.
enum Step {
    Data(Bytes),
    Yield,
    Failed(std::io::Error),
    End,
}

impl Body for Payload {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        // Reads from a regular file: the page cache answers, as Go's handlers read it too.
        let this = self.get_mut();
        match this.step() {
            Step::Data(d) => Poll::Ready(Some(Ok(Frame::data(d)))),
            Step::Failed(e) => Poll::Ready(Some(Err(e))),
            Step::End => Poll::Ready(None),
            Step::Yield => {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0 && self.gzip.is_none()
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
        let len = want.len() as u64;
        let p = Payload::new(f.clone(), pieces(&secs).into_iter(), len, false);
        assert_eq!(p.size_hint().exact(), Some(len));
        assert_eq!(collect(p), want);
        let gz = collect(Payload::new(f, pieces(&secs).into_iter(), len, true));
        let mut got = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut got)
            .unwrap();
        assert_eq!(got, want);
    }

    #[test]
    fn compressing_pauses_instead_of_taking_the_whole_answer_in_one_poll() {
        // 16 MiB of zeros compress to almost nothing: before, the first poll compressed all of
        // it before a byte came out.
        let len = 16u64 << 20;
        let f = file(&vec![0u8; len as usize]);
        let piece = Piece::File(Section {
            offset: 0,
            length: len,
        });
        let mut p = Payload::new(f, std::iter::once(piece), len, true);
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut pending = 0;
        let mut out = Vec::new();
        loop {
            let taken = len - p.remaining;
            match Pin::new(&mut p).poll_frame(&mut cx) {
                Poll::Pending => pending += 1,
                Poll::Ready(Some(frame)) => {
                    out.extend_from_slice(&frame.unwrap().into_data().unwrap());
                }
                Poll::Ready(None) => break,
            }
            assert!(
                len - p.remaining - taken <= COMPRESS_PER_POLL,
                "one poll took too much"
            );
        }
        assert!(
            pending >= (len / COMPRESS_PER_POLL) as usize / 2,
            "{pending} pauses"
        );
        let mut got = Vec::new();
        flate2::read::GzDecoder::new(&out[..])
            .read_to_end(&mut got)
            .unwrap();
        assert_eq!(got.len() as u64, len);
        assert!(got.iter().all(|b| *b == 0));
    }

    #[test]
    fn short_pieces_are_joined_into_chunks() {
        let data: Vec<u8> = (0..=255u8).collect();
        let f = file(&data);
        // 20,000 parts of a 6-byte text and a byte of the file, then a text longer than a
        // chunk, sent as it is.
        let mut pieces = Vec::new();
        let mut want = Vec::new();
        for i in 0..20_000u64 {
            pieces.push(Piece::Text(b"part: ".to_vec()));
            pieces.push(Piece::File(Section {
                offset: i % 256,
                length: 1,
            }));
            want.extend_from_slice(b"part: ");
            want.push((i % 256) as u8);
        }
        let long = vec![b'x'; CHUNK as usize + 1];
        pieces.push(Piece::Text(long.clone()));
        want.extend_from_slice(&long);
        let mut p = Payload::new(f, pieces.into_iter(), want.len() as u64, false);
        let mut frames = Vec::new();
        while let Some(d) = p.next_data() {
            frames.push(d.unwrap());
        }
        assert_eq!(frames.concat(), want);
        let sizes: Vec<usize> = frames.iter().map(|f| f.len()).collect();
        assert_eq!(
            sizes.len(),
            140_000usize.div_ceil(CHUNK as usize) + 1,
            "{sizes:?}"
        );
        assert!(
            sizes[..sizes.len() - 2]
                .iter()
                .all(|&n| n <= CHUNK as usize && n + 6 >= CHUNK as usize),
            "{sizes:?}"
        );
        assert_eq!(sizes.last(), Some(&long.len()));
    }

    #[test]
    fn a_file_shorter_than_its_index_is_an_error() {
        let mut p = Payload::new(
            file(b"abc"),
            std::iter::once(Piece::File(Section {
                offset: 1,
                length: 5,
            })),
            5,
            false,
        );
        assert!(p.next_data().unwrap().is_err());
    }
}
