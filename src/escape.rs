//! Text from outside (file names, lines of a job file, what a peer sends) made safe to show on
//! a terminal or in a log: control characters (C0, DEL, C1) and the Unicode marks that reorder
//! text are written as escapes (`\n`, `\t`, `\r`, `\u{1b}`), and a backslash is doubled so that
//! an escape cannot be forged. What a file or a peer holds can then never move the cursor,
//! clear the screen, retitle the terminal or hide a message.
//!
//! ```
//! use iopath::escape::escape_control;
//! assert_eq!(escape_control("bs=4k"), "bs=4k");
//! assert_eq!(escape_control("a\u{1b}[2Jb\n"), "a\\u{1b}[2Jb\\n");
//! ```

use std::borrow::Cow;

/// `text` with every control character and bidirectional mark escaped, backslashes doubled.
pub fn escape_control(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for character in text.chars() {
        match character {
            '\n' => shown.push_str("\\n"),
            '\r' => shown.push_str("\\r"),
            '\t' => shown.push_str("\\t"),
            '\\' => shown.push_str("\\\\"),
            c if needs_escape(c) => shown.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => shown.push(c),
        }
    }
    Cow::Owned(shown)
}

fn needs_escape(character: char) -> bool {
    character == '\\' || character.is_control() || is_bidi_mark(character)
}

/// Marks that change the display order of the text around them.
fn is_bidi_mark(character: char) -> bool {
    matches!(
        character,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_marks_and_backslashes_are_escaped() {
        assert!(matches!(escape_control("größe=4k"), Cow::Borrowed(_)));
        assert_eq!(escape_control("\x1b[2J"), "\\u{1b}[2J");
        assert_eq!(
            escape_control("a\nb\r\tc\u{7f}\u{9b}"),
            "a\\nb\\r\\tc\\u{7f}\\u{9b}"
        );
        assert_eq!(escape_control("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(escape_control("C:\\u{1b}"), "C:\\\\u{1b}");
    }
}
