//! `olmctl completion SHELL` (clap_complete's scripts) and `olmctl man` (clap_mangen's pages,
//! one per command as git names them: `olmctl-catalog-validate.1`). Both are generated from the
//! command line's definition they are given, so they never fall behind it, and are the same
//! bytes on every run (the pages carry no date).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::term::{EXIT_OK, EXIT_USAGE, error, out};

/// `olmctl completion` arguments.
#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// The shell; e.g. `source <(olmctl completion bash)` in ~/.bashrc, or
    /// `olmctl completion zsh > "${fpath[1]}/_olmctl"`.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// `olmctl man` arguments.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write olmctl.1 and one page per subcommand (olmctl-catalog-validate.1, ...) into this
    /// directory, and print their names; without it, olmctl.1 goes to stdout.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
}

/// The name the scripts complete.
const BIN: &str = "olmctl";

/// Prints the completion script of `cmd` for the shell.
pub fn completion(a: CompletionArgs, mut cmd: clap::Command) -> u8 {
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, BIN, &mut script);
    out(&String::from_utf8_lossy(&script));
    EXIT_OK
}

/// Completions of `kubectl olm ARGS` for kubectl, which (since 1.26) runs
/// `kubectl_complete-olm ARGS PARTIAL` with the words after `olm`, the one being completed
/// last (plugin_completion.go :: pluginCompletion, getPluginCompletions): one completion a
/// line (`value<TAB>description`; a value holding a control or bidi character is not offered,
/// a description is escaped), then cobra's directive: 4, no file completion (plus 2, no
/// space after it, when a directory is offered), or 0, the shell's default (file names), when
/// there is none to offer and none was withheld.
pub fn kubectl_complete(mut cmd: clap::Command, args: Vec<OsString>) -> u8 {
    let mut words = vec![OsString::from(cmd.get_name())];
    words.extend(args);
    if words.len() == 1 {
        words.push(OsString::new());
    }
    let index = words.len() - 1;
    let cwd = std::env::current_dir().ok();
    let candidates =
        clap_complete::engine::complete(&mut cmd, words, index, cwd.as_deref()).unwrap_or_default();
    let mut s = String::new();
    let (mut offered, mut withheld, mut directory) = (false, false, false);
    for c in candidates.iter().filter(|c| !c.is_hide_set()) {
        let value = c.get_value().to_string_lossy();
        // One line each, inserted as it is: a value with a line break or a tab cannot be
        // offered, nor one (a file name) with another control or bidi character, which the
        // shell would show raw in its list; escaped, it would name no file.
        if value.chars().any(olmctl::text::needs_escape) {
            withheld = true;
            continue;
        }
        if value.is_empty() {
            continue;
        }
        offered = true;
        directory |= value.ends_with(std::path::MAIN_SEPARATOR);
        s.push_str(&value);
        if let Some(help) = c.get_help() {
            let help = help.to_string();
            let first = help.lines().next().unwrap_or_default();
            if !first.is_empty() {
                s.push('\t');
                s.push_str(&olmctl::text::escape(first));
            }
        }
        s.push('\n');
    }
    // cobra's ShellCompDirectiveNoFileComp (4), ShellCompDirectiveNoSpace (2). With a value
    // withheld and none offered, the shell's own file completion would list it: 4 too.
    let directive = match (offered || withheld, directory) {
        (false, _) => 0,
        (true, false) => 4,
        (true, true) => 4 | 2,
    };
    s.push_str(&format!(":{directive}\n"));
    out(&s);
    EXIT_OK
}

/// A page in roff.
fn page(cmd: clap::Command) -> (String, Vec<u8>) {
    let source = format!("olmctl {}", env!("CARGO_PKG_VERSION"));
    let man = clap_mangen::Man::new(cmd).source(source);
    let mut roff = Vec::new();
    // Rendering into memory cannot fail.
    let _ = man.render(&mut roff);
    (man.get_filename(), roff)
}

/// Every visible command below `cmd`, depth first, `cmd` first.
fn commands(cmd: &clap::Command, all: &mut Vec<clap::Command>) {
    all.push(cmd.clone());
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        commands(sub, all);
    }
}

/// Prints `cmd`'s page, or writes every page into `--out-dir`.
pub fn man(a: ManArgs, cmd: clap::Command) -> u8 {
    let mut cmd = cmd.disable_help_subcommand(true);
    let Some(dir) = a.out_dir else {
        out(&String::from_utf8_lossy(&page(cmd).1));
        return EXIT_OK;
    };
    // Built once from the top, so that each subcommand knows its full name.
    cmd.build();
    let mut all = Vec::new();
    commands(&cmd, &mut all);
    let pages: Vec<(String, Vec<u8>)> = all.into_iter().map(page).collect();
    // Every page checked before any is written: a refused one leaves the directory as it was.
    let mut written = String::new();
    for write in [false, true] {
        for (name, roff) in &pages {
            let name = Path::new(name);
            let r = if write {
                olmctl::outdir::write(&dir, name, roff)
            } else {
                olmctl::outdir::check(&dir, name)
            };
            if let Err(e) = r {
                error(e);
                return EXIT_USAGE;
            }
            if write {
                written.push_str(&format!(
                    "{}\n",
                    olmctl::text::esc(dir.join(name).display())
                ));
            }
        }
    }
    out(&written);
    EXIT_OK
}
