//! Data verification over NBD: a scripted nbdkit `sh` plugin in front of a backing file that
//! acknowledges and drops chosen writes (lost writes) and answers chosen reads with another
//! offset's block (misdirected reads); nbdkit's `file` plugin restarted on an older copy of its
//! file (stale data after a restart). Every fault is reported once, by offset and kind; clean
//! data reports none.

use super::{Server, have};
use crate::support::verify::{self, BLOCK, BLOCKS, VerifyRun};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

const BINARY: &str = env!("CARGO_BIN_EXE_iopath");

/// The plugin: serves `disk`; writes at an offset listed in `drop` are acknowledged and
/// dropped; a read at the first offset of a line of `misdirect` returns the second's block.
const PLUGIN: &str = r#"#!/bin/bash
dir="$(dirname "$0")"
disk="$dir/disk.img"
case "$1" in
  get_size) stat -L -c %s "$disk" ;;
  can_write|can_flush) exit 0 ;;
  flush) exit 0 ;;
  pread)
    count=$3; offset=$4
    to=$(awk -v o="$offset" '$1 == o { print $2 }' "$dir/misdirect")
    if [ -n "$to" ]; then offset=$to; fi
    dd if="$disk" bs="$count" count=1 skip="$offset" iflag=skip_bytes status=none ;;
  pwrite)
    count=$3; offset=$4
    if grep -qx "$offset" "$dir/drop"; then cat >/dev/null; exit 0; fi
    dd of="$disk" bs="$count" count=1 iflag=fullblock seek="$offset" oflag=seek_bytes \
       conv=notrunc status=none ;;
  *) exit 2 ;;
esac
"#;

/// A directory with the plugin, a zeroed 1 MiB disk, and the blocks to drop and misdirect.
fn scripted(drop: &[u64], misdirect: &[(u64, u64)]) -> (tempfile::TempDir, PathBuf) {
    let directory = tempfile::tempdir().unwrap();
    let script = directory.path().join("plugin.sh");
    std::fs::write(&script, PLUGIN).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let disk = directory.path().join("disk.img");
    std::fs::File::create(&disk)
        .unwrap()
        .set_len(BLOCKS * BLOCK)
        .unwrap();
    let lines: String = drop
        .iter()
        .map(|block| format!("{}\n", block * BLOCK))
        .collect();
    std::fs::write(directory.path().join("drop"), lines).unwrap();
    let lines: String = misdirect
        .iter()
        .map(|(from, to)| format!("{} {}\n", from * BLOCK, to * BLOCK))
        .collect();
    std::fs::write(directory.path().join("misdirect"), lines).unwrap();
    (directory, script)
}

/// Writes the region and reads it back in one run (fio's default verify).
fn write_then_verify(directory: &Path, url: &str) -> VerifyRun {
    verify::run(
        BINARY,
        directory,
        url,
        &verify::region_args("crc32c", &["--allow-destructive"]),
    )
}

fn sorted(found: &VerifyRun) -> Vec<(u64, String)> {
    let mut reported = found.mismatches();
    reported.sort();
    reported
}

#[test]
fn lost_writes_and_misdirected_reads_over_nbd_are_each_reported() {
    if !have("nbdkit") {
        return;
    }
    let (directory, script) = scripted(&[7, 8, 150], &[(20, 21), (200, 100)]);
    let server = Server::nbdkit(&["sh", script.to_str().unwrap()]);
    let found = write_then_verify(directory.path(), &server.url(""));
    assert_eq!(found.status, 1, "{}", found.describe());
    assert_eq!(
        (found.checked(), found.bad()),
        (BLOCKS, 5),
        "{}",
        found.describe()
    );
    let expected: Vec<(u64, String)> = [
        (7, "never_written"),
        (8, "never_written"),
        (20, "wrong_offset"),
        (150, "never_written"),
        (200, "wrong_offset"),
    ]
    .iter()
    .map(|(block, kind)| (block * BLOCK, kind.to_string()))
    .collect();
    assert_eq!(sorted(&found), expected, "{}", found.describe());
}

#[test]
fn a_clean_nbd_export_reports_no_bad_block() {
    if !have("nbdkit") {
        return;
    }
    let (directory, script) = scripted(&[], &[]);
    let server = Server::nbdkit(&["sh", script.to_str().unwrap()]);
    let found = write_then_verify(directory.path(), &server.url(""));
    assert_eq!(found.status, 0, "{}", found.describe());
    assert_eq!((found.checked(), found.bad()), (BLOCKS, 0));
}

#[test]
fn an_nbd_server_restarted_on_an_older_copy_serves_stale_blocks() {
    if !have("nbdkit") {
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let disk = directory.path().join("disk.img");
    let older = directory.path().join("older.img");
    std::fs::File::create(&disk)
        .unwrap()
        .set_len(BLOCKS * BLOCK)
        .unwrap();
    let disk_arg = format!("file={}", disk.display());
    let mut args = verify::write_args("md5");
    args.push("--allow-destructive".into());
    let mut check = verify::check_args("md5");
    check.push("--allow-destructive".into());
    let server = Server::nbdkit(&["file", &disk_arg]);
    let first = verify::run(BINARY, directory.path(), &server.url(""), &args);
    assert_eq!(first.status, 0, "{}", first.describe());
    std::fs::copy(&disk, &older).unwrap();
    let second = verify::run(BINARY, directory.path(), &server.url(""), &args);
    assert_eq!(second.status, 0, "{}", second.describe());
    let clean = verify::run(BINARY, directory.path(), &server.url(""), &check);
    assert_eq!((clean.status, clean.bad()), (0, 0), "{}", clean.describe());
    // The server comes back from the older copy, on the socket its clients know.
    let mut server = server;
    server.kill();
    std::fs::copy(&older, &disk).unwrap();
    let server = server.restarted(&["file", &disk_arg]);
    let found = verify::run(BINARY, directory.path(), &server.url(""), &check);
    assert_eq!(
        (found.status, found.bad()),
        (1, BLOCKS),
        "{}",
        found.describe()
    );
    assert!(
        sorted(&found).iter().all(|(_, kind)| kind == "stale"),
        "{}",
        found.describe()
    );
    assert_eq!(
        found.verification["mismatches"][0]["written_by_run"].as_str(),
        Some(first.run_id().as_str())
    );
}

/// fio's `trim_verify_zero=1` needs a target that reads trimmed blocks back as zeroes; NBD leaves
/// a trimmed range's contents to the server, so it is refused before any I/O (exit 2) and runs
/// with `trim_verify_zero=0`, trimmed blocks then read as never written.
#[test]
fn trims_of_verified_blocks_over_nbd_need_trim_verify_zero_off() {
    if !have("nbdkit") {
        return;
    }
    let server = Server::nbdkit(&["memory", "1M"]);
    let directory = tempfile::tempdir().unwrap();
    let run_job = |zero: u8| {
        verify::run_job_file(
            BINARY,
            directory.path(),
            &format!(
                "[tv]\nioengine=nbd\nsize=1m\nbs=4k\nrw=randwrite\nnumber_ios=256\nverify=crc32c\n\
                 trim_percentage=50\ntrim_backlog=16\ntrim_verify_zero={zero}\n"
            ),
            &server.url(""),
            &["--allow-destructive"],
        )
    };
    let (status, stderr, result) = run_job(1);
    assert_eq!(status, 2, "{stderr}");
    assert!(stderr.contains("trim_verify_zero"), "{stderr}");
    assert!(result.is_null(), "a refused run wrote a result");
    let (status, stderr, result) = run_job(0);
    assert_eq!(status, 0, "{stderr}");
    let test = &result["tests"][0];
    assert!(test["trim"]["io_count"].as_u64().unwrap() > 0, "{test}");
    assert_eq!(test["verification"]["mismatch_count"], 0, "{test}");
    assert!(
        test["verification"]["trimmed_blocks_checked"].is_null(),
        "{test}"
    );
}

/// A state names the export it was saved for by its URL: the same export loads it, another
/// server's export of the same size is refused before any I/O (exit 2), both named.
#[test]
fn a_state_saved_for_one_nbd_export_is_refused_for_another_of_the_same_size() {
    if !have("nbdkit") {
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let first = Server::nbdkit_tcp(&["memory", "1M"]);
    let second = Server::nbdkit_tcp(&["memory", "1M"]);
    let mut write = verify::write_args("crc32c");
    write.push("--allow-destructive".into());
    let mut check = verify::check_args("crc32c");
    check.push("--allow-destructive".into());
    let written = verify::run(BINARY, directory.path(), &first.url(""), &write);
    assert_eq!(written.status, 0, "{}", written.describe());
    let other = verify::run(BINARY, directory.path(), &second.url(""), &check);
    assert_eq!(other.status, 2, "{}", other.describe());
    assert!(
        other.stderr.contains(&format!(
            "saved for {} (1048576 bytes), not for {} (1048576 bytes)",
            first.url(""),
            second.url("")
        )),
        "{}",
        other.stderr
    );
    assert_eq!(other.verification, serde_json::Value::Null);
    let same = verify::run(BINARY, directory.path(), &first.url(""), &check);
    assert_eq!(
        (same.status, same.checked(), same.bad()),
        (0, BLOCKS, 0),
        "{}",
        same.describe()
    );
}
