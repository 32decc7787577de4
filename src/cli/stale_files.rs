//! Test files left by killed runs (`.iopath-test-PID.tmp` whose process is gone) in the
//! directories where this run creates its test files: named in a one-line note with the
//! command that removes them, or removed with `--remove-stale`. Never removed otherwise.

use super::messages::for_terminal;
use iopath::run::PreparedRun;
use iopath::targets::test_file::{StaleTestFile, find_stale_test_files, remove_stale_test_file};
use iopath::units::format_bytes;
use std::path::{Path, PathBuf};

/// Looks for stale test files beside the test files `prepared` will create; notes them, or
/// removes them when `remove` (`--remove-stale`). Prints to stderr.
pub fn handle_stale_test_files(prepared: &PreparedRun, remove: bool) {
    let mut directories: Vec<PathBuf> = prepared
        .files_to_create()
        .iter()
        .map(|(path, _, _)| directory_of(path))
        .collect();
    directories.sort();
    directories.dedup();
    if directories.is_empty() {
        if remove {
            eprintln!(
                "note: --remove-stale: this run creates no test file, so nothing was looked for"
            );
        }
        return;
    }
    let stale: Vec<StaleTestFile> = directories
        .iter()
        .flat_map(|directory| find_stale_test_files(directory))
        .collect();
    if stale.is_empty() {
        return;
    }
    if remove {
        for file in &stale {
            match remove_stale_test_file(file) {
                Ok(()) => eprintln!(
                    "removed {} ({}, left by process {} that is gone)",
                    for_terminal(file.path.display()),
                    format_bytes(file.size_bytes),
                    file.pid
                ),
                Err(error) => eprintln!("warning: {}", for_terminal(error)),
            }
        }
    } else {
        eprintln!("note: {}", for_terminal(stale_note(&stale)));
    }
}

/// The one-line note naming `stale` files and how to remove them.
fn stale_note(stale: &[StaleTestFile]) -> String {
    let total: u64 = stale.iter().map(|file| file.size_bytes).sum();
    let paths: Vec<String> = stale
        .iter()
        .map(|file| file.path.display().to_string())
        .collect();
    let quoted: Vec<String> = paths.iter().map(|path| shell_quoted(path)).collect();
    format!(
        "{} test file{} left by killed iopath runs ({}): {}; remove with `rm -- {}`, or run again with --remove-stale",
        stale.len(),
        if stale.len() == 1 { "" } else { "s" },
        format_bytes(total),
        paths.join(", "),
        quoted.join(" ")
    )
}

/// The directory holding `path` (`.` for a bare name).
fn directory_of(path: &Path) -> PathBuf {
    path.parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// `text` as one shell word: as it is when it holds only safe characters, else in single
/// quotes.
fn shell_quoted(text: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "._-/+=:,@%".contains(c);
    if !text.is_empty() && text.chars().all(safe) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_quoted_for_the_shell_only_when_needed() {
        assert_eq!(
            shell_quoted("./.iopath-test-12.tmp"),
            "./.iopath-test-12.tmp"
        );
        assert_eq!(shell_quoted("my dir/x"), "'my dir/x'");
        assert_eq!(shell_quoted("it's"), r"'it'\''s'");
        assert_eq!(shell_quoted(""), "''");
    }
}
