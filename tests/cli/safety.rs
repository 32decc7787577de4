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
    fs::File::create(&backing)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let Some(device) = LoopDevice::attach(&backing) else {
        return;
    };
    let path = device.path.to_str().unwrap();
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
