//! The name of each run in a comparison: `name=FILE` on the command line, else the run's own
//! `--label`, else the file's name without `.json`. Names longer than
//! [`SHOWN_CHARS`] characters are shortened (with an ellipsis), so a label of any size costs
//! the same to show and to match; the full label stays in the run (and in
//! [`RunInfo::run_label`](super::RunInfo::run_label)). Names are made unique (a second `before`
//! becomes `before (b.json)`), so that every column and every `--cost A=…` names one run.
//!
//! ```
//! use iopath::compare::labels::unique_labels;
//! let labels = unique_labels(&[
//!     (Some("fc".into()), None, "a.json".into()),
//!     (None, Some("iscsi".into()), "b.json".into()),
//!     (None, None, "runs/c.json".into()),
//!     (None, Some("iscsi".into()), "d.json".into()),
//! ]);
//! assert_eq!(labels, ["fc", "iscsi", "c", "iscsi (d.json)"]);
//! ```

use super::CompareError;
use crate::result::RunResult;
use crate::text::shorten::{SHOWN_CHARS, shorten};
use std::path::Path;

/// A run and the name it goes by in a comparison or report.
#[derive(Clone, Copy, Debug)]
pub struct LabeledRun<'a> {
    /// The name shown in column headers and used by `--cost`, `--ports` and `--baseline`.
    pub label: &'a str,
    /// The run.
    pub result: &'a RunResult,
}

impl<'a> LabeledRun<'a> {
    /// `result` under `label`.
    pub fn new(label: &'a str, result: &'a RunResult) -> Self {
        LabeledRun { label, result }
    }
}

/// Splits a command-line argument into an optional label and a file: `fc=runs/a.json` gives
/// `(Some("fc"), "runs/a.json")`. An argument naming an existing file (`exists`) is taken
/// whole, so a file whose name holds `=` still works; so is one whose part before `=` holds
/// a `/` or is empty.
pub fn split_run_argument(
    argument: &str,
    exists: impl Fn(&str) -> bool,
) -> (Option<String>, String) {
    if exists(argument) {
        return (None, argument.to_string());
    }
    match argument.split_once('=') {
        Some((label, file)) if !label.is_empty() && !label.contains('/') && !file.is_empty() => {
            (Some(label.to_string()), file.to_string())
        }
        _ => (None, argument.to_string()),
    }
}

/// The label of each run, unique. Each entry is (label given as `name=FILE`, the run's own
/// label, the file): the first present wins, the file's stem last, shortened to
/// [`SHOWN_CHARS`] characters. A label already taken gets the file name added, then a number.
pub fn unique_labels(entries: &[(Option<String>, Option<String>, String)]) -> Vec<String> {
    let mut labels: Vec<String> = Vec::with_capacity(entries.len());
    for (given, own, file) in entries {
        let path = Path::new(file);
        let stem = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_else(|| file.clone());
        let base = given
            .as_deref()
            .or(own.as_deref().filter(|label| !label.trim().is_empty()))
            .unwrap_or(&stem);
        let base = shorten(base, SHOWN_CHARS).into_owned();
        let mut label = base.clone();
        if labels.contains(&label) {
            let name = path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_else(|| file.clone());
            label = format!("{base} ({})", shorten(&name, SHOWN_CHARS));
        }
        let mut number = 2;
        while labels.contains(&label) {
            label = format!("{base} #{number}");
            number += 1;
        }
        labels.push(label);
    }
    labels
}

/// Labels for results without files (the HTML report of `iopath run`): the run's own label,
/// else `run 1`, `run 2`…, made unique as [`unique_labels`] does.
pub fn labels_of(results: &[RunResult]) -> Vec<String> {
    let entries: Vec<_> = results
        .iter()
        .enumerate()
        .map(|(index, result)| (None, result.label.clone(), format!("run {}", index + 1)))
        .collect();
    unique_labels(&entries)
}

/// The index of `label` among `labels`, or an error naming `flag` and the labels there are.
pub fn index_of(labels: &[&str], label: &str, flag: &'static str) -> Result<usize, CompareError> {
    labels
        .iter()
        .position(|candidate| *candidate == label)
        .ok_or_else(|| CompareError::UnknownLabel {
            flag,
            label: label.to_string(),
            known: labels
                .iter()
                .map(|label| shorten(label, SHOWN_CHARS))
                .collect::<Vec<_>>()
                .join(", "),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_split_only_where_a_label_is_meant() {
        let none = |_: &str| false;
        assert_eq!(
            split_run_argument("a=b.json", none),
            (Some("a".into()), "b.json".into())
        );
        assert_eq!(
            split_run_argument("dir/x=y.json", none),
            (None, "dir/x=y.json".into())
        );
        assert_eq!(
            split_run_argument("=y.json", none),
            (None, "=y.json".into())
        );
        assert_eq!(split_run_argument("a=", none), (None, "a=".into()));
        assert_eq!(
            split_run_argument("odd=name.json", |name| name == "odd=name.json"),
            (None, "odd=name.json".into())
        );
    }

    #[test]
    fn labels_prefer_the_command_line_then_the_run_then_the_file() {
        let labels = unique_labels(&[
            (None, None, "x/before.json".into()),
            (None, Some("  ".into()), "after.json".into()),
            (Some("before".into()), None, "y/before.json".into()),
            (Some("before".into()), None, "z/before.json".into()),
        ]);
        assert_eq!(
            labels,
            ["before", "after", "before (before.json)", "before #2"]
        );
        assert!(index_of(&["a", "b"], "c", "--cost").is_err());
        let long = "é".repeat(5 << 20);
        let labels = unique_labels(&[
            (None, Some(long.clone()), "a.json".into()),
            (None, Some(long.clone() + "x"), "b.json".into()),
        ]);
        let short: String = long.chars().take(SHOWN_CHARS).chain(['…']).collect();
        assert_eq!(labels, [short.clone(), format!("{short} (b.json)")]);
        assert_eq!(index_of(&["a", "b"], "b", "--cost").unwrap(), 1);
    }
}
