//! The RunResult schema and its exporters. Exporters read only the [`RunResult`].

pub mod analysis;
pub mod compare_cells;
pub mod compare_json;
pub mod compare_markdown;
pub mod compare_text;
pub mod csv;
pub mod fio_json;
pub mod fio_logs;
pub mod html;
pub mod json;
pub mod link;
pub mod markdown;
pub mod output_file;
pub mod result;
pub mod text;

pub use result::RunResult;
