//! `iopath presets`: every preset and what it reproduces, and Iometer's load levels.

use super::exit;
use iopath::input::presets::{LOAD_LEVELS, PRESETS};

/// Prints the presets; returns the exit status.
pub fn run() -> i32 {
    println!("Presets (iopath run --preset NAME [TARGET] [--qd N] [--workers N] [--duration T]):");
    let width = PRESETS.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for preset in PRESETS {
        println!("  {:width$}  {}", preset.name, preset.reproduces);
    }
    println!();
    println!("Iometer load levels, usable wherever a queue depth is (--qd heavy):");
    for (name, depth) in LOAD_LEVELS {
        println!("  {name:width$}  QD {depth}");
    }
    exit::SUCCESS
}
