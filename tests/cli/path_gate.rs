//! The gate through the binary: a history, a verify state file or a recorded machine that is
//! not a regular file (a block device, a FIFO, /dev/zero, directly or through a link) is
//! refused at once, before any I/O, and never blocks; history readers work on a read-only
//! copy and never change it.

use crate::common::*;
use crate::support::run_with_limit;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Longest any of these commands may take: each ends at once when the gate holds; a FIFO that
/// is opened would block until the limit.
const LIMIT: Duration = Duration::from_secs(60);

/// Bytes at the head of each loop device these tests make: a device with data.
const HEAD: &[u8] = b"a file system lives here; iopath must not write over it";

/// A loop device whose first bytes are [`HEAD`]; `None` (the test skipped) without root.
fn device_with_data() -> Option<LoopDevice> {
    LoopDevice::attach_with(
        8,
        |image| {
            let mut bytes = std::fs::read(image).unwrap();
            bytes[..HEAD.len()].copy_from_slice(HEAD);
            std::fs::write(image, bytes).unwrap();
        },
        false,
    )
}

/// The first bytes of `device`.
fn head_of(device: &Path) -> Vec<u8> {
    let bytes = std::fs::read(device).unwrap();
    bytes[..HEAD.len()].to_vec()
}

/// The journals SQLite would have made beside `path`.
fn journals_beside(path: &Path) -> Vec<PathBuf> {
    ["-wal", "-shm", "-journal"]
        .iter()
        .map(|suffix| PathBuf::from(format!("{}{suffix}", path.display())))
        .filter(|journal| journal.exists())
        .collect()
}

/// A short null-engine run of a 1 MiB file `t.dat`.
fn null_run() -> Vec<String> {
    crate::history::null_run("read", "0.2")
        .into_iter()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_history_on_a_block_device_is_refused_by_runs_and_readers_before_any_io() {
    let Some(device) = device_with_data() else {
        return;
    };
    let dir = disk_tempdir();
    let link = dir.path().join("history.sqlite");
    std::os::unix::fs::symlink(device.path(), &link).unwrap();
    // Journals some earlier process left beside the device node are not this test's.
    let journals_before = journals_beside(device.path());
    for history in [device.path(), link.as_path()] {
        for args in [null_run(), vec!["history".to_string()]] {
            let (status, stderr) = run_with_limit(
                iopath()
                    .current_dir(dir.path())
                    .env("IOPATH_HISTORY", history)
                    .args(&args),
                LIMIT,
            );
            assert_eq!(status, 2, "{}: {args:?}: {stderr}", history.display());
            assert!(
                stderr.contains(&history.display().to_string()) && stderr.contains("block device"),
                "{stderr}"
            );
            assert_eq!(head_of(device.path()), HEAD, "{args:?} wrote the device");
            assert_eq!(journals_beside(device.path()), journals_before);
            assert_eq!(journals_beside(&link), Vec::<PathBuf>::new());
            assert!(!dir.path().join("t.dat").exists(), "the run did I/O");
        }
    }
}

/// Saves a verify state in `dir` with a write run; returns the state file's path.
fn saved_state(dir: &Path) -> PathBuf {
    let args = crate::support::verify::write_args("crc32c");
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    args.insert(0, "t.dat");
    run_in(dir, &args).expect_status(0);
    let name = list_dir(dir)
        .into_iter()
        .find(|name| name.ends_with("-verify.state"))
        .expect("a verify state file");
    dir.join(name)
}

/// Runs the verify run `args` (`write_args` or `check_args`) in `dir` within [`LIMIT`].
fn verify_run(dir: &Path, args: Vec<String>) -> (i32, String) {
    let mut command = iopath();
    command
        .current_dir(dir)
        .args(["run", "t.dat", "--no-history"])
        .args(args);
    run_with_limit(&mut command, LIMIT)
}

#[test]
fn a_verify_state_linked_to_a_block_device_is_never_written() {
    let Some(device) = device_with_data() else {
        return;
    };
    let dir = disk_tempdir();
    let state = saved_state(dir.path());
    let data_before = std::fs::read(dir.path().join("t.dat")).unwrap();
    std::fs::remove_file(&state).unwrap();
    std::os::unix::fs::symlink(device.path(), &state).unwrap();
    let (status, stderr) = verify_run(dir.path(), crate::support::verify::write_args("crc32c"));
    assert_eq!(status, 2, "{stderr}");
    assert!(
        stderr.contains("verify state file") && stderr.contains("block device"),
        "{stderr}"
    );
    assert_eq!(
        head_of(device.path()),
        HEAD,
        "the state was written to the device"
    );
    assert_eq!(
        std::fs::read(dir.path().join("t.dat")).unwrap(),
        data_before,
        "the run did I/O before refusing"
    );
}

#[test]
fn a_fifo_or_dev_zero_as_the_verify_state_is_refused_at_once() {
    let dir = disk_tempdir();
    let state = saved_state(dir.path());
    let fifo = dir.path().join("fifo");
    crate::support::devices::make_fifo(&fifo);
    let data_before = std::fs::read(dir.path().join("t.dat")).unwrap();
    for (target, kind) in [
        (fifo.as_path(), "FIFO"),
        (Path::new("/dev/zero"), "character device"),
    ] {
        std::fs::remove_file(&state).unwrap();
        std::os::unix::fs::symlink(target, &state).unwrap();
        for args in [
            crate::support::verify::check_args("crc32c"),
            crate::support::verify::write_args("crc32c"),
        ] {
            let (status, stderr) = verify_run(dir.path(), args.clone());
            assert_eq!(status, 2, "{}: {args:?}: {stderr}", target.display());
            assert!(
                stderr.contains("verify state file") && stderr.contains(kind),
                "{stderr}"
            );
        }
    }
    // The FIFO itself in the state file's place.
    std::fs::remove_file(&state).unwrap();
    crate::support::devices::make_fifo(&state);
    for args in [
        crate::support::verify::check_args("crc32c"),
        crate::support::verify::write_args("crc32c"),
    ] {
        let (status, stderr) = verify_run(dir.path(), args.clone());
        assert_eq!(status, 2, "{args:?}: {stderr}");
    }
    assert_eq!(
        std::fs::read(dir.path().join("t.dat")).unwrap(),
        data_before
    );
}

/// Copies the directory tree `from` to `to`, links kept as links.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (source, destination) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            let target = std::fs::read_link(&source).unwrap();
            std::os::unix::fs::symlink(target, &destination).unwrap();
        } else if kind.is_dir() {
            copy_tree(&source, &destination);
        } else {
            std::fs::copy(&source, &destination).unwrap();
        }
    }
}

/// Replaces every regular file below `directory` with a FIFO.
fn fifos_for_files(directory: &Path) {
    for entry in std::fs::read_dir(directory).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            fifos_for_files(&entry.path());
        } else if kind.is_file() {
            std::fs::remove_file(entry.path()).unwrap();
            crate::support::devices::make_fifo(&entry.path());
        }
    }
}

#[test]
fn fifos_in_a_recorded_machine_never_block_path_root() {
    let dir = disk_tempdir();
    let root = dir.path().join("vm");
    copy_tree(
        Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/machines/virtio-vm"
        )),
        &root,
    );
    fifos_for_files(&root.join("sys"));
    fifos_for_files(&root.join("proc"));
    let root = root.to_string_lossy().into_owned();
    for target in ["/var/tmp/iopath/test.dat", "/dev/vda"] {
        let (status, stderr) = run_with_limit(
            iopath()
                .current_dir(dir.path())
                .args(["path", "--root", &root, target]),
            LIMIT,
        );
        // What the machine shows is unknown now; what matters is that it answers.
        assert!(status == 0 || status == 2, "{target}: {status}: {stderr}");
    }
}

#[test]
fn history_readers_open_it_read_only_and_never_migrate_it() {
    let dir = disk_tempdir();
    let history = dir.path().join("h.sqlite");
    // An empty database file (schema version 0): a reader must leave it as it is.
    std::fs::write(&history, b"").unwrap();
    let listed = plain_in_with_history(dir.path(), &history, &["history"]);
    assert_eq!(listed.status, 0, "{}", listed.stderr);
    assert!(
        listed.stdout.contains("no run kept yet"),
        "{}",
        listed.stdout
    );
    assert_eq!(std::fs::metadata(&history).unwrap().len(), 0, "migrated");
    assert_eq!(journals_beside(&history), Vec::<PathBuf>::new());
    // A run migrates it and keeps itself.
    let run = plain_in_with_history(
        dir.path(),
        &history,
        &crate::history::null_run("read", "0.2"),
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    // A copy on a read-only file system reads as well.
    let copy = dir.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    std::fs::copy(&history, copy.join("h.sqlite")).unwrap();
    let read_only = dir.path().join("read-only");
    let Some(_mount) = Mount::new(&["--bind", "-o", "ro", copy.to_str().unwrap()], &read_only)
    else {
        return;
    };
    let copied = read_only.join("h.sqlite");
    assert!(
        std::fs::write(read_only.join("probe"), b"x").is_err(),
        "not read-only"
    );
    let listed = plain_in_with_history(dir.path(), &copied, &["history"]);
    assert_eq!(listed.status, 0, "{}", listed.stderr);
    assert!(listed.stdout.contains("t.dat"), "{}", listed.stdout);
    let compared = plain_in_with_history(dir.path(), &copied, &["compare", "@last", "@last"]);
    assert_eq!(compared.status, 0, "{}", compared.stderr);
}

/// `iopath ARGS` in `dir` with its history at `history`.
fn plain_in_with_history(dir: &Path, history: &Path, args: &[&str]) -> RunOutput {
    let output = iopath()
        .current_dir(dir)
        .env("IOPATH_HISTORY", history)
        .args(args)
        .output()
        .expect("iopath runs");
    into_run_output(output, None)
}
