//! `iopath pts` in a test's budget: the whole suite cut down to seconds, and the state file a
//! run leaves.

use serde_json::Value;
use std::path::Path;

/// The flags that cut the whole suite down to a test's budget: rounds of 100 ms, at most 5 of
/// them, 4 KiB blocks only, a saturation test of 1 s; the state file and the report go to
/// `out`.
pub const SUITE_IN_SECONDS: [&str; 10] = [
    "--round",
    "100ms",
    "--max-rounds",
    "5",
    "--block-sizes",
    "4k",
    "--saturation-time",
    "1s",
    "--output-dir",
    "out",
];

/// The state file (`pts.json`) a run left in `dir`.
pub fn state(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("pts.json")).expect("pts.json written");
    serde_json::from_str(&text).expect("pts.json holds JSON")
}
