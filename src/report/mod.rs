//! The RunResult schema and its exporters. Exporters read only the [`RunResult`].

pub mod json;
pub mod result;
pub mod text;

pub use result::RunResult;
