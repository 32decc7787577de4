//! Bad input fails with a message naming it, exit status 2 and no I/O; I/O errors are counted
//! and named.

use crate::common::*;
use std::fs;

#[test]
fn bad_input_is_named_and_nothing_is_written() {
    let dir = disk_tempdir();
    let existing = dir.path().join("data.bin");
    write_foreign_file(&existing, 1 << 20);
    let before = fs::read(&existing).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["data.bin", "--bs", "4kk"], "4kk"),
        (&["data.bin", "--size", "-1"], "-1"),
        (&["data.bin", "--bs", "0"], "'0'"),
        (&["data.bin", "--qd", "0"], "'0'"),
        (&["data.bin", "--workers", "-3"], "-3"),
        (&["data.bin", "--duration", "0"], "'0'"),
        (&["data.bin", "--read-pct", "101"], "101"),
        (&["data.bin", "--rw", "sideways"], "sideways"),
        (&["data.bin", "--engine", "warp"], "warp"),
        (&["data.bin", "--bs", "512/50,4k/60"], "110"),
        (&["data.bin", "--rw", "read", "--bs", "1000"], "O_DIRECT"),
        (&["data.bin", "--rw", "read", "--offset", "2m"], "--offset"),
        (
            &[
                "data.bin", "--rw", "read", "--offset", "512k", "--size", "1m",
            ],
            "past the end",
        ),
        (&["missing.bin", "--rw", "read"], "missing.bin"),
        (&["data.bin", "--bytes", "1000", "--bs", "4k"], "--bytes"),
        (&["data.bin", "--bytes", "1m", "--ramp", "1"], "--ramp"),
        (&["data.bin", "--rw", "write"], "--allow-destructive"),
        (&["data.bin", "--rw", "read", "--sync"], "--sync"),
        (&[".", "--rw", "read"], "directory"),
        (
            &["new.bin", "--size", "900t", "--rw", "read"],
            "would not fit",
        ),
        (&["--size", "900t", "--rw", "read"], "--size"),
        (
            &["smb://user@127.0.0.1/share/f", "--rw", "read"],
            "no password for user",
        ),
        (
            &["nfs://127.0.0.1/export/f?version=9", "--rw", "read"],
            "not supported",
        ),
        (
            &["data.bin", "--json", "/nonexistent-dir/x.json"],
            "nonexistent-dir",
        ),
    ];
    for (args, named) in cases {
        let run = plain_in(dir.path(), &[&["run"], *args].concat());
        assert_eq!(run.status, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(named),
            "{args:?}: message should name {named}: {}",
            run.stderr
        );
        assert!(!run.stderr.contains("panicked"), "{args:?}: {}", run.stderr);
    }
    // A failed run leaves no empty output file behind, and nothing is created under /dev.
    let run = plain_in(
        dir.path(),
        &[
            "run",
            "missing.bin",
            "--rw",
            "read",
            "--json",
            "out.json",
            "--csv",
            "out.csv",
        ],
    );
    assert_eq!(run.status, 2);
    let run = plain_in(
        dir.path(),
        &["run", "/dev/iopath-no-such-disk", "--size", "1m"],
    );
    assert_eq!(run.status, 2);
    assert!(
        run.stderr.contains("/dev/iopath-no-such-disk"),
        "{}",
        run.stderr
    );
    assert!(!std::path::Path::new("/dev/iopath-no-such-disk").exists());
    assert_eq!(fs::read(&existing).unwrap(), before, "the file was changed");
    assert_eq!(list_dir(dir.path()), ["data.bin"], "files were created");
}

#[test]
fn a_read_only_directory_is_refused_before_any_io() {
    let dir = disk_tempdir();
    let point = dir.path().join("ro");
    let Some(mount) = Mount::new(&["-t", "tmpfs", "-o", "ro,size=64m", "tmpfs"], &point) else {
        return;
    };
    let run = plain_in(&mount.point, &["run", "--duration", "0.1"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(run.stderr.contains("ro"), "{}", run.stderr);
}

#[test]
fn enospc_names_target_and_offset_and_stops_the_run() {
    let dir = disk_tempdir();
    let point = dir.path().join("small");
    let Some(mount) = Mount::new(&["-t", "tmpfs", "-o", "size=4m", "tmpfs"], &point) else {
        return;
    };
    let file = mount.point.join("sparse.bin");
    fs::File::create(&file).unwrap().set_len(64 << 20).unwrap();
    let args = [
        "sparse.bin",
        "--rw",
        "write",
        "--bs",
        "64k",
        "--buffered",
        "--allow-destructive",
        "--duration",
        "2",
        "--ramp",
        "0",
    ];
    let json_path = dir.path().join("out.json");
    let run = run_with_json(&mount.point, &json_path, &args);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let json = run.json();
    assert!(u64_at(json, &["tests", "0", "errors", "count"]) >= 1);
    assert_eq!(json["tests"][0]["stop_reason"], "error");
    let first = &json["tests"][0]["errors"]["first"][0];
    assert!(
        first["error"].as_str().unwrap().contains("No space"),
        "{first}"
    );
    let offset = first["offset"].as_u64().unwrap();
    assert!(
        offset >= 3 << 20,
        "4 MiB fit before the error, not {offset}"
    );
    let printed = format!("{}{}", run.stdout, run.stderr);
    assert!(printed.contains("sparse.bin") && printed.contains(&format!("offset {offset}")));
    assert!(json["tests"][0]["measured_ns"].as_u64().unwrap() < 2_000_000_000);

    let mut going_on = args.to_vec();
    going_on.push("--continue-on-error");
    going_on[8] = "1";
    let run = run_with_json(&mount.point, &json_path, &going_on);
    run.expect_status(0);
    let json = run.json();
    assert_eq!(json["tests"][0]["stop_reason"], "completed");
    assert!(u64_at(json, &["tests", "0", "errors", "count"]) > 1);
}

/// `MemAvailable` of this machine, bytes.
fn mem_available_bytes() -> u64 {
    let meminfo = fs::read_to_string("/proc/meminfo").unwrap();
    let kib: u64 = meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemAvailable:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|number| number.parse().ok())
        .expect("MemAvailable in /proc/meminfo");
    kib * 1024
}

#[test]
fn a_plan_beyond_memory_threads_or_engine_depth_is_refused_before_any_io() {
    let dir = disk_tempdir();
    // Queue slots of 1 GiB, more of them than the machine has memory available.
    let slots = (mem_available_bytes() >> 30) + 1;
    let qd = slots.to_string();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["--rw", "randread", "--bs", "1g", "--qd", &qd],
            &["MemAvailable", "GiB", "--qd", "--bs", "--workers", "50 %"],
        ),
        // One past the kernel's limit on io_uring ring entries.
        (
            &["--rw", "randread", "--qd", "32769"],
            &["--qd 32769", "32768", "io_uring"],
        ),
        (
            &[
                "--rw",
                "randread",
                "--engine",
                "sync",
                "--qd",
                "65536",
                "--workers",
                "4096",
            ],
            &["worker threads", "--workers", "--max-threads"],
        ),
        // Within --max-threads, beyond what the host can start.
        (
            &[
                "--rw",
                "randread",
                "--engine",
                "sync",
                "--qd",
                "256",
                "--workers",
                "4096",
                "--max-threads",
                "1048576",
            ],
            &["worker threads", "--workers", "RLIMIT_NPROC"],
        ),
    ];
    for (args, named) in cases {
        let args = [
            &["run", "made.bin", "--size", "1g", "--duration", "1"],
            *args,
        ]
        .concat();
        let run = plain_in(dir.path(), &args);
        assert_eq!(run.status, 2, "{args:?}: {}", run.stderr);
        for name in *named {
            assert!(
                run.stderr.contains(name),
                "{args:?}: {name}: {}",
                run.stderr
            );
        }
        assert!(!run.stderr.contains("panicked"), "{args:?}: {}", run.stderr);
        assert!(
            !dir.path().join("made.bin").exists(),
            "{args:?}: nothing may be created"
        );
    }
}

/// Under an MPI launcher with several ranks, a build without MPI refuses to run (each rank
/// would otherwise run alone and print its figures as the run's): rank 0 says so, every rank
/// exits with 2, and nothing is written.
#[cfg(not(feature = "mpi"))]
#[test]
fn a_build_without_mpi_refuses_to_run_as_one_of_several_ranks() {
    let dir = tempfile::tempdir().unwrap();
    for (rank, says) in [("0", true), ("1", false)] {
        let output = iopath()
            .current_dir(dir.path())
            .env("OMPI_COMM_WORLD_SIZE", "2")
            .env("OMPI_COMM_WORLD_RANK", rank)
            .args(["run", "f.dat", "--size", "1m", "--duration", "0.1"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.contains("built without MPI"), says, "{stderr}");
        assert!(!dir.path().join("f.dat").exists());
    }
}
