//! The far end of the wire, seen through its own counters: `iopath run --server-metrics URL`
//! scrapes a Prometheus node exporter on the NAS, target server or another client once a
//! second during the run, and turns what it says into per-second series of the server's
//! cores, disks, md arrays and interfaces on each test's clock ([`ServerSeries`]), which the
//! analysis treats as hops beyond the client (docs/verdict.md, "The server's counters").
//!
//! - [`source`]: the exporter's URL and the credentials it asks for (bearer token or basic
//!   authentication, from owner-only files);
//! - [`http_get`]: one bounded HTTP/1.1 GET over a std `TcpStream`;
//! - [`exposition`]: the text exposition format, read within bounds;
//! - [`node_sample`]: the node exporter's standard families as counters per device;
//! - [`sampler`]: the scraping threads, and the first scrape that checks each URL before any
//!   I/O;
//! - [`window`]: the scrapes of a run cut into each test's series;
//! - [`snmp`]: a switch's port counters over SNMP (`--switch-snmp`), read the same way once a
//!   second and cut into series of switch ports.
//!
//! ```no_run
//! use iopath::observe::sampler::{Sampler, ServerSource, Source};
//! use iopath::observe::source::{Credentials, ExporterUrl};
//! use std::time::{Duration, Instant};
//! let source = ServerSource {
//!     url: ExporterUrl::parse("http://198.18.0.2:9100/metrics")?,
//!     credentials: Credentials::None,
//! };
//! let sampler = Sampler::start(&[Source::Exporter(source)], Duration::from_secs(1))?;
//! let start = Instant::now();
//! std::thread::sleep(Duration::from_secs(3));
//! let logs = sampler.stop();
//! let series = iopath::observe::window::series_in(&logs[0], start, Instant::now());
//! println!("{} devices", series.devices.len());
//! # Ok::<(), iopath::observe::ObserveError>(())
//! ```
//!
//! [`ServerSeries`]: crate::result::ServerSeries

pub mod exposition;
pub mod http_get;
pub mod node_sample;
pub mod sampler;
pub mod snmp;
pub mod source;
pub mod window;

/// Why a server's counters cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ObserveError {
    /// `--server-metrics` names no usable URL.
    #[error("--server-metrics {url}: {reason}")]
    BadUrl {
        /// The URL, escaped.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A credentials file cannot be used.
    #[error("server metrics credentials {path}: {reason}")]
    Credentials {
        /// The file, escaped.
        path: String,
        /// Why not.
        reason: String,
    },
    /// A scrape failed.
    #[error("--server-metrics {url}: {reason}")]
    Scrape {
        /// The URL, escaped.
        url: String,
        /// Why.
        reason: String,
    },
    /// `--switch-snmp` names no usable agent.
    #[error("--switch-snmp {agent}: {reason}")]
    BadSwitch {
        /// The agent as written, escaped.
        agent: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The community file cannot be used.
    #[error("SNMP community file {path}: {reason}")]
    Community {
        /// The file, escaped.
        path: String,
        /// Why not.
        reason: String,
    },
    /// A switch's counters could not be read.
    #[error("--switch-snmp {agent}: {reason}")]
    SwitchScrape {
        /// The agent as written, escaped.
        agent: String,
        /// Why.
        reason: String,
    },
    /// No thread could be started for the scraping.
    #[error("cannot start the server metrics thread: {0}")]
    Thread(String),
}
