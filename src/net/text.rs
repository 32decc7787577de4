//! Text that came from a peer, made safe to show on a terminal or in a log: control characters
//! and the Unicode marks that reorder text are escaped, and the length is bounded.

/// Most characters of peer text kept; longer text is cut and marked with `…`.
pub(crate) const MAX_PEER_TEXT_CHARS: usize = 300;

/// Escapes `text` for a terminal: C0 and C1 controls, DEL and the bidirectional marks become
/// `\n`, `\t`, `\r`, `\\`, or `\u{…}`; a backslash is doubled so that an escape cannot be
/// forged. At most [`MAX_PEER_TEXT_CHARS`] characters of `text` are kept.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_PEER_TEXT_CHARS * 2));
    for (index, character) in text.chars().enumerate() {
        if index == MAX_PEER_TEXT_CHARS {
            out.push('…');
            break;
        }
        match character {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() || is_bidi_mark(c) => {
                out.push_str(&format!("\\u{{{:x}}}", u32::from(c)))
            }
            c => out.push(c),
        }
    }
    out
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
    fn controls_are_escaped() {
        assert_eq!(escape("\x1b[2J"), "\\u{1b}[2J");
        assert_eq!(
            escape("a\nb\r\tc\u{7f}\u{9b}"),
            "a\\nb\\r\\tc\\u{7f}\\u{9b}"
        );
        assert_eq!(escape("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(escape("C:\\u{1b}"), "C:\\\\u{1b}");
        assert_eq!(escape("plain text, ünïcode"), "plain text, ünïcode");
    }

    #[test]
    fn long_text_is_cut() {
        let long = "x".repeat(MAX_PEER_TEXT_CHARS + 50);
        let shown = escape(&long);
        assert_eq!(shown.chars().count(), MAX_PEER_TEXT_CHARS + 1);
        assert!(shown.ends_with('…'));
    }
}
