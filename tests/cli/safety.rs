//! Nothing is lost: devices and foreign files are written only when the user says so.

use crate::common::*;
use std::fs;
use std::process::Command;

#[test]
fn a_file_iopath_did_not_create_needs_allow_destructive() {
    let dir = disk_tempdir();
    write_foreign_file(&dir.path().join("mine.bin"), 1 << 20);
    let args = ["mine.bin", "--rw", "write", "--bytes", "64k", "--bs", "4k"];
    let refused = plain_in(dir.path(), &[&["run"], &args[..]].concat());
    assert_eq!(refused.status, 2);
    assert!(
        refused.stderr.contains("--allow-destructive"),
        "{}",
        refused.stderr
    );
    let mut allowed = args.to_vec();
    allowed.push("--allow-destructive");
    run_in(dir.path(), &allowed).expect_status(0);
    // A file iopath created may be rewritten freely.
    run_in(
        dir.path(),
        &["made.bin", "--size", "1m", "--rw", "read", "--bytes", "64k"],
    )
    .expect_status(0);
    run_in(dir.path(), &["made.bin", "--rw", "write", "--bytes", "64k"]).expect_status(0);
}

#[test]
fn block_devices_are_protected() {
    let dir = disk_tempdir();
    let backing = dir.path().join("disk.img");
    sparse_image(&backing, 64 << 20);
    let Some(device) = LoopDevice::attach(&backing) else {
        return;
    };
    let path = device.path().to_str().unwrap();
    let write = ["run", path, "--rw", "write", "--bytes", "1m", "--bs", "64k"];
    let run = plain_in(dir.path(), &write);
    assert_eq!(run.status, 2);
    assert!(run.stderr.contains("--allow-destructive"), "{}", run.stderr);
    // Reads are always allowed.
    run_in(
        dir.path(),
        &[path, "--rw", "read", "--bytes", "1m", "--bs", "64k"],
    )
    .expect_status(0);

    crate::support::skip_unless!(
        has_command("mkfs.ext4"),
        "mkfs.ext4 is not installed (apt-get install e2fsprogs)"
    );
    let made = Command::new("mkfs.ext4")
        .args(["-q", "-F", path])
        .status()
        .unwrap();
    assert!(made.success());
    let allow = [&write[..], &["--allow-destructive"]].concat();
    let run = plain_in(dir.path(), &allow);
    assert_eq!(run.status, 2, "an ext4 signature must stop the write");
    assert!(run.stderr.contains("ext4") && run.stderr.contains("--force-overwrite-signature"));

    let point = dir.path().join("mnt");
    if let Some(mount) = Mount::new(&[path], &point) {
        let forced = [&allow[..], &["--force-overwrite-signature"]].concat();
        let run = plain_in(dir.path(), &forced);
        assert_eq!(run.status, 2, "a mounted device is never written");
        assert!(run.stderr.contains("mounted"), "{}", run.stderr);
        drop(mount);
        let run = plain_in(dir.path(), &forced);
        assert_eq!(run.status, 0, "{}", run.stderr);
    }
}

/// Whether the machine can run a test that needs root, losetup and mkfs.ext4; under `CI` a
/// missing piece fails the test instead of skipping it.
fn can_make_ext4_loop_devices() -> bool {
    let missing: Vec<&str> = [
        (!is_root()).then_some("root"),
        (!has_command("losetup")).then_some("losetup"),
        (!has_command("mkfs.ext4")).then_some("mkfs.ext4"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "this test needs {missing:?} (CI is set, so it may not be skipped)"
    );
    eprintln!("skipped: needs {missing:?}");
    false
}

/// Whether a thread of process `pid` is one of iopath's workers (a test is running).
fn has_worker_threads(pid: u32) -> bool {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|task| {
        fs::read_to_string(task.path().join("comm"))
            .is_ok_and(|name| name.starts_with("iopath-worker"))
    })
}

/// Runs a three-test write sweep on `dir/f.bin` and, once the first test runs, replaces the
/// path by a symlink to `device`. Returns the run's output.
fn run_and_swap_for_device(
    dir: &std::path::Path,
    device: &std::path::Path,
    create: bool,
) -> RunOutput {
    use std::time::{Duration, Instant};
    let json_path = dir.join("out.json");
    let _ = fs::remove_file(&json_path);
    let mut args = vec!["run", "f.bin"];
    if create {
        args.extend(["--size", "16m"]);
    }
    args.extend([
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--duration",
        "2",
        "--ramp",
        "0",
        "--sweep",
        "qd=1,2,4",
        "--json",
    ]);
    let mut args: Vec<&std::ffi::OsStr> = args.into_iter().map(std::ffi::OsStr::new).collect();
    args.push(json_path.as_os_str());
    let child = spawn_in(dir, &args);
    let started = Instant::now();
    while !has_worker_threads(child.id()) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the first test never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let swap = dir.join("swap.tmp");
    std::os::unix::fs::symlink(device, &swap).unwrap();
    fs::rename(&swap, dir.join("f.bin")).unwrap();
    let swapped_at = Instant::now();
    // Bounded: three tests of 2 s each.
    let output = child.wait_with_output().unwrap();
    assert!(
        swapped_at.elapsed() > Duration::from_secs(1),
        "the swap came too late to matter"
    );
    let json = fs::read_to_string(&json_path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok());
    RunOutput {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        json,
    }
}

#[test]
fn a_target_swapped_for_a_device_between_tests_is_not_followed() {
    if !can_make_ext4_loop_devices() {
        return;
    }
    let dir = disk_tempdir();
    let backing = dir.path().join("disk.img");
    sparse_image(&backing, 64 << 20);
    let device = LoopDevice::attach(&backing).expect("a loop device");
    let made = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(device.path())
        .status()
        .unwrap();
    assert!(made.success());
    // An existing file iopath created (writable without a flag), then a file this run creates.
    plain_in(
        dir.path(),
        &[
            "run", "f.bin", "--size", "16m", "--rw", "read", "--bytes", "64k",
        ],
    )
    .expect_status(0);
    for create in [false, true] {
        if create {
            fs::remove_file(dir.path().join("f.bin")).unwrap();
        }
        let before = fs::read(&backing).unwrap();
        let (_, written_before) = device.sectors();
        let run = run_and_swap_for_device(dir.path(), device.path(), create);
        let (_, written_after) = device.sectors();
        assert_eq!(
            written_after, written_before,
            "iopath wrote the device it was never allowed to write:\n{}",
            run.stderr
        );
        assert!(
            fs::read(&backing).unwrap() == before,
            "the device's bytes changed"
        );
        // iopath keeps working on the file it checked (now unlinked): every test wrote to it.
        run.expect_status(0);
        let tests = at(run.json(), &["tests"]).as_array().unwrap();
        assert_eq!(tests.len(), 3);
        for test in tests {
            assert!(u64_at(test, &["write", "io_count"]) > 0, "{test}");
        }
        // The path is a symlink to the device now: iopath left it alone.
        let path = dir.path().join("f.bin");
        assert!(
            fs::symlink_metadata(&path)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        fs::remove_file(&path).unwrap();
        if !create {
            // For the create case the next round starts from a fresh file.
            plain_in(
                dir.path(),
                &[
                    "run", "f.bin", "--size", "16m", "--rw", "read", "--bytes", "64k",
                ],
            )
            .expect_status(0);
        }
    }
}

#[test]
fn a_read_pattern_never_writes_whatever_the_read_percentage() {
    let dir = disk_tempdir();
    write_foreign_file(&dir.path().join("theirs.bin"), 1 << 20);
    let before = fs::read(dir.path().join("theirs.bin")).unwrap();
    // Reading a file iopath did not create needs no flag: a write would be refused (exit 2).
    let run = run_in(
        dir.path(),
        &[
            "theirs.bin",
            "--rw",
            "read",
            "--read-pct",
            "0",
            "--bytes",
            "64k",
            "--bs",
            "4k",
        ],
    );
    run.expect_status(0);
    assert!(
        run.stderr
            .contains("note: --read-pct 0 is ignored: --rw read is a single direction"),
        "{}",
        run.stderr
    );
    assert_eq!(u64_at(run.json(), &["tests", "0", "write", "io_count"]), 0);
    assert_eq!(u64_at(run.json(), &["tests", "0", "read", "io_count"]), 16);
    assert!(fs::read(dir.path().join("theirs.bin")).unwrap() == before);
}
