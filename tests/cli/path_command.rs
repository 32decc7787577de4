//! `iopath path` where the device node cannot be opened (an unprivileged user, a container's
//! device rules): the path needs only the device number and /sys, so it is still shown, with a
//! note that the device was not opened.

use crate::common::*;
use crate::support::{require, skip_unless};
use std::process::Command;

/// The user and group the unprivileged runs take (nobody).
const NOBODY: &str = "65534";

/// `setpriv` dropping to nobody with no supplementary groups, running `iopath ARGS` from `/`.
pub fn as_nobody(args: &[&str]) -> RunOutput {
    let output = Command::new("setpriv")
        .env("IOPATH_HISTORY", crate::support::history::path())
        .args([
            &format!("--reuid={NOBODY}"),
            &format!("--regid={NOBODY}"),
            "--clear-groups",
        ])
        .arg(env!("CARGO_BIN_EXE_iopath"))
        .args(args)
        .current_dir("/")
        .output()
        .expect("setpriv runs");
    into_run_output(output, None)
}

/// Whether nobody can run the test binary (else the test skips, or fails under
/// `IOPATH_REQUIRE_ALL=1`: a directory above the binary is closed to that user).
pub fn nobody_runs_iopath() -> bool {
    let version = as_nobody(&["--version"]);
    require(
        version.status == 0,
        format_args!(
            "user {NOBODY} cannot run the test binary (a directory above it is closed): {}",
            version.stderr.trim()
        ),
    )
}

#[test]
fn the_path_of_a_device_that_cannot_be_opened_comes_from_sysfs() {
    skip_unless!(
        has_command("setpriv"),
        "setpriv is not installed (apt-get install util-linux)"
    );
    let dir = disk_tempdir();
    let image = dir.path().join("disk.img");
    sparse_image(&image, 32 << 20);
    let Some(device) = LoopDevice::attach(&image) else {
        return;
    };
    if !nobody_runs_iopath() {
        return;
    }
    let node = device.path().to_str().unwrap();
    // The oracle that the node really is closed to this user: opening it as iopath run does.
    let refused = as_nobody(&["run", node, "--rw", "read", "--duration", "0.1"]);
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("permission denied"),
        "{}",
        refused.stderr
    );

    let shown = as_nobody(&["path", node]);
    shown.expect_status(0);
    let name = device.name();
    assert!(
        shown.stdout.contains(&format!("{name} [loop]: over ")),
        "{}",
        shown.stdout
    );
    assert!(
        shown.stdout.contains(&format!(
            "{node}: permission denied (Permission denied (os error 13)): described from its device number and /sys ({name}) without opening it"
        )),
        "{}",
        shown.stdout
    );

    let json = as_nobody(&["path", node, "--json"]);
    json.expect_status(0);
    let path: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(path["target"], node, "{path}");
    assert_eq!(path["hops"][1]["kind"], "loop", "{path}");
    assert!(
        path["notes"][0]
            .as_str()
            .unwrap()
            .contains("without opening it"),
        "{path}"
    );
    // Root opens it as before: no note.
    let root = plain_in(dir.path(), &["path", node]);
    root.expect_status(0);
    assert!(
        !root.stdout.contains("without opening it"),
        "{}",
        root.stdout
    );
}
