//! Dropping the page cache between phases (`--drop-caches`), so a read phase does not read what
//! the write phase left in memory.

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
