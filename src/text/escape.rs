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
//! ```
//! use iopath::text::escape::escape_controls;
//! assert_eq!(escape_controls("plain"), "plain");
//! assert_eq!(escape_controls("a\u{1b}[2J"), "a\\u{1b}[2J");
//! assert_eq!(escape_controls("a\tb\nc\u{7f}\u{9b}\u{202e}"), "a\\tb\\nc\\u{7f}\\u{9b}\\u{202e}");
//! ```

use std::borrow::Cow;
use std::fmt::Write;

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

#[cfg(test)]
mod tests {
    use super::*;

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
