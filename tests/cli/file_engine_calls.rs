//! The system calls of the file-operation engines, seen from the outside with strace: what
//! the measured operation is (fio's: one `unlink` of a file nobody holds open, one
//! `open(O_CREAT)` and `close` per new file), and that iopath's own work on the files (the
//! ownership mark) falls outside every worker's measured time.

use crate::common::{list_dir, traced_run};
use crate::support::devices::required_tool;
use std::path::Path;

/// strace's log of `iopath run ARGS` in `dir`, one line per call of `calls` (`-y` shows the
/// path behind each descriptor, and a path removed while open as `(deleted)`).
fn traced_calls(strace: &Path, dir: &Path, calls: &str, args: &[&str]) -> Vec<String> {
    let tracing = format!("trace={calls}");
    traced_run(strace, dir, &["-y", "-e", &tracing], args)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn filedelete_unlinks_files_that_no_descriptor_holds() {
    let Some(strace) = required_tool("strace", "strace") else {
        return;
    };
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    let log = traced_calls(
        &strace,
        dir.path(),
        "openat,close,unlink",
        &["--engine", "filedelete", "--files", "30", "d/f"],
    );
    let unlinks = log
        .iter()
        .filter(|line| line.contains("unlink(\"d/f."))
        .count();
    assert_eq!(unlinks, 30, "one unlink per file");
    // A descriptor still open at the unlink leaves it only the name to remove; the file is
    // freed at the close, after the run (and outside its measured time).
    let closed_after: Vec<&String> = log
        .iter()
        .filter(|line| {
            line.contains("close(") && line.contains("/d/f.") && line.contains("(deleted)")
        })
        .collect();
    assert!(
        closed_after.is_empty(),
        "{} files were still open when they were unlinked, e.g. {}",
        closed_after.len(),
        closed_after[0]
    );
    assert!(list_dir(&dir.path().join("d")).is_empty());
}

#[test]
fn filecreate_marks_its_files_after_every_worker_has_ended() {
    let Some(strace) = required_tool("strace", "strace") else {
        return;
    };
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    let job = "[global]\nioengine=filecreate\nnrfiles=100\nfilesize=4k\ndirectory=d\n\
               [a]\n[b]\n[c]\n[e]\n";
    std::fs::write(dir.path().join("job.fio"), job).unwrap();
    let log = traced_calls(
        &strace,
        dir.path(),
        "openat,close,fsetxattr",
        &["--job", "job.fio"],
    );
    let creates: Vec<usize> = log
        .iter()
        .enumerate()
        .filter(|(_, line)| line.contains("\"d/") && line.contains("O_CREAT"))
        .map(|(at, _)| at)
        .collect();
    let marks: Vec<usize> = log
        .iter()
        .enumerate()
        .filter(|(_, line)| line.contains("fsetxattr(") && line.contains("/d/"))
        .map(|(at, _)| at)
        .collect();
    // The measured operation is fio's: one open(O_CREAT) (and its close) per file.
    assert_eq!(creates.len(), 400, "one create per file");
    assert_eq!(marks.len(), 400, "one mark per file");
    // Marking a file is iopath's own work: no worker that is still creating pays for it.
    assert!(
        creates.last() < marks.first(),
        "a mark (line {}) came before the last create (line {})",
        marks[0] + 1,
        creates[creates.len() - 1] + 1
    );
    assert_eq!(list_dir(&dir.path().join("d")).len(), 400);
}
