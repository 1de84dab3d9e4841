//! `olmctl catalog path` and `olmctl catalog graph`.

use std::path::PathBuf;

use crate::args::{GraphFormat, SemanticsArg};
use crate::term::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Output, Report, out};
use olmctl::graph::path::{Semantics, Stop, UpgradePath, parse_installed, resolve};
use olmctl::graph::{CatalogGraphs, ChannelGraph, render};
use olmctl::text::esc;

/// Finds the channel graph for `package`/`channel` (default channel when `None`).
fn channel_graph<'g, 'a>(
    graphs: &'g CatalogGraphs<'a>,
    package: &str,
    channel: Option<&str>,
) -> Result<&'g ChannelGraph<'a>, String> {
    let Some(chans) = graphs.packages.get(package) else {
        let known: Vec<&str> = graphs.packages.keys().map(String::as_str).collect();
        return Err(format!(
            "package `{package}` is not in the catalog (packages: {})",
            known.join(", ")
        ));
    };
    let name = match channel {
        Some(c) => c.to_string(),
        None => graphs
            .default_channels
            .get(package)
            .cloned()
            .ok_or_else(|| {
                format!("package `{package}` has no olm.package blob; pass --channel")
            })?,
    };
    chans.get(&name).ok_or_else(|| {
        let known: Vec<&str> = chans.keys().map(String::as_str).collect();
        format!(
            "package `{package}` has no channel `{name}` (channels: {})",
            known.join(", ")
        )
    })
}

fn path_text(p: &UpgradePath) -> String {
    let sem = match p.semantics {
        Semantics::V0 => "OLM v0",
        Semantics::V1 => "OLM v1",
    };
    let mut s = format!(
        "{}/{} ({sem}): {}",
        esc(&p.package),
        esc(&p.channel),
        esc(&p.from)
    );
    for h in &p.hops {
        match &h.range {
            Some(r) => s.push_str(&format!(
                "\n  -> {} {} (skipRange {})",
                esc(&h.to),
                esc(&h.version),
                esc(r)
            )),
            None => s.push_str(&format!(
                "\n  -> {} {} ({})",
                esc(&h.to),
                esc(&h.version),
                h.edge.as_str()
            )),
        }
    }
    let why = match p.stop {
        Stop::Head => "the channel head".to_string(),
        Stop::Target => "the requested target".to_string(),
        Stop::NoUpgrade => match &p.head {
            Some(h) => format!(
                "no further upgrade; the channel head {} is not reached",
                esc(h)
            ),
            None => "no further upgrade; the channel has no single head".to_string(),
        },
        Stop::Loop => "a loop: the picks go round in a cycle".to_string(),
    };
    s.push_str(&format!("\nends at {}: {why}\n", esc(&p.end)));
    s
}

#[allow(clippy::too_many_arguments)]
pub fn path(
    dir: PathBuf,
    package: &str,
    from: &str,
    channel: Option<&str>,
    to: Option<&str>,
    semantics: SemanticsArg,
    output: Output,
) -> u8 {
    let loaded = match crate::inputs::whole_catalog(&[dir]) {
        Ok(l) => l,
        Err(c) => return c,
    };
    let graphs = CatalogGraphs::build(&loaded.cfg, Some(package));
    let g = match channel_graph(&graphs, package, channel) {
        Ok(g) => g,
        Err(e) => {
            crate::term::error(e);
            return EXIT_USAGE;
        }
    };
    let target = match to {
        Some(t) => match parse_installed(g, t)
            .name
            .as_deref()
            .and_then(|n| g.node(n))
        {
            Some(n) => Some(n),
            None => {
                crate::term::error(format_args!(
                    "--to `{t}` is not an entry of channel `{}`",
                    g.channel
                ));
                return EXIT_USAGE;
            }
        },
        None => None,
    };
    let p = resolve(g, parse_installed(g, from), semantics.into(), target);
    match output {
        Output::Text => out(&path_text(&p)),
        Output::Json => out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&p).unwrap_or_default()
        )),
    }
    if matches!(p.stop, Stop::Head | Stop::Target) {
        EXIT_OK
    } else {
        EXIT_FINDINGS
    }
}

pub fn graph(
    dirs: &[PathBuf],
    package: Option<&str>,
    channel: Option<&str>,
    format: GraphFormat,
    draw_v0_semantics: bool,
    out_file: Option<&std::path::Path>,
) -> u8 {
    if draw_v0_semantics && format != GraphFormat::Mermaid {
        crate::term::error("--draw-v0-semantics applies to --format mermaid only");
        return EXIT_USAGE;
    }
    let loaded = match crate::inputs::whole_catalog(dirs) {
        Ok(l) => l,
        Err(c) => return c,
    };
    let mut graphs = CatalogGraphs::build(&loaded.cfg, package);
    if let Some(p) = package
        && !graphs.packages.contains_key(p)
    {
        crate::term::error(format_args!("package `{p}` is not in the catalog"));
        return EXIT_USAGE;
    }
    if let Some(c) = channel {
        for chans in graphs.packages.values_mut() {
            chans.retain(|name, _| name == c);
        }
        graphs.packages.retain(|_, chans| !chans.is_empty());
        if graphs.packages.is_empty() {
            crate::term::error(format_args!("no channel `{c}` in the selected packages"));
            return EXIT_USAGE;
        }
    }
    let sink: Box<dyn std::io::Write> = match out_file {
        Some(f) => match std::fs::File::create(f) {
            Ok(file) => Box::new(file),
            Err(e) => {
                crate::term::error(format_args!(
                    "--out {}: {e}",
                    olmctl::text::esc(f.display())
                ));
                return EXIT_USAGE;
            }
        },
        None => Box::new(std::io::stdout().lock()),
    };
    let mut w = std::io::BufWriter::with_capacity(1 << 16, sink);
    let title = format!(
        "Upgrade graphs: {}",
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let written = match format {
        GraphFormat::Mermaid => {
            render::mermaid(&loaded.cfg, package, channel, draw_v0_semantics, &mut w)
        }
        GraphFormat::Dot => render::dot(&graphs, &mut w),
        GraphFormat::Text => render::text(&graphs, &mut w),
        GraphFormat::Json => render::json(&graphs, &mut w),
        GraphFormat::Html => olmctl::graph::html::html(&loaded.cfg, &graphs, &title, &mut w),
    }
    .and_then(|()| std::io::Write::flush(&mut w));
    match written {
        Ok(()) => EXIT_OK,
        // A reader that stops early (`| head`) is not an error of ours.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => EXIT_OK,
        Err(e) => {
            crate::term::error(format_args!("cannot write the graph: {e}"));
            EXIT_USAGE
        }
    }
}

pub fn lint(dirs: &[PathBuf], package: Option<&str>, output: Report) -> u8 {
    let loaded = match crate::inputs::narrowed(crate::inputs::catalog(dirs), package) {
        Ok(l) => l,
        Err(c) => return c,
    };
    let mut findings = olmctl::checks::fbc::load_errors(&loaded);
    findings.extend(olmctl::checks::graph::lint(&loaded.cfg));
    olmctl::diag::sort_findings(&mut findings);
    crate::report::catalog_findings(&findings, &loaded, output)
}

pub fn check_upgrades(base: PathBuf, new: PathBuf, output: Report) -> u8 {
    let old = match crate::inputs::catalog(&[base]) {
        Ok(l) => l,
        Err(c) => return c,
    };
    let loaded = match crate::inputs::catalog(&[new]) {
        Ok(l) => l,
        Err(c) => return c,
    };
    // A base or new catalog with files that do not load would hide regressions: their load
    // errors are findings too.
    let mut findings = olmctl::checks::fbc::load_errors(&old);
    findings.extend(olmctl::checks::fbc::load_errors(&loaded));
    findings.extend(olmctl::checks::upgrades::check(&old.cfg, &loaded.cfg));
    olmctl::diag::sort_findings(&mut findings);
    crate::report::catalog_findings(&findings, &loaded, output)
}
