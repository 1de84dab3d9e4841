//! The platforms an image is built for, read from the registry: an index's runnable entries
//! (attestations and `unknown` platforms dropped), or a single manifest's config `os` and
//! `architecture`. Used by `bundle validate --select multiarch`.

use oci_client::Reference;
use serde_json::Value;

use super::image::{Descriptor, Platform};
use super::media;
use super::registry::{Registry, index_entries, runnable};

/// `os/arch` names of `r`'s platforms, sorted, without repeats (variants folded into their
/// architecture, as operator-framework/api's multiarch validator compares them).
pub async fn platforms(reg: &Registry, r: &Reference) -> Result<Vec<(String, String)>, String> {
    let (bytes, _, mt) = reg.fetch_manifest(r).await?;
    let mut out: Vec<(String, String)> = if media::is_index(&mt) {
        let entries = index_entries(&bytes, &r.whole())?;
        runnable(&entries)
            .iter()
            .filter_map(|d| d.platform.clone())
            .map(|p| (p.os, p.architecture))
            .collect()
    } else {
        let v: Value = serde_json::from_slice(&bytes)
            .map_err(|e| format!("{}: manifest is not JSON: {e}", r.whole()))?;
        let config = Descriptor::from_json(&v["config"], &format!("{} config", r.whole()))?;
        let blob = reg.fetch_blob(r, &config).await?;
        let cfg: Value = serde_json::from_slice(&blob)
            .map_err(|e| format!("{}: image config is not JSON: {e}", r.whole()))?;
        Platform::from_json(&cfg)
            .map(|p| vec![(p.os, p.architecture)])
            .unwrap_or_default()
    };
    out.retain(|(os, arch)| {
        !os.is_empty() && os != "unknown" && !arch.is_empty() && arch != "unknown"
    });
    out.sort();
    out.dedup();
    Ok(out)
}
