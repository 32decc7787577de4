//! The memory copy bandwidth of this host: what the page cache, tmpfs, a Unix socket or the
//! loopback network can carry at most. Measured once (about a quarter of a second) and cached
//! in `$XDG_CACHE_HOME/iopath/memcpy.json` (or `~/.cache/iopath/memcpy.json`) for as long as
//! the CPU model, CPU count and memory size stay the same.
//!
//! ```
//! use iopath::discovery::memcpy::measure;
//! let bytes_per_second = measure(1 << 20, std::time::Duration::from_millis(5));
//! assert!(bytes_per_second > 10_000_000);
//! ```

use super::HostView;
use super::resources::describe;
use crate::gate::created::create_directories;
use crate::gate::read::{FileLimit, read_text};
use crate::gate::replace::OutputFile;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Size of each of the two buffers: well beyond the CPU caches, so that memory is measured.
pub const BUFFER_BYTES: usize = 64 << 20;
/// Time spent copying before the best pass counts.
pub const MEASURE_TIME: Duration = Duration::from_millis(250);

/// A measurement and the host it belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryCopyBandwidth {
    /// Bytes copied per second by one thread (the best pass).
    pub bytes_per_second: u64,
    /// The host it was measured on.
    pub host: HostKey,
}

/// What must stay the same for a cached measurement to hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostKey {
    /// CPU model name.
    pub cpu_model: String,
    /// Logical CPUs.
    pub cpu_count: u32,
    /// Installed memory, bytes.
    pub memory_bytes: u64,
}

impl HostKey {
    /// This host, as discovery describes it.
    pub fn current() -> Self {
        let host = describe(&HostView::live());
        HostKey {
            cpu_model: host.cpu_model,
            cpu_count: host.cpu_count,
            memory_bytes: host.memory_bytes,
        }
    }
}

/// Copies between two buffers of `buffer_bytes` for at least `time` and returns the best
/// pass's bytes per second.
pub fn measure(buffer_bytes: usize, time: Duration) -> u64 {
    let buffer_bytes = buffer_bytes.max(4096);
    let mut source = vec![0x5au8; buffer_bytes];
    let mut destination = vec![0u8; buffer_bytes];
    // Touch both so that page faults are not measured.
    destination.copy_from_slice(&source);
    source[0] = 1;
    let started = Instant::now();
    let mut best = 0.0f64;
    let mut passes = 0;
    while passes < 3 || started.elapsed() < time {
        let pass = Instant::now();
        destination.copy_from_slice(std::hint::black_box(&source));
        std::hint::black_box(&mut destination);
        let seconds = pass.elapsed().as_secs_f64();
        if seconds > 0.0 {
            best = best.max(buffer_bytes as f64 / seconds);
        }
        passes += 1;
    }
    best as u64
}

/// Where the measurement is cached: `$XDG_CACHE_HOME/iopath/memcpy.json`, else
/// `~/.cache/iopath/memcpy.json`; `None` without either variable.
pub fn default_cache_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|value| !value.is_empty())
                .map(|home| PathBuf::from(home).join(".cache"))
        })?;
    Some(base.join("iopath").join("memcpy.json"))
}

/// The cached measurement in `cache_file` when it belongs to `host`; otherwise measures and
/// tries to cache the result (a cache that cannot be written is not an error). The cache is
/// read only when it is a small regular file, and written through the gate (a new file
/// renamed into place, only over a regular file), so a FIFO or a device put there is never
/// opened nor replaced.
pub fn cached_or_measure(cache_file: Option<&Path>, host: &HostKey) -> MemoryCopyBandwidth {
    if let Some(file) = cache_file
        && let Ok(text) = read_text(file, FileLimit::CACHE_FILE)
        && let Ok(cached) = serde_json::from_str::<MemoryCopyBandwidth>(&text)
        && cached.host == *host
        && cached.bytes_per_second > 0
    {
        return cached;
    }
    let measured = MemoryCopyBandwidth {
        bytes_per_second: measure(BUFFER_BYTES, MEASURE_TIME),
        host: host.clone(),
    };
    if let Some(file) = cache_file
        && let Ok(text) = serde_json::to_string_pretty(&measured)
    {
        store(file, &(text + "\n"));
    }
    measured
}

/// Writes `text` over `file` through the gate: a new file beside it renamed into place, and
/// only when `file` is a regular file or missing.
fn store(file: &Path, text: &str) {
    if let Some(directory) = file.parent() {
        let _ = create_directories(directory);
    }
    let _ = OutputFile::check(file)
        .and_then(|output| output.write(|out| out.write_all(text.as_bytes())));
}

/// This host's memory copy bandwidth, bytes per second: cached, or measured now.
pub fn memory_copy_bandwidth() -> u64 {
    cached_or_measure(default_cache_file().as_deref(), &HostKey::current()).bytes_per_second
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_measurement_is_cached_per_host() {
        let directory = tempfile::tempdir().unwrap();
        let file = directory.path().join("iopath").join("memcpy.json");
        let host = HostKey {
            cpu_model: "test CPU".into(),
            cpu_count: 2,
            memory_bytes: 1 << 30,
        };
        let cached = MemoryCopyBandwidth {
            bytes_per_second: 12_345,
            host: host.clone(),
        };
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, serde_json::to_string(&cached).unwrap()).unwrap();
        assert_eq!(cached_or_measure(Some(&file), &host), cached);

        // Another host: measured again, and the cache now holds the new figure.
        let other = HostKey {
            cpu_count: 4,
            ..host.clone()
        };
        let measured = cached_or_measure(Some(&file), &other);
        assert!(measured.bytes_per_second > 100_000_000, "{measured:?}");
        let stored: MemoryCopyBandwidth =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(stored, measured);
    }

    #[test]
    fn a_fifo_in_place_of_the_cache_is_never_opened() {
        let directory = tempfile::tempdir().unwrap();
        let file = directory.path().join("memcpy.json");
        crate::support::devices::make_fifo(&file);
        let host = HostKey {
            cpu_model: "test CPU".into(),
            cpu_count: 2,
            memory_bytes: 1 << 30,
        };
        let (sender, receiver) = std::sync::mpsc::channel();
        let (path, key) = (file.clone(), host.clone());
        std::thread::spawn(move || {
            let _ = sender.send(cached_or_measure(Some(&path), &key));
        });
        let measured = receiver
            .recv_timeout(Duration::from_secs(60))
            .expect("the FIFO blocked reading or writing the cache");
        assert!(measured.bytes_per_second > 0);
        // Not a regular file: the gate neither reads it nor replaces it.
        use std::os::unix::fs::FileTypeExt;
        assert!(
            std::fs::symlink_metadata(&file)
                .unwrap()
                .file_type()
                .is_fifo()
        );
    }

    #[test]
    fn the_host_key_reads_proc() {
        let host = HostKey::current();
        assert!(host.cpu_count >= 1);
        assert!(host.memory_bytes > 0);
    }
}
