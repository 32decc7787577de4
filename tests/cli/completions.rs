//! Shell completions and manual pages, generated from the clap declarations: each shell loads
//! its script and completes subcommands and flags from it; every page renders cleanly with
//! groff; `iopath man --dir` writes a page per subcommand and refuses a directory that is not.

use crate::common::*;
use crate::support::skip_unless;
use std::process::Command;

/// The completion script `iopath completions SHELL` prints, in `dir/NAME`.
fn script(dir: &std::path::Path, shell: &str, name: &str) -> std::path::PathBuf {
    let output = plain_in(dir, &["completions", shell]);
    output.expect_status(0);
    let path = dir.join(name);
    std::fs::write(&path, &output.stdout).unwrap();
    path
}

/// Runs `shell ARGS` in `dir`; its stdout, after checking that it succeeded.
fn shell_output(dir: &std::path::Path, shell: &str, args: &[&str]) -> String {
    let output = Command::new(shell)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{shell} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn bash_completes_subcommands_flags_and_shells() {
    skip_unless!(
        has_command("bash"),
        "bash is not installed (apt-get install bash)"
    );
    let dir = tempfile::tempdir().unwrap();
    script(dir.path(), "bash", "iopath.bash");
    // What bash hands a completion function: the words, the index of the word under the
    // cursor, and (command, word, previous word) as arguments.
    let complete = |words: &[&str]| {
        let program = format!(
            "source ./iopath.bash; COMP_WORDS=({}); COMP_CWORD={}; _iopath iopath '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            words.join(" "),
            words.len() - 1,
            words[words.len() - 1],
            words[words.len() - 2],
        );
        shell_output(dir.path(), "bash", &["-c", &program])
    };
    assert_eq!(complete(&["iopath", "comp"]).trim(), "compare\ncompletions");
    assert_eq!(
        complete(&["iopath", "run", "--fsync"]).trim(),
        "--fsync-at-end"
    );
    assert_eq!(complete(&["iopath", "completions", "z"]).trim(), "zsh");
    assert_eq!(complete(&["iopath", "man", "--d"]).trim(), "--dir");
}

#[test]
fn fish_completes_and_zsh_reads_its_script() {
    skip_unless!(
        has_command("fish"),
        "fish is not installed (apt-get install fish)"
    );
    skip_unless!(
        has_command("zsh"),
        "zsh is not installed (apt-get install zsh)"
    );
    let dir = tempfile::tempdir().unwrap();
    script(dir.path(), "fish", "iopath.fish");
    let offered = shell_output(
        dir.path(),
        "fish",
        &[
            "-c",
            "source iopath.fish; complete -C 'iopath pa'; complete -C 'iopath run --fsync'",
        ],
    );
    let words: Vec<&str> = offered
        .lines()
        .map(|line| line.split('\t').next().unwrap())
        .collect();
    assert_eq!(words, ["path", "--fsync-at-end"], "{offered}");

    let zsh = script(dir.path(), "zsh", "_iopath");
    shell_output(dir.path(), "zsh", &["-n", zsh.to_str().unwrap()]);
    let text = std::fs::read_to_string(&zsh).unwrap();
    assert!(text.starts_with("#compdef iopath"), "{text}");
    assert!(text.contains("--fsync-at-end"));

    let refused = plain_in(dir.path(), &["completions", "tcsh"]);
    refused.expect_status(2);
    assert!(refused.stderr.contains("'tcsh'"), "{}", refused.stderr);
}

#[test]
fn every_manual_page_renders_cleanly() {
    skip_unless!(
        has_command("groff"),
        "groff is not installed (apt-get install groff-base)"
    );
    let dir = tempfile::tempdir().unwrap();
    let printed = plain_in(dir.path(), &["man"]);
    printed.expect_status(0);
    std::fs::create_dir(dir.path().join("man1")).unwrap();
    let written = plain_in(dir.path(), &["man", "--dir", "man1"]);
    written.expect_status(0);
    let pages = list_dir(&dir.path().join("man1"));
    assert!(
        written
            .stderr
            .contains(&format!("wrote {} manual pages to man1", pages.len())),
        "{}",
        written.stderr
    );
    for expected in [
        "iopath.1",
        "iopath-run.1",
        "iopath-compare.1",
        "iopath-path.1",
    ] {
        assert!(pages.iter().any(|page| page == expected), "{pages:?}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("man1/iopath.1")).unwrap(),
        printed.stdout
    );
    // Plain text out (-P-cbu: no bold or underline by overstriking), every warning on (-ww).
    for page in &pages {
        let output = Command::new("groff")
            .args(["-man", "-Tutf8", "-P-cbu", "-ww"])
            .arg(dir.path().join("man1").join(page))
            .output()
            .unwrap();
        assert!(output.status.success(), "{page}");
        let warnings = String::from_utf8_lossy(&output.stderr);
        assert!(warnings.is_empty(), "{page}: {warnings}");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(text.contains("NAME"), "{page}: {text}");
    }
    let path_page = Command::new("groff")
        .args(["-man", "-Tutf8", "-P-cbu"])
        .arg(dir.path().join("man1/iopath-path.1"))
        .output()
        .unwrap();
    // The escapes of characters beyond ASCII come back as those characters.
    assert!(String::from_utf8_lossy(&path_page.stdout).contains("file → filesystem"));

    let refused = plain_in(dir.path(), &["man", "--dir", "no-such-directory"]);
    refused.expect_status(2);
    assert!(
        refused
            .stderr
            .contains("no such directory no-such-directory"),
        "{}",
        refused.stderr
    );
}
