//! Checks of the source tree itself, read as text: the module graph and its layers
//! ([`import_graph`]), the one gate every path goes through ([`path_gate`]) and the naming
//! rule of timing-sensitive tests.

#[path = "../support/rust_source.rs"]
mod rust_source;

mod import_graph;
mod path_gate;
