//! Stage one: the TOML document → drafts of tests and jobs. Every key is checked here, in
//! file order, against the table it is in; values of workload keys are checked one by one, so
//! that a bad value is reported at its own line.

use super::super::option_values as parse;
use super::super::options::WorkloadOptions;
use super::document::{
    LineIndex, Origin, Problem, Setting, entries_in_order, kind_of, scalar_text,
};
use super::keys::{self, Extra};
use serde::Deserialize;
use std::path::PathBuf;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// What a target entry names.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum TargetKey {
    /// A file or block device.
    Path(PathBuf),
    /// A temporary file in this directory, removed after the run.
    Temporary(PathBuf),
}

/// One entry of a `targets` list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct TargetEntry {
    /// What it names.
    pub key: TargetKey,
    /// Size to create it with, when given in the entry.
    pub size: Option<u64>,
    /// Its line (none for targets given on the command line).
    pub line: Option<usize>,
}

/// A `[defaults]`, `[[test]]` or `[[test.job]]` table, read.
#[derive(Clone, Debug, Default)]
pub(super) struct TableDraft<'i> {
    /// Line of the table's header (or first key).
    pub line: usize,
    /// `name`.
    pub name: Option<String>,
    /// `group`.
    pub group: Option<u32>,
    /// `targets`.
    pub targets: Option<Vec<TargetEntry>>,
    /// Workload keys, in file order.
    pub settings: Vec<Setting<'i>>,
    /// `[[test.job]]` sub-tables (tests only).
    pub jobs: Vec<TableDraft<'i>>,
}

/// The whole file, read.
#[derive(Clone, Debug, Default)]
pub(super) struct FileDraft<'i> {
    /// Top-level `targets` (or `targets` in `[defaults]`).
    pub targets: Option<Vec<TargetEntry>>,
    /// `[defaults]`.
    pub defaults: Vec<Setting<'i>>,
    /// `[[test]]` tables, in order.
    pub tests: Vec<TableDraft<'i>>,
}

/// Which table is being read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TableKind {
    Defaults,
    Test,
    Job,
}

impl TableKind {
    fn title(self) -> &'static str {
        match self {
            TableKind::Defaults => "[defaults]",
            TableKind::Test => "[[test]]",
            TableKind::Job => "[[test.job]]",
        }
    }
}

/// Reads the document's top level: `targets`, `[defaults]` and the `[[test]]` tables.
pub(super) fn read_document<'i>(
    document: &Spanned<DeTable<'i>>,
    lines: &LineIndex,
) -> Result<FileDraft<'i>, Problem> {
    let mut draft = FileDraft::default();
    let mut targets_line = None;
    for (key, value) in entries_in_order(document.get_ref()) {
        let line = lines.line(key.span().start);
        match key.get_ref().as_ref() {
            keys::TARGETS => {
                draft.targets = Some(read_targets(value, lines)?);
                targets_line = Some(line);
            }
            keys::DEFAULTS => {
                let DeValue::Table(table) = value.get_ref() else {
                    return Err(Problem::at(
                        Some(line),
                        "'defaults' is a table: write [defaults] and its keys below it",
                    ));
                };
                let defaults = read_table(table, line, TableKind::Defaults, lines)?;
                if let Some(targets) = defaults.targets {
                    if targets_line.is_some() {
                        return Err(Problem::at(
                            targets.first().and_then(|t| t.line).or(Some(line)),
                            "targets are given twice: at the top of the file and in [defaults]",
                        ));
                    }
                    draft.targets = Some(targets);
                }
                draft.defaults = defaults.settings;
            }
            keys::TEST => draft.tests = read_tests(value, line, lines)?,
            other if keys::is_workload_key(other) || other == keys::NAME => {
                return Err(Problem::at(
                    Some(line),
                    format!(
                        "'{other}' is outside any table: put it under [defaults] (every test) or a [[test]]"
                    ),
                ));
            }
            other => {
                return Err(Problem::at(
                    Some(line),
                    format!(
                        "unknown key '{other}' (the top level holds targets, [defaults] and [[test]] tables)"
                    ),
                ));
            }
        }
    }
    if draft.tests.is_empty() {
        return Err(Problem::at(
            None,
            "no test: add a [[test]] table for each test",
        ));
    }
    Ok(draft)
}

fn read_tests<'i>(
    value: &Spanned<DeValue<'i>>,
    line: usize,
    lines: &LineIndex,
) -> Result<Vec<TableDraft<'i>>, Problem> {
    tables_of(value, line, "test", "[[test]]", lines)?
        .into_iter()
        .map(|(table, line)| read_table(table, line, TableKind::Test, lines))
        .collect()
}

/// The tables of an array of tables (`[[name]]`), with their lines.
fn tables_of<'a, 'i>(
    value: &'a Spanned<DeValue<'i>>,
    line: usize,
    key: &str,
    header: &str,
    lines: &LineIndex,
) -> Result<Vec<(&'a DeTable<'i>, usize)>, Problem> {
    let wrong = || {
        Problem::at(
            Some(line),
            format!("'{key}' is a list of tables: write {header} once for each"),
        )
    };
    let DeValue::Array(array) = value.get_ref() else {
        return Err(wrong());
    };
    if array.is_empty() {
        return Err(wrong());
    }
    array
        .iter()
        .map(|item| match item.get_ref() {
            DeValue::Table(table) => Ok((table, lines.line(item.span().start))),
            _ => Err(wrong()),
        })
        .collect()
}

fn read_table<'i>(
    table: &DeTable<'i>,
    line: usize,
    kind: TableKind,
    lines: &LineIndex,
) -> Result<TableDraft<'i>, Problem> {
    let mut draft = TableDraft {
        line,
        ..TableDraft::default()
    };
    for (key, value) in entries_in_order(table) {
        let key_line = lines.line(key.span().start);
        let at = |message: String| Problem::at(Some(key_line), message);
        let name = key.get_ref().as_ref();
        match name {
            keys::NAME | keys::GROUP if kind == TableKind::Defaults => {
                return Err(at(format!(
                    "'{name}' belongs to a test or a job, not to [defaults]"
                )));
            }
            keys::NAME => match value.get_ref() {
                DeValue::String(text) if !text.trim().is_empty() => {
                    draft.name = Some(text.to_string());
                }
                other => {
                    return Err(at(format!(
                        "name: expected a non-empty string, found {}",
                        kind_of(other)
                    )));
                }
            },
            keys::GROUP => {
                let group = match value.get_ref() {
                    DeValue::Integer(_) => {
                        scalar_text(value.get_ref()).and_then(|text| text.parse::<u32>().ok())
                    }
                    _ => None,
                };
                draft.group = Some(group.ok_or_else(|| {
                    at("group: expected a whole number from 0 (the reporting group)".into())
                })?);
            }
            keys::TARGETS => draft.targets = Some(read_targets(value, lines)?),
            keys::JOB if kind == TableKind::Test => {
                draft.jobs = tables_of(value, key_line, "job", "[[test.job]]", lines)?
                    .into_iter()
                    .map(|(table, line)| read_table(table, line, TableKind::Job, lines))
                    .collect::<Result<_, _>>()?;
            }
            name if keys::is_workload_key(name) => {
                check_setting(name, value.get_ref()).map_err(at)?;
                if let Some(other) = draft
                    .settings
                    .iter()
                    .find(|s| keys::conflicting(name).contains(&s.key.as_str()))
                {
                    return Err(at(format!(
                        "'{name}' and '{}' (line {}) cannot both be set in one table: they describe the same thing",
                        other.key,
                        other.origin.line().unwrap_or(line)
                    )));
                }
                draft.settings.push(Setting {
                    key: name.to_string(),
                    value: value.clone(),
                    origin: Origin::Line(key_line),
                });
            }
            other => return Err(at(unknown_key(other, kind))),
        }
    }
    Ok(draft)
}

fn unknown_key(key: &str, kind: TableKind) -> String {
    let structure: &[&str] = match kind {
        TableKind::Defaults => &[keys::TARGETS],
        TableKind::Test => &[keys::NAME, keys::GROUP, keys::TARGETS, "[[test.job]]"],
        TableKind::Job => &[keys::NAME, keys::GROUP, keys::TARGETS],
    };
    let known: Vec<&str> = structure
        .iter()
        .chain(keys::option_keys())
        .chain(keys::EXTRA_KEYS.iter())
        .copied()
        .collect();
    format!(
        "unknown key '{key}' in {}; the keys are {}",
        kind.title(),
        known.join(", ")
    )
}

/// Checks one workload key's value on its own, through the same parsers as the flags.
pub(super) fn check_setting(key: &str, value: &DeValue<'_>) -> Result<(), String> {
    if scalar_text(value).is_none() {
        return Err(format!(
            "{key}: expected a string, a number or true/false, found {}",
            kind_of(value)
        ));
    }
    if keys::EXTRA_KEYS.contains(&key) {
        let text = scalar_text(value).unwrap_or_default();
        return Extra::parse(key, &text)
            .map(|_| ())
            .map_err(|message| format!("{key}: {message}"));
    }
    let mut table = DeTable::new();
    table.insert(
        Spanned::new(0..0, key.to_string().into()),
        Spanned::new(0..0, value.clone()),
    );
    WorkloadOptions::deserialize(toml::de::Deserializer::from(Spanned::new(0..0, table)))
        .map(|_| ())
        .map_err(|error| format!("{key}: {}", error.message()))
}

/// Reads `targets = ["a.dat", { path = "b.dat", size = "1g" }, { temporary-in = "/mnt" }]`
/// (a single string is a list of one).
fn read_targets(
    value: &Spanned<DeValue<'_>>,
    lines: &LineIndex,
) -> Result<Vec<TargetEntry>, Problem> {
    let line = lines.line(value.span().start);
    let items: Vec<&Spanned<DeValue<'_>>> = match value.get_ref() {
        DeValue::Array(array) => array.iter().collect(),
        DeValue::String(_) => vec![value],
        other => {
            return Err(Problem::at(
                Some(line),
                format!(
                    "targets: expected a list of paths, as in targets = [\"data.bin\"], found {}",
                    kind_of(other)
                ),
            ));
        }
    };
    if items.is_empty() {
        return Err(Problem::at(
            Some(line),
            "targets: the list is empty (leave the key out to use a temporary file)",
        ));
    }
    items
        .into_iter()
        .map(|item| read_target(item, lines.line(item.span().start), lines))
        .collect()
}

fn read_target(
    item: &Spanned<DeValue<'_>>,
    line: usize,
    lines: &LineIndex,
) -> Result<TargetEntry, Problem> {
    let path_of = |text: &str, line: usize| {
        if text.is_empty() {
            Err(Problem::at(Some(line), "targets: a path is empty"))
        } else {
            Ok(PathBuf::from(text))
        }
    };
    match item.get_ref() {
        DeValue::String(text) => Ok(TargetEntry {
            key: TargetKey::Path(path_of(text, line)?),
            size: None,
            line: Some(line),
        }),
        DeValue::Table(table) => {
            let mut key = None;
            let mut size = None;
            for (name, value) in entries_in_order(table) {
                let line = lines.line(name.span().start);
                let text = match value.get_ref() {
                    DeValue::String(text) => text.to_string(),
                    other => scalar_text(other).ok_or_else(|| {
                        Problem::at(
                            Some(line),
                            format!("targets: '{}' takes a string", name.get_ref()),
                        )
                    })?,
                };
                match name.get_ref().as_ref() {
                    "path" if key.is_none() => {
                        key = Some(TargetKey::Path(path_of(&text, line)?));
                    }
                    "temporary-in" if key.is_none() => {
                        key = Some(TargetKey::Temporary(path_of(&text, line)?));
                    }
                    "path" | "temporary-in" => {
                        return Err(Problem::at(
                            Some(line),
                            "targets: an entry has either path or temporary-in, not both",
                        ));
                    }
                    "size" => {
                        size = Some(parse::positive_size(&text).map_err(|message| {
                            Problem::at(Some(line), format!("targets: size: {message}"))
                        })?);
                    }
                    other => {
                        return Err(Problem::at(
                            Some(line),
                            format!(
                                "targets: unknown key '{other}' (an entry has path or temporary-in, and size)"
                            ),
                        ));
                    }
                }
            }
            let key = key.ok_or_else(|| {
                Problem::at(
                    Some(line),
                    "targets: an entry needs path = \"FILE\" or temporary-in = \"DIRECTORY\"",
                )
            })?;
            Ok(TargetEntry {
                key,
                size,
                line: Some(line),
            })
        }
        other => Err(Problem::at(
            Some(line),
            format!(
                "targets: expected a path or {{ path = \"FILE\", size = \"1g\" }}, found {}",
                kind_of(other)
            ),
        )),
    }
}
