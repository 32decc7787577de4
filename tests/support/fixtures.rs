//! Saved results of real runs, read as any saved run is: the fixed inputs of the exporter and
//! comparison tests (tests/fixtures/README.md says how each was made).
//!
//! - `small`: one random read/write test, one job (4 KiB, QD 4, 2 s) on a file;
//! - `sweep`: random 4 KiB reads swept over queue depths 1 and 8 (io_uring);
//! - `sweep-sync`: the same sweep with the sync engine;
//! - `mixed`: a mixed random test, then a test of two jobs (a reader and a writer);
//! - `network`: sequential reads from an NBD server over a declared 1GbE link (a path of
//!   hops and a link-bound verdict).

use iopath::report::json::read_json;
use iopath::result::RunResult;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Every fixture's name.
pub const NAMES: [&str; 5] = ["small", "sweep", "sweep-sync", "mixed", "network"];

/// The folder of the fixtures.
pub fn directory() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results")
}

/// The fixture `name` (one of [`NAMES`]), read and checked like any saved run.
pub fn result(name: &str) -> RunResult {
    let path = directory().join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    read_json(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The `mixed` fixture, read once per test binary.
pub fn mixed() -> &'static RunResult {
    static MIXED: OnceLock<RunResult> = OnceLock::new();
    MIXED.get_or_init(|| result("mixed"))
}
