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
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Mutex};
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

/// A scrape passed on as it is made, to whoever watches the run live ([`Sampler::watch`]).
#[derive(Clone, Debug)]
pub struct LiveScrape {
    /// The source's place among those the sampler was started with.
    pub source: usize,
    /// [`Source::label`].
    pub label: String,
    /// Whether the source is a switch.
    pub switch: bool,
    /// What it read.
    pub scrape: Scrape,
}

/// Where the scraping threads pass each scrape on, once someone watches.
type Tap = Arc<Mutex<Option<SyncSender<LiveScrape>>>>;

/// The scraping threads of a run.
pub struct Sampler {
    stop: Vec<Sender<()>>,
    threads: Vec<JoinHandle<ScrapeLog>>,
    tap: Tap,
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
            tap: Arc::default(),
        };
        for (index, (source, first_scrape)) in sources.iter().zip(first).enumerate() {
            let (sender, receiver) = mpsc::channel::<()>();
            let source = source.clone();
            let tap = Arc::clone(&sampler.tap);
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
                                pass_on(&tap, index, &log, &scrape);
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

    /// From now on, passes each scrape on as it is made, on a channel of `capacity` scrapes;
    /// when the receiver falls behind, scrapes are left out of it (never out of the run's
    /// logs), and when it is dropped nothing more is sent. A later call replaces the watcher.
    pub fn watch(&self, capacity: usize) -> Receiver<LiveScrape> {
        let (sender, receiver) = mpsc::sync_channel(capacity);
        if let Ok(mut slot) = self.tap.lock() {
            *slot = Some(sender);
        }
        receiver
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

/// Passes `scrape` of the source `index` on to the watcher, if any, without waiting.
fn pass_on(tap: &Tap, index: usize, log: &ScrapeLog, scrape: &Scrape) {
    let Ok(slot) = tap.lock() else {
        return;
    };
    if let Some(sender) = slot.as_ref() {
        let _ = sender.try_send(LiveScrape {
            source: index,
            label: log.source.clone(),
            switch: log.switch,
            scrape: scrape.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    /// An exporter on loopback answering `answers` requests, its core's busy time growing by
    /// one second per request; its URL.
    fn exporter(answers: usize) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for (second, stream) in listener.incoming().take(answers).enumerate() {
                let Ok(mut stream) = stream else { continue };
                let mut request = [0u8; 1024];
                let _ = stream.read(&mut request);
                let body = format!(
                    "node_cpu_seconds_total{{cpu=\"0\",mode=\"user\"}} {second}\n\
                     node_cpu_seconds_total{{cpu=\"0\",mode=\"idle\"}} 100\n"
                );
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        format!("http://127.0.0.1:{port}/metrics")
    }

    #[test]
    fn a_watcher_gets_each_scrape_as_it_is_made_and_the_log_keeps_them_all() {
        let source = Source::Exporter(ServerSource {
            url: ExporterUrl::parse(&exporter(100)).unwrap(),
            credentials: Credentials::None,
        });
        let sampler = Sampler::start(&[source], Duration::from_millis(50)).unwrap();
        let live = sampler.watch(8);
        let first = live.recv_timeout(Duration::from_secs(5)).unwrap();
        let second = live.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(first.source, 0);
        assert!(!first.switch);
        assert!(first.label.ends_with("/metrics"));
        assert!(second.scrape.at > first.scrape.at);
        assert!(second.scrape.sample.cores[&0].busy > first.scrape.sample.cores[&0].busy);
        // A watcher that stops reading never holds the scraping up.
        std::thread::sleep(Duration::from_millis(800));
        let logs = sampler.stop();
        assert!(logs[0].scrapes.len() > 2, "{}", logs[0].scrapes.len());
        assert!(live.try_iter().count() <= 8);
    }
}
