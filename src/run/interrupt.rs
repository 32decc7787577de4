//! Ctrl-C and SIGTERM: the first sets the stop flag (workers finish cleanly and the partial
//! result is kept); the second removes iopath's temporary files and exits at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Exit status after a forced stop (128 + SIGINT).
pub const FORCED_EXIT_STATUS: i32 = 130;

/// Installs the handlers and returns the stop flag they set.
pub fn install() -> std::io::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
    ])?;
    let flag = Arc::clone(&stop);
    std::thread::Builder::new()
        .name("iopath-signals".into())
        .spawn(move || {
            for _ in signals.forever() {
                if flag.swap(true, Ordering::SeqCst) {
                    crate::targets::test_file::remove_registered_files();
                    std::process::exit(FORCED_EXIT_STATUS);
                }
            }
        })?;
    Ok(stop)
}
