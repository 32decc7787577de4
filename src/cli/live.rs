//! What the user sees while a run goes on: on a terminal either the live line (elapsed /
//! total, MB/s, IOPS, each second) or the dashboard (`--live`, [`super::dashboard`]), and the
//! notes of each test. Nothing of either when stdout or stderr is not a terminal.

use super::dashboard::state::PlannedTest;
use super::dashboard::{Dashboard, Event};
use super::messages::for_terminal;
use iopath::result::{CreatedContent, StoragePath, TestResult};
use iopath::run::progress::LiveSample;
use iopath::run::{RunObserver, TestShape};
use iopath::text::shown;
use iopath::workload::TestPlan;
use std::io::{IsTerminal, Write};
use std::path::Path;

/// Runs planned to take at least this long get the dashboard on a terminal unasked.
pub const DASHBOARD_AFTER_NS: u64 = 10_000_000_000;

/// How progress is shown.
enum Mode {
    /// Nothing (not a terminal, or JSON on stdout).
    Quiet,
    /// The one live line on stderr.
    Line,
    /// The full-screen dashboard.
    Dashboard(Dashboard),
}

/// Prints progress to stderr, or draws the dashboard there.
pub struct TerminalObserver {
    mode: Mode,
    line_open: bool,
    /// Messages held while the dashboard has the screen, printed when it closes.
    deferred: Vec<String>,
}

/// Whether both stdout and stderr are terminals.
pub fn on_a_terminal() -> bool {
    std::io::stdout().is_terminal() && std::io::stderr().is_terminal()
}

impl TerminalObserver {
    /// Live line only when both stdout and stderr are terminals and stdout carries no JSON.
    pub fn new(json_on_stdout: bool) -> Self {
        TerminalObserver {
            mode: if !json_on_stdout && on_a_terminal() {
                Mode::Line
            } else {
                Mode::Quiet
            },
            line_open: false,
            deferred: Vec::new(),
        }
    }

    /// Shows the run on `dashboard`.
    pub fn with_dashboard(dashboard: Dashboard) -> Self {
        TerminalObserver {
            mode: Mode::Dashboard(dashboard),
            line_open: false,
            deferred: Vec::new(),
        }
    }

    /// Whether the dashboard is showing (or closed on its own since the last event).
    pub fn has_dashboard(&self) -> bool {
        matches!(self.mode, Mode::Dashboard(_))
    }

    /// Gives the dashboard the paths of the run's targets.
    pub fn paths(&mut self, paths: &[StoragePath]) {
        if let Mode::Dashboard(dashboard) = &self.mode {
            dashboard.send(Event::Paths(paths.to_vec()));
        }
    }

    /// Ends the live display: closes the dashboard (the terminal is given back) and prints
    /// what was held meanwhile.
    pub fn close(&mut self) {
        self.close_line();
        if let Mode::Dashboard(dashboard) = &mut self.mode {
            dashboard.close();
            self.mode = Mode::Quiet;
        }
        for message in self.deferred.drain(..) {
            eprintln!("{message}");
        }
    }

    /// Prints `message` on stderr, or holds it (and shows it) while the dashboard is open.
    fn say(&mut self, message: String) {
        self.fall_back_if_closed();
        match &self.mode {
            Mode::Dashboard(dashboard) => {
                dashboard.send(Event::Note(message.clone()));
                self.deferred.push(message);
            }
            Mode::Quiet | Mode::Line => eprintln!("{message}"),
        }
    }

    /// A dashboard that closed on its own (a terminal too small, or failing) gives way to the
    /// progress line, saying why in one line; what it held is printed then.
    fn fall_back_if_closed(&mut self) {
        let Mode::Dashboard(dashboard) = &mut self.mode else {
            return;
        };
        let Some(reason) = dashboard.closed_early() else {
            return;
        };
        dashboard.close();
        self.mode = Mode::Line;
        eprintln!(
            "note: the dashboard closed ({}): showing the progress line; Ctrl-C stops the run",
            for_terminal(&reason)
        );
        for message in self.deferred.drain(..) {
            eprintln!("{message}");
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

impl Drop for TerminalObserver {
    fn drop(&mut self) {
        self.close();
    }
}

impl RunObserver for TerminalObserver {
    fn test_starting(&mut self, test: &TestPlan, _shapes: &[TestShape]) {
        self.fall_back_if_closed();
        self.close_line();
        if let Mode::Dashboard(dashboard) = &self.mode {
            dashboard.send(Event::TestStarting(test.name.clone()));
        }
    }

    fn live(&mut self, sample: &LiveSample) {
        self.fall_back_if_closed();
        match &self.mode {
            Mode::Quiet => {}
            // The last sample's interval may be a few milliseconds: nothing to chart.
            Mode::Dashboard(_) | Mode::Line if sample.last => {}
            Mode::Dashboard(dashboard) => dashboard.send(Event::Sample(sample.clone())),
            Mode::Line => {
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
        }
    }

    fn experiment_finished(&mut self) {
        self.close_line();
        if let Mode::Dashboard(dashboard) = &self.mode {
            dashboard.send(Event::TestFinished);
        }
    }

    fn test_finished(&mut self, result: &TestResult) {
        self.close_line();
        if let Mode::Dashboard(dashboard) = &self.mode {
            dashboard.send(Event::TestFinished);
        }
        for warning in &result.warnings {
            if !warning.is_empty() {
                self.say(format!(
                    "warning: {}: {}",
                    shown(&result.name),
                    for_terminal(warning)
                ));
            }
        }
    }

    fn creating_file(&mut self, path: &Path, size: u64, content: CreatedContent) {
        let shown = for_terminal(path.display());
        self.say(match content {
            CreatedContent::Filled => {
                format!("creating {shown} ({} MiB of incompressible data)", size >> 20)
            }
            CreatedContent::Sized { .. } => format!(
                "creating {shown} ({} MiB, {}: no job reads it first, and its writes lay it out, as in fio)",
                size >> 20,
                content.describe()
            ),
        });
    }
}

/// The run's tests and their planned lengths, for the dashboard's progress.
pub fn planned_tests(tests: &[TestPlan]) -> Vec<PlannedTest> {
    tests
        .iter()
        .map(|test| PlannedTest {
            name: test.name.clone(),
            planned_ns: iopath::run::progress::planned_test_ns(test),
        })
        .collect()
}

/// Whole seconds without decimals, others with one (`5`, `2.5`).
fn seconds(nanos: u64) -> String {
    if nanos.is_multiple_of(1_000_000_000) {
        (nanos / 1_000_000_000).to_string()
    } else {
        format!("{:.1}", nanos as f64 / 1e9)
    }
}
