//! An option line as its handler in [`super::table`] sees it.

use super::location::Location;
use super::location::Set;
use super::notes::Notes;
use super::parsers::OptionError;
use super::values::boolean;

/// An option line as a handler sees it.
pub struct Input<'a> {
    /// The value, `None` for a bare name.
    pub value: Option<&'a str>,
    /// Where the line is.
    pub at: &'a Location,
    /// Notes for the user (how a value was mapped).
    pub notes: &'a mut Notes,
}

impl<'a> Input<'a> {
    /// The value, which must be present.
    pub fn text(&self) -> Result<&'a str, OptionError> {
        match self.value {
            Some(value) if !value.trim().is_empty() => Ok(value.trim()),
            _ => Err(OptionError::BadValue("needs a value".into())),
        }
    }

    /// A boolean (a bare name is true).
    pub fn flag(&self) -> Result<bool, OptionError> {
        Ok(boolean(self.value)?)
    }

    /// Adds a note about this line.
    pub fn note(&mut self, text: impl Into<String>) {
        self.notes.add(Some(self.at), text);
    }

    /// The value with this line's location.
    pub(super) fn set<T>(&self, value: T) -> Set<T> {
        Set {
            value,
            at: self.at.clone(),
        }
    }
}
