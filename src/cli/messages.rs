//! Messages for the terminal. An error, a warning or a note may quote text from outside (a
//! job file's value, a result file's label, a server's reply, a file name): every line of it
//! goes through [`escape_controls`], so nothing in it can move the cursor, clear the screen or
//! retitle the terminal. Line breaks the message puts between its own lines are kept.

use iopath::text::escape::{escape_controls, needs_escape};
use std::fmt::Display;

/// `message` with control characters escaped on each of its lines.
pub fn for_terminal(message: impl Display) -> String {
    let message = message.to_string();
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
    }
}
