//! Targets alike, saved once: how a saved result holds its `targets` and `paths`.
//!
//! The files of one job on one filesystem differ only in their names and sizes, and their
//! storage paths only in the file hop that names them. A saved result holds the first of a
//! run of such targets whole, with its path, and of the targets after it only what is their
//! own: the rest of their path after a shared prefix, and their size where it differs. Reading
//! expands them again: a result in memory holds every target and every path, one per target.
//!
//! The grouping is exact by construction: a target joins a run only when expanding the run's
//! first target with its name and size gives back exactly that target and its path.
//!
//! ```
//! use iopath::result::target_groups::{expand, group};
//! use iopath::result::{TargetInfo, TargetKind};
//! let targets: Vec<TargetInfo> = (0..1000)
//!     .map(|n| TargetInfo::unexamined(format!("/data/job.0.{n}"), TargetKind::File, 4096))
//!     .collect();
//! let (stored, paths) = group(&targets, &[]);
//! assert_eq!(stored.len(), 1);
//! assert_eq!(stored[0].alike.as_ref().unwrap().prefix, "/data/");
//! let (again, again_paths) = expand(stored, paths).unwrap();
//! assert_eq!(again, targets);
//! assert!(again_paths.is_empty());
//! ```

use super::path::{FILE_HOP_KEY_PREFIX, Hop, HopKind, StoragePath, file_hop_key, file_hop_name};
use super::target::TargetInfo;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The most targets a saved result may stand for (the most files a run can have): reading
/// refuses more, so a small file cannot expand into a huge result.
pub const MAX_STORED_TARGETS: usize = 1 << 20;

/// One entry of a saved result's `targets`: a target whole, and the targets after it that
/// are alike in everything but their path and size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredTarget<'a> {
    /// The first target of the run, whole.
    #[serde(flatten)]
    pub first: Cow<'a, TargetInfo>,
    /// The targets after it that are alike (absent when there are none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alike: Option<AlikeTargets>,
}

/// The targets after the first of a run, alike to it: what each one has of its own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlikeTargets {
    /// What every one's path starts with, up to and including a `/` (empty when they share
    /// no directory), written once.
    pub prefix: String,
    /// Each one in order.
    pub files: Vec<AlikeFile>,
}

/// One target alike to the first of its run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AlikeFile {
    /// The rest of its path after the prefix; its size is the first target's.
    Name(String),
    /// The rest of its path after the prefix, and its size when that differs from the first
    /// target's.
    Sized {
        /// The rest of its path after the prefix.
        name: String,
        /// Its size, bytes.
        size_bytes: u64,
    },
}

/// Why a saved result's targets could not be expanded.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ExpandError {
    /// The entries stand for more targets than a run can have.
    #[error("the result stands for more than {MAX_STORED_TARGETS} targets")]
    TooManyTargets,
}

/// `targets` and their `paths` as a saved result holds them: each run of alike targets as
/// one entry, and the path of each entry's first target. Targets are grouped with their paths
/// when there is one path per target, and on their own when there are no paths; any other
/// count of paths keeps every target apart and every path as it is.
pub fn group<'a>(
    targets: &'a [TargetInfo],
    paths: &'a [StoragePath],
) -> (Vec<StoredTarget<'a>>, Vec<Cow<'a, StoragePath>>) {
    let paired = paths.len() == targets.len();
    let groupable = paired || paths.is_empty();
    let mut stored = Vec::new();
    let mut kept_paths = Vec::new();
    let mut start = 0;
    while start < targets.len() {
        let first = &targets[start];
        let first_path = paired.then(|| &paths[start]);
        let mut end = start + 1;
        while groupable
            && end < targets.len()
            && is_alike(
                first,
                first_path,
                &targets[end],
                paired.then(|| &paths[end]),
            )
        {
            end += 1;
        }
        stored.push(StoredTarget {
            first: Cow::Borrowed(first),
            alike: alike_targets(first, &targets[start + 1..end]),
        });
        kept_paths.extend(first_path.map(Cow::Borrowed));
        start = end;
    }
    if !paired {
        kept_paths = paths.iter().map(Cow::Borrowed).collect();
    }
    (stored, kept_paths)
}

/// The targets and paths that a saved result's `targets` and `paths` stand for: the inverse
/// of [`group`]. Paths are expanded with their targets when there is one per entry, and kept
/// as they are otherwise.
pub fn expand(
    stored: Vec<StoredTarget<'_>>,
    paths: Vec<Cow<'_, StoragePath>>,
) -> Result<(Vec<TargetInfo>, Vec<StoragePath>), ExpandError> {
    let count = stored.iter().try_fold(0usize, |count, entry| {
        let more = entry.alike.as_ref().map_or(0, |alike| alike.files.len());
        count
            .checked_add(1 + more)
            .filter(|&count| count <= MAX_STORED_TARGETS)
            .ok_or(ExpandError::TooManyTargets)
    })?;
    let paired = paths.len() == stored.len();
    let mut targets = Vec::with_capacity(count);
    let mut expanded_paths = Vec::with_capacity(if paired { count } else { paths.len() });
    let mut paths = paths.into_iter().map(Cow::into_owned);
    if !paired {
        expanded_paths.extend(paths.by_ref());
    }
    for entry in stored {
        let first = targets.len();
        targets.push(entry.first.into_owned());
        let first_path = expanded_paths.len();
        if paired {
            expanded_paths.extend(paths.next());
        }
        let Some(alike) = entry.alike else {
            continue;
        };
        for file in alike.files {
            let (name, size_bytes) = match file {
                AlikeFile::Name(name) => (name, targets[first].size_bytes),
                AlikeFile::Sized { name, size_bytes } => (name, size_bytes),
            };
            let path = format!("{}{name}", alike.prefix);
            if paired {
                let renamed =
                    renamed_path(&expanded_paths[first_path], &targets[first].path, &path);
                expanded_paths.push(renamed);
            }
            let target = TargetInfo {
                path,
                size_bytes,
                ..targets[first].clone()
            };
            targets.push(target);
        }
    }
    Ok((targets, expanded_paths))
}

/// Whether `other` (with `other_path`) is what expanding `first` (with `first_path`) with
/// its path and size gives. Compared in place, nothing copied: a result of a million files
/// asks this once for each.
fn is_alike(
    first: &TargetInfo,
    first_path: Option<&StoragePath>,
    other: &TargetInfo,
    other_path: Option<&StoragePath>,
) -> bool {
    first.same_but_path_and_size(other)
        && match (first_path, other_path) {
            (Some(first_path), Some(other_path)) => {
                is_renamed(first_path, &first.path, other_path, &other.path)
            }
            _ => true,
        }
}

/// Whether `renamed` is `path` (the storage path of the target `from`) renamed to the target
/// `to` as [`renamed_path`] renames it.
fn is_renamed(path: &StoragePath, from: &str, renamed: &StoragePath, to: &str) -> bool {
    let StoragePath {
        target,
        hops,
        notes,
        first_blocks_all_zero,
        allocated_bytes,
    } = path;
    let target_renamed = if target == from {
        renamed.target == to
    } else {
        renamed.target == *target
    };
    target_renamed
        && *notes == renamed.notes
        && *first_blocks_all_zero == renamed.first_blocks_all_zero
        && *allocated_bytes == renamed.allocated_bytes
        && hops.len() == renamed.hops.len()
        && hops
            .iter()
            .zip(&renamed.hops)
            .all(|(hop, other)| is_hop_renamed(hop, from, other, to))
}

/// Whether `renamed` is `hop` of the path of the target `from` as the path of `to` has it:
/// the file hop naming `from` renamed, every other hop the same.
fn is_hop_renamed(hop: &Hop, from: &str, renamed: &Hop, to: &str) -> bool {
    let names_from = hop.kind == HopKind::File
        && hop.key.strip_prefix(FILE_HOP_KEY_PREFIX) == Some(from)
        && hop.name == file_hop_name(from);
    if !names_from {
        return hop == renamed;
    }
    let Hop {
        key: _,
        kind,
        name: _,
        description,
        depth,
        origin,
        capacity,
        queue,
        protocol,
        read_share,
        write_share,
    } = hop;
    renamed.key.strip_prefix(FILE_HOP_KEY_PREFIX) == Some(to)
        && renamed.name == file_hop_name(to)
        && *kind == renamed.kind
        && *description == renamed.description
        && *depth == renamed.depth
        && *origin == renamed.origin
        && *capacity == renamed.capacity
        && *queue == renamed.queue
        && *protocol == renamed.protocol
        && *read_share == renamed.read_share
        && *write_share == renamed.write_share
}

/// What `targets`, alike to `first`, keep of their own (`None` when there are none).
fn alike_targets(first: &TargetInfo, targets: &[TargetInfo]) -> Option<AlikeTargets> {
    let prefix = shared_directory(targets.iter().map(|target| target.path.as_str()))?;
    let files = targets
        .iter()
        .map(|target| {
            let name = target.path[prefix.len()..].to_string();
            if target.size_bytes == first.size_bytes {
                AlikeFile::Name(name)
            } else {
                AlikeFile::Sized {
                    name,
                    size_bytes: target.size_bytes,
                }
            }
        })
        .collect();
    Some(AlikeTargets {
        prefix: prefix.to_string(),
        files,
    })
}

/// The longest start of every one of `paths` that ends with a `/` (empty when they share
/// none); `None` when there are no paths.
fn shared_directory<'a>(mut paths: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let first = paths.next()?;
    let mut prefix = &first[..first.rfind('/').map_or(0, |at| at + 1)];
    for path in paths {
        while !path.starts_with(prefix) {
            let shorter = &prefix[..prefix.len() - 1];
            prefix = &prefix[..shorter.rfind('/').map_or(0, |at| at + 1)];
        }
    }
    Some(prefix)
}

/// `path` (the storage path of the target `from`) as the path of the target `to`: its
/// `target` and its file hop renamed where they name `from`.
fn renamed_path(path: &StoragePath, from: &str, to: &str) -> StoragePath {
    let mut renamed = path.clone();
    if renamed.target == from {
        renamed.target = to.to_string();
    }
    let (from_key, from_name) = (file_hop_key(from), file_hop_name(from));
    for hop in renamed.hops.to_mut() {
        if hop.kind == HopKind::File && hop.key == from_key && hop.name == from_name {
            hop.key = file_hop_key(to);
            hop.name = file_hop_name(to);
        }
    }
    renamed
}

/// Targets without paths (a client's own, in a multi-client run) saved as [`group`] groups
/// them: used as `#[serde(with = "target_groups::without_paths")]`.
pub mod without_paths {
    use super::{StoredTarget, TargetInfo, expand, group};
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// Writes `targets` with runs of alike targets as one entry.
    pub fn serialize<S: Serializer>(
        targets: &[TargetInfo],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        group(targets, &[]).0.serialize(serializer)
    }

    /// Reads targets written by [`serialize`] (or a list of whole targets).
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<TargetInfo>, D::Error> {
        let stored = Vec::<StoredTarget<'static>>::deserialize(deserializer)?;
        expand(stored, Vec::new())
            .map(|(targets, _)| targets)
            .map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Hop, HopOrigin, TargetKind};

    fn hop(key: &str, kind: HopKind, name: &str) -> Hop {
        Hop {
            key: key.into(),
            kind,
            name: name.into(),
            description: "4 KiB".into(),
            depth: 0,
            origin: HopOrigin::Discovered,
            capacity: None,
            queue: None,
            protocol: None,
            read_share: 1.0,
            write_share: 1.0,
        }
    }

    /// A file of `size_bytes` at `path` on the filesystem of `device`, with its path.
    fn file(path: &str, size_bytes: u64, device: &str) -> (TargetInfo, StoragePath) {
        let mut info = TargetInfo::unexamined(path.into(), TargetKind::File, size_bytes);
        info.device = Some(device.into());
        let storage = StoragePath {
            target: path.into(),
            hops: vec![
                hop(&file_hop_key(path), HopKind::File, &file_hop_name(path)),
                hop(&format!("fs:{device}"), HopKind::Filesystem, "ext4"),
                hop(&format!("block:{device}"), HopKind::Disk, device),
            ]
            .into(),
            notes: vec![format!("{device}: a note")],
            first_blocks_all_zero: Some(false),
            allocated_bytes: Some(4096),
        };
        (info, storage)
    }

    fn round_trip(targets: &[TargetInfo], paths: &[StoragePath]) -> usize {
        let (stored, kept) = group(targets, paths);
        let entries = stored.len();
        let text = serde_json::to_string(&(stored, kept)).unwrap();
        let (stored, kept): (Vec<StoredTarget>, Vec<Cow<StoragePath>>) =
            serde_json::from_str(&text).unwrap();
        let (again, again_paths) = expand(stored, kept).unwrap();
        assert_eq!(again, targets);
        assert_eq!(again_paths, paths);
        entries
    }

    #[test]
    fn files_alike_are_saved_once_and_read_back_exactly() {
        let (mut targets, mut paths): (Vec<_>, Vec<_>) = (0..100)
            .map(|n| file(&format!("/data/job.0.{n}"), 4096, "vda"))
            .unzip();
        assert_eq!(round_trip(&targets, &paths), 1);
        // A size of its own stays in the entry; another device, or a path whose file hop is
        // not the file's, starts a new one.
        targets[10].size_bytes = 8192;
        assert_eq!(round_trip(&targets, &paths), 1);
        let (other, other_path) = file("/mnt/other/x", 4096, "vdb");
        targets[20] = other;
        paths[20] = other_path;
        paths[30].hops.to_mut()[0].name = "renamed".into();
        assert_eq!(round_trip(&targets, &paths), 5);
        let (stored, _) = group(&targets, &paths);
        assert_eq!(stored[0].alike.as_ref().unwrap().files.len(), 19);
        assert_eq!(
            stored[0].alike.as_ref().unwrap().files[9],
            AlikeFile::Sized {
                name: "job.0.10".into(),
                size_bytes: 8192
            }
        );
    }

    #[test]
    fn targets_without_paths_or_with_paths_that_do_not_match_keep_them_as_they_are() {
        let (targets, paths): (Vec<_>, Vec<_>) = ["/a/x", "/a/y", "/b/z", "w"]
            .into_iter()
            .map(|path| file(path, 1, "vda"))
            .unzip();
        assert_eq!(round_trip(&targets, &[]), 1);
        assert_eq!(round_trip(&targets, &paths[..2]), 4);
        assert_eq!(round_trip(&[], &paths[..1]), 0);
        let (stored, _) = group(&targets, &[]);
        assert_eq!(stored[0].alike.as_ref().unwrap().prefix, "");
        assert_eq!(round_trip(&targets[..3], &paths[..3]), 1);
        assert_eq!(
            group(&targets[..3], &[]).0[0]
                .alike
                .as_ref()
                .unwrap()
                .prefix,
            "/"
        );
    }

    #[test]
    fn a_result_standing_for_more_targets_than_a_run_can_have_is_refused() {
        let (first, _) = file("/a/x", 1, "vda");
        let stored = vec![StoredTarget {
            first: Cow::Owned(first),
            alike: Some(AlikeTargets {
                prefix: String::new(),
                files: vec![AlikeFile::Name("y".into()); MAX_STORED_TARGETS],
            }),
        }];
        assert_eq!(expand(stored, Vec::new()), Err(ExpandError::TooManyTargets));
    }
}
