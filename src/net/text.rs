//! Text that came from a peer, made safe to show on a terminal or in a log: control characters
//! and the Unicode marks that reorder text are escaped, and the length is bounded.

use crate::escape::escape_control;

/// Most characters of peer text kept; longer text is cut and marked with `…`.
pub(crate) const MAX_PEER_TEXT_CHARS: usize = 300;

/// Escapes `text` for a terminal ([`escape_control`]): C0 and C1 controls, DEL and the
/// bidirectional marks become `\n`, `\t`, `\r`, `\\`, or `\u{…}`. At most
/// [`MAX_PEER_TEXT_CHARS`] characters of `text` are kept.
pub(crate) fn escape(text: &str) -> String {
    let kept: String = text.chars().take(MAX_PEER_TEXT_CHARS).collect();
    let mut out = escape_control(&kept).into_owned();
    if text.chars().nth(MAX_PEER_TEXT_CHARS).is_some() {
        out.push('…');
    }
    out
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
