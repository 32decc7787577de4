//! History references on the command line: `@last`, `@-1` (the run before the last), `@-N`,
//! `@label:NAME` (the newest run with that label) and `@ID` (a run's number in
//! `iopath history`).
//!
//! ```
//! use iopath::history::reference::Reference;
//! assert_eq!(Reference::parse("@last").unwrap(), Reference::Back(0));
//! assert_eq!(Reference::parse("@-2").unwrap(), Reference::Back(2));
//! assert_eq!(Reference::parse("@label:fc").unwrap(), Reference::Label("fc".into()));
//! assert_eq!(Reference::parse("@12").unwrap(), Reference::Id(12));
//! assert!(Reference::parse("@yesterday").is_err());
//! ```

use super::HistoryError;

/// One run of the history, as named on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reference {
    /// The run `N` places before the newest (`@last` is 0, `@-1` is 1).
    Back(u32),
    /// The newest run with this label.
    Label(String),
    /// The run with this number.
    Id(i64),
}

impl Reference {
    /// Whether `argument` is meant as a history reference (it starts with `@`).
    pub fn is_reference(argument: &str) -> bool {
        argument.starts_with('@')
    }

    /// Reads `@last`, `@-N`, `@label:NAME` or `@ID`.
    pub fn parse(argument: &str) -> Result<Reference, HistoryError> {
        let bad = || HistoryError::BadReference(argument.to_string());
        let text = argument.strip_prefix('@').ok_or_else(bad)?;
        if text == "last" {
            return Ok(Reference::Back(0));
        }
        if let Some(label) = text.strip_prefix("label:") {
            return if label.is_empty() {
                Err(bad())
            } else {
                Ok(Reference::Label(label.to_string()))
            };
        }
        if let Some(back) = text.strip_prefix('-') {
            return back.parse().map(Reference::Back).map_err(|_| bad());
        }
        match text.parse::<i64>() {
            Ok(id) if id > 0 && text.bytes().all(|b| b.is_ascii_digit()) => Ok(Reference::Id(id)),
            _ => Err(bad()),
        }
    }
}
