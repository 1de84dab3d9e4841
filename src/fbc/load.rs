//! Loading a catalog tree: walk it as opm does (every regular file, `.indexignore` honoured per
//! directory), parse files in parallel, and decode blobs. Unlike opm, a broken file does not stop
//! the load: every syntax and decoding problem of every file is collected with its position.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::ParseError;
use super::decl::{BlobIssue, DeclarativeConfig, decode_blob};
use super::{json, yaml};

/// Stack size of parser threads and of the CLI's worker thread: nested values are walked
/// recursively (JSON encoding, sorting, emitting) and may nest `json::MAX_DEPTH` levels deep.
pub const PARSER_STACK: usize = 256 << 20;

/// The name of opm's per-directory ignore file.
pub const INDEX_IGNORE: &str = ".indexignore";

/// A problem found while loading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadProblem {
    /// The file is not valid YAML/JSON (opm aborts the whole load).
    Syntax {
        /// The file.
        file: Arc<Path>,
        /// Where and what.
        error: ParseError,
    },
    /// A blob's envelope or fields are unusable or suspicious.
    Blob {
        /// The file.
        file: Arc<Path>,
        /// What.
        issue: BlobIssue,
    },
}

/// An I/O failure: the catalog cannot be read at all.
#[derive(Debug)]
pub struct LoadError {
    /// The path that failed.
    pub path: PathBuf,
    /// Why.
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for LoadError {}

/// The result of loading one or more trees.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Every blob, files in sorted path order, blobs in file order.
    pub cfg: DeclarativeConfig,
    /// Problems, in the same order.
    pub problems: Vec<LoadProblem>,
    /// How many files were parsed.
    pub files: usize,
}

/// Lists the files of a catalog tree the way opm's `WalkMetasFS` sees them, sorted by path.
/// A plain file given as `root` is returned as is.
pub fn list_files(root: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let meta = std::fs::metadata(root).map_err(|e| LoadError {
        path: root.to_path_buf(),
        message: e.to_string(),
    })?;
    if meta.is_file() {
        return Ok(vec![root.to_path_buf()]);
    }
    if !meta.is_dir() {
        // A FIFO or device (process substitution, /dev/stdin): refused rather than passed as
        // an empty catalog.
        return Err(LoadError {
            path: root.to_path_buf(),
            message: format!(
                "is {}, not a catalog directory or file (save the content to a file and name that)",
                crate::input::kind_of(meta.file_type())
            ),
        });
    }
    // A linked file is read only when it resolves inside the catalog (see
    // [`crate::input::tree`]); directories are walked without following links.
    let tree = crate::input::tree::Tree::new(root).map_err(|e| LoadError {
        path: root.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut files = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .add_custom_ignore_filename(INDEX_IGNORE)
        .build();
    for entry in walker {
        let entry = entry.map_err(|e| LoadError {
            path: root.to_path_buf(),
            message: e.to_string(),
        })?;
        let is_link = entry.file_type().is_some_and(|t| t.is_symlink());
        let is_file =
            entry.file_type().is_some_and(|t| t.is_file()) || is_link && entry.path().is_file();
        if is_file && entry.file_name() != INDEX_IGNORE {
            if is_link {
                tree.check(entry.path()).map_err(|e| LoadError {
                    path: entry.path().to_path_buf(),
                    message: e.to_string(),
                })?;
            }
            files.push(entry.into_path());
        }
    }
    files.sort();
    Ok(files)
}

/// A catalog from FBC blobs (one JSON document each), parsed as a file is parsed; the blobs
/// must be valid. For tests.
#[cfg(test)]
pub(crate) fn from_blobs(blobs: &[serde_json::Value]) -> DeclarativeConfig {
    let text: Vec<String> = blobs.iter().map(serde_json::Value::to_string).collect();
    let mut cfg = DeclarativeConfig::default();
    let problems = parse_text(&text.join("\n"), &Arc::from(Path::new("c.json")), &mut cfg);
    assert!(problems.is_empty(), "{problems:?}");
    cfg
}

/// Parses the text of one file into `cfg`, appending problems.
pub fn parse_text(text: &str, file: &Arc<Path>, cfg: &mut DeclarativeConfig) -> Vec<LoadProblem> {
    let mut blob_problems = Vec::new();
    let on_doc = |node| decode_blob(node, file, cfg, &mut blob_problems);
    let res = parse_blobs(text, on_doc);
    let mut problems: Vec<LoadProblem> = blob_problems
        .into_iter()
        .map(|(file, issue)| LoadProblem::Blob { file, issue })
        .collect();
    if let Err(error) = res {
        problems.push(LoadProblem::Syntax {
            file: file.clone(),
            error,
        });
    }
    problems
}

/// Parses the documents of one catalog file as opm's `YAMLOrJSONDecoder` reads it: a JSON
/// stream when the first non-blank character is `{`, else YAML; `on_doc` gets each blob in file
/// order. Stops at the first syntax error.
pub fn parse_blobs(
    text: &str,
    mut on_doc: impl FnMut(super::node::Node),
) -> Result<(), ParseError> {
    let first = text.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '\u{feff}');
    if first.starts_with('{') {
        json::parse_object_stream(text, &mut on_doc)
    } else {
        yaml::parse_objects(text, &mut on_doc)
    }
}

fn parse_file(path: &Path) -> Result<(DeclarativeConfig, Vec<LoadProblem>), LoadError> {
    // A huge file whose first document is a list is read only in part: the list ends it.
    let bytes = crate::input::read_objects(path)
        .map_err(|e| LoadError {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?
        .bytes;
    let file: Arc<Path> = Arc::from(path);
    let mut cfg = DeclarativeConfig::default();
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let (line, col) =
                crate::input::utf8_error_pos(e.as_bytes(), e.utf8_error().valid_up_to());
            let problem = LoadProblem::Syntax {
                file,
                error: ParseError {
                    line,
                    column: col,
                    message: "file is not UTF-8 text (add binary files to .indexignore)".into(),
                },
            };
            return Ok((cfg, vec![problem]));
        }
    };
    let problems = parse_text(&text, &file, &mut cfg);
    Ok((cfg, problems))
}

/// Loads the catalog below `roots`, the error saying what could not be read (as every command
/// reports it).
pub fn load_catalog(roots: &[PathBuf]) -> Result<Loaded, String> {
    load(roots).map_err(|e| format!("cannot read catalog: {e}"))
}

impl Loaded {
    /// `N files, N packages, N channels, N bundles`: what a report on the catalog covered.
    pub fn summary(&self) -> String {
        format!(
            "{} files, {} packages, {} channels, {} bundles",
            self.files,
            self.cfg.packages.len(),
            self.cfg.channels.len(),
            self.cfg.bundles.len()
        )
    }
}

/// Loads every tree in `roots` (composition concatenates them, as opm does), parsing files on
/// all cores.
pub fn load(roots: &[PathBuf]) -> Result<Loaded, LoadError> {
    let mut files = Vec::new();
    for r in roots {
        files.extend(list_files(r)?);
    }
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(files.len().max(1));
    let next = AtomicUsize::new(0);
    type Slot = Option<Result<(DeclarativeConfig, Vec<LoadProblem>), LoadError>>;
    let mut results: Vec<Slot> = Vec::new();
    results.resize_with(files.len(), || None);
    let chunks: Vec<Vec<(usize, Slot)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                // Large stacks: values nest up to MAX_DEPTH levels and later passes recurse.
                std::thread::Builder::new()
                    .stack_size(PARSER_STACK)
                    .spawn_scoped(s, || {
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i >= files.len() {
                                break;
                            }
                            mine.push((i, Some(parse_file(&files[i]))));
                        }
                        mine
                    })
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| LoadError {
                path: PathBuf::new(),
                message: format!("cannot start parser threads: {e}"),
            })?;
        Ok::<_, LoadError>(
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_default())
                .collect(),
        )
    })?;
    for chunk in chunks {
        for (i, r) in chunk {
            results[i] = r;
        }
    }
    let mut loaded = Loaded {
        files: files.len(),
        ..Loaded::default()
    };
    for (i, r) in results.into_iter().enumerate() {
        let (cfg, problems) = r.unwrap_or_else(|| {
            Err(LoadError {
                path: files[i].clone(),
                message: "file was not parsed (a parser thread failed)".into(),
            })
        })?;
        loaded.cfg.merge(cfg);
        loaded.problems.extend(problems);
    }
    Ok(loaded)
}
