//! Bundle size (BND015, BND016): OLM v0 unpacks a bundle into one ConfigMap, which etcd bounds
//! at about 1 MiB. As operator-framework/api (`manifests/bundleloader.go`, `bundle.go`) computes
//! it, the size is the sum over every file below the bundle directory of the length of the
//! base64 text of the gzipped file (gzip at the default level, as Go's `gzip.NewWriter`).

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::write::GzEncoder;

use super::Ctx;
use super::codes::UNREADABLE;
use crate::diag::Severity::{Error, Warning};
use crate::fbc::node::Pos;

codes! {
    TOO_LARGE = "BND015", Error, "The bundle is larger than 1 MiB compressed (gzip + base64, as OLM stores it); OLM v0 cannot unpack it.";
    NEARLY_TOO_LARGE = "BND016", Warning, "The bundle is over 85% of the 1 MiB compressed size limit.";
}

/// The limit: `max_bundle_size` of operator-framework/api.
pub const MAX_BUNDLE_SIZE: u64 = 1 << 20;

/// Counts the bytes written to it.
struct Counter(u64);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One file's sizes: raw bytes and base64(gzip) length. Opened as every input is (a regular
/// file within the size limit, never blocking: [`crate::input::open_limited`]).
fn file_sizes(path: &Path) -> io::Result<(u64, u64)> {
    let mut f = crate::input::open_limited(path)?;
    let mut gz = GzEncoder::new(Counter(0), Compression::default());
    let mut buf = vec![0u8; 64 << 10];
    let mut raw = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        raw += n as u64;
        gz.write_all(&buf[..n])?;
    }
    let gzipped = gz.finish()?.0;
    Ok((raw, gzipped.div_ceil(3) * 4))
}

/// Every regular file below `dir` (symlinks to files followed, to directories not, as Go's
/// `fs.WalkDir`) with its length. Unreadable entries are skipped (BND001 reports manifests).
fn walk(dir: &Path, out: &mut Vec<(PathBuf, u64)>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() {
            walk(&p, out);
        } else if let Ok(m) = std::fs::metadata(&p)
            && m.is_file()
        {
            out.push((p, m.len()));
        }
    }
}

/// An upper bound of base64(gzip(file)) for a file of `raw` bytes: deflate never needs more
/// than 9 bits a byte plus block headers, gzip adds 18 bytes, base64 4/3.
fn packed_bound(raw: u64) -> u64 {
    (raw + raw / 4 + 1024) / 3 * 4 + 4
}

/// A byte count in 1000-based units, as operator-framework/api's `formatBytesInUnit`.
pub fn format_bytes(b: u64) -> String {
    const UNIT: u64 = 1000;
    if b < UNIT {
        return format!("{b} B");
    }
    let (mut div, mut exp) = (UNIT, 0);
    let mut n = b / UNIT;
    while n >= UNIT {
        div *= UNIT;
        exp += 1;
        n /= UNIT;
    }
    let unit = b"kMGTPE"[exp] as char;
    format!("{:.1} {unit}B", b as f64 / div as f64)
}

pub(super) fn check(cx: &mut Ctx<'_>) {
    let dir = cx.bundle.dir.clone();
    let mut listed = Vec::new();
    walk(&dir, &mut listed);
    // Most bundles are far too small to matter: skip compressing them.
    let bound: u64 = listed.iter().map(|f| packed_bound(f.1)).sum();
    if bound as f64 <= MAX_BUNDLE_SIZE as f64 * 0.85 {
        return;
    }
    let mut files: Vec<(PathBuf, u64, u64)> = Vec::new();
    for (p, _) in listed {
        match file_sizes(&p) {
            Ok((raw, packed)) => files.push((p, raw, packed)),
            // A file the loader could not read is reported once, by the loader's BND001.
            Err(_) if cx.bundle.problems.iter().any(|x| x.path == p) => {}
            Err(e) => {
                cx.push(
                    &UNREADABLE,
                    format!("cannot read it to compute the bundle's size: {e}"),
                    &p,
                    Pos::default(),
                    None,
                );
            }
        }
    }
    let raw: u64 = files.iter().map(|f| f.1).sum();
    let packed: u64 = files.iter().map(|f| f.2).sum();
    let (code, what) = if packed > MAX_BUNDLE_SIZE {
        (
            &TOO_LARGE,
            "maximum bundle compressed size with gzip size exceeded",
        )
    } else if packed as f64 > MAX_BUNDLE_SIZE as f64 * 0.85 {
        (
            &NEARLY_TOO_LARGE,
            "nearing maximum bundle compressed size with gzip",
        )
    } else {
        return;
    };
    files.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    let largest: Vec<String> = files
        .iter()
        .take(3)
        .map(|(p, _, s)| {
            format!(
                "{} ({})",
                p.strip_prefix(&dir).unwrap_or(p).display(),
                format_bytes(*s)
            )
        })
        .collect();
    cx.push(
        code,
        format!(
            "{what}: size=~{} , max={}. Bundle uncompressed size is {}",
            format_bytes(packed),
            format_bytes(MAX_BUNDLE_SIZE),
            format_bytes(raw)
        ),
        &dir,
        Pos::default(),
        None,
    )
    .help = Some(format!(
        "OLM v0 keeps the unpacked bundle in one ConfigMap (etcd's ~1 MiB object limit); shrink the largest files (compressed: {}), e.g. trim CRD schema descriptions, and move anything not needed at install time out of the bundle",
        largest.join(", ")
    ));
}
