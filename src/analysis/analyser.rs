//! The one analysis of a run's result: what `iopath run` calls once per result, and what
//! `--confirm` reads its verdicts from.
//!
//! An [`Analyser`] holds what every analysis of a run needs besides the result: the hops the
//! user declared, the machine the paths are gathered on, and the host's facts (gathered at
//! the first analysis, then kept, so that a confirming experiment is judged on the same facts
//! as the test it confirms). The runner calls [`Analyser::analyse`] once on the result it
//! measured — before the confirming experiments when there are any, so that they and the
//! outputs read the same analysis — and a run from several clients once more on the merged
//! result. The report model ([`crate::report::model`]) is built from the analysed result.
//!
//! ```no_run
//! use iopath::analysis::{Analyser, DeclaredPath};
//! use iopath::report::json::read_json;
//! let mut result = read_json(&std::fs::read_to_string("out.json")?)?;
//! Analyser::this_host(DeclaredPath::default()).analyse(&mut result);
//! assert_eq!(result.paths.len(), result.targets.len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::{DeclaredPath, HostFacts, analyse_on};
use crate::discovery::Machine;
use crate::result::RunResult;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The declared hops, the machine and its facts: everything the analysis of a run reads
/// besides the result.
pub struct Analyser {
    declared: DeclaredPath,
    machine: Machine,
    facts: OnceLock<HostFacts>,
    analyses: AtomicUsize,
}

impl Analyser {
    /// Analyses on this host with `declared` added to every path; the host's facts are
    /// gathered at the first analysis.
    pub fn this_host(declared: DeclaredPath) -> Self {
        Analyser {
            declared,
            machine: Machine::this_host(),
            facts: OnceLock::new(),
            analyses: AtomicUsize::new(0),
        }
    }

    /// The host's facts, gathered once.
    pub fn facts(&self) -> &HostFacts {
        self.facts.get_or_init(|| self.machine.host_facts())
    }

    /// Fills `result.paths` and every test's analysis (see [`super::analyse_on`]); a
    /// confirmation already stored in a test's analysis is kept.
    pub fn analyse(&self, result: &mut RunResult) {
        analyse_on(result, &self.declared, &self.machine, self.facts());
        self.analyses.fetch_add(1, Ordering::Relaxed);
    }

    /// How many results it has analysed: a run analyses its result once, whatever it does
    /// afterwards.
    pub fn analyses(&self) -> usize {
        self.analyses.load(Ordering::Relaxed)
    }
}
