//! Writing a recorded machine: the files, links and directories a recording [`Machine`] read,
//! copied under a directory, with `machine.toml` holding the system-call answers, the
//! targets as inspected and the memory copy bandwidth.
//!
//! The directory must be new, empty, or a recording iopath wrote (then the new target is
//! added to it); nothing else is ever written into or removed. Every file, directory and link
//! is created through the gate ([`crate::gate`]): new ones only, never through a link. Everything is bounded: a file
//! is at most what discovery read of it, the whole recording at most
//! [`RECORDING_LIMIT_BYTES`](super::host_view::RECORDING_LIMIT_BYTES).

use super::host_view::RecordedEntry;
use super::machine::Machine;
use super::machine_file::{FORMAT, MACHINE_FILE, MACHINE_FILE_LIMIT_BYTES, MachineFile};
use crate::gate::created::{create_directory, create_link, write_new};
use crate::gate::read::{FileLimit, read_text};
use crate::gate::replace::{OutputError, OutputFile};
use crate::result::TargetInfo;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Why a recording could not be written.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The directory holds files iopath did not record.
    #[error(
        "{path}: exists and is not empty; give a new directory (or one iopath recorded before)"
    )]
    NotEmpty {
        /// The directory.
        path: PathBuf,
    },
    /// The machine was not recording.
    #[error("the machine was not recording")]
    NotRecording,
    /// A file system error.
    #[error("{path}: {operation}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// What was being done.
        operation: &'static str,
        /// Cause.
        source: io::Error,
    },
    /// `machine.toml` could not be read or written.
    #[error("{path}: {reason}")]
    MachineFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A file could not be replaced (the gate refused it, or writing failed).
    #[error("{0}")]
    Replace(#[from] OutputError),
}

/// What a recording wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordSummary {
    /// Files written with content.
    pub files: usize,
    /// Empty files standing for files that were listed but not read.
    pub placeholders: usize,
    /// Symbolic links.
    pub links: usize,
    /// Bytes of file content.
    pub bytes: usize,
    /// Entries left out (already there, or under a link).
    pub skipped: usize,
    /// Something was left out because a limit was reached while recording.
    pub truncated: bool,
}

fn io_error(path: &Path, operation: &'static str) -> impl FnOnce(io::Error) -> RecordError {
    let path = path.to_path_buf();
    move |source| RecordError::Io {
        path,
        operation,
        source,
    }
}

/// Checks that `directory` may receive a recording (new, empty, or an iopath recording) and
/// creates it; returns what an earlier recording there holds.
pub fn prepare_directory(directory: &Path) -> Result<MachineFile, RecordError> {
    match fs::symlink_metadata(directory) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            create_directory(directory).map_err(io_error(directory, "create the directory"))?;
            return Ok(MachineFile::default());
        }
        Err(error) => return Err(io_error(directory, "inspect")(error)),
        Ok(metadata) if !metadata.is_dir() => {
            return Err(RecordError::NotEmpty {
                path: directory.to_path_buf(),
            });
        }
        Ok(_) => {}
    }
    let mut entries = fs::read_dir(directory).map_err(io_error(directory, "list"))?;
    if entries.next().is_none() {
        return Ok(MachineFile::default());
    }
    let machine_file = directory.join(MACHINE_FILE);
    let limit = FileLimit {
        what: "machine file",
        max_bytes: MACHINE_FILE_LIMIT_BYTES as u64,
    };
    let earlier = read_text(&machine_file, limit)
        .ok()
        .filter(|text| text.starts_with("# A machine recorded for iopath"))
        .and_then(|text| MachineFile::parse(&text).ok());
    earlier.ok_or_else(|| RecordError::NotEmpty {
        path: directory.to_path_buf(),
    })
}

/// Writes what the recording `machine` read into `directory` (prepared with
/// [`prepare_directory`], whose answer is `earlier`), with `targets` and the memory copy
/// bandwidth in `machine.toml`.
pub fn write_recording(
    directory: &Path,
    machine: &Machine,
    earlier: MachineFile,
    targets: &[TargetInfo],
    memory_copy_bytes_per_second: Option<u64>,
) -> Result<RecordSummary, RecordError> {
    let answers = machine
        .recorded_answers()
        .ok_or(RecordError::NotRecording)?;
    let recording = machine.view().recorded();
    let mut summary = RecordSummary {
        truncated: recording.truncated,
        ..RecordSummary::default()
    };
    for (path, entry) in &recording.entries {
        let Some(path) = stable_path(path, entry) else {
            continue;
        };
        match write_entry(directory, &path, entry)? {
            Written::File(bytes) => {
                summary.files += 1;
                summary.bytes += bytes;
            }
            Written::Placeholder => summary.placeholders += 1,
            Written::Link => summary.links += 1,
            Written::Directory => {}
            Written::Skipped => summary.skipped += 1,
        }
    }
    let mut file = MachineFile {
        format: FORMAT,
        recorded_by: Some(format!("iopath {}", env!("CARGO_PKG_VERSION"))),
        memory_copy_bytes_per_second: memory_copy_bytes_per_second
            .or(earlier.memory_copy_bytes_per_second),
        ..earlier
    };
    for target in targets {
        file.targets.retain(|known| known.path != target.path);
        file.targets.push(target.clone());
    }
    for host in answers.hosts {
        if !file.hosts.iter().any(|known| known.name == host.name) {
            file.hosts.push(host);
        }
    }
    for route in answers.routes {
        if !file
            .routes
            .iter()
            .any(|known| known.destination == route.destination)
        {
            file.routes.push(route);
        }
    }
    for recorded in answers.files {
        file.files.retain(|known| known.path != recorded.path);
        file.files.push(recorded);
    }
    let path = directory.join(MACHINE_FILE);
    let text = file.to_text().map_err(|reason| RecordError::MachineFile {
        path: path.clone(),
        reason,
    })?;
    OutputFile::check(&path)
        .and_then(|output| output.write(|out| out.write_all(text.as_bytes())))?;
    Ok(summary)
}

/// `path` as a recording keeps it: this process's `/proc/PID` becomes `/proc/self` (a
/// directory then, so the `/proc/self` link itself is left out).
fn stable_path(path: &Path, entry: &RecordedEntry) -> Option<PathBuf> {
    let own = Path::new("/proc").join(std::process::id().to_string());
    if let Ok(rest) = path.strip_prefix(&own) {
        return Some(Path::new("/proc/self").join(rest));
    }
    if matches!(entry, RecordedEntry::Link(_))
        && (path == Path::new("/proc/self") || path == Path::new("/proc/thread-self"))
    {
        return None;
    }
    Some(path.to_path_buf())
}

enum Written {
    File(usize),
    Placeholder,
    Link,
    Directory,
    Skipped,
}

/// Writes one entry at `path` (a path of the recorded machine) under `directory`. Nothing
/// that exists is replaced, except an empty file standing in for one now read; nothing is
/// written through a link.
fn write_entry(
    directory: &Path,
    path: &Path,
    entry: &RecordedEntry,
) -> Result<Written, RecordError> {
    let relative: Option<PathBuf> = path
        .components()
        .filter(|component| !matches!(component, Component::RootDir))
        .map(|component| match component {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    let Some(relative) = relative.filter(|r| r.components().next().is_some()) else {
        return Ok(Written::Skipped);
    };
    let destination = directory.join(&relative);
    // Create the parents one by one, refusing to pass through a link.
    let mut parent = directory.to_path_buf();
    let components: Vec<_> = relative.components().collect();
    for component in &components[..components.len() - 1] {
        parent.push(component);
        match fs::symlink_metadata(&parent) {
            Ok(metadata) if metadata.is_dir() => {}
            Ok(_) => return Ok(Written::Skipped),
            Err(_) => create_directory(&parent).map_err(io_error(&parent, "create a directory"))?,
        }
    }
    let existing = fs::symlink_metadata(&destination).ok();
    match entry {
        RecordedEntry::Directory => match existing {
            None => {
                create_directory(&destination)
                    .map_err(io_error(&destination, "create a directory"))?;
                Ok(Written::Directory)
            }
            Some(metadata) if metadata.is_dir() => Ok(Written::Directory),
            Some(_) => Ok(Written::Skipped),
        },
        RecordedEntry::Link(target) => match existing {
            None => {
                create_link(target, &destination)
                    .map_err(io_error(&destination, "create a link"))?;
                Ok(Written::Link)
            }
            Some(_) => Ok(Written::Skipped),
        },
        RecordedEntry::Placeholder => match existing {
            None => {
                write_new(&destination, b"").map_err(io_error(&destination, "write"))?;
                Ok(Written::Placeholder)
            }
            Some(_) => Ok(Written::Skipped),
        },
        RecordedEntry::File(bytes) => {
            let replaceable = existing
                .as_ref()
                .is_none_or(|metadata| metadata.is_file() && metadata.len() == 0);
            if !replaceable {
                return Ok(Written::Skipped);
            }
            match existing {
                None => write_new(&destination, bytes).map_err(io_error(&destination, "write"))?,
                // An empty placeholder, replaced whole.
                Some(_) => OutputFile::check(&destination)
                    .and_then(|output| output.write(|out| out.write_all(bytes)))?,
            }
            Ok(Written::File(bytes.len()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::machines::{fc_4g_multipath_pcie, sata_ahci};
    use crate::discovery::{gather, target};

    #[test]
    fn a_recording_of_a_recorded_machine_replays_the_same_facts() {
        let (original, device) = fc_4g_multipath_pcie();
        original.machine();
        let recording = Machine::recording_rooted(original.root());
        let info =
            target::recorded_target(&Machine::recorded(original.root()).unwrap(), device).unwrap();
        let gathered = gather::gather(&info, None, &recording);
        let directory = tempfile::tempdir().unwrap();
        let copy = directory.path().join("copy");
        let earlier = prepare_directory(&copy).unwrap();
        let summary = write_recording(
            &copy,
            &recording,
            earlier,
            std::slice::from_ref(&info),
            Some(1),
        )
        .unwrap();
        assert!(summary.files > 10 && !summary.truncated, "{summary:?}");
        // Only what discovery read: the iSCSI, SAS and net classes were never touched.
        assert!(!copy.join("sys/class/net").exists());
        assert!(copy.join("sys/class/fc_host/host3").is_symlink());
        let replayed = Machine::recorded(&copy).unwrap();
        assert_eq!(replayed.recorded_target(device), Some(&info));
        assert_eq!(gather::gather(&info, None, &replayed), gathered);
    }

    #[test]
    fn only_new_empty_or_recorded_directories_are_written() {
        let directory = tempfile::tempdir().unwrap();
        let file = directory.path().join("file");
        fs::write(&file, "x").unwrap();
        assert!(matches!(
            prepare_directory(&file),
            Err(RecordError::NotEmpty { .. })
        ));
        let foreign = directory.path().join("foreign");
        fs::create_dir(&foreign).unwrap();
        fs::write(foreign.join(MACHINE_FILE), "format = 1\n").unwrap();
        assert!(matches!(
            prepare_directory(&foreign),
            Err(RecordError::NotEmpty { .. })
        ));
        assert_eq!(
            fs::read_to_string(foreign.join(MACHINE_FILE)).unwrap(),
            "format = 1\n"
        );
        let empty = directory.path().join("empty");
        fs::create_dir(&empty).unwrap();
        assert_eq!(prepare_directory(&empty).unwrap(), MachineFile::default());
    }

    #[test]
    fn nothing_is_written_through_a_link_in_the_directory() {
        let (original, file) = sata_ahci();
        let machine = original.machine();
        let info = target::recorded_target(&machine, file).unwrap();
        let recording = Machine::recording_rooted(original.root());
        gather::gather(&info, None, &recording);
        let directory = tempfile::tempdir().unwrap();
        let outside = directory.path().join("outside");
        fs::create_dir(&outside).unwrap();
        let copy = directory.path().join("copy");
        fs::create_dir(&copy).unwrap();
        fs::write(
            copy.join(MACHINE_FILE),
            MachineFile {
                format: FORMAT,
                ..MachineFile::default()
            }
            .to_text()
            .unwrap(),
        )
        .unwrap();
        std::os::unix::fs::symlink(&outside, copy.join("sys")).unwrap();
        let earlier = prepare_directory(&copy).unwrap();
        let summary = write_recording(&copy, &recording, earlier, &[info], None).unwrap();
        assert!(summary.skipped > 0, "{summary:?}");
        assert_eq!(
            fs::read_dir(&outside).unwrap().count(),
            0,
            "written through the link"
        );
        assert!(copy.join("proc/self/mountinfo").is_file());
    }
}
