//! What the dashboard shows, updated from the run's events and the machine's counters; the
//! view ([`super::view`]) only reads it.

use super::marks::CHART_SECONDS;
use super::servers::{self, ServerPanel};
use iopath::discovery::counters::HopCounters;
use iopath::host::cpu::CpuSnapshot;
use iopath::observe::sampler::LiveScrape;
use iopath::result::{Duplex, StoragePath};
use iopath::run::progress::LiveSample;
use std::collections::VecDeque;
use std::time::Instant;

/// One planned test: its name and planned length (None: ends with its bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedTest {
    /// The test's name.
    pub name: String,
    /// Planned length, ns.
    pub planned_ns: Option<u64>,
}

/// The figures of one direction of one job on one target, over time.
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// `#2 read`: the test's number, the job when the test has several, the direction.
    pub label: String,
    /// (seconds since the run started, MB/s).
    pub megabytes: VecDeque<(f64, f64)>,
    /// (seconds, IOPS).
    pub iops: VecDeque<(f64, f64)>,
    /// (seconds, p50 µs).
    pub p50_us: VecDeque<(f64, f64)>,
    /// (seconds, p99 µs).
    pub p99_us: VecDeque<(f64, f64)>,
}

/// One row of the figures table: the last interval of a direction of a job on a target.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    /// The job (the test, when it has one job).
    pub job: String,
    /// The target.
    pub target: String,
    /// `read` or `write`.
    pub direction: &'static str,
    /// Bytes per second.
    pub bytes_per_second: f64,
    /// I/Os per second.
    pub iops: f64,
    /// Median latency, ns.
    pub p50_ns: Option<u64>,
    /// 99th percentile latency, ns.
    pub p99_ns: Option<u64>,
}

/// One line of the verification panel: what a job's checks on a target found so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyLine {
    /// `verify JOB on TARGET: 1,234 blocks checked, 0 bad` (with the first bad block's kind
    /// and offset when there is one).
    pub text: String,
    /// Whether a bad block was found.
    pub bad: bool,
}

/// A hop with a live counter, and its use in the last second.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveHop {
    /// `block:sda` or `net:eth0`.
    pub key: String,
    /// What to call it.
    pub name: String,
    /// Capacity per direction, bytes/s.
    pub capacity_bytes_per_second: u64,
    /// Full or half duplex.
    pub duplex: Duplex,
    /// What the capacity is (`1GbE`, `PCIe 3.0 x4`, or the figure).
    pub capacity_name: String,
    /// Use over the last second, 0–1 and beyond (None before the second reading).
    pub utilisation: Option<f64>,
    /// Bytes/s each way over the last second.
    pub rates: (f64, f64),
}

/// `118.9 MB/s`, `10.3 GB/s`.
pub fn rate(bytes_per_second: f64) -> String {
    if bytes_per_second >= 1e9 {
        format!("{:.1} GB/s", bytes_per_second / 1e9)
    } else {
        format!("{:.1} MB/s", bytes_per_second / 1e6)
    }
}

/// Everything on the screen.
#[derive(Clone)]
pub struct DashboardState {
    /// When the figures were last updated (the right edge of the charts).
    pub updated: Instant,
    /// When the run started.
    pub started: Instant,
    /// The run's tests.
    pub plan: Vec<PlannedTest>,
    /// Tests finished.
    pub finished: usize,
    /// The test running (index into `plan` when it is one of the run's tests; confirming
    /// experiments come after them).
    pub current: Option<(usize, String)>,
    /// The last sample of the current test.
    pub sample: Option<LiveSample>,
    /// The rows of the last sample.
    pub rows: Vec<Row>,
    /// Every series, oldest first.
    pub series: Vec<Series>,
    /// Hops with a live counter.
    pub hops: Vec<LiveHop>,
    /// Why no hop is shown, when none is.
    pub hop_note: String,
    /// Busy share of each core over the last second.
    pub cores: Vec<(u32, f64)>,
    /// The servers and switches of `--server-metrics` and `--switch-snmp`, as last scraped.
    pub servers: Vec<ServerPanel>,
    /// Messages for after the run (warnings), shown last here.
    pub notes: Vec<String>,
    /// The display is paused (the run goes on).
    pub paused: bool,
    /// A stop was asked for.
    pub stopping: bool,
    last_counters: Option<(Instant, HopCounters)>,
    last_cpu: Option<(Instant, CpuSnapshot)>,
}

impl DashboardState {
    /// Before the first test.
    pub fn new(plan: Vec<PlannedTest>) -> Self {
        DashboardState {
            started: Instant::now(),
            updated: Instant::now(),
            plan,
            finished: 0,
            current: None,
            sample: None,
            rows: Vec::new(),
            series: Vec::new(),
            hops: Vec::new(),
            hop_note: "finding the path…".into(),
            cores: Vec::new(),
            servers: Vec::new(),
            notes: Vec::new(),
            paused: false,
            stopping: false,
            last_counters: None,
            last_cpu: None,
        }
    }

    /// The hops of every target's path that have a live counter and a capacity (each once).
    pub fn set_paths(&mut self, paths: &[StoragePath]) {
        self.hops.clear();
        for hop in paths.iter().flat_map(|path| &path.hops) {
            let counted = hop.key.starts_with("block:") || hop.key.starts_with("net:");
            let (Some(capacity), true) = (&hop.capacity, counted) else {
                continue;
            };
            if self.hops.iter().any(|known| known.key == hop.key) {
                continue;
            }
            self.hops.push(LiveHop {
                key: hop.key.clone(),
                name: hop.name.clone(),
                capacity_bytes_per_second: capacity.payload_bytes_per_second,
                duplex: capacity.duplex,
                capacity_name: capacity
                    .catalog_name
                    .clone()
                    .unwrap_or_else(|| rate(capacity.payload_bytes_per_second as f64)),
                utilisation: None,
                rates: (0.0, 0.0),
            });
        }
        self.hop_note = if self.hops.is_empty() {
            "no hop of these paths has a live counter and a known capacity".into()
        } else {
            String::new()
        };
    }

    /// What the verifying jobs of the test running have checked so far, one line per job and
    /// target (none when no job verifies).
    pub fn verification(&self) -> Vec<VerifyLine> {
        let Some(sample) = &self.sample else {
            return Vec::new();
        };
        sample
            .groups
            .iter()
            .filter_map(|group| {
                let found = group.verify?;
                let mut text = format!(
                    "verify {} on {}: {} blocks checked, {} bad",
                    group.job,
                    group.target,
                    iopath::units::format_count(found.blocks_checked as f64),
                    iopath::units::format_count(found.mismatch_count as f64)
                );
                if let Some((kind, offset)) = found.first_mismatch {
                    text.push_str(&format!(" (first: {} at offset {offset})", kind.name()));
                }
                Some(VerifyLine {
                    text,
                    bad: found.mismatch_count > 0,
                })
            })
            .collect()
    }

    /// A test starts: `index` among the run's tests.
    pub fn test_starting(&mut self, name: &str) {
        let index = self.finished;
        self.current = Some((index, name.to_string()));
        self.sample = None;
        self.rows.clear();
    }

    /// The test running ended.
    pub fn test_finished(&mut self) {
        if self
            .current
            .as_ref()
            .is_some_and(|(index, _)| *index < self.plan.len())
        {
            self.finished += 1;
        }
        self.current = None;
        self.sample = None;
    }

    /// A live sample of the test running.
    pub fn sample(&mut self, sample: LiveSample, now: Instant) {
        let at = now.duration_since(self.started).as_secs_f64();
        let several_jobs = sample
            .groups
            .iter()
            .any(|group| group.job != sample.groups[0].job);
        self.rows.clear();
        for group in &sample.groups {
            for (direction, figures) in group.directions() {
                let direction = direction.name();
                if figures.totals.io_count == 0 {
                    continue;
                }
                self.rows.push(Row {
                    job: if several_jobs {
                        group.job.clone()
                    } else {
                        sample.test_name.clone()
                    },
                    target: group.target.clone(),
                    direction,
                    bytes_per_second: figures.bytes_per_second,
                    iops: figures.iops,
                    p50_ns: figures.p50_latency_ns,
                    p99_ns: figures.p99_latency_ns,
                });
                // Short, for the charts' legends: the test's number (as in the header), the
                // job when the test has several, the direction.
                let number = match &self.current {
                    Some((index, _)) if *index < self.plan.len() => format!("#{}", index + 1),
                    _ => "confirming".to_string(),
                };
                let job = if several_jobs {
                    format!(" {}", group.job)
                } else {
                    String::new()
                };
                let label = format!("{number}{job} {direction}");
                let index = match self.series.iter().position(|s| s.label == label) {
                    Some(index) => index,
                    None => {
                        self.series.push(Series {
                            label,
                            ..Series::default()
                        });
                        self.series.len() - 1
                    }
                };
                let series = &mut self.series[index];
                series
                    .megabytes
                    .push_back((at, figures.bytes_per_second / 1e6));
                series.iops.push_back((at, figures.iops));
                if let Some(p50) = figures.p50_latency_ns {
                    series.p50_us.push_back((at, p50 as f64 / 1e3));
                }
                if let Some(p99) = figures.p99_latency_ns {
                    series.p99_us.push_back((at, p99 as f64 / 1e3));
                }
            }
        }
        let oldest = at - CHART_SECONDS;
        for series in &mut self.series {
            for points in [
                &mut series.megabytes,
                &mut series.iops,
                &mut series.p50_us,
                &mut series.p99_us,
            ] {
                while points.front().is_some_and(|(t, _)| *t < oldest) {
                    points.pop_front();
                }
            }
        }
        self.series.retain(|series| !series.megabytes.is_empty());
        self.sample = Some(sample);
        self.updated = now;
    }

    /// Takes a server's or switch's scrape, placed on the charts' clock where it was made;
    /// the charts then reach to `now`.
    pub fn server_scrape(&mut self, scrape: LiveScrape, now: Instant) {
        let at = scrape
            .scrape
            .at
            .saturating_duration_since(self.started)
            .as_secs_f64();
        servers::take(&mut self.servers, scrape, at);
        self.updated = self.updated.max(now);
    }

    /// Takes the machine's counters (hops and cores) read at `now`.
    pub fn counters(&mut self, counters: HopCounters, cpu: CpuSnapshot, now: Instant) {
        if let Some((then, before)) = &self.last_counters {
            let seconds = now.duration_since(*then).as_secs_f64().max(1e-3);
            for hop in &mut self.hops {
                let (table_before, table_now) = match hop.key.split_once(':') {
                    Some(("block", _)) => (&before.block_devices, &counters.block_devices),
                    _ => (&before.interfaces, &counters.interfaces),
                };
                let name = hop.key.split_once(':').map_or("", |(_, name)| name);
                let (Some(early), Some(late)) = (table_before.get(name), table_now.get(name))
                else {
                    continue;
                };
                let rates = (
                    late.0.saturating_sub(early.0) as f64 / seconds,
                    late.1.saturating_sub(early.1) as f64 / seconds,
                );
                let carried = hop.duplex.carried(rates.0, rates.1);
                hop.rates = rates;
                hop.utilisation = Some(carried / hop.capacity_bytes_per_second.max(1) as f64);
            }
        }
        if let Some((then, before)) = &self.last_cpu {
            let wall_ns = now.duration_since(*then).as_nanos() as u64;
            self.cores = cpu
                .used_since(before, wall_ns)
                .cores
                .iter()
                .map(|core| (core.cpu, core.busy_ns as f64 / core.total_ns.max(1) as f64))
                .collect();
        }
        self.last_counters = Some((now, counters));
        self.last_cpu = Some((now, cpu));
    }

    /// Share of the run's planned time done, and the time left, ns (None: a test ends with
    /// its bytes, so neither is known).
    pub fn progress(&self) -> Option<(f64, u64)> {
        let planned: Vec<u64> = self
            .plan
            .iter()
            .map(|test| test.planned_ns)
            .collect::<Option<_>>()?;
        let total: u64 = planned.iter().sum();
        let done_before: u64 = planned.iter().take(self.finished).sum();
        let elapsed = self
            .sample
            .as_ref()
            .filter(|_| {
                self.current
                    .as_ref()
                    .is_some_and(|(i, _)| *i < self.plan.len())
            })
            .map_or(0, |sample| {
                sample
                    .elapsed_ns
                    .min(planned.get(self.finished).copied().unwrap_or(0))
            });
        let done = done_before + elapsed;
        Some((
            done as f64 / total.max(1) as f64,
            total.saturating_sub(done),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iopath::result::{Hop, HopCapacity, HopKind, HopOrigin};
    use std::collections::BTreeMap;
    use std::time::Duration;

    fn hop(key: &str, capacity: u64, duplex: Duplex) -> Hop {
        Hop {
            key: key.into(),
            kind: HopKind::NetworkInterface,
            name: key.split(':').nth(1).unwrap().into(),
            description: String::new(),
            depth: 0,
            origin: HopOrigin::Discovered,
            capacity: Some(HopCapacity {
                payload_bytes_per_second: capacity,
                iops: None,
                duplex,
                catalog_name: Some("1GbE".into()),
                variant: None,
                derivation: String::new(),
            }),
            queue: None,
            protocol: None,
            read_share: 1.0,
            write_share: 1.0,
        }
    }

    #[test]
    fn hops_are_used_against_their_capacity_from_their_counters() {
        let mut state = DashboardState::new(Vec::new());
        let path = StoragePath {
            target: "x".into(),
            hops: vec![
                hop("net:eth1", 125_000_000, Duplex::Full),
                hop("block:sdb", 100_000_000, Duplex::Half),
                hop("declared:0", 1, Duplex::Full),
            ]
            .into(),
            notes: Vec::new(),
            first_blocks_all_zero: None,
            allocated_bytes: None,
        };
        state.set_paths(&[path.clone(), path]);
        assert_eq!(
            state.hops.len(),
            2,
            "each counted hop once, declared ones left out"
        );
        let counters = |rx: u64, tx: u64, read: u64, written: u64| HopCounters {
            interfaces: BTreeMap::from([("eth1".to_string(), (rx, tx))]),
            block_devices: BTreeMap::from([("sdb".to_string(), (read, written))]),
        };
        let start = Instant::now();
        state.counters(counters(0, 0, 0, 0), CpuSnapshot::now(), start);
        assert_eq!(state.hops[0].utilisation, None);
        let later = start + Duration::from_secs(2);
        state.counters(
            counters(242_500_000, 1_000_000, 100_000_000, 60_000_000),
            CpuSnapshot::now(),
            later,
        );
        // Full duplex: the busier direction; half duplex: both together.
        let nic = state.hops[0].utilisation.unwrap();
        let disk = state.hops[1].utilisation.unwrap();
        assert!((nic - 0.97).abs() < 1e-9, "{nic}");
        assert!((disk - 0.8).abs() < 1e-9, "{disk}");
    }

    #[test]
    fn progress_and_time_left_follow_the_planned_tests() {
        let planned = |name: &str, seconds: u64| PlannedTest {
            name: name.into(),
            planned_ns: Some(seconds * 1_000_000_000),
        };
        let mut state = DashboardState::new(vec![planned("a", 10), planned("b", 30)]);
        assert_eq!(state.progress(), Some((0.0, 40_000_000_000)));
        state.test_starting("a");
        state.test_finished();
        state.test_starting("b");
        state.sample(
            LiveSample {
                test_name: "b".into(),
                elapsed_ns: 10_000_000_000,
                total_ns: Some(30_000_000_000),
                ramping: false,
                bytes_per_second: 0.0,
                iops: 0.0,
                groups: Vec::new(),
                last: false,
            },
            Instant::now(),
        );
        assert_eq!(state.progress(), Some((0.5, 20_000_000_000)));
        state.plan.push(PlannedTest {
            name: "c".into(),
            planned_ns: None,
        });
        assert_eq!(state.progress(), None, "a byte-count test: unknown");
    }
}

#[cfg(test)]
mod verification_tests {
    use super::*;
    use iopath::result::MismatchKind;
    use iopath::run::progress::{LiveGroup, LiveVerify};

    fn group(job: &str, verify: Option<LiveVerify>) -> LiveGroup {
        LiveGroup {
            job: job.into(),
            target: "data.bin".into(),
            read: Default::default(),
            write: Default::default(),
            trim: Default::default(),
            verify,
        }
    }

    #[test]
    fn verifying_jobs_show_their_checks_and_first_bad_block() {
        let mut state = DashboardState::new(Vec::new());
        assert!(state.verification().is_empty());
        let sample = LiveSample {
            test_name: "t".into(),
            elapsed_ns: 0,
            total_ns: None,
            ramping: false,
            bytes_per_second: 0.0,
            iops: 0.0,
            groups: vec![
                group(
                    "clean",
                    Some(LiveVerify {
                        blocks_checked: 12_345,
                        mismatch_count: 0,
                        first_mismatch: None,
                    }),
                ),
                group("plain", None),
                group(
                    "hurt",
                    Some(LiveVerify {
                        blocks_checked: 80,
                        mismatch_count: 3,
                        first_mismatch: Some((MismatchKind::Checksum, 8192)),
                    }),
                ),
            ],
            last: false,
        };
        state.sample(sample, Instant::now());
        let lines = state.verification();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(
            lines[0],
            VerifyLine {
                text: "verify clean on data.bin: 12,345 blocks checked, 0 bad".into(),
                bad: false
            }
        );
        assert_eq!(
            lines[1].text,
            "verify hurt on data.bin: 80 blocks checked, 3 bad (first: checksum at offset 8192)"
        );
        assert!(lines[1].bad);
    }
}
