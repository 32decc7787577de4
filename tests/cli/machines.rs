//! Recorded machines through the real binary: `iopath path --record DIR TARGET` copies what
//! discovery reads on this host, `iopath path --root DIR TARGET` shows the same path from
//! the copy; the machine recorded in tests/machines/virtio-vm stands in for this host.

use crate::common::*;
use std::path::Path;

fn recorded_vm() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/machines/virtio-vm"
    ))
}

/// `iopath path ARGS` in `dir`, with the memory copy bandwidth cached in `dir` so that every
/// call reports the same figure.
fn path_in(dir: &Path, args: &[&str]) -> RunOutput {
    let output = iopath()
        .current_dir(dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .arg("path")
        .args(args)
        .output()
        .expect("iopath runs");
    into_run_output(output, None)
}

/// The lines of a path listing after its title (the title names the machine).
fn hop_lines(stdout: &str) -> Vec<String> {
    stdout.lines().skip(1).map(str::to_string).collect()
}

#[test]
fn a_recording_shows_the_same_path_as_this_host() {
    let dir = disk_tempdir();
    let file = dir.path().join("data.bin");
    write_foreign_file(&file, 1 << 20);
    let file = file.to_string_lossy().into_owned();
    let recording = dir.path().join("machine");
    let recording_text = recording.to_string_lossy().into_owned();

    let live = path_in(dir.path(), &[&file]);
    assert_eq!(live.status, 0, "{}", live.stderr);
    let recorded = path_in(dir.path(), &["--record", &recording_text, &file]);
    assert_eq!(recorded.status, 0, "{}", recorded.stderr);
    assert_eq!(
        recorded.stdout, live.stdout,
        "recording does not change the output"
    );
    assert!(recorded.stderr.contains("recorded "), "{}", recorded.stderr);
    assert!(recording.join("machine.toml").is_file());
    assert!(recording.join("proc/self/mountinfo").is_file());
    assert!(recording.join("sys/class/block").is_dir());
    // Only what discovery read: a few dozen small files, not this host's sysfs.
    let mut files = 0;
    let mut pending = vec![recording.clone()];
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).unwrap() {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                pending.push(entry.path());
            } else {
                files += 1;
                assert!(entry.metadata().unwrap().len() <= 64 * 1024);
            }
        }
    }
    assert!((5..300).contains(&files), "{files} files recorded");

    let replayed = path_in(dir.path(), &["--root", &recording_text, &file]);
    assert_eq!(replayed.status, 0, "{}", replayed.stderr);
    assert_eq!(hop_lines(&replayed.stdout), hop_lines(&live.stdout));
    assert!(
        replayed.stdout.contains("on the machine recorded in"),
        "{}",
        replayed.stdout
    );

    // A second target joins the same recording; the first still replays.
    let url = "nbd://127.0.0.1:10809/export";
    let again = path_in(dir.path(), &["--record", &recording_text, url]);
    assert_eq!(again.status, 0, "{}", again.stderr);
    let both = plain_in(
        dir.path(),
        &["path", "--root", &recording_text, url, "--json"],
    );
    assert_eq!(both.status, 0, "{}", both.stderr);
    let path: serde_json::Value = serde_json::from_str(&both.stdout).unwrap();
    assert_eq!(path["hops"][1]["name"], "lo");
    let first = path_in(dir.path(), &["--root", &recording_text, &file]);
    assert_eq!(hop_lines(&first.stdout), hop_lines(&live.stdout));
}

#[test]
fn recording_never_writes_into_a_directory_it_did_not_make() {
    let dir = disk_tempdir();
    write_foreign_file(&dir.path().join("data.bin"), 4096);
    let occupied = dir.path().join("occupied");
    std::fs::create_dir(&occupied).unwrap();
    std::fs::write(occupied.join("notes.txt"), "mine").unwrap();
    let output = plain_in(dir.path(), &["path", "--record", "occupied", "data.bin"]);
    assert_eq!(output.status, 2, "{}", output.stderr);
    assert!(output.stderr.contains("occupied"), "{}", output.stderr);
    assert_eq!(list_dir(&occupied), ["notes.txt"]);
    assert_eq!(
        std::fs::read_to_string(occupied.join("notes.txt")).unwrap(),
        "mine"
    );

    // A bad target is refused before the directory is made.
    let output = plain_in(dir.path(), &["path", "--record", "fresh", "no-such-file"]);
    assert_eq!(output.status, 2, "{}", output.stderr);
    assert!(!dir.path().join("fresh").exists());
}

#[test]
fn the_recorded_vm_shows_its_virtual_disk_and_nic() {
    let root = recorded_vm().to_string_lossy().into_owned();
    let dir = disk_tempdir();
    let disk = plain_in(
        dir.path(),
        &["path", "--root", &root, "/var/tmp/iopath/test.dat", "-v"],
    );
    assert_eq!(disk.status, 0, "{}", disk.stderr);
    for expected in [
        "ext4 [filesystem]",
        "vda [disk]",
        "virtio-blk [transport]",
        "virtual PCI device",
    ] {
        assert!(
            disk.stdout.contains(expected),
            "{expected}:\n{}",
            disk.stdout
        );
    }
    let nic = plain_in(
        dir.path(),
        &[
            "path",
            "--root",
            &root,
            "nbd://192.0.2.1/export",
            "--link",
            "10gbe",
        ],
    );
    assert_eq!(nic.status, 0, "{}", nic.stderr);
    assert!(
        nic.stdout
            .contains("eth0 [interface]: virtual (virtio-net): capacity unknown"),
        "{}",
        nic.stdout
    );
    assert!(nic.stdout.contains("10GbE"), "{}", nic.stdout);
}

#[test]
fn bad_roots_and_targets_exit_2() {
    let dir = disk_tempdir();
    let missing = plain_in(dir.path(), &["path", "--root", "nowhere", "/dev/sda"]);
    assert_eq!(missing.status, 2);
    assert!(missing.stderr.contains("nowhere"), "{}", missing.stderr);

    std::fs::create_dir(dir.path().join("broken")).unwrap();
    std::fs::write(
        dir.path().join("broken/machine.toml"),
        "format = 1\nnonsense = [\n",
    )
    .unwrap();
    let broken = plain_in(dir.path(), &["path", "--root", "broken", "/dev/sda"]);
    assert_eq!(broken.status, 2);
    assert!(broken.stderr.contains("machine.toml"), "{}", broken.stderr);

    let root = recorded_vm().to_string_lossy().into_owned();
    let unknown = plain_in(dir.path(), &["path", "--root", &root, "/dev/sdz"]);
    assert_eq!(unknown.status, 2);
    assert!(unknown.stderr.contains("/dev/sdz"), "{}", unknown.stderr);

    let both = plain_in(
        dir.path(),
        &["path", "--root", &root, "--record", "x", "/dev/vda"],
    );
    assert_eq!(both.status, 2, "{}", both.stderr);
}
