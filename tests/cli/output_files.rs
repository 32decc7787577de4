//! Output files (`--json`, `--csv`, `--report`, `-o`): a failed run never empties or removes a
//! file that was there; special files and unwritable directories are refused (exit 2) before
//! any I/O; a result replaces the old file whole.

use crate::common::*;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;

const QUICK: &[&str] = &[
    "--size",
    "1m",
    "--rw",
    "read",
    "--bs",
    "4k",
    "--duration",
    "0.3",
    "--ramp",
    "0",
];

/// Writes `old <name>` into each of `names` in `dir`.
fn old_files(dir: &Path, names: &[&str]) {
    for name in names {
        fs::write(dir.join(name), format!("old {name}")).unwrap();
    }
}

fn assert_untouched(dir: &Path, names: &[&str]) {
    for name in names {
        assert_eq!(
            fs::read_to_string(dir.join(name)).unwrap(),
            format!("old {name}"),
            "{name} was changed"
        );
    }
}

#[test]
fn a_failed_run_keeps_every_old_output_file() {
    let dir = disk_tempdir();
    let names = ["old.json", "old.csv", "old.html", "old.trace"];
    old_files(dir.path(), &names);
    let outputs = [
        "--json",
        "old.json",
        "--csv",
        "old.csv",
        "--report",
        "old.html",
        "--trace-io",
        "old.trace",
    ];
    // Refused while checking the workload.
    let run = plain_in(
        dir.path(),
        &[&["run", "f", "--bs", "3"][..], &outputs].concat(),
    );
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert_untouched(dir.path(), &names);
    let mut expected = names.map(String::from).to_vec();
    expected.sort();
    assert_eq!(list_dir(dir.path()), expected);
    // Refused while preparing the target.
    let run = plain_in(
        dir.path(),
        &[&["run", "missing.bin", "--rw", "read"][..], &outputs].concat(),
    );
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert_untouched(dir.path(), &names);

    // Refused before the fill: the test file is larger than the free space.
    let point = dir.path().join("small");
    let Some(mount) = Mount::new(&["-t", "tmpfs", "-o", "size=4m", "tmpfs"], &point) else {
        return;
    };
    let target = mount.point.join("big.bin");
    let too_big = [
        "run",
        target.to_str().unwrap(),
        "--size",
        "64m",
        "--rw",
        "read",
    ];
    let run = plain_in(dir.path(), &[&too_big[..], &outputs].concat());
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(run.stderr.contains("would not fit"), "{}", run.stderr);
    assert!(!target.exists());
    assert_untouched(dir.path(), &names);

    // Failed while creating the test file, after every check passed: the process may not
    // write files beyond 1 MiB (RLIMIT_FSIZE, SIGXFSZ ignored, so the write fails with EFBIG).
    let target = dir.path().join("big.bin");
    let mut command = iopath();
    command.current_dir(dir.path()).args(
        [
            &[
                "run",
                target.to_str().unwrap(),
                "--size",
                "64m",
                "--rw",
                "read",
            ][..],
            &outputs,
        ]
        .concat(),
    );
    // SAFETY: between fork and exec the closure only calls signal and setrlimit, both
    // async-signal-safe, and touches no memory shared with the parent.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: 1 << 20,
                rlim_max: 1 << 20,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let run = into_run_output(command.output().expect("iopath runs"), None);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(run.stderr.contains("big.bin"), "{}", run.stderr);
    assert!(!target.exists(), "the partial test file was left");
    assert_untouched(dir.path(), &names);
    assert!(
        !list_dir(dir.path())
            .iter()
            .any(|name| name.contains("iopath-tmp")),
        "{:?}",
        list_dir(dir.path())
    );
}

#[test]
fn special_files_and_unwritable_directories_are_refused_before_any_io() {
    let dir = disk_tempdir();
    let fifo = dir.path().join("fifo");
    crate::support::devices::make_fifo(&fifo);
    fs::create_dir(dir.path().join("sub")).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--json", "/dev/null"], "/dev/null: is a character device"),
        (&["--csv", "fifo"], "fifo: is a named pipe (FIFO)"),
        (&["--report", "sub"], "sub: is a directory"),
        (&["--trace-io", "/dev/zero"], "/dev/zero"),
        (&["--json", "sub/none/x.json"], "no such directory"),
    ];
    for (flags, named) in cases {
        let run = plain_in(dir.path(), &[&["run", "f"], QUICK, flags].concat());
        assert_eq!(run.status, 2, "{flags:?}: {}", run.stderr);
        assert!(run.stderr.contains(named), "{flags:?}: {}", run.stderr);
        assert!(run.stderr.contains(flags[0]), "{flags:?}: {}", run.stderr);
        assert!(
            !dir.path().join("f").exists(),
            "{flags:?}: the target was created"
        );
    }
    // A saved result to report on and compare.
    let run = run_in(dir.path(), &[&["f"], QUICK].concat());
    run.expect_status(0);
    let report = plain_in(dir.path(), &["report", "out.json", "-o", "/dev/null"]);
    assert_eq!(report.status, 2, "{}", report.stderr);
    assert!(report.stderr.contains("/dev/null"), "{}", report.stderr);
    // The JSON file is checked before the server is asked: no connection is tried.
    let net = plain_in(
        dir.path(),
        &["net", "127.0.0.1:9", "--duration", "1", "--json", "fifo"],
    );
    assert_eq!(net.status, 2, "{}", net.stderr);
    assert!(net.stderr.contains("(FIFO)"), "{}", net.stderr);

    // A directory that cannot be written.
    let point = dir.path().join("ro");
    let Some(mount) = Mount::new(&["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs"], &point) else {
        return;
    };
    let inside = mount.point.join("out.json");
    let run = plain_in(
        dir.path(),
        &[&["run", "g"], QUICK, &["--json", inside.to_str().unwrap()]].concat(),
    );
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(run.stderr.contains("cannot write in"), "{}", run.stderr);
    assert!(!dir.path().join("g").exists());
}

#[test]
fn a_result_replaces_the_old_file_whole_and_keeps_its_mode() {
    let dir = disk_tempdir();
    old_files(dir.path(), &["old.json", "real.csv"]);
    fs::set_permissions(
        dir.path().join("old.json"),
        fs::Permissions::from_mode(0o640),
    )
    .unwrap();
    std::os::unix::fs::symlink("real.csv", dir.path().join("link.csv")).unwrap();
    let run = plain_in(
        dir.path(),
        &[
            &["run", "f"],
            QUICK,
            &["--json", "old.json", "--csv", "link.csv"],
        ]
        .concat(),
    );
    run.expect_status(0);
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("old.json")).unwrap()).unwrap();
    assert!(json.get("tests").is_some());
    let mode = fs::metadata(dir.path().join("old.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
    let link = fs::symlink_metadata(dir.path().join("link.csv")).unwrap();
    assert!(link.file_type().is_symlink(), "the link was replaced");
    let csv = fs::read_to_string(dir.path().join("real.csv")).unwrap();
    assert!(csv.lines().count() >= 2, "{csv}");
    assert_eq!(
        list_dir(dir.path()),
        ["f", "link.csv", "old.json", "real.csv"]
    );
}
