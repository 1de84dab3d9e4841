//! `olmctl catalog path` and `olmctl catalog graph`.

use std::path::PathBuf;

use crate::args::{GraphFormat, SemanticsArg};
use crate::term::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Output, Report, out};
use olmctl::diag::Finding;
use olmctl::graph::path::{Semantics, Stop, UpgradePath, parse_installed, resolve};
use olmctl::graph::{CatalogGraphs, ChannelGraph, render};
use olmctl::text::esc;

/// Finds the channel graph for `package`/`channel` (default channel when `None`).
fn channel_graph<'g, 'a>(
    graphs: &'g CatalogGraphs<'a>,
    all_packages: &[&str],
    package: &str,
    channel: Option<&str>,
) -> Result<&'g ChannelGraph<'a>, String> {
    let Some(chans) = graphs.packages.get(package) else {
        return Err(not_a_package(package, all_packages));
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

/// `package `x` is not in the catalog (did you mean `y`?; packages: a, b and 40 more)`.
fn not_a_package(package: &str, all: &[&str]) -> String {
    let guess = olmctl::text::nearest(package, all.iter().copied())
        .map_or(String::new(), |g| format!("did you mean `{g}`? "));
    let list = if all.is_empty() {
        "none".to_string()
    } else {
        olmctl::text::and_more(all, 20)
    };
    format!("package `{package}` is not in the catalog ({guess}packages: {list})")
}

/// Refuses a `--from` that names neither an entry of the package nor a version (`banana`):
/// exit 2 with the nearest entry. A version, or a `name.vX.Y.Z`, that the package lacks is
/// taken as a bundle outside the catalog (a pruned one), as OLM resolves an installed CSV by
/// its name and version whether the catalog still has it or not.
/// `--from` checked against the package: a bundle of it, or a version or CSV name it may have
/// had (a bundle pruned from the catalog: taken as installed, and said so in the note
/// returned); refused when it is neither, names another package's CSV, or is newer than every
/// bundle of the package (nothing could upgrade from it).
fn check_from(
    graphs: &CatalogGraphs<'_>,
    g: &ChannelGraph<'_>,
    from: &str,
) -> Result<Option<String>, String> {
    let installed = parse_installed(g, from);
    let all: Vec<&olmctl::graph::Entry> = graphs
        .packages
        .get(&g.package)
        .into_iter()
        .flat_map(|c| c.values())
        .flat_map(|c| c.graph.node_weights())
        .collect();
    let entries: Vec<&str> = all.iter().map(|e| e.name.as_str()).collect();
    if entries.contains(&from) {
        return Ok(None);
    }
    let Some(version) = &installed.version else {
        let guess = olmctl::text::nearest(from, entries.iter().copied())
            .map_or(String::new(), |n| format!(" (did you mean `{n}`?)"));
        return Err(format!(
            "--from `{from}` is neither a bundle of package `{}` nor a version{guess}: give a CSV name or a version such as 1.2.3",
            g.package
        ));
    };
    let package = esc(&g.package);
    // A CSV name: its name part (before `.v<version>`) must be one this package's bundles have.
    if let Some(name) = &installed.name {
        let stem = |n: &str| n.rfind(".v").map(|i| n[..i].to_string());
        let ours: std::collections::BTreeSet<String> =
            entries.iter().filter_map(|e| stem(e)).collect();
        if !stem(name).is_some_and(|s| ours.contains(&s)) {
            let shown: Vec<String> = ours
                .iter()
                .map(|s| format!("{}.v<version>", esc(s)))
                .collect();
            return Err(format!(
                "--from `{}` is not a bundle of package `{package}`, whose bundles are named {}: give one of them, or a version",
                esc(from),
                shown.join(", ")
            ));
        }
    }
    let newest = all.iter().filter_map(|e| e.version.as_ref()).max();
    if let Some(newest) = newest
        && version > newest
    {
        return Err(format!(
            "--from `{}` is newer than every bundle of package `{package}` (the newest is {newest}): nothing upgrades from it",
            esc(from)
        ));
    }
    if all.iter().any(|e| e.version.as_ref() == Some(version)) {
        return Ok(None);
    }
    Ok(Some(format!(
        "note: `{}` is no bundle of package `{package}` in this catalog: taken as an installed version the catalog no longer has (a pruned bundle)",
        esc(from)
    )))
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
    let mut all: Vec<&str> = loaded
        .cfg
        .packages
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    all.sort_unstable();
    all.dedup();
    let g = match channel_graph(&graphs, &all, package, channel) {
        Ok(g) => g,
        Err(e) => {
            crate::term::error(e);
            return EXIT_USAGE;
        }
    };
    match check_from(&graphs, g, from) {
        Ok(Some(note)) => eprintln!("{note}"),
        Ok(None) => {}
        Err(e) => {
            crate::term::error(e);
            return EXIT_USAGE;
        }
    }
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
    let sem: Semantics = semantics.into();
    let p = resolve(g, parse_installed(g, from), sem, target);
    // A target the path passes by: OLM v0 never upgrades to a skipped entry (sortChannel drops
    // it from the channel order; it installs one only as a Subscription's startingCSV).
    if let Some(t) = target
        && p.stop != Stop::Target
    {
        let name = &g.graph[t].name;
        let skippers: Vec<&str> = g
            .source
            .entries
            .iter()
            .filter(|e| e.skips.iter().any(|s| s == name))
            .map(|e| e.name.as_str())
            .collect();
        let why = if sem == Semantics::V0 && !skippers.is_empty() {
            format!(
                "it is skipped by {}: OLM v0 never upgrades to a skipped entry (it installs one only as a Subscription's startingCSV)",
                olmctl::text::and_more(&skippers, 3)
            )
        } else {
            format!("the path from {} does not go through it", p.from)
        };
        crate::term::error(format_args!(
            "--to `{}`: not reachable as an upgrade target: {}",
            esc(name),
            esc(why)
        ));
    }
    match output {
        Output::Text => out(&path_text(&p)),
        Output::Json => out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&p).unwrap_or_default()
        )),
    }
    if p.stop == Stop::Target || (p.stop == Stop::Head && target.is_none()) {
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

pub fn lint(
    dirs: &[PathBuf],
    with: &[PathBuf],
    package: Option<&str>,
    output: Report,
    args: &crate::report::FindingArgs,
) -> u8 {
    let full = match crate::inputs::catalog(dirs) {
        Ok(l) => l,
        Err(c) => return c,
    };
    let mut others = Vec::new();
    for w in with {
        match crate::inputs::catalog_cfg(w) {
            Ok(cfg) => others.push((
                w.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "with".into()),
                cfg,
            )),
            Err(e) => {
                crate::term::error(format_args!("--with {}: {e}", w.display()));
                return EXIT_USAGE;
            }
        }
    }
    let refs: Vec<(String, &olmctl::fbc::decl::DeclarativeConfig)> =
        others.iter().map(|(n, c)| (n.clone(), c)).collect();
    // Requirements are resolved against the whole catalog, then narrowed to the package.
    let deps: Vec<Finding> = olmctl::resolve::lint::lint(&full.cfg, &refs)
        .into_iter()
        .filter(|f| package.is_none_or(|p| f.subject.package.as_deref() == Some(p)))
        .collect();
    let loaded = match crate::inputs::narrowed(Ok(full), package) {
        Ok(l) => l,
        Err(c) => return c,
    };
    let mut findings = olmctl::checks::fbc::load_errors(&loaded);
    findings.extend(olmctl::checks::graph::lint(&loaded.cfg));
    findings.extend(deps);
    olmctl::diag::sort_findings(&mut findings);
    crate::report::findings_with(&findings, None, args, &loaded.summary(), output, false)
}

pub fn check_upgrades(
    base: PathBuf,
    new: PathBuf,
    output: Report,
    args: &crate::report::FindingArgs,
) -> u8 {
    let old = match crate::inputs::catalog(std::slice::from_ref(&base)) {
        Ok(l) => l,
        Err(c) => return c,
    };
    let loaded = match crate::inputs::catalog(std::slice::from_ref(&new)) {
        Ok(l) => l,
        Err(c) => return c,
    };
    // A base or new catalog with files that do not load would hide regressions: their load
    // errors are findings too. Those both catalogs have (the same code, object and message at
    // the same path below each root) are pre-existing: shown once, from the new catalog, and
    // not failing. A base file that does not load while the new one does still fails: the
    // users of its bundles were not compared.
    let old_root = std::path::absolute(&base).unwrap_or(base);
    let new_root = std::path::absolute(&new).unwrap_or(new);
    let old_errors = olmctl::checks::fbc::load_errors(&old);
    let new_errors = olmctl::checks::fbc::load_errors(&loaded);
    let in_new = olmctl::baseline::Baseline::of(&new_errors, Some(&new_root));
    let in_old = olmctl::baseline::Baseline::of(&old_errors, Some(&old_root));
    let mut findings: Vec<(Finding, bool)> = Vec::new();
    let old_also_new = in_new.known(&old_errors, Some(&old_root));
    findings.extend(
        old_errors
            .into_iter()
            .zip(old_also_new)
            .filter(|(_, both)| !both)
            .map(|(f, _)| (f, false)),
    );
    let new_also_old = in_old.known(&new_errors, Some(&new_root));
    findings.extend(new_errors.into_iter().zip(new_also_old));
    for f in olmctl::checks::upgrades::check(&old.cfg, &loaded.cfg) {
        let pre = f.code == olmctl::checks::upgrades::STILL_STUCK.code;
        findings.push((f, pre));
    }
    findings.sort_by(|a, b| olmctl::diag::compare_findings(&a.0, &b.0));
    findings.dedup_by(|a, b| a.0 == b.0);
    let (findings, known): (Vec<Finding>, Vec<bool>) = findings.into_iter().unzip();
    crate::report::findings_with(
        &findings,
        Some((&known, "pre-existing")),
        args,
        &loaded.summary(),
        output,
        false,
    )
}
