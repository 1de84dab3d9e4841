//! OperatorHub metadata, capabilities and categories (HUB codes): operator-framework/api's
//! `OperatorHubV2Validator`, `StandardCapabilitiesValidator` and `StandardCategoriesValidator`,
//! one finding per defective element with its JSON path. The V2 validator's minKubeVersion and
//! spec.version checks are CSV008, CSV009 and CSV013; its deprecated-API check is the API suite.

use std::path::Path;

use super::Ctx;
use crate::bundle::load::{field, list_at, pos_at, str_at};
use crate::diag::Severity::{Error, Warning};
use crate::fbc::node::{Node, Value};

codes! {
    PROVIDER_NAME = "HUB001", Error, "spec.provider.name is missing or empty.";
    MAINTAINER_INCOMPLETE = "HUB002", Error, "A spec.maintainers entry lacks a name or an email.";
    MAINTAINER_EMAIL = "HUB003", Error, "A spec.maintainers email is not a valid e-mail address.";
    LINK_INCOMPLETE = "HUB004", Error, "A spec.links entry lacks a name or a url.";
    LINK_URL = "HUB005", Error, "A spec.links url is not an absolute URL with a scheme and a host.";
    ICON_COUNT = "HUB006", Error, "spec.icon has more than one element; OperatorHub shows exactly one.";
    ICON_INCOMPLETE = "HUB007", Error, "A spec.icon element lacks base64data or mediatype.";
    ICON_MEDIATYPE = "HUB008", Error, "A spec.icon mediatype is not image/gif, image/jpeg, image/png or image/svg+xml.";
    ICON_DATA = "HUB009", Error, "A spec.icon base64data is not valid base64, so the icon cannot be shown.";
    NO_ICON = "HUB010", Warning, "spec.icon is not set; OperatorHub shows a placeholder.";
    CAPABILITIES = "HUB011", Error, "The capabilities annotation is not one of the five capability levels.";
    CATEGORIES = "HUB012", Error, "A categories annotation entry is not a standard OperatorHub category.";
    ICON_CONTENT = "HUB013", Warning, "A spec.icon base64data decodes to a different image format than its mediatype says (or to no image at all).";
}

/// `StandardCapabilitiesValidator`'s levels.
pub const CAPABILITY_LEVELS: [&str; 5] = [
    "Basic Install",
    "Seamless Upgrades",
    "Full Lifecycle",
    "Deep Insights",
    "Auto Pilot",
];

/// `StandardCategoriesValidator`'s categories.
pub const STANDARD_CATEGORIES: [&str; 16] = [
    "AI/Machine Learning",
    "Application Runtime",
    "Big Data",
    "Cloud Provider",
    "Developer Tools",
    "Database",
    "Integration & Delivery",
    "Logging & Tracing",
    "Monitoring",
    "Modernization & Migration",
    "Networking",
    "OpenShift Optional",
    "Security",
    "Storage",
    "Streaming & Messaging",
    "Observability",
];

/// A custom category list: a JSON file `{"categories": ["Cloud Pak", ...]}` (the format of
/// operator-framework/api's `OPERATOR_BUNDLE_CATEGORIES` file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCategories {
    /// The file, for messages.
    pub file: std::path::PathBuf,
    /// The categories.
    pub names: Vec<String>,
}

impl CustomCategories {
    /// Reads the file; errors name it and say what is wrong.
    pub fn read(file: &Path) -> Result<CustomCategories, String> {
        let bytes = crate::input::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
            format!(
                "{}:{}:{}: not JSON: {e}",
                file.display(),
                e.line(),
                e.column()
            )
        })?;
        let bad = || {
            format!(
                "{}: expected {{\"categories\": [\"...\", ...]}}, a list of category names",
                file.display()
            )
        };
        let names = v
            .get("categories")
            .and_then(serde_json::Value::as_array)
            .ok_or_else(bad)?
            .iter()
            .map(|c| c.as_str().map(str::to_string).ok_or_else(bad))
            .collect::<Result<Vec<String>, String>>()?;
        Ok(CustomCategories {
            file: file.to_path_buf(),
            names,
        })
    }
}

/// The icon media types OperatorHub renders.
pub const ICON_MEDIATYPES: [&str; 4] = ["image/gif", "image/jpeg", "image/png", "image/svg+xml"];

pub(super) fn check(cx: &mut Ctx<'_>) {
    let Some((file, csv)) = cx.bundle.csv() else {
        return;
    };
    provider(cx, file, csv);
    maintainers(cx, file, csv);
    links(cx, file, csv);
    icon(cx, file, csv);
    annotations(cx, file, csv);
}

/// The string at `key` of `n`, trimmed, when non-empty.
fn text<'a>(n: &'a Node, key: &str) -> Option<&'a str> {
    str_at(n, &[key]).map(str::trim).filter(|s| !s.is_empty())
}

fn provider(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    let p = field(csv, &["spec", "provider"]);
    if p.and_then(|p| text(p, "name")).is_none() {
        let pos = p.map_or(csv.pos, |p| pos_at(p, &["name"]));
        cx.push(
            &PROVIDER_NAME,
            "spec.provider.name is not specified",
            file,
            pos,
            Some("spec.provider.name"),
        )
        .help = Some(
            "name the company or person shipping the operator: `provider: {name: ...}`".into(),
        );
    }
}

fn maintainers(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    for (i, m) in list_at(csv, &["spec", "maintainers"]).iter().enumerate() {
        let name = text(m, "name");
        let email = text(m, "email");
        let missing: Vec<&str> = [("name", name), ("email", email)]
            .iter()
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| *k)
            .collect();
        if !missing.is_empty() {
            let who = name.or(email).unwrap_or("");
            cx.push(
                &MAINTAINER_INCOMPLETE,
                format!(
                    "maintainer {i} ({who:?}) has no {}; each maintainer needs a name and an email",
                    missing.join(" and ")
                ),
                file,
                m.pos,
                Some(&format!("spec.maintainers[{i}]")),
            );
        }
        if let Some(e) = email
            && let Err(why) = check_email(e)
        {
            cx.push(
                &MAINTAINER_EMAIL,
                format!("maintainer {i} email {e:?} is invalid: {why}"),
                file,
                pos_at(m, &["email"]),
                Some(&format!("spec.maintainers[{i}].email")),
            )
            .help = Some("write a plain address such as team@example.com".into());
        }
    }
}

fn links(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    for (i, l) in list_at(csv, &["spec", "links"]).iter().enumerate() {
        let name = text(l, "name");
        let url = text(l, "url");
        let missing: Vec<&str> = [("name", name), ("url", url)]
            .iter()
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| *k)
            .collect();
        if !missing.is_empty() {
            let what = name.or(url).unwrap_or("");
            cx.push(
                &LINK_INCOMPLETE,
                format!(
                    "link {i} ({what:?}) has no {}; each link needs a name and a url",
                    missing.join(" and ")
                ),
                file,
                l.pos,
                Some(&format!("spec.links[{i}]")),
            );
        }
        if let Some(u) = url
            && let Err(why) = check_url(u)
        {
            cx.push(
                &LINK_URL,
                format!("link {i} url {u:?} is invalid: {why}"),
                file,
                pos_at(l, &["url"]),
                Some(&format!("spec.links[{i}].url")),
            )
            .help = Some("write an absolute URL such as https://example.com/docs".into());
        }
    }
}

fn icon(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    let node = field(csv, &["spec", "icon"]);
    let icons: &[Node] = match node.map(|n| &n.value) {
        None | Some(Value::Null) => &[],
        Some(Value::Seq(v)) => v,
        // A single object instead of a list: judge it as the one element.
        Some(Value::Map(_)) => std::slice::from_ref(node.expect("matched")),
        Some(_) => {
            cx.push(
                &ICON_INCOMPLETE,
                "spec.icon is not a list of {base64data, mediatype} objects",
                file,
                node.map_or(csv.pos, |n| n.pos),
                Some("spec.icon"),
            );
            return;
        }
    };
    if icons.is_empty() {
        cx.push(
            &NO_ICON,
            "spec.icon is not specified: OperatorHub shows a placeholder icon",
            file,
            node.map_or(csv.pos, |n| n.pos),
            Some("spec.icon"),
        )
        .help = Some("add `icon: [{base64data: <base64>, mediatype: image/png}]`".into());
        return;
    }
    if icons.len() > 1 {
        cx.push(
            &ICON_COUNT,
            format!(
                "spec.icon has {} elements; it should have exactly one",
                icons.len()
            ),
            file,
            node.map_or(csv.pos, |n| n.pos),
            Some("spec.icon"),
        )
        .help = Some("keep one icon; OperatorHub shows only the first".into());
    }
    let single = !matches!(node.map(|n| &n.value), Some(Value::Seq(_)));
    for (i, ic) in icons.iter().enumerate() {
        let at = if single {
            "spec.icon".to_string()
        } else {
            format!("spec.icon[{i}]")
        };
        let data = str_at(ic, &["base64data"]).filter(|s| !s.trim().is_empty());
        let mt = text(ic, "mediatype");
        let missing: Vec<&str> = [("base64data", data.is_none()), ("mediatype", mt.is_none())]
            .iter()
            .filter(|(_, m)| *m)
            .map(|(k, _)| *k)
            .collect();
        if !missing.is_empty() {
            cx.push(
                &ICON_INCOMPLETE,
                format!("icon {i} has no {}", missing.join(" and ")),
                file,
                ic.pos,
                Some(&at),
            )
            .help = Some("each icon needs both base64data and mediatype".into());
        }
        if let Some(m) = mt
            && !ICON_MEDIATYPES.contains(&m)
        {
            cx.push(
                &ICON_MEDIATYPE,
                format!(
                    "icon {i} mediatype {m:?} is not a valid mediatype (expected one of {})",
                    ICON_MEDIATYPES.join(", ")
                ),
                file,
                pos_at(ic, &["mediatype"]),
                Some(&format!("{at}.mediatype")),
            );
        }
        let decoded = data.map(crate::encoding::decode_forgiving);
        if let Some(Err(why)) = &decoded {
            cx.push(
                &ICON_DATA,
                format!("icon {i} base64data does not decode: {why}"),
                file,
                pos_at(ic, &["base64data"]),
                Some(&format!("{at}.base64data")),
            )
            .help = Some(
                "put the standard base64 encoding of the image file (no `data:` prefix) in base64data".into(),
            );
        } else if let (Some(Ok(bytes)), Some(m)) = (&decoded, mt)
            && ICON_MEDIATYPES.contains(&m)
        {
            let found = sniff_image(bytes);
            if found != Some(m) {
                cx.push(
                    &ICON_CONTENT,
                    format!(
                        "icon {i} is declared {m} but its data is {}",
                        found.map_or("not a GIF, JPEG, PNG or SVG image".to_string(), |f| f
                            .to_string())
                    ),
                    file,
                    pos_at(ic, &["base64data"]),
                    Some(&format!("{at}.base64data")),
                )
                .help = Some(match found {
                    Some(f) => format!("set mediatype to {f}"),
                    None => "encode the image file itself".into(),
                });
            }
        }
    }
}

fn annotations(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    let Some(Node {
        value: Value::Map(entries),
        ..
    }) = field(csv, &["metadata", "annotations"])
    else {
        return;
    };
    // The last duplicate wins, as for `field`.
    let get = |k: &str| entries.iter().rev().find(|e| e.key == k);
    if let Some(e) = get("capabilities")
        && let Some(v) = e.value.as_str()
        && !CAPABILITY_LEVELS.contains(&v)
    {
        cx.push(
            &CAPABILITIES,
            format!("capabilities {v:?} is not a valid capabilities level"),
            file,
            e.value.pos,
            Some("metadata.annotations[\"capabilities\"]"),
        )
        .help = Some(format!("use one of: {}", CAPABILITY_LEVELS.join(", ")));
    }
    if let Some(e) = get("categories")
        && let Some(v) = e.value.as_str()
        && !v.trim().is_empty()
    {
        let custom = cx.opts.categories.clone();
        for c in v.split(',').map(str::trim) {
            let (known, set, list) = match &custom {
                Some(cc) => (
                    cc.names.iter().any(|n| n == c),
                    format!("custom categories of {}", cc.file.display()),
                    cc.names.join(", "),
                ),
                None => (
                    STANDARD_CATEGORIES.contains(&c),
                    "standard categories".to_string(),
                    STANDARD_CATEGORIES.join(", "),
                ),
            };
            if !known {
                cx.push(
                    &CATEGORIES,
                    format!("category {c:?} is not in the set of {set}"),
                    file,
                    e.value.pos,
                    Some("metadata.annotations[\"categories\"]"),
                )
                .help = Some(format!("use these categories, comma-separated: {list}"));
            }
        }
    }
}

/// `atext` of RFC 5322 (as Go's `net/mail` reads it: any visible character but the specials,
/// UTF-8 allowed).
fn is_atext(c: char) -> bool {
    !matches!(
        c,
        '(' | ')' | '<' | '>' | '[' | ']' | ':' | ';' | '@' | '\\' | ',' | '"' | '.'
    ) && (c.is_ascii_graphic() || !c.is_ascii())
}

/// Whether `s` is one e-mail address as `net/mail.ParseAddress` accepts it: `local@domain`,
/// optionally as `Display Name <local@domain>`.
pub fn check_email(s: &str) -> Result<(), String> {
    let s = s.trim();
    let addr = match (s.rfind('<'), s.strip_suffix('>')) {
        (Some(i), Some(_)) => &s[i + 1..s.len() - 1],
        (None, None) => s,
        _ => return Err("unbalanced angle brackets".into()),
    };
    let Some((local, domain)) = addr.rsplit_once('@') else {
        return Err("missing @ sign".into());
    };
    if local.is_empty() {
        return Err("no local part before @".into());
    }
    let quoted = local.len() >= 2 && local.starts_with('"') && local.ends_with('"');
    if !quoted && !local.chars().all(|c| c == '.' || is_atext(c)) {
        return Err(format!("invalid character in local part {local:?}"));
    }
    if domain.is_empty() {
        return Err("no domain after @".into());
    }
    if domain.starts_with('[') && domain.ends_with(']') {
        return Ok(());
    }
    if domain
        .split('.')
        .any(|a| a.is_empty() || !a.chars().all(is_atext))
    {
        return Err(format!("invalid domain {domain:?}"));
    }
    Ok(())
}

/// Whether `u` is an absolute URL with a scheme and a host (`https://example.com/x`).
pub fn check_url(u: &str) -> Result<(), String> {
    if let Some(c) = u.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("contains {c:?}"));
    }
    let Some((scheme, rest)) = u.split_once(':') else {
        return Err("no scheme (such as https://)".into());
    };
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return Err(format!("invalid scheme {scheme:?}"));
    }
    let Some(rest) = rest.strip_prefix("//") else {
        return Err("no host (expected scheme://host/...)".into());
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = if let Some(v6) = host.strip_prefix('[') {
        match v6.split_once(']') {
            Some((h, rest)) => (h, rest.strip_prefix(':').unwrap_or(rest)),
            None => return Err("unclosed [ in host".into()),
        }
    } else {
        host.split_once(':').unwrap_or((host, ""))
    };
    if !port.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("invalid port {port:?}"));
    }
    if host.is_empty() {
        return Err("no host".into());
    }
    Ok(())
}

/// The image media type of `bytes` by its signature (SVG: an `<svg` element near the start).
pub fn sniff_image(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG") {
        Some("image/png")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else {
        let head = &bytes[..bytes.len().min(64 * 1024)];
        let text = String::from_utf8_lossy(head);
        let t = text.trim_start_matches('\u{feff}').trim_start();
        (t.starts_with('<') && t.contains("<svg")).then_some("image/svg+xml")
    }
}
