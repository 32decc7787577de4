//! The report model and its exporters: [`model`] is built once from the analysed results
//! (hosts merged, runs compared); every other file here is one format that reads the model
//! (or, for the RunResult JSON and the fio logs, the result itself) and only formats.

pub mod alike;
pub mod compare_cells;
pub mod compare_json;
pub mod compare_markdown;
pub mod compare_text;
pub mod confirmation;
pub mod csv;
pub mod fio_aggregate_logs;
pub mod fio_iolog;
pub mod fio_job_logs;
pub mod fio_json;
pub mod fio_logs;
pub mod html;
pub mod json;
pub mod link;
pub mod markdown;
pub mod model;
pub mod path;
pub mod pts_rate_steps;
pub mod pts_tables;
pub mod server;
pub mod text;
pub mod verification;
