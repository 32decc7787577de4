//! Scraping each server (and switch) once a second on a thread of its own, from before a
//! run's first I/O to after its last. The first scrape of each is made before the thread
//! starts, so that a bad URL, an exporter or agent that cannot be reached or an answer that is
//! not a node exporter's stops the run before any I/O.

use super::ObserveError;
use super::exposition::parse;
use super::http_get::get;
use super::node_sample::{NODE_PREFIXES, NodeSample};
use super::snmp::{agent::SwitchAgent, read_switch};
use super::source::{Credentials, ExporterUrl};
use crate::text::escape::escape_controls;
use crate::text::url_password::mask_url_passwords;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long one scrape may take.
pub const SCRAPE_TIMEOUT: Duration = Duration::from_secs(2);
/// The most scrapes kept per server (a day at one a second); later ones are counted as
/// failures.
pub const MAX_SCRAPES: usize = 86_400;

/// A server to scrape.
#[derive(Clone, Debug)]
pub struct ServerSource {
    /// Its exporter.
    pub url: ExporterUrl,
    /// What the exporter asks for.
    pub credentials: Credentials,
}

/// Where counters are read.
#[derive(Clone, Debug)]
pub enum Source {
    /// A server's Prometheus node exporter (`--server-metrics`).
    Exporter(ServerSource),
    /// A switch's SNMP agent (`--switch-snmp`): its interfaces are switch ports.
    Switch(SwitchAgent),
}

impl Source {
    /// Reads the counters once.
    pub fn scrape(&self) -> Result<Scrape, ObserveError> {
        match self {
            Source::Exporter(source) => scrape(source),
            Source::Switch(agent) => {
                let sent = Instant::now();
                let sample = read_switch(agent).map_err(|reason| ObserveError::SwitchScrape {
                    agent: escape_controls(&agent.text).into_owned(),
                    reason: escape_controls(&reason).into_owned(),
                })?;
                let received = Instant::now();
                Ok(Scrape {
                    at: sent + (received - sent) / 2,
                    sample,
                })
            }
        }
    }

    /// Where, as results show it: the exporter's URL (any password masked) or
    /// `snmp://HOST[:PORT]`, control characters escaped.
    pub fn label(&self) -> String {
        match self {
            Source::Exporter(source) => {
                escape_controls(&mask_url_passwords(&source.url.text)).into_owned()
            }
            Source::Switch(agent) => {
                escape_controls(&format!("snmp://{}", agent.text)).into_owned()
            }
        }
    }

    /// Whether the first scrape shows what this source should have.
    fn check_first(&self, scrape: &Scrape) -> Result<(), ObserveError> {
        match self {
            Source::Exporter(source) if scrape.sample.cores.is_empty() => {
                Err(ObserveError::Scrape {
                    url: escape_controls(&source.url.text).into_owned(),
                    reason: "the answer has no node_cpu_seconds_total: is it a Prometheus node exporter?".into(),
                })
            }
            _ => Ok(()),
        }
    }
}

/// One scrape: when the counters were read and what they were.
#[derive(Clone, Debug)]
pub struct Scrape {
    /// Midway between sending the request and reading the end of the answer.
    pub at: Instant,
    /// The counters.
    pub sample: NodeSample,
}

/// Everything scraped from one server or switch.
#[derive(Clone, Debug, Default)]
pub struct ScrapeLog {
    /// [`Source::label`].
    pub source: String,
    /// Whether the source is a switch (its interfaces are switch ports).
    pub switch: bool,
    /// Successful scrapes, in time order.
    pub scrapes: Vec<Scrape>,
    /// Failed scrapes: when, and why (escaped).
    pub failures: Vec<(Instant, String)>,
}

/// Scrapes `source` once.
pub fn scrape(source: &ServerSource) -> Result<Scrape, ObserveError> {
    let sent = Instant::now();
    let body = get(&source.url, &source.credentials, SCRAPE_TIMEOUT)?;
    let received = Instant::now();
    let text = String::from_utf8_lossy(&body);
    let samples = parse(&text, &NODE_PREFIXES).map_err(|reason| ObserveError::Scrape {
        url: escape_controls(&source.url.text).into_owned(),
        reason,
    })?;
    Ok(Scrape {
        at: sent + (received - sent) / 2,
        sample: NodeSample::from_samples(&samples),
    })
}

/// The scraping threads of a run.
pub struct Sampler {
    stop: Vec<Sender<()>>,
    threads: Vec<JoinHandle<ScrapeLog>>,
}

impl Sampler {
    /// Scrapes every source once (an error names the URL or agent), then once every `interval` on a
    /// thread per source until [`Sampler::stop`].
    pub fn start(sources: &[Source], interval: Duration) -> Result<Sampler, ObserveError> {
        let mut first = Vec::with_capacity(sources.len());
        for source in sources {
            let scrape = source.scrape()?;
            source.check_first(&scrape)?;
            first.push(scrape);
        }
        let mut sampler = Sampler {
            stop: Vec::new(),
            threads: Vec::new(),
        };
        for (source, first_scrape) in sources.iter().zip(first) {
            let (sender, receiver) = mpsc::channel::<()>();
            let source = source.clone();
            let thread = std::thread::Builder::new()
                .name("server-metrics".into())
                .spawn(move || {
                    let mut log = ScrapeLog {
                        source: source.label(),
                        switch: matches!(source, Source::Switch(_)),
                        scrapes: vec![first_scrape],
                        failures: Vec::new(),
                    };
                    let started = Instant::now();
                    let mut tick = 1u32;
                    loop {
                        let next = started + interval * tick;
                        let wait = next.saturating_duration_since(Instant::now());
                        match receiver.recv_timeout(wait) {
                            Err(RecvTimeoutError::Timeout) => {}
                            _ => break,
                        }
                        tick += 1;
                        match source.scrape() {
                            Ok(scrape) if log.scrapes.len() < MAX_SCRAPES => {
                                log.scrapes.push(scrape);
                            }
                            Ok(_) => log
                                .failures
                                .push((Instant::now(), format!("more than {MAX_SCRAPES} scrapes"))),
                            Err(error) => log.failures.push((Instant::now(), error.to_string())),
                        }
                        // A scrape that took longer than the interval skips the ticks it missed.
                        while started + interval * tick < Instant::now() {
                            tick += 1;
                        }
                    }
                    log
                });
            match thread {
                Ok(thread) => {
                    sampler.stop.push(sender);
                    sampler.threads.push(thread);
                }
                Err(error) => {
                    sampler.stop();
                    return Err(ObserveError::Thread(error.to_string()));
                }
            }
        }
        Ok(sampler)
    }

    /// Stops scraping (after one last scrape's time at most) and returns what each server
    /// said, in the order of the sources.
    pub fn stop(self) -> Vec<ScrapeLog> {
        for sender in &self.stop {
            let _ = sender.send(());
        }
        self.threads
            .into_iter()
            .map(|thread| thread.join().unwrap_or_default())
            .collect()
    }
}
