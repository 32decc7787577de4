//! Ctrl-C and SIGTERM: the first raises the stop signal (workers finish cleanly and the
//! partial result is kept; engines waiting on a network server give it
//! [`STOP_GRACE`](crate::engine::network::STOP_GRACE) to answer what is in flight); the second
//! removes iopath's temporary files and exits at once.

use crate::engine::StopSignal;
use std::sync::atomic::Ordering;

/// Exit status after a forced stop (128 + SIGINT).
pub const FORCED_EXIT_STATUS: i32 = 130;

/// Installs the handlers and returns the stop signal they raise.
pub fn install() -> std::io::Result<StopSignal> {
    let stop = StopSignal::new();
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
    ])?;
    let signal = stop.clone();
    std::thread::Builder::new()
        .name("iopath-signals".into())
        .spawn(move || {
            for _ in signals.forever() {
                if signal.flag().swap(true, Ordering::SeqCst) {
                    crate::target::test_file::remove_registered_files();
                    std::process::exit(FORCED_EXIT_STATUS);
                }
            }
        })?;
    Ok(stop)
}
