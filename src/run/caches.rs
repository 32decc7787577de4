//! Dropping the page cache between phases (`--drop-caches`), so a read phase does not read what
//! the write phase left in memory.

/// Writes dirty pages back and drops clean page-cache pages, dentries and inodes. Needs root;
/// the error says why it could not.
pub fn drop_page_cache() -> Result<(), String> {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3\n").map_err(|error| {
        if error.kind() == std::io::ErrorKind::PermissionDenied {
            "dropping the page cache needs root".to_string()
        } else {
            format!("cannot write /proc/sys/vm/drop_caches: {error}")
        }
    })
}
