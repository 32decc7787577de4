//! How the sync engine moves a request's bytes between its buffer and the file, one request at
//! a time: `pread`/`pwrite` (fio's psync and iopath's default), a shared memory mapping of the
//! file (fio's `mmap` engine: a read copies from the mapping, a write copies into it), or a
//! pipe (fio's `splice` engine: a read splices the file into the pipe and reads the pipe into
//! the buffer; a write `vmsplice`s the buffer into the pipe and splices the pipe into the
//! file).
//!
//! A failure is a negative errno, as a completion carries it. One exception is the mapping's:
//! an I/O error under a mapping reaches the process as `SIGBUS`, which ends it (as it ends fio).
//!
//! ```
//! use iopath::engine::data_path::{FileMapping, Pipe};
//! use std::io::Write;
//! let mut file = tempfile::tempfile().unwrap();
//! file.write_all(&[7u8; 8192]).unwrap();
//! let mut mapping = FileMapping::new(&file).unwrap();
//! let mut buffer = [0u8; 4096];
//! assert_eq!(mapping.read(&mut buffer, 4096), 4096);
//! assert_eq!(buffer[0], 7);
//! let pipe = Pipe::new(4096).unwrap();
//! assert_eq!(pipe.write_file(&file, &[9u8; 4096], 0), 4096);
//! assert_eq!(pipe.read_file(&file, &mut buffer, 0), 4096);
//! assert_eq!(buffer[4095], 9);
//! ```

use super::sys;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

/// The way bytes move (see the module documentation).
pub use crate::result::DataPath;

/// Shortest whole transfer a pipe is asked to hold (a pipe's default capacity).
const PIPE_DEFAULT_BYTES: usize = 64 * 1024;

/// `-errno` of `error` (EIO when it has none), as a completion carries a failure.
pub(super) fn negative_errno(error: &io::Error) -> i64 {
    -i64::from(error.raw_os_error().unwrap_or(libc::EIO))
}

/// A file mapped shared, read-write when the descriptor allows it (read-only otherwise), from
/// offset 0 to its size when mapped.
///
/// A mapping cannot bypass the page cache, so on a descriptor opened `O_DIRECT` (a job with
/// `direct=1`) every request's pages are written back and waited for (`msync(MS_SYNC)`) before
/// the request completes, as fio's mmap engine does with `direct=1`. fio also advises
/// `POSIX_MADV_DONTNEED` then, which the C library ignores on Linux, so iopath does not.
pub struct FileMapping {
    map: sys::SharedMap,
    write_back_each: bool,
}

impl FileMapping {
    /// Maps all of `file` (a regular file or a block device), whose size must be above 0.
    pub fn new(file: &File) -> io::Result<FileMapping> {
        let length = sys::end_offset(file.as_raw_fd())?;
        if length == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "an empty file cannot be mapped",
            ));
        }
        let length = usize::try_from(length)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "file too large to map"))?;
        Ok(FileMapping {
            map: sys::SharedMap::new(file.as_raw_fd(), length)?,
            write_back_each: sys::opened_direct(file.as_raw_fd()),
        })
    }

    /// The range `offset..offset + length` of the mapping, if it lies within it.
    fn range(&self, offset: u64, length: usize) -> Option<std::ops::Range<usize>> {
        let start = usize::try_from(offset).ok()?;
        let end = start.checked_add(length)?;
        (end <= self.map.len()).then_some(start..end)
    }

    /// Copies `buffer.len()` bytes at `offset` of the file into `buffer`: the bytes copied, or
    /// `-EINVAL` past the mapped size.
    pub fn read(&mut self, buffer: &mut [u8], offset: u64) -> i64 {
        match self.range(offset, buffer.len()) {
            Some(range) => {
                buffer.copy_from_slice(&self.map.bytes()[range]);
                self.completed(offset, buffer.len())
            }
            None => -i64::from(libc::EINVAL),
        }
    }

    /// A request of `length` bytes at `offset` has been copied: its result, once its pages
    /// are written back when the descriptor asked for unbuffered I/O.
    fn completed(&self, offset: u64, length: usize) -> i64 {
        if !self.write_back_each {
            return length as i64;
        }
        match self.map.sync_range(offset as usize, length) {
            Ok(()) => length as i64,
            Err(error) => negative_errno(&error),
        }
    }

    /// Copies `buffer` to `offset` of the file: the bytes copied, `-EINVAL` past the mapped
    /// size, `-EBADF` when the mapping is read-only.
    pub fn write(&mut self, buffer: &[u8], offset: u64) -> i64 {
        let Some(range) = self.range(offset, buffer.len()) else {
            return -i64::from(libc::EINVAL);
        };
        match self.map.bytes_mut() {
            Some(bytes) => {
                bytes[range].copy_from_slice(buffer);
                self.completed(offset, buffer.len())
            }
            None => -i64::from(libc::EBADF),
        }
    }

    /// Writes the mapping's dirty pages to the file and waits (`msync(MS_SYNC)`).
    pub fn sync(&self) -> io::Result<()> {
        self.map.sync()
    }
}

/// A pipe that carries each request between the buffer and the file.
pub struct Pipe {
    read_end: OwnedFd,
    write_end: OwnedFd,
    capacity: usize,
}

impl Pipe {
    /// A pipe, asked to hold `request_bytes` at once (it carries longer requests in parts).
    pub fn new(request_bytes: usize) -> io::Result<Pipe> {
        let (read_end, write_end) = sys::pipe()?;
        let wanted = request_bytes.max(PIPE_DEFAULT_BYTES);
        // A capacity above the system's limit is refused: the pipe then keeps the one it has.
        let capacity = sys::set_pipe_capacity(write_end.as_raw_fd(), wanted)
            .unwrap_or(PIPE_DEFAULT_BYTES)
            .max(1);
        Ok(Pipe {
            read_end,
            write_end,
            capacity,
        })
    }

    /// Reads `buffer.len()` bytes at `offset` of `file` through the pipe: the bytes read
    /// (fewer at the end of the file), or a negative errno.
    pub fn read_file(&self, file: &File, buffer: &mut [u8], offset: u64) -> i64 {
        let mut done = 0;
        while done < buffer.len() {
            let chunk = (buffer.len() - done).min(self.capacity);
            let spliced = match sys::splice_from_file(
                file.as_raw_fd(),
                offset + done as u64,
                self.write_end.as_raw_fd(),
                chunk,
            ) {
                Ok(0) => break,
                Ok(spliced) => spliced,
                Err(error) => return negative_errno(&error),
            };
            if let Err(error) =
                sys::read_exact(self.read_end.as_raw_fd(), &mut buffer[done..done + spliced])
            {
                return negative_errno(&error);
            }
            done += spliced;
        }
        done as i64
    }

    /// Writes `buffer` to `offset` of `file` through the pipe: the bytes written, or a
    /// negative errno.
    pub fn write_file(&self, file: &File, buffer: &[u8], offset: u64) -> i64 {
        let mut done = 0;
        while done < buffer.len() {
            let chunk = (buffer.len() - done).min(self.capacity);
            let queued =
                match sys::vmsplice(self.write_end.as_raw_fd(), &buffer[done..done + chunk]) {
                    Ok(queued) => queued,
                    Err(error) => return negative_errno(&error),
                };
            let mut drained = 0;
            while drained < queued {
                match sys::splice_to_file(
                    self.read_end.as_raw_fd(),
                    file.as_raw_fd(),
                    offset + (done + drained) as u64,
                    queued - drained,
                ) {
                    Ok(0) => return -i64::from(libc::EIO),
                    Ok(written) => drained += written,
                    Err(error) => {
                        // Leave the pipe empty for the next request.
                        let mut rest = vec![0u8; queued - drained];
                        let _ = sys::read_exact(self.read_end.as_raw_fd(), &mut rest);
                        return negative_errno(&error);
                    }
                }
            }
            done += queued;
        }
        done as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::OpenOptionsExt;

    /// The dirty pages the page cache holds of all of `file`, from `cachestat(2)` (Linux 6.5).
    fn dirty_pages(file: &File) -> u64 {
        /// `struct cachestat_range`.
        #[repr(C)]
        struct Range {
            offset: u64,
            length: u64,
        }
        /// `struct cachestat`.
        #[repr(C)]
        #[derive(Default)]
        struct Counts {
            cache: u64,
            dirty: u64,
            writeback: u64,
            evicted: u64,
            recently_evicted: u64,
        }
        const SYS_CACHESTAT: libc::c_long = 451;
        let range = Range {
            offset: 0,
            length: 0,
        };
        let mut counts = Counts::default();
        // SAFETY: both structs have the kernel's layout and outlive the call, which only
        // reads `range` and writes `counts`.
        let result = unsafe {
            libc::syscall(
                SYS_CACHESTAT,
                file.as_raw_fd(),
                &range as *const Range,
                &mut counts as *mut Counts,
                0,
            )
        };
        assert_eq!(result, 0, "cachestat: {}", io::Error::last_os_error());
        counts.dirty
    }

    /// A 64 KiB file of zeroes in `directory`, opened read-write, with O_DIRECT when `direct`.
    fn open_file(directory: &std::path::Path, direct: bool) -> File {
        let path = directory.join(if direct { "direct" } else { "buffered" });
        std::fs::write(&path, vec![0u8; 64 << 10]).unwrap();
        File::open(&path).unwrap().sync_all().unwrap();
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true);
        if direct {
            options.custom_flags(libc::O_DIRECT);
        }
        options.open(&path).unwrap()
    }

    #[test]
    fn a_mapped_write_on_a_direct_descriptor_is_written_back_before_it_completes() {
        // On a filesystem that takes O_DIRECT, as the engine conformance tests use.
        let directory = tempfile::tempdir().unwrap();
        let buffered = open_file(directory.path(), false);
        let mut mapping = FileMapping::new(&buffered).unwrap();
        assert_eq!(mapping.write(&[7; 1024], 5 << 10), 1024);
        assert!(
            dirty_pages(&buffered) >= 1,
            "a buffered mapped write stays dirty"
        );

        let direct = open_file(directory.path(), true);
        let mut mapping = FileMapping::new(&direct).unwrap();
        // Not page-aligned: the pages holding the range are written back.
        assert_eq!(mapping.write(&[9; 1024], 5 << 10), 1024);
        assert_eq!(
            dirty_pages(&direct),
            0,
            "direct=1: written back at completion"
        );
        let mut back = [0u8; 1024];
        assert_eq!(mapping.read(&mut back, 5 << 10), 1024);
        assert_eq!(back, [9; 1024]);
    }
}
