//! Text from outside (result files, job files, servers, peers) made fit for a terminal:
//! [`escape::escape_controls`] turns control characters into visible escapes, and
//! [`shorten::shorten`] bounds how much of a long text is shown. Both import nothing of ours,
//! so every layer can use them.
//!
//! [`shown`] does both, for a label or a name put in a table or a message.
//!
//! ```
//! use iopath::text::{escape::escape_controls, shorten::shorten, shown};
//! assert_eq!(escape_controls("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
//! assert_eq!(shorten("abcdef", 3), "abc…");
//! assert_eq!(shown("fc\u{1b}[2J"), "fc\\u{1b}[2J");
//! ```

pub mod escape;
pub mod shorten;
pub mod url_password;

use std::borrow::Cow;

/// `text` as a table cell or a message shows it: at most [`shorten::SHOWN_CHARS`] characters
/// (then an ellipsis), control characters escaped. Costs the same for any length of `text`.
pub fn shown(text: &str) -> Cow<'_, str> {
    match shorten::shorten(text, shorten::SHOWN_CHARS) {
        Cow::Borrowed(short) => escape::escape_controls(short),
        Cow::Owned(short) => Cow::Owned(escape::escape_controls(&short).into_owned()),
    }
}
