//! Notes for the user about how a job file was mapped, each said once: the same remark made by
//! every job of a file (an engine mapped the same way in each) keeps only its first place.

use super::location::Location;

/// Notes in the order they were made.
#[derive(Clone, Debug, Default)]
pub struct Notes {
    entries: Vec<(Option<Location>, String)>,
}

impl Notes {
    /// Adds a note about `at` (or the file as a whole), unless the same text was noted before.
    pub fn add(&mut self, at: Option<&Location>, text: impl Into<String>) {
        let text = text.into();
        if !self.entries.iter().any(|(_, known)| *known == text) {
            self.entries.push((at.cloned(), text));
        }
    }

    /// The notes as `FILE:LINE: text` (or `text` alone).
    pub fn into_lines(self) -> Vec<String> {
        self.entries
            .into_iter()
            .map(|(at, text)| match at {
                Some(at) => format!("{at}: {text}"),
                None => text,
            })
            .collect()
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
}
