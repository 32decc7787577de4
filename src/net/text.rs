//! Text that came from a peer, made safe to show on a terminal or in a log: at most
//! [`MAX_PEER_TEXT_CHARS`] characters, with control characters and the marks that reorder
//! text escaped ([`crate::text::escape::escape_controls`]).

use crate::text::escape::escape_controls;
use crate::text::shorten::shorten;

/// Most characters of peer text kept; longer text is cut and marked with `…`.
pub(crate) const MAX_PEER_TEXT_CHARS: usize = 300;

/// `text` cut to [`MAX_PEER_TEXT_CHARS`] characters, then escaped for a terminal: C0 and C1
/// controls, DEL and the bidirectional marks become `\n`, `\t`, `\r` or `\u{…}`.
pub(crate) fn escape(text: &str) -> String {
    escape_controls(&shorten(text, MAX_PEER_TEXT_CHARS)).into_owned()
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
