//! Dropping the page cache between phases (`--drop-caches`), so a read phase does not read what
//! the write phase left in memory; and whether a worker drops a file's pages at each pass
//! (fio's `invalidate=1` in a timed buffered job).

/// Why the page cache could not be dropped.
#[derive(Debug, thiserror::Error)]
pub enum CacheDropError {
    /// Only root may drop the page cache.
    #[error("dropping the page cache needs root")]
    NeedsRoot,
    /// The kernel refused for another reason.
    #[error("cannot write /proc/sys/vm/drop_caches: {0}")]
    Write(std::io::Error),
}

/// Writes dirty pages back and drops clean page-cache pages, dentries and inodes. Needs root;
/// the error says why it could not.
pub fn drop_page_cache() -> Result<(), CacheDropError> {
    crate::host::sys::sync_filesystems();
    std::fs::write("/proc/sys/vm/drop_caches", "3\n").map_err(|error| {
        if error.kind() == std::io::ErrorKind::PermissionDenied {
            CacheDropError::NeedsRoot
        } else {
            CacheDropError::Write(error)
        }
    })
}

/// Whether a worker of `workload` on `files` files drops a file's cached pages each time its
/// pass over it ends, as fio does in a timed buffered job with `invalidate=1`: when its random
/// map fills up, and when sequential I/O wraps on a job of one file.
pub(super) fn invalidates_each_pass(workload: &crate::result::Workload, files: usize) -> bool {
    workload.buffered
        && workload.handling.invalidate_cache
        && matches!(workload.length, crate::result::RunLength::Time { .. })
        && (random_offsets(workload) || files == 1)
}

/// Whether any of the workload's I/O goes to random offsets (fio's `td_random`).
pub(super) fn random_offsets(workload: &crate::result::Workload) -> bool {
    workload
        .access
        .lines
        .iter()
        .any(|line| line.random_percent > 0)
}

/// What a job asks of the page cache for one of its files, on the worker's own descriptor:
/// the cached pages of its region dropped (fio's `invalidate=1`) and the access-pattern hint
/// (fio's `fadvise_hint`). Both only for buffered I/O, where the cache is in the path.
pub(super) fn prepare_cache(
    file: &std::fs::File,
    workload: &crate::result::Workload,
    (offset, length): (u64, u64),
) -> std::io::Result<()> {
    if !workload.buffered {
        return Ok(());
    }
    if workload.handling.invalidate_cache {
        crate::targets::open::invalidate_cached_range(file, offset, length)?;
    }
    crate::targets::open::advise_access(
        file,
        offset,
        length,
        workload.handling.access_hint,
        random_offsets(workload),
    )
}
