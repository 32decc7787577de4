//! `cargo install --path .`, as the README says: the installed binary runs from any directory,
//! needing nothing from the source tree. Cheap: the install reuses the build directory and
//! profile of this test binary (`CARGO_TARGET_DIR`), so nothing is compiled again.

use crate::common::*;
use crate::support::require;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The cargo that built these tests (`CARGO`), else the one on PATH.
fn cargo() -> PathBuf {
    std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from)
}

/// The build directory and cargo profile the binary under test comes from:
/// `TARGET/debug/iopath` is profile `dev`, `TARGET/NAME/iopath` profile NAME.
fn build_of_binary_under_test() -> (PathBuf, String) {
    let binary = Path::new(env!("CARGO_BIN_EXE_iopath"));
    let profile_directory = binary.parent().unwrap();
    let profile = match profile_directory.file_name().unwrap().to_str().unwrap() {
        "debug" => "dev".to_string(),
        other => other.to_string(),
    };
    (profile_directory.parent().unwrap().to_path_buf(), profile)
}

#[test]
fn cargo_install_gives_a_binary_that_runs_from_any_directory() {
    let cargo_runs = Command::new(cargo())
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    if !require(cargo_runs, "cargo is not on PATH (rustup.rs)") {
        return;
    }
    let (target_directory, profile) = build_of_binary_under_test();
    let root = tempfile::tempdir().unwrap();
    let install = Command::new(cargo())
        .args([
            "install",
            "--offline",
            "--locked",
            "--profile",
            &profile,
            "--path",
        ])
        .arg(env!("CARGO_MANIFEST_DIR"))
        .arg("--root")
        .arg(root.path())
        .env("CARGO_TARGET_DIR", &target_directory)
        .output()
        .expect("cargo runs");
    let log = String::from_utf8_lossy(&install.stderr);
    assert!(install.status.success(), "{log}");
    let installed = root.path().join("bin/iopath");
    assert!(installed.is_file(), "{log}");

    // Elsewhere, found on PATH as a user would have it.
    let elsewhere = tempfile::tempdir().unwrap();
    let path = std::env::join_paths(std::iter::once(root.path().join("bin")).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let run = |args: &[&str]| {
        let output = Command::new("iopath")
            .args(args)
            .current_dir(elsewhere.path())
            .env("PATH", &path)
            .env("IOPATH_HISTORY", crate::support::history::path())
            .output()
            .expect("the installed iopath runs");
        into_run_output(output, None)
    };
    let version = run(&["--version"]);
    version.expect_status(0);
    assert_eq!(
        version.stdout.trim(),
        format!("iopath {}", env!("CARGO_PKG_VERSION"))
    );
    let measured = run(&[
        "run",
        "--engine",
        "null",
        "--rw",
        "randread",
        "--duration",
        "0.2",
        "--ramp",
        "0",
        "--json",
        "result.json",
    ]);
    measured.expect_status(0);
    let result: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(elsewhere.path().join("result.json")).unwrap(),
    )
    .unwrap();
    assert!(u64_at(&result, &["tests", "0", "total", "io_count"]) > 0);
    let completions = run(&["completions", "bash"]);
    completions.expect_status(0);
    assert!(
        completions.stdout.contains("complete -F _iopath"),
        "{}",
        completions.stdout
    );
    let page = run(&["man"]);
    page.expect_status(0);
    assert!(page.stdout.contains(".TH iopath 1"), "{}", page.stdout);
    assert_eq!(list_dir(elsewhere.path()), ["result.json"]);
}
