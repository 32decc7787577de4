//! Messages for the terminal. An error, a warning or a note may quote text from outside (a
//! job file's value, a result file's label, a server's reply, a file name): every line of it
//! goes through [`escape_controls`], so nothing in it can move the cursor, clear the screen or
//! retitle the terminal. Line breaks the message puts between its own lines are kept. A URL in
//! it has its password masked ([`mask_url_passwords`]: `user:***@host`), wherever the message
//! got the URL from.

use iopath::text::escape::{escape_controls, needs_escape};
use iopath::text::url_password::mask_url_passwords;
use std::fmt::Display;

/// `message` with control characters escaped on each of its lines and URL passwords masked.
pub fn for_terminal(message: impl Display) -> String {
    let message = mask_url_passwords(&message.to_string()).into_owned();
    if !message.chars().any(|c| c != '\n' && needs_escape(c)) {
        return message;
    }
    message
        .split('\n')
        .map(escape_controls)
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_line_breaks_kept() {
        assert_eq!(for_terminal("plain\nlines"), "plain\nlines");
        assert_eq!(
            for_terminal("bad value 'a\u{1b}[2J'\n  hint\tthere"),
            "bad value 'a\\u{1b}[2J'\n  hint\\tthere"
        );
        assert_eq!(
            for_terminal("cannot reach smb://u:pw@h/s/f\n"),
            "cannot reach smb://u:***@h/s/f\n"
        );
    }
}
