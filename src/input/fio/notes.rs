//! Notes for the user about how a job file was mapped, each said once: the same remark made by
//! every job of a file (an engine mapped the same way in each) keeps only its first place.
//! At most [`MAX_NOTES`] are kept; the rest are counted.

use super::location::Location;
use crate::text::escape::escape_controls;
use std::collections::HashSet;

/// Most notes kept for one job file.
pub const MAX_NOTES: usize = 256;

/// Notes in the order they were made.
#[derive(Clone, Debug, Default)]
pub struct Notes {
    entries: Vec<(Option<Location>, String)>,
    known: HashSet<String>,
    dropped: usize,
}

impl Notes {
    /// Adds a note about `at` (or the file as a whole), unless the same text was noted before.
    pub fn add(&mut self, at: Option<&Location>, text: impl Into<String>) {
        let text = text.into();
        if self.known.contains(&text) {
            return;
        }
        if self.entries.len() >= MAX_NOTES {
            self.dropped += 1;
            return;
        }
        self.known.insert(text.clone());
        self.entries.push((at.cloned(), text));
    }

    /// The notes as `FILE:LINE: text` (or `text` alone), control characters escaped, and a
    /// count of those not kept.
    pub fn into_lines(self) -> Vec<String> {
        let dropped = self.dropped;
        let mut lines: Vec<String> = self
            .entries
            .into_iter()
            .map(|(at, text)| match at {
                Some(at) => format!("{at}: {text}"),
                None => text,
            })
            .map(|line| escape_controls(&line).into_owned())
            .collect();
        if dropped > 0 {
            lines.push(format!(
                "… and {dropped} more notes (only the first {MAX_NOTES} are shown)"
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_note_is_kept_once_with_its_first_place() {
        let at = |line| Location {
            file: "a.fio".into(),
            line,
        };
        let mut notes = Notes::default();
        notes.add(Some(&at(3)), "libaio runs as io_uring");
        notes.add(Some(&at(9)), "libaio runs as io_uring");
        notes.add(None, "general");
        assert_eq!(
            notes.into_lines(),
            ["a.fio:3: libaio runs as io_uring", "general"]
        );
    }

    #[test]
    fn notes_past_the_limit_are_counted() {
        let mut notes = Notes::default();
        for number in 0..MAX_NOTES + 3 {
            notes.add(None, format!("note {number}"));
        }
        let lines = notes.into_lines();
        assert_eq!(lines.len(), MAX_NOTES + 1);
        assert!(
            lines[MAX_NOTES].contains("3 more notes"),
            "{}",
            lines[MAX_NOTES]
        );
    }
}
