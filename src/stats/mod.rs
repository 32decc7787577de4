//! Statistics: latency histograms, per-direction recorders, per-interval series, and their exact
//! merge (of workers, and of the results of several clients). Pure: no I/O, no clock, nothing
//! of the rest of iopath.

pub mod histogram;
pub mod live;
pub mod merge;
pub mod recorder;
pub mod series;
pub mod summary;
