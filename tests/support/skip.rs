//! Tests that need a tool, root or a kernel feature the machine may lack.
//!
//! Where the prerequisite is missing, a test calls [`require`] (or [`skip`]) and returns. What
//! happens then depends on the environment:
//! - with `CI` or `IOPATH_REQUIRE_ALL` set (to anything but `0`, `false` or nothing), the test
//!   fails, naming what is missing: a prepared machine (scripts/test as root, CI) runs every
//!   test, and a test cannot pass by not running;
//! - otherwise it prints `SKIPPED <test>: <reason>` and appends `<test>: <reason>` to the skip
//!   list, which scripts/test empties before the run and prints after it.
//!
//! The skip list is `$IOPATH_SKIP_LIST`, or `iopath-skipped.txt` in the target directory.
//!
//! One kind of skip never fails: [`kernel_lacks`], for a kernel built without a feature (no
//! package adds it, so no prepared machine has it). It is listed like any other.

use std::fmt::Display;
use std::io::Write;
use std::path::PathBuf;

/// The variables that make a missing prerequisite fail the test.
pub const STRICT_VARIABLES: [&str; 2] = ["IOPATH_REQUIRE_ALL", "CI"];

/// Whether a missing prerequisite fails the test (see the module documentation).
pub fn strict() -> bool {
    STRICT_VARIABLES.iter().any(|name| {
        std::env::var(name).is_ok_and(|value| !matches!(value.trim(), "" | "0" | "false"))
    })
}

/// `available`, or else [`skip`] with `missing` (which says what is missing, and how to get
/// it): `false` when the test is skipped. Under `CI` or `IOPATH_REQUIRE_ALL` a missing
/// prerequisite fails the test instead.
#[track_caller]
pub fn require(available: bool, missing: impl Display) -> bool {
    if !available {
        skip(missing);
    }
    available
}

/// Skips the calling test for `reason` (the caller then returns), or fails it under `CI` or
/// `IOPATH_REQUIRE_ALL`.
#[track_caller]
pub fn skip(reason: impl Display) {
    let test = current_test();
    if strict() {
        panic!(
            "{test} cannot run here: {reason} (a missing prerequisite fails a test when CI or \
             IOPATH_REQUIRE_ALL is set)"
        );
    }
    record(&test, reason);
}

/// Skips the calling test because this machine's kernel was built without `feature`: the
/// test is listed, but not failed under `CI` or `IOPATH_REQUIRE_ALL`, since no install on
/// this machine can provide it. Anything a package or root provides goes through [`require`].
pub fn kernel_lacks(feature: impl Display) {
    record(
        &current_test(),
        format_args!("the kernel has no {feature} (not required: no install provides it)"),
    );
}

/// Whether io_uring works on this kernel; when it does not, skips the calling test as
/// [`kernel_lacks`] does.
pub fn io_uring_here() -> bool {
    match iopath::engine::io_uring_available() {
        Ok(()) => true,
        Err(error) => {
            kernel_lacks(format_args!("io_uring ({error})"));
            false
        }
    }
}

/// Prints `SKIPPED <test>: <reason>` and adds the line to the skip list.
fn record(test: &str, reason: impl Display) {
    let line = format!("{test}: {reason}");
    eprintln!("SKIPPED {line}");
    if let Some(path) = skip_list() {
        // One write per line on an append-only file: lines of tests running at once do not mix.
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut file| file.write_all(format!("{line}\n").as_bytes()));
        if let Err(error) = appended {
            eprintln!(
                "note: cannot add to the skip list {}: {error}",
                path.display()
            );
        }
    }
}

/// Where skips are listed: `$IOPATH_SKIP_LIST`, or `iopath-skipped.txt` in the target
/// directory (the test binary runs from `<target>/<profile>/deps/`).
pub fn skip_list() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("IOPATH_SKIP_LIST") {
        return Some(PathBuf::from(path));
    }
    let binary = std::env::current_exe().ok()?;
    let target = binary.ancestors().nth(3)?;
    Some(target.join("iopath-skipped.txt"))
}

/// The running test's name: the test harness names each test's thread after it.
fn current_test() -> String {
    match std::thread::current().name() {
        Some(name) if name != "main" => name.to_string(),
        _ => "a test".to_string(),
    }
}
