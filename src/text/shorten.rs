//! Long texts cut to a length that fits a table cell or a line, with an ellipsis. Only the
//! first characters are looked at, so shortening a label of 50 MB costs no more than
//! shortening one of 300 bytes.
//!
//! ```
//! use iopath::text::shorten::{SHOWN_CHARS, shorten};
//! assert_eq!(shorten("short", SHOWN_CHARS), "short");
//! let long = "x".repeat(10_000);
//! assert_eq!(shorten(&long, SHOWN_CHARS).chars().count(), SHOWN_CHARS + 1);
//! ```

use std::borrow::Cow;

/// How many characters of a label or name are shown in tables and messages.
pub const SHOWN_CHARS: usize = 200;

/// The ellipsis that ends a shortened text.
pub const ELLIPSIS: char = '…';

/// `text` when it has at most `max_chars` characters, else its first `max_chars` characters
/// followed by [`ELLIPSIS`]. Looks at no more than `max_chars + 1` characters of `text`.
pub fn shorten(text: &str, max_chars: usize) -> Cow<'_, str> {
    match cut_point(text.char_indices().map(|(index, _)| index), max_chars) {
        None => Cow::Borrowed(text),
        Some(end) => {
            let mut short = String::with_capacity(end + ELLIPSIS.len_utf8());
            short.push_str(&text[..end]);
            short.push(ELLIPSIS);
            Cow::Owned(short)
        }
    }
}

/// The byte offset where a text whose characters start at `starts` must be cut to keep
/// `max_chars` characters, or `None` when it is short enough. Takes at most `max_chars + 1`
/// items from `starts`.
fn cut_point(mut starts: impl Iterator<Item = usize>, max_chars: usize) -> Option<usize> {
    starts.nth(max_chars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_texts_end_with_an_ellipsis_on_a_character_boundary() {
        assert_eq!(shorten("", 3), "");
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcd", 3), "abc…");
        assert_eq!(shorten("µµµµ", 2), "µµ…");
        assert_eq!(shorten("abc", 0), "…");
        let long = "é".repeat(1 << 20);
        let short = shorten(&long, SHOWN_CHARS);
        assert_eq!(short.chars().count(), SHOWN_CHARS + 1);
        assert!(short.ends_with(ELLIPSIS));
    }

    #[test]
    fn shortening_looks_only_at_the_first_characters() {
        // An endless text: shortening must stop after max_chars + 1 characters, whatever
        // follows, so its cost does not grow with the length of the text.
        let mut taken = 0usize;
        let endless = std::iter::successors(Some(0usize), |start| Some(start + 1)).inspect(|_| {
            taken += 1;
        });
        assert_eq!(cut_point(endless, SHOWN_CHARS), Some(SHOWN_CHARS));
        assert_eq!(taken, SHOWN_CHARS + 1);
        // And a 64 MiB text is shortened like a short one.
        let huge = "L".repeat(64 << 20);
        assert_eq!(shorten(&huge, 5), "LLLLL…");
    }
}
