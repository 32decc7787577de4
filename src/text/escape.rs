//! Control characters made visible, so that text from outside (a result file's label, a
//! server's error message, a peer's reason, a job file's value) cannot move the cursor, clear
//! the screen, retitle the terminal, fake a line of output or reorder what is shown around it.
//!
//! C0 controls (U+0000–U+001F), DEL (U+007F), C1 controls (U+0080–U+009F) and the Unicode
//! marks that change the display order of text (U+061C, U+200E, U+200F, U+202A–U+202E,
//! U+2066–U+2069) become `\n`, `\r`, `\t` or `\u{HEX}`; everything else is kept as it is.
//! The result holds none of those characters, so escaping it again changes nothing: text
//! escaped where it came in can go through the terminal's escaping too.
//!
//! The escaping itself lives in the `wire-text` crate (crates/wire-text), which the protocol
//! clients under crates/ use too; this module is its name inside iopath.
//!
//! ```
//! use iopath::text::escape::escape_controls;
//! assert_eq!(escape_controls("plain"), "plain");
//! assert_eq!(escape_controls("a\u{1b}[2J"), "a\\u{1b}[2J");
//! ```

pub use wire_text::{escape_controls, needs_escape};
