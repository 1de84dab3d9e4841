//! Package rules: name present, unique and a DNS-1123 label (FBC010-012), default channel set
//! and existing (FBC013-014), at least one channel (FBC015), icon sanity (FBC016, not checked by
//! opm: its icon checks are commented out).

use super::Sink;
use super::codes::*;
use crate::diag::Subject;
use crate::model::Index;

/// Why `name` is not a DNS-1123 label, if it is not one.
pub fn dns1123_label_error(name: &str) -> Option<String> {
    let mut errs = Vec::new();
    if name.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if name.contains('.') {
        errs.push("must not contain dots".to_string());
    } else {
        let b = name.as_bytes();
        let ok = !b.is_empty()
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-');
        if !ok {
            errs.push(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
                    .to_string(),
            );
        }
    }
    (!errs.is_empty()).then(|| format!("[{}]", errs.join(", ")))
}

/// Runs the package rules.
pub fn check(idx: &Index<'_>, sink: &mut Sink) {
    for (name, view) in &idx.packages {
        let Some(first) = view.package() else {
            continue;
        };
        let subj = Subject::package(name);
        if name.is_empty() {
            for p in &view.blobs {
                sink.push(
                    &PACKAGE_NO_NAME,
                    "config contains package with no name",
                    &p.src.file,
                    p.src.pos,
                    Subject::default(),
                );
            }
            continue;
        }
        for dup in view.blobs.iter().skip(1) {
            sink.push(
                &DUPLICATE_PACKAGE,
                format!("duplicate package \"{name}\""),
                &dup.src.file,
                dup.src.pos,
                subj.clone(),
            )
            .help = Some(format!(
                "the first definition is at {}:{}; catalogs for different platform versions must be validated separately",
                first.src.file.display(),
                first.src.pos.line
            ));
        }
        if let Some(e) = dns1123_label_error(name) {
            sink.push(
                &PACKAGE_NAME,
                format!("invalid package name \"{name}\": {e}"),
                &first.src.file,
                first.src.pos,
                subj.clone(),
            );
        }
        if first.default_channel.is_empty() {
            sink.push(
                &NO_DEFAULT_CHANNEL,
                "default channel must be set",
                &first.src.file,
                first.src.pos,
                subj.clone(),
            );
        } else if !view.channels.contains_key(first.default_channel.as_str()) {
            let mut known: Vec<&str> = view.channels.keys().copied().collect();
            known.sort();
            sink.push(
                &DEFAULT_CHANNEL_MISSING,
                format!(
                    "default channel \"{}\" not found in channels list",
                    first.default_channel
                ),
                &first.src.file,
                first.src.pos,
                subj.clone(),
            )
            .help = Some(if known.is_empty() {
                "add an olm.channel blob for it".into()
            } else {
                format!("the package's channels are: {}", known.join(", "))
            });
        }
        if view.channels.is_empty() {
            sink.push(
                &NO_CHANNELS,
                "package must contain at least one channel",
                &first.src.file,
                first.src.pos,
                subj.clone(),
            );
        }
        if let Some(icon) = &first.icon {
            if icon.base64data.is_empty() {
                sink.push(
                    &ICON,
                    "icon has no base64data",
                    &first.src.file,
                    icon.data_pos,
                    subj.clone(),
                );
            }
            if icon.mediatype.is_empty() {
                sink.push(
                    &ICON,
                    "icon has no mediatype",
                    &first.src.file,
                    icon.mediatype_pos,
                    subj.clone(),
                );
            } else if !icon.mediatype.starts_with("image/") {
                sink.push(
                    &ICON,
                    format!("icon mediatype \"{}\" is not an image type", icon.mediatype),
                    &first.src.file,
                    icon.mediatype_pos,
                    subj.clone(),
                )
                .help = Some("use image/svg+xml, image/png, image/jpeg or image/gif".into());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::dns1123_label_error;

    #[test]
    fn dns_labels() {
        assert_eq!(dns1123_label_error("kube-green"), None);
        assert_eq!(
            dns1123_label_error("foo.bar").as_deref(),
            Some("[must not contain dots]")
        );
        assert!(dns1123_label_error("Foo").is_some());
        assert!(dns1123_label_error("-a").is_some());
        assert!(dns1123_label_error(&"a".repeat(64)).is_some());
        assert_eq!(dns1123_label_error(&"a".repeat(63)), None);
    }
}
