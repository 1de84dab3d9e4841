//! The semver template (`olm.semver`, operator-registry `alpha/template/semver`): bundles listed
//! under `candidate`, `fast` and `stable`; channels (`<archetype>-v<X>` and/or
//! `<archetype>-v<X>.<Y>`), their edges and the default channel are generated from the bundles'
//! versions, and the package takes its description and icon from the CSV of the default
//! channel's last entry.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use semver::Version;

use super::{ImageRef, Renderer, TemplateError, field};
use crate::fbc::decl::{Channel, ChannelEntry, DeclarativeConfig, Icon, Package, Src};
use crate::fbc::node::{Node, Pos, Value};

/// The schema of a semver template.
pub const SCHEMA: &str = "olm.semver";

/// The archetypes, in ascending stability (their rank is the index).
pub const ARCHETYPES: [&str; 3] = ["candidate", "fast", "stable"];

/// Channel kinds: major (`-vX`) ranks below minor (`-vX.Y`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StreamKind {
    /// No kind (the initial high-water mark).
    Unset,
    /// `<archetype>-v<X>`.
    Major,
    /// `<archetype>-v<X>.<Y>`.
    Minor,
}

/// A parsed semver template.
#[derive(Debug, Clone)]
pub struct Spec {
    /// `generateMajorChannels`.
    pub major: bool,
    /// `generateMinorChannels` (also when neither is set).
    pub minor: bool,
    /// Bundle images per archetype: candidate, fast, stable.
    pub bundles: [Vec<ImageRef>; 3],
    /// `defaultChannelTypePreference` (its default follows the generated kinds).
    pub preference: StreamKind,
}

/// The keys of a map node for strict decoding: Go matches field names case-insensitively and
/// `UnmarshalStrict` refuses any other key.
fn strict_keys<'a>(
    file: &Path,
    n: &'a Node,
    fields: &[&str],
) -> Result<&'a [crate::fbc::node::Entry], TemplateError> {
    let Value::Map(entries) = &n.value else {
        return Err(TemplateError::at(
            file,
            n.pos,
            format!(
                "error unmarshaling JSON: expected an object, found {}",
                n.kind()
            ),
        ));
    };
    for (i, e) in entries.iter().enumerate() {
        if entries[..i].iter().any(|x| x.key == e.key) {
            return Err(TemplateError::at(
                file,
                e.key_pos,
                format!(
                    "error converting YAML to JSON: yaml: line {}: key {:?} already set in map",
                    e.key_pos.line, e.key
                ),
            ));
        }
        if !fields.iter().any(|f| f.eq_ignore_ascii_case(&e.key)) {
            return Err(TemplateError::at(
                file,
                e.key_pos,
                format!(
                    "error unmarshaling JSON: while decoding JSON: json: unknown field {:?}",
                    e.key
                ),
            ));
        }
    }
    Ok(entries)
}

fn boolean(file: &Path, n: Option<&Node>) -> Result<bool, TemplateError> {
    match n.map(|n| (&n.value, n.pos)) {
        None | Some((Value::Null, _)) => Ok(false),
        Some((Value::Bool(b), _)) => Ok(*b),
        Some((_, pos)) => Err(TemplateError::at(
            file,
            pos,
            "error unmarshaling JSON: expected a boolean",
        )),
    }
}

impl Spec {
    /// Parses `doc` strictly, as `yaml.UnmarshalStrict` does, and applies opm's defaults.
    pub fn parse(file: &Path, doc: &Node) -> Result<Spec, TemplateError> {
        strict_keys(
            file,
            doc,
            &[
                "schema",
                "generateMajorChannels",
                "generateMinorChannels",
                "defaultChannelTypePreference",
                "candidate",
                "fast",
                "stable",
            ],
        )?;
        if !matches!(field(doc, "schema").map(|n| &n.value), Some(Value::Str(s)) if s == SCHEMA) {
            return Err(TemplateError::at(
                file,
                doc.pos,
                format!("readFile: input file has unknown schema, should be {SCHEMA:?}"),
            ));
        }
        let major = boolean(file, field(doc, "generateMajorChannels"))?;
        let mut minor = boolean(file, field(doc, "generateMinorChannels"))?;
        if !major && !minor {
            minor = true;
        }
        let mut bundles: [Vec<ImageRef>; 3] = Default::default();
        for (i, a) in ARCHETYPES.iter().enumerate() {
            let Some(ch) = field(doc, a).filter(|n| n.value != Value::Null) else {
                continue;
            };
            strict_keys(file, ch, &["bundles"])?;
            let list = match field(ch, "bundles").map(|n| (&n.value, n.pos)) {
                None | Some((Value::Null, _)) => continue,
                Some((Value::Seq(items), _)) => items,
                Some((_, pos)) => {
                    return Err(TemplateError::at(
                        file,
                        pos,
                        "error unmarshaling JSON: bundles must be a list",
                    ));
                }
            };
            for b in list {
                strict_keys(file, b, &["image"])?;
                match field(b, "image").map(|n| (&n.value, n.pos)) {
                    Some((Value::Str(s), pos)) => bundles[i].push(ImageRef {
                        image: s.clone(),
                        pos,
                    }),
                    Some((Value::Null, _)) | None => bundles[i].push(ImageRef {
                        image: String::new(),
                        pos: b.pos,
                    }),
                    Some((_, pos)) => {
                        return Err(TemplateError::at(
                            file,
                            pos,
                            "error unmarshaling JSON: image must be a string",
                        ));
                    }
                }
            }
        }
        let pref_node = field(doc, "defaultChannelTypePreference");
        let pref = match pref_node.map(|n| &n.value) {
            None | Some(Value::Null) => "",
            Some(Value::Str(s)) => s.as_str(),
            Some(_) => "?",
        };
        let at = pref_node.map_or(doc.pos, |n| n.pos);
        let preference = match pref {
            "" if minor => StreamKind::Minor,
            "" => StreamKind::Major,
            "minor" if !minor => {
                return Err(TemplateError::at(
                    file,
                    at,
                    "schema attribute mismatch: DefaultChannelTypePreference set to 'minor' doesn't make sense if not generating minor-version channels",
                ));
            }
            "major" if !major => {
                return Err(TemplateError::at(
                    file,
                    at,
                    "schema attribute mismatch: DefaultChannelTypePreference set to 'major' doesn't make sense if not generating major-version channels",
                ));
            }
            "minor" => StreamKind::Minor,
            "major" => StreamKind::Major,
            other => {
                return Err(TemplateError::at(
                    file,
                    at,
                    format!(
                        "unknown DefaultChannelTypePreference: {other:?}\nValid values are 'major' or 'minor'"
                    ),
                ));
            }
        };
        Ok(Spec {
            major,
            minor,
            bundles,
            preference,
        })
    }

    /// Every bundle image, candidate then fast then stable.
    pub fn images(&self) -> Vec<ImageRef> {
        self.bundles.iter().flatten().cloned().collect()
    }
}

/// A rendered bundle's name, package and version.
struct Info {
    name: String,
    package: String,
    version: Version,
}

fn info(file: &Path, blob: &Node, pos: Pos) -> Result<Info, TemplateError> {
    let s = |k: &str| match field(blob, k).map(|n| &n.value) {
        Some(Value::Str(s)) => s.clone(),
        _ => String::new(),
    };
    let name = s("name");
    let props = match field(blob, "properties").map(|n| &n.value) {
        Some(Value::Seq(p)) => p.as_slice(),
        _ => &[],
    };
    let pkgs: Vec<&Node> = props
        .iter()
        .filter(|p| matches!(field(p, "type").map(|n| &n.value), Some(Value::Str(t)) if t == "olm.package"))
        .filter_map(|p| field(p, "value"))
        .collect();
    if pkgs.len() != 1 {
        return Err(TemplateError::at(
            file,
            pos,
            format!(
                "render: unable to post-process bundle info: bundle {name:?} has multiple \"olm.package\" properties, expected exactly 1"
            ),
        ));
    }
    let get = |k: &str| match field(pkgs[0], k).map(|n| &n.value) {
        Some(Value::Str(s)) => s.clone(),
        _ => String::new(),
    };
    let v = get("version");
    let version = Version::parse(&v).map_err(|e| {
        TemplateError::at(file, pos, format!("render: unable to post-process bundle info: bundle {name:?} has invalid version {v:?}: {e}"))
    })?;
    Ok(Info {
        name,
        package: get("packageName"),
        version,
    })
}

/// `(archetype rank, kind, version, bundle name)`.
type Tuple<'a> = (usize, StreamKind, &'a Version, &'a str);

/// Renders a semver template.
pub fn render(
    file: &Path,
    doc: &Node,
    r: &mut Renderer<'_>,
) -> Result<DeclarativeConfig, TemplateError> {
    let spec = Spec::parse(file, doc)?;
    let arc: Arc<Path> = Arc::from(file);
    let mut cfg = DeclarativeConfig::default();
    // 1. Render every image once.
    let mut seen = BTreeSet::new();
    let mut blobs: HashMap<String, Node> = HashMap::new();
    for img in spec.images() {
        if seen.insert(img.image.clone()) {
            let blob = r.bundle(&img.image, img.pos, img.pos)?;
            blobs.insert(img.image.clone(), blob.clone());
            super::decode_into(file, &arc, blob, &mut cfg)?;
        }
    }
    if cfg.bundles.is_empty() {
        return Err(TemplateError::at(
            file,
            doc.pos,
            "render: no bundles specified or no bundles could be rendered",
        ));
    }
    // 2. Versions per archetype; one package.
    let mut package: Option<String> = None;
    let mut per: [BTreeMap<String, Version>; 3] = Default::default();
    for (i, list) in spec.bundles.iter().enumerate() {
        for img in list {
            let b = info(file, &blobs[&img.image], img.pos)?;
            match &package {
                Some(p) if *p != b.package => {
                    return Err(TemplateError::at(
                        file,
                        img.pos,
                        format!(
                            "render: unable to post-process bundle info: bundle {:?} does not belong to this package: {p:?}",
                            b.package
                        ),
                    ));
                }
                Some(_) => {}
                None => package = Some(b.package.clone()),
            }
            if per[i].insert(b.name.clone(), b.version).is_some() {
                return Err(TemplateError::at(
                    file,
                    img.pos,
                    format!(
                        "render: unable to post-process bundle info: duplicate bundle name {:?}",
                        b.name
                    ),
                ));
            }
        }
        let mut stripped: BTreeMap<String, &Version> = BTreeMap::new();
        for v in per[i].values() {
            let mut s = v.clone();
            s.build = semver::BuildMetadata::EMPTY;
            if let Some(prev) = stripped.insert(s.to_string(), v) {
                return Err(TemplateError::at(
                    file,
                    doc.pos,
                    format!(
                        "render: unable to post-process bundle info: encountered bundle versions which differ only by build metadata, which cannot be ordered: bundle version {:?} cannot be compared to {:?}",
                        prev.to_string(),
                        s.to_string()
                    ),
                ));
            }
        }
    }
    let package = package.unwrap_or_default();
    let generated = generate(spec.major, spec.minor, spec.preference, &per);
    let src = Src {
        file: arc.clone(),
        pos: doc.pos,
    };
    for (ch, entries) in &generated.channels {
        cfg.channels.push(Channel {
            package: package.clone(),
            name: ch.clone(),
            entries: entries
                .iter()
                .map(|e| ChannelEntry {
                    name: e.name.clone(),
                    replaces: e.replaces.clone(),
                    skips: e.skips.clone(),
                    skip_range: String::new(),
                    pos: doc.pos,
                    skip_range_pos: doc.pos,
                })
                .collect(),
            properties: Vec::new(),
            src: src.clone(),
        });
    }
    // 5-6. The package: default channel, and the description and icon of the CSV of the
    //      default channel's last entry.
    let default = generated.default_channel;
    let last = generated
        .channels
        .get(&default)
        .and_then(|e| e.last())
        .map(|e| e.name.clone());
    let (description, icon) = match last.and_then(|n| {
        spec.images().into_iter().find(|i| matches!(blobs.get(&i.image), Some(b) if matches!(field(b, "name").map(|x| &x.value), Some(Value::Str(s)) if *s == n)))
    }) {
        Some(img) => r.csv_description_icon(&img.image)?,
        None => (String::new(), None),
    };
    cfg.packages.push(Package {
        name: package,
        default_channel: default,
        icon,
        description,
        properties: Vec::new(),
        src,
    });
    Ok(cfg)
}

/// One generated channel entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenEntry {
    /// The bundle.
    pub name: String,
    /// `replaces` ("" when none).
    pub replaces: String,
    /// `skips`, sorted.
    pub skips: Vec<String>,
}

/// What the semver template generates from the bundles' versions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// Channel name → entries in ascending version.
    pub channels: BTreeMap<String, Vec<GenEntry>>,
    /// The default channel (the high-water mark of channel creations).
    pub default_channel: String,
}

/// Generates channels, edges and the default channel (operator-registry `generateChannels`
/// and `linkChannels`) from the bundle versions of each archetype (candidate, fast, stable).
pub fn generate(
    major: bool,
    minor: bool,
    preference: StreamKind,
    per: &[BTreeMap<String, Version>; 3],
) -> Generated {
    // 3. Channels and the default channel's high-water mark.
    // Channel name → (archetype rank, kind, entries in ascending version).
    let mut channels: BTreeMap<String, (usize, StreamKind, Vec<&str>)> = BTreeMap::new();
    let mut hwc: (usize, Version, StreamKind, String) =
        (0, Version::new(0, 0, 0), StreamKind::Unset, String::new());
    let gt = |h: &(usize, Version, StreamKind, String),
              ih: &(usize, Version, StreamKind, String)| {
        if h.0 != ih.0 {
            return h.0 > ih.0;
        }
        if h.1 != ih.1 {
            return h.1 > ih.1;
        }
        if h.2 != ih.2 {
            if h.2 == preference {
                return true;
            }
            if ih.2 == preference {
                return false;
            }
            return h.2 > ih.2;
        }
        false
    };
    let mut tuples: Vec<Tuple<'_>> = Vec::new();
    for (rank, arch) in ARCHETYPES.iter().enumerate() {
        let mut sorted: Vec<(&Version, &str)> =
            per[rank].iter().map(|(n, v)| (v, n.as_str())).collect();
        sorted.sort_by(|a, b| a.0.cmp_precedence(b.0));
        for (v, name) in sorted {
            for (on, kind, ch) in [
                (major, StreamKind::Major, format!("{arch}-v{}", v.major)),
                (
                    minor,
                    StreamKind::Minor,
                    format!("{arch}-v{}.{}", v.major, v.minor),
                ),
            ] {
                if !on {
                    continue;
                }
                let (_, _, entries) =
                    channels
                        .entry(ch.clone())
                        .or_insert((rank, kind, Vec::new()));
                if entries.is_empty() {
                    let cand = (rank, v.clone(), kind, ch.clone());
                    if gt(&cand, &hwc) {
                        hwc = cand;
                    }
                }
                entries.push(name);
                tuples.push((rank, kind, v, name));
            }
        }
    }
    // 4. Edges: the highest Z of each X.Y group replaces the previous group's highest Z and
    //    skips every earlier entry of its X (same archetype and kind).
    tuples.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(a.1.cmp(&b.1))
            .then(a.2.cmp_precedence(b.2))
    });
    let mut edges: HashMap<(usize, StreamKind, String), (String, Vec<String>)> = HashMap::new();
    let mut skip_set: BTreeSet<&str> = BTreeSet::new();
    let mut prev_ymax = "";
    let same_x = |a: &Tuple<'_>, b: &Tuple<'_>| a.0 == b.0 && a.1 == b.1 && a.2.major == b.2.major;
    type Edges = HashMap<(usize, StreamKind, String), (String, Vec<String>)>;
    let link = |t: &Tuple<'_>, skip_set: &BTreeSet<&str>, prev_ymax: &str, edges: &mut Edges| {
        let skips: Vec<String> = skip_set
            .iter()
            .filter(|s| **s != prev_ymax)
            .map(|s| s.to_string())
            .collect();
        edges.insert((t.0, t.1, t.3.to_string()), (prev_ymax.to_string(), skips));
    };
    for w in tuples.windows(2) {
        let (prev, cur) = (&w[0], &w[1]);
        let y_change = prev.2.minor != cur.2.minor;
        if !same_x(prev, cur) || y_change {
            link(prev, &skip_set, prev_ymax, &mut edges);
        }
        if !same_x(prev, cur) {
            skip_set.clear();
            prev_ymax = "";
        } else {
            if y_change {
                prev_ymax = prev.3;
            }
            skip_set.insert(prev.3);
        }
    }
    if let Some(last) = tuples.last() {
        let alone = tuples.len() >= 2 && !same_x(&tuples[tuples.len() - 2], last);
        if !alone {
            link(last, &skip_set, prev_ymax, &mut edges);
        }
    }
    let channels = channels
        .into_iter()
        .map(|(ch, (rank, kind, entries))| {
            let list = entries
                .iter()
                .map(|name| {
                    let (replaces, skips) = edges
                        .get(&(rank, kind, name.to_string()))
                        .cloned()
                        .unwrap_or_default();
                    GenEntry {
                        name: name.to_string(),
                        replaces,
                        skips,
                    }
                })
                .collect();
            (ch, list)
        })
        .collect();
    Generated {
        channels,
        default_channel: hwc.3,
    }
}

/// The CSV's `spec.description` and first `spec.icon`.
pub(crate) fn description_icon(csv: &Node) -> (String, Option<Icon>) {
    let at = |n: &Node, path: &[&str]| crate::bundle::load::str_at(n, path).map(str::to_string);
    let description = at(csv, &["spec", "description"]).unwrap_or_default();
    let icon = crate::bundle::load::list_at(csv, &["spec", "icon"])
        .first()
        .and_then(|i| {
            Some(Icon {
                base64data: Arc::from(at(i, &["base64data"])?.as_str()),
                data_pos: Pos::default(),
                mediatype: at(i, &["mediatype"]).unwrap_or_default(),
                mediatype_pos: Pos::default(),
            })
        });
    (description, icon)
}

#[cfg(test)]
mod tests {
    //! Ported from operator-registry `alpha/template/semver/semver_test.go`
    //! (`TestGenerateChannels`, `TestLinkChannels`): the same versions, the same expected
    //! channels, edges and default channels.
    use super::*;

    fn versions(names: &[&str]) -> BTreeMap<String, Version> {
        names
            .iter()
            .map(|n| (format!("a-v{n}"), Version::parse(n).expect("version")))
            .collect()
    }

    fn e(name: &str, replaces: &str, skips: &[&str]) -> GenEntry {
        GenEntry {
            name: format!("a-v{name}"),
            replaces: if replaces.is_empty() {
                String::new()
            } else {
                format!("a-v{replaces}")
            },
            skips: skips.iter().map(|s| format!("a-v{s}")).collect(),
        }
    }

    const STABLE: &[&str] = &[
        "0.1.0",
        "0.1.1",
        "1.1.0",
        "1.2.1",
        "1.3.1",
        "2.1.0",
        "1.3.1-beta",
        "2.1.1",
        "2.3.1",
        "2.3.2",
        "3.1.0",
        "3.1.1",
        "1.3.1-alpha",
        "1.4.1",
        "1.4.1-beta1",
        "1.4.1-beta2",
    ];

    fn major_channels() -> BTreeMap<String, Vec<GenEntry>> {
        BTreeMap::from([
            (
                "stable-v0".into(),
                vec![e("0.1.0", "", &[]), e("0.1.1", "", &["0.1.0"])],
            ),
            (
                "stable-v1".into(),
                vec![
                    e("1.1.0", "", &[]),
                    e("1.2.1", "1.1.0", &[]),
                    e("1.3.1-alpha", "", &[]),
                    e("1.3.1-beta", "", &[]),
                    e("1.3.1", "1.2.1", &["1.1.0", "1.3.1-alpha", "1.3.1-beta"]),
                    e("1.4.1-beta1", "", &[]),
                    e("1.4.1-beta2", "", &[]),
                    e(
                        "1.4.1",
                        "1.3.1",
                        &[
                            "1.1.0",
                            "1.2.1",
                            "1.3.1-alpha",
                            "1.3.1-beta",
                            "1.4.1-beta1",
                            "1.4.1-beta2",
                        ],
                    ),
                ],
            ),
            (
                "stable-v2".into(),
                vec![
                    e("2.1.0", "", &[]),
                    e("2.1.1", "", &["2.1.0"]),
                    e("2.3.1", "", &[]),
                    e("2.3.2", "2.1.1", &["2.1.0", "2.3.1"]),
                ],
            ),
            (
                "stable-v3".into(),
                vec![e("3.1.0", "", &[]), e("3.1.1", "", &["3.1.0"])],
            ),
        ])
    }

    fn minor_channels() -> BTreeMap<String, Vec<GenEntry>> {
        BTreeMap::from([
            (
                "stable-v0.1".into(),
                vec![e("0.1.0", "", &[]), e("0.1.1", "", &["0.1.0"])],
            ),
            ("stable-v1.1".into(), vec![e("1.1.0", "", &[])]),
            ("stable-v1.2".into(), vec![e("1.2.1", "1.1.0", &[])]),
            (
                "stable-v1.3".into(),
                vec![
                    e("1.3.1-alpha", "", &[]),
                    e("1.3.1-beta", "", &[]),
                    e("1.3.1", "1.2.1", &["1.1.0", "1.3.1-alpha", "1.3.1-beta"]),
                ],
            ),
            (
                "stable-v1.4".into(),
                vec![
                    e("1.4.1-beta1", "", &[]),
                    e("1.4.1-beta2", "", &[]),
                    e(
                        "1.4.1",
                        "1.3.1",
                        &[
                            "1.1.0",
                            "1.2.1",
                            "1.3.1-alpha",
                            "1.3.1-beta",
                            "1.4.1-beta1",
                            "1.4.1-beta2",
                        ],
                    ),
                ],
            ),
            (
                "stable-v2.1".into(),
                vec![e("2.1.0", "", &[]), e("2.1.1", "", &["2.1.0"])],
            ),
            (
                "stable-v2.3".into(),
                vec![
                    e("2.3.1", "", &[]),
                    e("2.3.2", "2.1.1", &["2.1.0", "2.3.1"]),
                ],
            ),
            (
                "stable-v3.1".into(),
                vec![e("3.1.0", "", &[]), e("3.1.1", "", &["3.1.0"])],
            ),
        ])
    }

    #[test]
    fn generate_channels_as_upstream() {
        let per = [BTreeMap::new(), BTreeMap::new(), versions(STABLE)];
        let mut both = major_channels();
        both.extend(minor_channels());
        // (name, minor, major, preference, default, channels)
        let cases = [
            (
                "Edges between minor channels",
                true,
                false,
                StreamKind::Minor,
                "stable-v3.1",
                minor_channels(),
            ),
            (
                "No edges between major channels",
                false,
                true,
                StreamKind::Major,
                "stable-v3",
                major_channels(),
            ),
            (
                "Preference for minor default channel",
                true,
                true,
                StreamKind::Minor,
                "stable-v3.1",
                both.clone(),
            ),
            (
                "Preference for major default channel",
                true,
                true,
                StreamKind::Major,
                "stable-v3",
                both.clone(),
            ),
            (
                "Mismatch generate/preference minor/major",
                true,
                false,
                StreamKind::Major,
                "stable-v3.1",
                minor_channels(),
            ),
            (
                "Mismatch generate/preference major/minor",
                false,
                true,
                StreamKind::Minor,
                "stable-v3",
                major_channels(),
            ),
        ];
        for (name, minor, major, pref, default, channels) in cases {
            let g = generate(major, minor, pref, &per);
            assert_eq!(g.channels, channels, "{name}");
            assert_eq!(g.default_channel, default, "{name}");
        }
    }

    /// `TestLinkChannels`: no edges across X or archetype changes, including at the last entry.
    #[test]
    fn link_channels_as_upstream() {
        let stable = versions(&["0.1.0", "0.1.1", "1.1.0", "1.2.1", "1.3.1", "2.1.0"]);
        let g = generate(
            true,
            false,
            StreamKind::Major,
            &[BTreeMap::new(), BTreeMap::new(), stable],
        );
        assert_eq!(
            g.channels["stable-v2"],
            vec![e("2.1.0", "", &[])],
            "last edge is an X change"
        );
        assert_eq!(
            g.channels["stable-v1"],
            vec![
                e("1.1.0", "", &[]),
                e("1.2.1", "1.1.0", &[]),
                e("1.3.1", "1.2.1", &["1.1.0"])
            ]
        );
        let stable = versions(&["1.1.0", "1.2.1", "1.3.1", "2.1.0", "2.1.1", "2.3.1"]);
        let candidate = versions(&["2.3.2"]);
        let g = generate(
            true,
            false,
            StreamKind::Major,
            &[candidate, BTreeMap::new(), stable],
        );
        assert_eq!(g.channels["candidate-v2"], vec![e("2.3.2", "", &[])]);
        assert_eq!(
            g.channels["stable-v2"],
            vec![
                e("2.1.0", "", &[]),
                e("2.1.1", "", &["2.1.0"]),
                e("2.3.1", "2.1.1", &["2.1.0"])
            ],
            "last edge is an archetype change"
        );
        let g = generate(
            true,
            false,
            StreamKind::Major,
            &[BTreeMap::new(), BTreeMap::new(), versions(&["0.1.0"])],
        );
        assert_eq!(
            g.channels["stable-v0"],
            vec![e("0.1.0", "", &[])],
            "minimum viable channel"
        );
        assert_eq!(g.default_channel, "stable-v0");
    }

    /// The README's 11-bundle example (both modes at once). The README itself predates
    /// operator-registry#1749/#1813: its `testoperator.v0.2.2` skips only 0.2.0 and 0.2.1,
    /// where the code (and this) also skips the 0.1.x entries before the replaced 0.1.3.
    #[test]
    fn readme_example() {
        let names = |v: &[&str]| -> BTreeMap<String, Version> {
            v.iter()
                .map(|n| (format!("testoperator.v{n}"), Version::parse(n).expect("v")))
                .collect()
        };
        let candidate = names(&[
            "0.1.0", "0.1.1", "0.1.2", "0.1.3", "0.2.0", "0.2.1", "0.2.2", "0.3.0", "1.0.0",
            "1.0.1", "1.1.0",
        ]);
        let fast = names(&["0.2.1", "0.2.2", "0.3.0", "1.0.1", "1.1.0"]);
        let stable = names(&["1.0.1"]);
        let per = [candidate, fast, stable];
        let g = generate(true, false, StreamKind::Major, &per);
        assert_eq!(g.default_channel, "stable-v1");
        let names_of = |ch: &str| -> Vec<(String, String, Vec<String>)> {
            g.channels[ch]
                .iter()
                .map(|e| (e.name.clone(), e.replaces.clone(), e.skips.clone()))
                .collect()
        };
        let t = |n: &str| format!("testoperator.v{n}");
        assert_eq!(
            g.channels.keys().collect::<Vec<_>>(),
            [
                "candidate-v0",
                "candidate-v1",
                "fast-v0",
                "fast-v1",
                "stable-v1"
            ]
        );
        assert_eq!(
            names_of("candidate-v0")[3],
            (
                t("0.1.3"),
                String::new(),
                vec![t("0.1.0"), t("0.1.1"), t("0.1.2")]
            )
        );
        assert_eq!(
            names_of("candidate-v0")[6],
            (
                t("0.2.2"),
                t("0.1.3"),
                vec![t("0.1.0"), t("0.1.1"), t("0.1.2"), t("0.2.0"), t("0.2.1")]
            )
        );
        assert_eq!(
            names_of("candidate-v0")[7],
            (
                t("0.3.0"),
                t("0.2.2"),
                vec![
                    t("0.1.0"),
                    t("0.1.1"),
                    t("0.1.2"),
                    t("0.1.3"),
                    t("0.2.0"),
                    t("0.2.1")
                ]
            )
        );
        assert_eq!(names_of("fast-v1")[1], (t("1.1.0"), t("1.0.1"), vec![]));
        let g = generate(false, true, StreamKind::Minor, &per);
        assert_eq!(g.default_channel, "stable-v1.0");
        assert_eq!(g.channels.len(), 10);
        assert_eq!(
            g.channels["candidate-v0.3"],
            vec![GenEntry {
                name: t("0.3.0"),
                replaces: t("0.2.2"),
                skips: vec![
                    t("0.1.0"),
                    t("0.1.1"),
                    t("0.1.2"),
                    t("0.1.3"),
                    t("0.2.0"),
                    t("0.2.1")
                ]
            }]
        );
    }
}
