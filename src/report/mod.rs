//! The exporters: one file per format, each reading only the
//! [`RunResult`](crate::result::RunResult).

pub mod compare_cells;
pub mod compare_json;
pub mod compare_markdown;
pub mod compare_text;
pub mod confirmation;
pub mod csv;
pub mod fio_aggregate_logs;
pub mod fio_job_logs;
pub mod fio_json;
pub mod fio_logs;
pub mod html;
pub mod json;
pub mod link;
pub mod markdown;
pub mod path;
pub mod text;
pub mod verification;
