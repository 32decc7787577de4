//! Text from outside (file names, lines of a job file, values read from a server) made safe to
//! show on a terminal: control characters are written as escapes (`\n`, `\t`, `\u{1b}`), so
//! that what a file holds can never move the cursor, clear the screen or hide a message.
//!
//! ```
//! use iopath::escape::escape_control;
//! assert_eq!(escape_control("bs=4k"), "bs=4k");
//! assert_eq!(escape_control("a\u{1b}[2Jb\n"), "a\\u{1b}[2Jb\\n");
//! ```

use std::borrow::Cow;

/// `text` with every control character (C0, DEL, C1) escaped as Rust writes it.
pub fn escape_control(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            shown.extend(c.escape_debug());
        } else {
            shown.push(c);
        }
    }
    Cow::Owned(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_control_characters_change() {
        assert!(matches!(escape_control("größe=4k"), Cow::Borrowed(_)));
        assert_eq!(escape_control("\t\r\u{7f}\u{9b}x"), "\\t\\r\\u{7f}\\u{9b}x");
    }
}
