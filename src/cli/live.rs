//! What the user sees while a run goes on: a live line on a terminal (elapsed / total, MB/s,
//! IOPS, each second) and the notes of each test. Nothing of the live line when stdout is not a
//! terminal.

use super::messages::for_terminal;
use iopath::result::TestResult;
use iopath::run::progress::LiveSample;
use iopath::run::{EffectiveShape, RunObserver};
use iopath::text::shown;
use iopath::workload::TestPlan;
use std::io::{IsTerminal, Write};
use std::path::Path;

/// Prints progress to stderr.
pub struct TerminalObserver {
    live: bool,
    line_open: bool,
}

impl TerminalObserver {
    /// Live line only when both stdout and stderr are terminals and stdout carries no JSON.
    pub fn new(json_on_stdout: bool) -> Self {
        TerminalObserver {
            live: !json_on_stdout
                && std::io::stdout().is_terminal()
                && std::io::stderr().is_terminal(),
            line_open: false,
        }
    }

    fn close_line(&mut self) {
        if self.line_open {
            eprint!("\r\x1b[2K");
            let _ = std::io::stderr().flush();
            self.line_open = false;
        }
    }
}

impl RunObserver for TerminalObserver {
    fn test_starting(&mut self, _test: &TestPlan, _shapes: &[EffectiveShape]) {
        self.close_line();
    }

    fn live(&mut self, sample: &LiveSample) {
        if !self.live {
            return;
        }
        let total = sample
            .total_ns
            .map_or(String::new(), |t| format!(" / {} s", seconds(t)));
        eprint!(
            "\r\x1b[2K{}  {:.0} s{total}{}  {:.1} MB/s  {:.0} IOPS",
            shown(&sample.test_name),
            sample.elapsed_ns as f64 / 1e9,
            if sample.ramping { " (ramp)" } else { "" },
            sample.bytes_per_second / 1e6,
            sample.iops
        );
        let _ = std::io::stderr().flush();
        self.line_open = true;
    }

    fn experiment_finished(&mut self) {
        self.close_line();
    }

    fn test_finished(&mut self, result: &TestResult) {
        self.close_line();
        for warning in &result.warnings {
            if !warning.is_empty() {
                eprintln!(
                    "warning: {}: {}",
                    shown(&result.name),
                    for_terminal(warning)
                );
            }
        }
    }

    fn creating_file(&mut self, path: &Path, size: u64) {
        eprintln!(
            "creating {} ({} MiB of incompressible data)",
            for_terminal(path.display()),
            size >> 20
        );
    }
}

/// Whole seconds without decimals, others with one (`5`, `2.5`).
fn seconds(nanos: u64) -> String {
    if nanos.is_multiple_of(1_000_000_000) {
        (nanos / 1_000_000_000).to_string()
    } else {
        format!("{:.1}", nanos as f64 / 1e9)
    }
}
