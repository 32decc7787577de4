//! A merge of blktrace captures a job file asks for (fio's `merge_blktrace_file`, see
//! [`crate::input::fio::replay_merge`]), held from reading the job file to the run, which
//! writes it where no file is before any I/O.

use std::path::PathBuf;

/// A merge of captures to write before the run (or found already written).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergedCapture {
    /// Where it goes (`merge_blktrace_file`, as given).
    pub path: PathBuf,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// The file is there already and holds these bytes: nothing to write.
    pub present: bool,
}

/// Writes `merged` where no file is, created anew and never through a link (nothing when it
/// is [`MergedCapture::present`]); a file that appeared there since is left alone (an error).
pub fn write_merged(merged: &MergedCapture) -> std::io::Result<()> {
    if merged.present {
        return Ok(());
    }
    crate::gate::created::write_new(&merged.path, &merged.bytes)
}
