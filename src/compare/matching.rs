//! Which tests of several runs are the same test: same name and same sweep point. A name that
//! appears twice in one run (two fio jobs with one section name) matches by order: the second
//! `seq` of one run with the second `seq` of the other. Runs that hold one test each are the
//! exception: two single-test runs (`--qd 1` against `--qd 32`) are compared whatever their
//! names, as one test named after each of them (`randread 4k QD1 vs randread 4k QD32`).
//!
//! ```
//! use iopath::compare::matching::TestKey;
//! let key = TestKey { name: "randread 4k QD1 qd=4".into(), sweep: vec![], occurrence: 0 };
//! assert_eq!(key.display_name(), "randread 4k QD1 qd=4");
//! ```

use crate::result::{RunResult, SweepValue};

/// What makes two tests of different runs the same test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestKey {
    /// Test name.
    pub name: String,
    /// Sweep point (empty when not swept).
    pub sweep: Vec<SweepValue>,
    /// 0 for the first test of this name and sweep point in its run, 1 for the second…
    pub occurrence: usize,
}

impl TestKey {
    /// The name, with `#2`, `#3`… for repeated names.
    pub fn display_name(&self) -> String {
        if self.occurrence == 0 {
            self.name.clone()
        } else {
            format!("{} #{}", self.name, self.occurrence + 1)
        }
    }
}

/// A test present in every run: its index in each run's `tests`, in run order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchedTest {
    /// The key.
    pub key: TestKey,
    /// `tests` index in each run.
    pub test_indexes: Vec<usize>,
}

/// A test missing from at least one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialMatch {
    /// The key.
    pub key: TestKey,
    /// The runs that have it.
    pub present_in: Vec<usize>,
}

/// Every test of every run, sorted into matched and not.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Matching {
    /// Tests every run has, in the order of the first run (then of the runs that have them).
    pub matched: Vec<MatchedTest>,
    /// Tests some run lacks, in order of first appearance.
    pub unmatched: Vec<PartialMatch>,
    /// Every run held one test, under different names, and these were paired as one.
    pub paired_single_tests: bool,
}

/// The keys of a run's tests, in order.
pub fn keys(result: &RunResult) -> Vec<TestKey> {
    let mut keys: Vec<TestKey> = Vec::with_capacity(result.tests.len());
    for test in &result.tests {
        let occurrence = keys
            .iter()
            .filter(|key| key.name == test.name && key.sweep == test.sweep)
            .count();
        keys.push(TestKey {
            name: test.name.clone(),
            sweep: test.sweep.clone(),
            occurrence,
        });
    }
    keys
}

/// Matches the tests of `runs`.
pub fn match_tests(runs: &[&RunResult]) -> Matching {
    let keys: Vec<Vec<TestKey>> = runs.iter().map(|run| keys(run)).collect();
    let mut order: Vec<&TestKey> = Vec::new();
    for run_keys in &keys {
        for key in run_keys {
            if !order.contains(&key) {
                order.push(key);
            }
        }
    }
    let mut matching = Matching::default();
    if let Some(paired) = pair_single_tests(&keys) {
        matching.matched.push(paired);
        matching.paired_single_tests = true;
        return matching;
    }
    for key in order {
        let positions: Vec<Option<usize>> = keys
            .iter()
            .map(|run_keys| run_keys.iter().position(|candidate| candidate == key))
            .collect();
        if positions.iter().all(Option::is_some) {
            matching.matched.push(MatchedTest {
                key: key.clone(),
                test_indexes: positions.into_iter().flatten().collect(),
            });
        } else {
            matching.unmatched.push(PartialMatch {
                key: key.clone(),
                present_in: positions
                    .iter()
                    .enumerate()
                    .filter(|(_, position)| position.is_some())
                    .map(|(run, _)| run)
                    .collect(),
            });
        }
    }
    matching
}

/// The one test of each run, as one matched test, when every run holds exactly one test and
/// their names or sweep points differ (the same test needs no pairing).
fn pair_single_tests(keys: &[Vec<TestKey>]) -> Option<MatchedTest> {
    if keys.iter().any(|run_keys| run_keys.len() != 1) {
        return None;
    }
    let first = &keys.first()?[0];
    if keys.iter().all(|run_keys| run_keys[0] == *first) {
        return None;
    }
    let mut names: Vec<&str> = Vec::new();
    for run_keys in keys {
        if !names.contains(&run_keys[0].name.as_str()) {
            names.push(&run_keys[0].name);
        }
    }
    let same_sweep = keys.iter().all(|run_keys| run_keys[0].sweep == first.sweep);
    Some(MatchedTest {
        key: TestKey {
            name: names.join(" vs "),
            sweep: if same_sweep {
                first.sweep.clone()
            } else {
                Vec::new()
            },
            occurrence: 0,
        },
        test_indexes: vec![0; keys.len()],
    })
}
