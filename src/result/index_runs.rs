//! Runs of consecutive indexes saved as one entry: a job's `target_indexes` over thousands
//! of files is `[{"first": 0, "last": 9999}]`, not ten thousand numbers. Runs of three or
//! more are written so; other indexes stay plain numbers, and a list of plain numbers (as
//! results of schema version 1 hold) reads as before. Used as `#[serde(with = …)]`.
//!
//! ```
//! # #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
//! # struct Job { #[serde(with = "iopath::result::index_runs")] indexes: Vec<usize> }
//! let job = Job { indexes: vec![0, 1, 2, 3, 7, 9, 10] };
//! let text = serde_json::to_string(&job).unwrap();
//! assert_eq!(text, r#"{"indexes":[{"first":0,"last":3},7,9,10]}"#);
//! assert_eq!(serde_json::from_str::<Job>(&text).unwrap(), job);
//! assert_eq!(serde_json::from_str::<Job>(r#"{"indexes":[4,5]}"#).unwrap().indexes, [4, 5]);
//! ```

use super::target_groups::MAX_STORED_TARGETS;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The shortest run written as one entry (two numbers are shorter than a run).
const SHORTEST_RUN: usize = 3;

/// One entry of a saved list of indexes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
enum IndexEntry {
    /// One index.
    One(usize),
    /// Every index from `first` to `last`, both included.
    Run {
        /// The first index of the run.
        first: usize,
        /// The last index of the run.
        last: usize,
    },
}

/// Writes `indexes` with their runs of consecutive indexes as single entries.
pub fn serialize<S: Serializer>(indexes: &[usize], serializer: S) -> Result<S::Ok, S::Error> {
    let mut entries = Vec::new();
    let mut start = 0;
    while start < indexes.len() {
        let mut end = start + 1;
        while end < indexes.len() && indexes[end - 1].checked_add(1) == Some(indexes[end]) {
            end += 1;
        }
        if end - start >= SHORTEST_RUN {
            entries.push(IndexEntry::Run {
                first: indexes[start],
                last: indexes[end - 1],
            });
        } else {
            entries.extend(
                indexes[start..end]
                    .iter()
                    .map(|&index| IndexEntry::One(index)),
            );
        }
        start = end;
    }
    entries.serialize(serializer)
}

/// Reads a list written by [`serialize`] (or a list of plain numbers), refusing a run that
/// goes backwards and lists that stand for more indexes than a run can have targets.
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<usize>, D::Error> {
    let entries = Vec::<IndexEntry>::deserialize(deserializer)?;
    let mut indexes = Vec::new();
    for entry in entries {
        let (first, last) = match entry {
            IndexEntry::One(index) => (index, index),
            IndexEntry::Run { first, last } if first <= last => (first, last),
            IndexEntry::Run { first, last } => {
                return Err(D::Error::custom(format!(
                    "a run of indexes from {first} back to {last}"
                )));
            }
        };
        if last - first >= MAX_STORED_TARGETS - indexes.len().min(MAX_STORED_TARGETS) {
            return Err(D::Error::custom(format!(
                "more than {MAX_STORED_TARGETS} indexes"
            )));
        }
        indexes.extend(first..=last);
    }
    Ok(indexes)
}
