//! How the files a job needs are made when iopath creates them, as fio lays out files: filled
//! with data before the run when a job reads them, overwrites (fio's `overwrite=1`) or cannot
//! extend them; otherwise only sized (fio's `fallocate=`), and the job's writes put the data
//! in.
//!
//! ```
//! use iopath::result::{CreatedContent, FileSetup, Preallocation};
//! assert!(FileSetup::default().is_default());
//! assert_eq!(FileSetup::default().preallocation, Preallocation::Native);
//! assert_eq!(serde_json::to_string(&Preallocation::Keep).unwrap(), "\"keep\"");
//! let sized = CreatedContent::Sized { preallocation: Preallocation::Truncate };
//! assert_eq!(sized.describe(), "sized with ftruncate (sparse), no data written");
//! ```

use serde::{Deserialize, Serialize};

/// See the module documentation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FileSetup {
    /// A file the job writes is filled before the run even when the job does not read it, so
    /// that its writes overwrite data (fio's `overwrite=1`, `--overwrite`).
    pub overwrite: bool,
    /// How a file that is only sized gets its size and blocks (fio's `fallocate=`,
    /// `--fallocate`).
    pub preallocation: Preallocation,
    /// The job comes from an fio job file: a file it shares with other jobs is laid out for
    /// the first job that uses it, as fio lays files out in job order (a reading job after a
    /// writing one reads what the writer's layout left, unwritten blocks included). Without
    /// it a file any job reads is filled.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub first_job_lays_out: bool,
}

impl FileSetup {
    /// Whether these are the defaults (fio's: no overwrite, native preallocation).
    pub fn is_default(&self) -> bool {
        *self == FileSetup::default()
    }
}

/// How a file iopath creates without filling it is given its size (fio's `fallocate=`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Preallocation {
    /// Nothing: the file is created empty and the job's writes extend it (fio's `none`, and
    /// what `create_on_open=1` does).
    None,
    /// `fallocate(2)` mode 0 over the whole size: blocks reserved as unwritten extents, the
    /// size set; where the file system cannot, nothing (fio's `native`, its default on Linux).
    #[default]
    Native,
    /// `posix_fallocate(3)`: as `native`, but where the file system cannot preallocate the C
    /// library writes a zero into every block (fio's `posix`).
    Posix,
    /// `fallocate(2)` with `FALLOC_FL_KEEP_SIZE`: blocks reserved, the size left at 0; the
    /// job's writes extend it (fio's `keep`).
    Keep,
    /// `ftruncate(2)` to the size: a sparse file, no block reserved (fio's `truncate`).
    Truncate,
}

impl Preallocation {
    /// Every mode, by the name fio and `--fallocate` give it.
    pub const NAMED: [(&'static str, Preallocation); 5] = [
        ("none", Preallocation::None),
        ("native", Preallocation::Native),
        ("posix", Preallocation::Posix),
        ("keep", Preallocation::Keep),
        ("truncate", Preallocation::Truncate),
    ];

    /// The name fio gives it (`native`, `keep`, …).
    pub fn name(self) -> &'static str {
        Self::NAMED
            .iter()
            .find(|(_, mode)| *mode == self)
            .map_or("native", |(name, _)| name)
    }

    /// The mode named `name` (fio's names, and its `0` for `none` and `1` for `posix`).
    pub fn from_name(name: &str) -> Option<Preallocation> {
        match name {
            "0" => Some(Preallocation::None),
            "1" => Some(Preallocation::Posix),
            _ => Self::NAMED
                .iter()
                .find(|(known, _)| *known == name)
                .map(|(_, mode)| *mode),
        }
    }
}

/// What a file iopath created for the run held when the first test started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CreatedContent {
    /// Filled with incompressible data, synced and dropped from the page cache.
    Filled,
    /// Only sized, as `preallocation` says: no data written before the run (no job reads the
    /// file, overwrites it or needs it laid out).
    Sized {
        /// How it got its size.
        preallocation: Preallocation,
    },
}

impl CreatedContent {
    /// In words, for notes and path descriptions (`filled with incompressible data`, `sized
    /// with fallocate, no data written`).
    pub fn describe(self) -> &'static str {
        match self {
            CreatedContent::Filled => "filled with incompressible data",
            CreatedContent::Sized { preallocation } => match preallocation {
                Preallocation::None => "created empty, no data written",
                Preallocation::Native => "sized with fallocate, no data written",
                Preallocation::Posix => "sized with posix_fallocate, no data written",
                Preallocation::Keep => {
                    "blocks reserved with fallocate (keep size), no data written"
                }
                Preallocation::Truncate => "sized with ftruncate (sparse), no data written",
            },
        }
    }

    /// Whether data was written into the file before the run.
    pub fn is_filled(self) -> bool {
        self == CreatedContent::Filled
    }
}
