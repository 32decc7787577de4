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

// ---------------------------------------------------------------------------------------
// Captures other projects keep as test data (../shared/foreign-sys, tests/support/foreign.rs),
// shown with `iopath path --root`: the expected facts come from the captures' own files.

/// `iopath path --root ROOT TARGET`, which must succeed; its standard output.
fn foreign_path(root: &Path, target: &str) -> String {
    let dir = disk_tempdir();
    let root = root.to_string_lossy().into_owned();
    let output = path_in(dir.path(), &["--root", &root, target]);
    assert_eq!(output.status, 0, "{target}: {}", output.stderr);
    output.stdout
}

#[test]
fn md_raid_members_of_a_capture_without_slaves_are_shown() {
    let Some(root) = crate::support::foreign::capture("node_exporter-sys.ttar") else {
        return;
    };
    let level = std::fs::read_to_string(root.join("sys/block/md1/md/level")).unwrap();
    let disks = std::fs::read_to_string(root.join("sys/block/md1/md/raid_disks")).unwrap();
    let stdout = foreign_path(&root, "/dev/md1");
    let expected = format!("{} over {} devices", level.trim(), disks.trim());
    assert!(stdout.contains(&expected), "{expected}:\n{stdout}");
    for member in ["sdi", "sdj"] {
        assert!(
            root.join("sys/block/md1/md")
                .join(format!("dev-{member}"))
                .is_dir()
        );
        assert!(
            stdout.contains(&format!("{member} [disk]")),
            "{member}:\n{stdout}"
        );
    }
}

#[test]
fn a_sata_disk_behind_a_sas_expander_is_shown_over_stp_and_a_sas_disk_over_ssp() {
    let Some(root) = crate::support::foreign::capture("procfs-fixtures.ttar") else {
        return;
    };
    let protocols = |end_device: &str| {
        std::fs::read_to_string(
            root.join("sys/class/sas_device")
                .join(end_device)
                .join("target_port_protocols"),
        )
        .unwrap()
    };
    assert_eq!(protocols("end_device-11:0:0").trim(), "sata");
    assert_eq!(protocols("end_device-11:0:1").trim(), "ssp");
    let sata = foreign_path(&root, "/dev/sdv");
    assert!(sata.contains("SATA over SAS (STP)"), "{sata}");
    assert!(sata.contains("tunnelled over STP"), "{sata}");
    let sas = foreign_path(&root, "/dev/sdw");
    assert!(!sas.contains("STP"), "{sas}");
    assert!(sas.contains("SAS 12G x1 [device link]"), "{sas}");
}

#[test]
fn an_nvme_controller_on_pcie_without_link_files_is_never_conventional_pci() {
    let Some(root) = crate::support::foreign::capture("libnvme-tree-pcie.tar.xz") else {
        return;
    };
    let transport = std::fs::read_to_string(root.join("sys/class/nvme/nvme0/transport")).unwrap();
    assert_eq!(transport.trim(), "pcie");
    assert!(
        !root
            .join("sys/class/nvme/nvme0/device/current_link_speed")
            .exists()
    );
    let stdout = foreign_path(&root, "/dev/nvme0n1");
    assert!(
        stdout.contains("NVMe over pcie, controller nvme0"),
        "{stdout}"
    );
    assert!(stdout.contains("PCIe [bus]"), "{stdout}");
    assert!(!stdout.contains("conventional PCI"), "{stdout}");
    // The multipath namespace reaches both of its controllers.
    let multipath = foreign_path(&root, "/dev/nvme1n1");
    assert!(multipath.contains("controller nvme1") && multipath.contains("controller nvme2"));
}

#[test]
fn a_bcachefs_filesystem_on_two_devices_names_both() {
    let Some(root) = crate::support::foreign::capture("util-linux-multi-devs-bcachefs.tar.xz")
    else {
        return;
    };
    let mut expected: Vec<String> = Vec::new();
    for filesystem in std::fs::read_dir(root.join("sys/fs/bcachefs"))
        .unwrap()
        .flatten()
    {
        for member in std::fs::read_dir(filesystem.path()).unwrap().flatten() {
            if let Ok(block) = std::fs::read_link(member.path().join("block")) {
                expected.push(block.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    expected.sort();
    assert_eq!(expected.len(), 2, "{expected:?}");
    let stdout = foreign_path(&root, "/mnt/test/file");
    let note = format!(
        "bcachefs spreads its data over 2 devices ({})",
        expected.join(", ")
    );
    assert!(stdout.contains(&note), "{note}:\n{stdout}");
    for member in &expected {
        assert!(
            stdout.contains(&format!("{member} [partition]")),
            "{member}:\n{stdout}"
        );
    }
}
