//! Control characters made visible, so that text from outside (a result file's label, a
//! server's error message, a job file's value) cannot move the cursor, clear the screen or
//! retitle the terminal it is printed on.
//!
//! C0 controls (U+0000–U+001F), DEL (U+007F) and C1 controls (U+0080–U+009F) become `\n`, `\r`,
//! `\t`, `\xHH` or `\u{HH}`; everything else, backslashes included, is kept as it is.
//!
//! ```
//! use iopath::text::escape::escape_controls;
//! assert_eq!(escape_controls("plain"), "plain");
//! assert_eq!(escape_controls("a\tb\nc\u{7f}\u{9b}"), "a\\tb\\nc\\x7f\\u{9b}");
//! ```

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every C0 control, DEL and C1 control replaced by a visible escape (`\n`, `\r`,
/// `\t`, `\x1b`, `\u{9b}`); borrowed unchanged when it has none. Linear in the length of `text`.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for character in text.chars() {
        match character {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0'..='\u{7f}' if character.is_control() => {
                let _ = write!(out, "\\x{:02x}", character as u32);
            }
            control if control.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", control as u32);
            }
            other => out.push(other),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_control_character_is_made_visible() {
        for code in (0u32..0x20).chain([0x7f]).chain(0x80..0xa0) {
            let character = char::from_u32(code).unwrap();
            let text = format!("a{character}b");
            let escaped = escape_controls(&text);
            assert!(
                escaped.starts_with("a\\") && escaped.ends_with('b'),
                "{escaped}"
            );
            assert!(
                !escaped.chars().any(char::is_control),
                "{code:#x}: {escaped}"
            );
        }
        assert_eq!(escape_controls("\u{1b}[2J"), "\\x1b[2J");
        assert_eq!(escape_controls("\0"), "\\x00");
        assert_eq!(escape_controls("\u{85}"), "\\u{85}");
    }

    #[test]
    fn printable_text_is_kept_as_it_is() {
        for text in ["", "fc vs iscsi", "µs ± 1 % — ü", "back\\slash", "\u{a0}"] {
            assert!(matches!(escape_controls(text), Cow::Borrowed(same) if same == text));
        }
    }
}
