//! `--server-metrics` and `--switch-snmp`: the sources checked and scraped once before any I/O, the measured
//! time of each test marked as it ends, and each server's scrapes cut into the tests' series.

use super::run_args::RunArgs;
use iopath::observe::ObserveError;
use iopath::observe::sampler::{Sampler, ScrapeLog, ServerSource, Source};
use iopath::observe::snmp::agent::{DEFAULT_COMMUNITY, SwitchAgent, read_community};
use iopath::observe::source::{Credentials, ExporterUrl};
use iopath::observe::window::series_in;
use iopath::result::{CreatedContent, RunResult, TestResult};
use iopath::run::progress::LiveSample;
use iopath::run::{RunObserver, TestShape};
use iopath::workload::TestPlan;
use std::path::Path;
use std::time::{Duration, Instant};

/// How often each server is scraped.
pub const SCRAPE_INTERVAL: Duration = Duration::from_secs(1);

/// The sources of `--server-metrics` and `--switch-snmp`, their URLs, agents, credentials and
/// community checked.
pub fn sources(args: &RunArgs) -> Result<Vec<Source>, ObserveError> {
    let credentials = match (
        args.server_metrics_bearer_file.as_deref(),
        args.server_metrics_basic_auth_file.as_deref(),
    ) {
        (Some(path), _) => Credentials::bearer_file(path)?,
        (None, Some(path)) => Credentials::basic_file(path)?,
        (None, None) => Credentials::None,
    };
    let mut sources = args
        .server_metrics
        .iter()
        .map(|text| {
            Ok(Source::Exporter(ServerSource {
                url: ExporterUrl::parse(text)?,
                credentials: credentials.clone(),
            }))
        })
        .collect::<Result<Vec<_>, ObserveError>>()?;
    let community = match args.switch_snmp_community_file.as_deref() {
        Some(path) => read_community(path)?,
        None => DEFAULT_COMMUNITY.to_vec(),
    };
    for text in &args.switch_snmp {
        sources.push(Source::Switch(SwitchAgent::parse(text, community.clone())?));
    }
    Ok(sources)
}

/// Starts scraping (the first scrape of each source now, before any I/O); none without
/// sources.
pub fn start(sources: &[Source]) -> Result<Option<Sampler>, ObserveError> {
    if sources.is_empty() {
        return Ok(None);
    }
    Sampler::start(sources, SCRAPE_INTERVAL).map(Some)
}

/// An observer that marks where each test's measured time ended and passes everything on;
/// when the tests have ended it stops the servers' scraping and cuts each server's series into
/// the tests, before the run analyses its result.
pub struct MarkedTests<'a> {
    inner: &'a mut dyn RunObserver,
    /// Per test ended: when, and how long it measured.
    ends: Vec<(Instant, u64)>,
    /// The scraping of `--server-metrics`, running until the tests end (stopped on drop too).
    sampler: Option<Sampler>,
}

impl<'a> MarkedTests<'a> {
    /// Marks the tests `inner` sees, and attaches what `sampler` scrapes.
    pub fn new(inner: &'a mut dyn RunObserver, sampler: Option<Sampler>) -> Self {
        MarkedTests {
            inner,
            ends: Vec::new(),
            sampler,
        }
    }
}

impl RunObserver for MarkedTests<'_> {
    fn run_started(&mut self, header: &RunResult) {
        self.inner.run_started(header);
    }
    fn test_starting(&mut self, test: &TestPlan, shapes: &[TestShape]) {
        self.inner.test_starting(test, shapes);
    }
    fn live(&mut self, sample: &LiveSample) {
        self.inner.live(sample);
    }
    fn test_finished(&mut self, result: &TestResult) {
        self.ends.push((Instant::now(), result.measured_ns));
        self.inner.test_finished(result);
    }
    fn creating_file(&mut self, path: &Path, size: u64, content: CreatedContent) {
        self.inner.creating_file(path, size, content);
    }
    fn experiment_finished(&mut self) {
        self.inner.experiment_finished();
    }
    fn tests_ended(&mut self, result: &mut RunResult) {
        if let Some(sampler) = self.sampler.take() {
            attach(result, &sampler.stop(), &self.ends);
        }
        self.inner.tests_ended(result);
    }
}

/// Gives each test of `result` every server's series over its measured time.
pub fn attach(result: &mut RunResult, logs: &[ScrapeLog], ends: &[(Instant, u64)]) {
    for (test, (end, measured_ns)) in result.tests.iter_mut().zip(ends) {
        let start = end
            .checked_sub(Duration::from_nanos(*measured_ns))
            .unwrap_or(*end);
        test.server_metrics = logs.iter().map(|log| series_in(log, start, *end)).collect();
    }
}
