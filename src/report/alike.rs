//! Targets alike, shown once: a run of thousands of files on one filesystem is shown as its
//! first file and one line for the others — how many, where, their total size — in the HTML
//! report and in `iopath explain` ([`crate::result::target_groups`] finds the runs).
//!
//! ```
//! use iopath::report::alike::alike_line;
//! use iopath::result::target_groups::{AlikeFile, AlikeTargets};
//! let alike = AlikeTargets {
//!     prefix: "/data/".into(),
//!     files: vec![
//!         AlikeFile::Name("a.1".into()),
//!         AlikeFile::Sized { name: "a.2".into(), size_bytes: 2048 },
//!     ],
//! };
//! assert_eq!(
//!     alike_line(&alike, 1024, &|text: &str| format!("`{text}`")),
//!     "and 2 more targets alike in `/data/` (`a.1` … `a.2`), 3.0 KiB in all"
//! );
//! ```

use crate::result::target_groups::{AlikeFile, AlikeTargets};
use crate::units::format_bytes;

/// `and 999 more targets alike in /data/ (many.0.1 … many.0.999), 3.9 MiB in all`: the
/// targets after the first of a run, whose size is `first_size_bytes`, with every name and
/// the prefix passed through `quote` (which escapes them for where they are shown).
pub fn alike_line(
    alike: &AlikeTargets,
    first_size_bytes: u64,
    quote: &dyn Fn(&str) -> String,
) -> String {
    let name = |file: &AlikeFile| match file {
        AlikeFile::Name(name) | AlikeFile::Sized { name, .. } => quote(name),
    };
    let total_bytes = alike
        .files
        .iter()
        .map(|file| match file {
            AlikeFile::Name(_) => first_size_bytes,
            AlikeFile::Sized { size_bytes, .. } => *size_bytes,
        })
        .fold(0, u64::saturating_add);
    let names = match alike.files.as_slice() {
        [] => String::new(),
        [only] => name(only),
        [first, .., last] => format!("{} … {}", name(first), name(last)),
    };
    let place = if alike.prefix.is_empty() {
        String::new()
    } else {
        format!(" in {}", quote(&alike.prefix))
    };
    format!(
        "and {} more {} alike{place} ({names}), {} in all",
        alike.files.len(),
        if alike.files.len() == 1 {
            "target"
        } else {
            "targets"
        },
        format_bytes(total_bytes)
    )
}
