//! What the property tests of outside input share (tests/formats/input_fuzz.rs for files the user
//! names, tests/formats/reply_fuzz.rs for what servers send back): the proptest configuration
//! ([`config`]: a fixed seed, or `IOPATH_FUZZ_CASES=N` cases from a random one) and
//! [`bounded`], which fails a case that panics or hangs.

use proptest::test_runner::{Config, RngSeed, TestCaseError};
use std::time::Duration;

/// Longest one input may take to read: far above what any takes; past it the reader is taken
/// to hang.
pub const HANG: Duration = Duration::from_secs(30);

/// `default_cases` cases from a fixed seed (the same inputs every run), or with
/// `IOPATH_FUZZ_CASES=N` in the environment N cases from a random seed (a longer search by
/// hand).
pub fn config(default_cases: u32) -> Config {
    let asked: Option<u32> = std::env::var("IOPATH_FUZZ_CASES")
        .ok()
        .and_then(|text| text.parse().ok());
    Config {
        cases: asked.unwrap_or(default_cases),
        rng_seed: match asked {
            Some(_) => RngSeed::Random,
            None => RngSeed::Fixed(0x10_9a7e),
        },
        failure_persistence: None,
        max_shrink_iters: 512,
        max_shrink_time: 60_000,
        ..Config::default()
    }
}

/// Runs `body` on a thread of its own: a panic or a run longer than [`HANG`] fails the case.
pub fn bounded<T: Send + 'static>(
    what: String,
    body: impl FnOnce() -> T + Send + 'static,
) -> Result<T, TestCaseError> {
    let (sender, receiver) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        let _ = sender.send(body());
    });
    match receiver.recv_timeout(HANG) {
        Ok(value) => {
            let _ = worker.join();
            Ok(value)
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(TestCaseError::fail(format!(
            "{what}: panicked (see the message above)"
        ))),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(TestCaseError::fail(format!(
            "{what}: still running after {HANG:?}"
        ))),
    }
}
