//! The purge of `iopath pts` through the engines: an NBD export whose server takes trims is
//! trimmed whole (nbdkit's stats filter counts the bytes), one whose server does not keeps
//! the "used state" note; a file iopath created gets its holes punched (its allocated blocks
//! fall to what the rounds write), a file it did not create is left as it is.

use super::common::{Nbdkit, brief_saturation, disk_tempdir, plain_in, write_foreign_file};
use crate::support::devices::allocated_blocks;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

fn state(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("pts.json")).expect("pts.json written");
    serde_json::from_str(&text).unwrap()
}

/// Write saturation alone, briefly, on `target`, with `extra` flags; the state it left.
fn saturation(dir: &Path, target: &str, out: &str, extra: &[&str]) -> Value {
    let mut args = brief_saturation(target);
    args.extend([
        "--qd",
        "4",
        "--workers",
        "1",
        "--no-history",
        "--output-dir",
        out,
    ]);
    args.extend_from_slice(extra);
    let output = plain_in(dir, &args);
    assert_eq!(output.status, 0, "{}", output.stderr);
    state(&dir.join(out))
}

/// Stops nbdkit (pid file `dir/nbdkit.pid`) with SIGTERM, so that its filters write what they
/// keep, and returns the stats filter's file once written.
fn stopped_stats(dir: &Path, stats: &Path) -> String {
    let pid: i32 = std::fs::read_to_string(dir.join("nbdkit.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: kill has no memory preconditions; the pid is the nbdkit this test started.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let began = Instant::now();
    loop {
        let text = std::fs::read_to_string(stats).unwrap_or_default();
        if text.contains("trim") || began.elapsed() > Duration::from_secs(20) {
            return text;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn pts_trims_an_nbd_export_whole_where_the_server_takes_trims() {
    if crate::support::devices::required_tool("nbdkit", "nbdkit").is_none() {
        return;
    }
    let server_dir = tempfile::tempdir().unwrap();
    let stats = server_dir.path().join("stats");
    let stats_argument = format!("statsfile={}", stats.display());
    let server = Nbdkit::start(
        server_dir.path(),
        &["--filter=stats", "memory", "24M", &stats_argument],
    );
    let dir = disk_tempdir();
    let result = saturation(dir.path(), &server.url(), "out", &["--allow-destructive"]);
    let test = &result["tests"][0];
    assert_eq!(test["purged"], true, "{result}");
    assert_eq!(
        result["conditions"]["purge_method"],
        "trim of the whole export (NBD_CMD_TRIM)"
    );
    // The server's own count: one 16 MiB trim and one of the last 8 MiB, nothing else.
    let counted = stopped_stats(server_dir.path(), &stats);
    let trims = counted
        .lines()
        .find(|line| line.trim_start().starts_with("trim:"))
        .unwrap_or_else(|| panic!("no trims counted: {counted}"));
    assert!(
        trims.contains(" 2 ops,") && trims.contains(" 24.00 MiB,"),
        "{trims}"
    );
    drop(server);

    // A server without trims: the purge is left out, and the report says why.
    let without_dir = tempfile::tempdir().unwrap();
    let without = Nbdkit::start(
        without_dir.path(),
        &[
            "eval",
            "get_size=echo 8388608",
            "pread=head -c $3 /dev/zero",
            "pwrite=cat >/dev/null",
        ],
    );
    let result = saturation(
        dir.path(),
        &without.url(),
        "without",
        &["--allow-destructive"],
    );
    assert_eq!(result["tests"][0]["purged"], false);
    let method = result["conditions"]["purge_method"].as_str().unwrap();
    for words in [
        "cannot be trimmed",
        "NBD_FLAG_SEND_TRIM",
        "results start from a used state",
    ] {
        assert!(method.contains(words), "{words}: {method}");
    }
}

#[test]
fn pts_punches_holes_only_in_a_file_iopath_created() {
    let dir = disk_tempdir();
    let size = 32u64 << 20;
    let made = plain_in(
        dir.path(),
        &[
            "run",
            "own.dat",
            "--size",
            "32m",
            "--rw",
            "write",
            "--bs",
            "1m",
            "--bytes",
            "4m",
            "--no-history",
        ],
    );
    assert_eq!(made.status, 0, "{}", made.stderr);
    let own = dir.path().join("own.dat");
    let foreign = dir.path().join("foreign.dat");
    write_foreign_file(&foreign, size as usize);
    let full = |path: &Path| allocated_blocks(path) * 512 >= size;
    assert!(full(&own) && full(&foreign));

    // Write saturation over the first 1 MiB (4 % of 32 MiB, in whole MiB): what the rounds write is all that
    // is left after the purge.
    let capacity = ["--capacity-pct", "4"];
    let result = saturation(dir.path(), "own.dat", "own", &capacity);
    assert_eq!(result["tests"][0]["purged"], true, "{result}");
    let method = result["conditions"]["purge_method"].as_str().unwrap();
    assert!(
        method.starts_with("holes punched over the whole file"),
        "{method}"
    );
    let left = allocated_blocks(&own) * 512;
    assert!(left <= 2 << 20, "{left} bytes still allocated of {size}");

    let refused = plain_in(
        dir.path(),
        &[
            "pts",
            "foreign.dat",
            "--tests",
            "saturation",
            "--no-history",
        ],
    );
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    let result = saturation(
        dir.path(),
        "foreign.dat",
        "foreign",
        &[&capacity[..], &["--allow-destructive"]].concat(),
    );
    assert_eq!(result["tests"][0]["purged"], false);
    let method = result["conditions"]["purge_method"].as_str().unwrap();
    assert!(
        method.contains("carries no mark") && method.contains("results start from a used state"),
        "{method}"
    );
    assert!(full(&foreign), "the foreign file lost blocks");
}
