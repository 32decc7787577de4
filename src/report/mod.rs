//! The RunResult schema and its exporters. Exporters read only the [`RunResult`].

pub mod analysis;
pub mod csv;
pub mod fio_json;
pub mod fio_logs;
pub mod json;
pub mod link;
pub mod markdown;
pub mod result;
pub mod text;

pub use result::RunResult;
