//! Live metrics for the tools people already watch: `iopath run --metrics ADDR` serves the
//! run's live figures as OpenMetrics text (which Prometheus scrapes) on `GET /metrics`, and
//! nothing else.
//!
//! [`MetricsState`] keeps what the exposition shows — the figures of every test so far, read
//! from the same once-a-second [`LiveSample`](crate::run::progress::LiveSample) the progress
//! line reads, the current test and sweep point, and each test's verdict once it is known —
//! and [`exposition::render`] writes it. [`server::MetricsServer`] answers HTTP on threads of
//! its own: connections at the same time and in bounded number ([`connections`]), one request
//! per connection, its size and time bounded, nothing that writes. Beyond loopback it answers
//! only requests with the bearer token of `--metrics-token-file` ([`access`]).

pub mod access;
pub mod address;
pub mod connections;
pub mod exposition;
pub mod server;
pub mod state;

pub use access::{BearerToken, check_exposure};
pub use address::{MetricsAddressError, parse_metrics_address};
pub use exposition::render;
pub use server::MetricsServer;
pub use state::{MetricsState, SharedMetrics};
