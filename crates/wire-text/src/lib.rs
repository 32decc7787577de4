//! Text that comes over the wire, made fit to show: the control characters of a server's
//! message made visible, and the length of a wait written for people.
//!
//! A protocol client quotes what the far end sent (an error string, a share name, an export
//! description) in its own messages. Shown raw, such text could move a terminal's cursor,
//! clear its screen, retitle it, fake a line of output or reorder what is shown around it.
//! [`escape_controls`] turns C0 controls (U+0000–U+001F), DEL (U+007F), C1 controls
//! (U+0080–U+009F) and the Unicode marks that change the display order of text (U+061C,
//! U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) into `\n`, `\r`, `\t` or `\u{HEX}`, and
//! keeps everything else. The result holds none of those characters, so escaping it again
//! changes nothing.
//!
//! [`format_wait`] writes a timeout the way a message names it (`30 s`, `1.5 s`, `250 ms`).
//!
//! ```
//! use std::time::Duration;
//! use wire_text::{escape_controls, format_wait};
//! assert_eq!(escape_controls("plain"), "plain");
//! assert_eq!(escape_controls("a\u{1b}[2J"), "a\\u{1b}[2J");
//! assert_eq!(escape_controls("a\tb\nc\u{7f}\u{9b}\u{202e}"), "a\\tb\\nc\\u{7f}\\u{9b}\\u{202e}");
//! assert_eq!(format_wait(Duration::from_secs(30)), "30 s");
//! assert_eq!(format_wait(Duration::from_millis(1500)), "1.5 s");
//! assert_eq!(format_wait(Duration::from_millis(250)), "250 ms");
//! ```

#![deny(missing_docs)]

use std::borrow::Cow;
use std::fmt::Write;
use std::time::Duration;

/// Whether `character` is escaped by [`escape_controls`]: a C0 or C1 control, DEL, or a mark
/// that changes the display order of the text around it.
pub fn needs_escape(character: char) -> bool {
    character.is_control()
        || matches!(
            character,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `text` with every C0 control, DEL, C1 control and bidirectional mark replaced by a visible
/// escape (`\n`, `\r`, `\t`, `\u{1b}`, `\u{202e}`); borrowed unchanged when it has none.
/// Linear in the length of `text`.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for character in text.chars() {
        match character {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            escaped if needs_escape(escaped) => {
                let _ = write!(out, "\\u{{{:x}}}", escaped as u32);
            }
            other => out.push(other),
        }
    }
    Cow::Owned(out)
}

/// A wait written for messages: `30 s`, `1.5 s`, `250 ms` (whole milliseconds; below one,
/// microseconds).
pub fn format_wait(wait: Duration) -> String {
    let milliseconds = wait.as_millis();
    if milliseconds >= 1000 {
        format!("{} s", milliseconds as f64 / 1000.0)
    } else if milliseconds > 0 {
        format!("{milliseconds} ms")
    } else {
        format!("{} µs", wait.as_micros())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_written_in_the_largest_whole_unit() {
        assert_eq!(format_wait(Duration::from_secs(30)), "30 s");
        assert_eq!(format_wait(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(format_wait(Duration::from_millis(250)), "250 ms");
        assert_eq!(format_wait(Duration::from_micros(20)), "20 µs");
    }

    #[test]
    fn every_control_character_is_made_visible() {
        let marks = [
            '\u{061c}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202e}', '\u{2066}',
        ];
        let controls = (0u32..0x20)
            .chain([0x7f])
            .chain(0x80..0xa0)
            .map(|code| char::from_u32(code).unwrap());
        for character in controls.chain(marks) {
            let text = format!("a{character}b");
            let escaped = escape_controls(&text);
            assert!(
                escaped.starts_with("a\\") && escaped.ends_with('b'),
                "{escaped}"
            );
            assert!(
                !escaped.chars().any(needs_escape),
                "{character:?}: {escaped}"
            );
            assert_eq!(escape_controls(&escaped), escaped, "escaping twice");
        }
        assert_eq!(
            escape_controls("\u{1b}]0;title\u{7}"),
            "\\u{1b}]0;title\\u{7}"
        );
        assert_eq!(escape_controls("\0"), "\\u{0}");
        assert_eq!(escape_controls("\u{85}"), "\\u{85}");
        assert_eq!(escape_controls("x\r\n"), "x\\r\\n");
    }

    #[test]
    fn printable_text_is_kept_as_it_is() {
        for text in [
            "",
            "fc vs iscsi",
            "µs ± 1 % — ü",
            "back\\slash",
            "\u{a0}",
            "עברית",
        ] {
            assert!(matches!(escape_controls(text), Cow::Borrowed(same) if same == text));
        }
    }
}
