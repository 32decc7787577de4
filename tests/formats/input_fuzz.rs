//! Property tests of every reader of a file the user names: fio job files (with includes), TOML
//! job files and saved RunResults, fed arbitrary bytes and structured mutations of real inputs
//! (the fio example corpus in ../shared/fio-examples, its TOML conversions, a real RunResult).
//! Each input must give a plan or an error naming a file, never a panic, and end within
//! [`support::fuzz::HANG`]; a RunResult that reads is put through the comparison and every
//! exporter.
//!
//! The number of cases keeps the whole binary to some seconds, from a fixed seed (the same
//! inputs every run); `IOPATH_FUZZ_CASES=N` runs N cases of each property from a random seed
//! instead, for a longer search by hand.

use crate::support;

use iopath::compare::{CompareOptions, LabeledRun};
use iopath::input::fio::expand::Environment;
use iopath::input::fio::load_with;
use iopath::input::job_file::{JobFileError, JobFileRequest};
use iopath::input::options::WorkloadOptions;
use iopath::input::toml_job::{self, to_toml};
use iopath::report::compare_text::write_compare_text;
use iopath::report::csv::write_iometer_csv;
use iopath::report::fio_json::write_fio_json;
use iopath::report::html::write_html;
use iopath::report::json::read_json;
use iopath::report::markdown::write_markdown;
use iopath::report::model::Report;
use iopath::report::text::write_text;
use iopath::result::RunResult;
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use support::fuzz::{bounded, config};

/// A job-file error must name a file of the job and carry a message safe to print.
fn check_error(error: &JobFileError, dir: &Path) -> Result<(), TestCaseError> {
    let shown = error.to_string();
    prop_assert!(!error.message.is_empty(), "empty message: {shown}");
    prop_assert!(
        !shown.chars().any(char::is_control),
        "control characters shown: {shown:?}"
    );
    prop_assert!(
        error.file.starts_with(dir) || error.file.starts_with("/dev"),
        "the error names {} outside the job's files: {shown}",
        error.file.display()
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Inputs to start from.

/// The fio example corpus: (file name, text).
fn corpus() -> &'static [(String, String)] {
    static CORPUS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let dir = support::corpus::shared_root().join("fio-examples");
        let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "fio"))
            .filter_map(|path| {
                let text = std::fs::read_to_string(&path).ok()?;
                Some((path.file_name()?.to_string_lossy().into_owned(), text))
            })
            .collect();
        files.sort();
        if files.is_empty() {
            let reason = format!("no fio corpus in {}", dir.display());
            assert!(!support::skip::strict(), "{reason}");
            eprintln!("skipped the corpus mutations: {reason}");
            files.push(("minimal.fio".into(), "[job]\nrw=randread\nsize=1m\n".into()));
        }
        files
    })
}

/// TOML job files: the corpus files that load, converted.
fn toml_corpus() -> &'static [String] {
    static TOML: OnceLock<Vec<String>> = OnceLock::new();
    TOML.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let request = JobFileRequest {
            ignore_unsupported: true,
            ..JobFileRequest::default()
        };
        let mut documents: Vec<String> = corpus()
            .iter()
            .filter_map(|(name, text)| {
                let path = dir.path().join(name);
                std::fs::write(&path, text).unwrap();
                let loaded = load_with(&path, &request, &Environment::fixed(&[])).ok()?;
                Some(to_toml(&loaded.plan))
            })
            .collect();
        documents.push(
            "targets = [{ path = \"data.bin\", size = \"1g\" }]\n[defaults]\nduration = \"30s\"\n[[test]]\nname = \"mixed\"\n[[test.job]]\nrw = \"randread\"\nqd = 32\n[[test.job]]\nrw = \"write\"\nbs = \"1m\"\n".into(),
        );
        documents
    })
}

/// A real RunResult, written by the binary (null engine, two sweep points, short intervals).
fn result_text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_iopath"))
            .current_dir(dir.path())
            .args([
                "run",
                "--no-history",
                "t.dat",
                "--size",
                "1m",
                "--engine",
                "null",
                "--rw",
                "randrw",
                "--duration",
                "0.3",
                "--ramp",
                "0",
                "--interval",
                "100ms",
                "--sweep",
                "qd=1,4",
                "--json",
                "r.json",
            ])
            .output()
            .expect("iopath runs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        std::fs::read_to_string(dir.path().join("r.json")).unwrap()
    })
}

// ---------------------------------------------------------------------------------------
// Generators.

const FIO_NAMES: &[&str] = &[
    "bs",
    "blocksize",
    "bsrange",
    "bssplit",
    "rw",
    "readwrite",
    "rwmixread",
    "size",
    "filesize",
    "io_size",
    "number_ios",
    "offset",
    "numjobs",
    "nrfiles",
    "iodepth",
    "filename",
    "directory",
    "filename_format",
    "ioengine",
    "runtime",
    "time_based",
    "ramp_time",
    "rate",
    "rate_iops",
    "rate_process",
    "random_distribution",
    "percentage_random",
    "blockalign",
    "zonemode",
    "zonesize",
    "zonerange",
    "zoneskip",
    "stonewall",
    "new_group",
    "wait_for_previous",
    "kb_base",
    "thinktime",
    "thinktime_blocks",
    "startdelay",
    "loops",
    "steadystate",
    "ss_dur",
    "ss_ramp",
    "direct",
    "buffered",
    "sync",
    "end_fsync",
    "fsync",
    "invalidate",
    "randrepeat",
    "randseed",
    "allow_file_create",
    "name",
    "description",
    "unknown_option",
    "write_iops_log",
    "verify",
];

const FIO_VALUES: &[&str] = &[
    "",
    "0",
    "1",
    "-1",
    "4k",
    "1m",
    "1g",
    "16e",
    "99999999999999999999",
    "18446744073709551615",
    "4294967296",
    "0x10",
    "1.5",
    "(1/0)",
    "(2^64)",
    "((((((((((1))))))))))",
    "(1-2)",
    "$ncpus",
    "$mb_memory*1024",
    "${UNSET}",
    "${HOME}",
    "%",
    "50%",
    "read",
    "randrw",
    "trim",
    "4k:8k",
    "4k-64k",
    "512-1g",
    "4k/50:8k/50",
    "4k/50:8k/60",
    "4k/",
    "/50",
    ",",
    "4k,8k,16k",
    "a:b:c",
    "a\\:b",
    "zipf:1.2",
    "zipf:0",
    "pareto:0.9",
    "normal:200",
    "zoned:50/5:50/95",
    "zoned:200/10",
    "1:2:3:4",
    "/dev/zero",
    "/dev/null",
    "../x",
    "true",
    "false",
    "on",
    "1us",
    "1h",
    "iops:5%",
    "bw_slope:0.1%",
    "libaio",
    "null",
    "nbd",
    "psync",
    "io_uring",
    "1000",
    "1024",
    "65536",
];

/// Any short text, control characters included.
fn junk() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>(), 0..40).prop_map(|chars| chars.into_iter().collect())
}

/// One line of an fio job file.
fn fio_line(includes: usize) -> impl Strategy<Value = String> {
    let value = prop_oneof![
        8 => prop::sample::select(FIO_VALUES).prop_map(str::to_string),
        1 => junk(),
        1 => (1usize..5000).prop_map(|n| "9".repeat(n)),
    ];
    prop_oneof![
        6 => (prop::sample::select(FIO_NAMES), value).prop_map(|(name, value)| format!("{name}={value}")),
        2 => prop::sample::select(FIO_NAMES).prop_map(str::to_string),
        2 => prop_oneof![
            Just("[global]".to_string()),
            "[a-z]{1,6}".prop_map(|name| format!("[{name}]")),
        ],
        2 => (0..includes.max(1)).prop_map(|n| format!("include inc{n}.fio")),
        1 => prop_oneof![
            Just("include main.fio".to_string()),
            Just("include /dev/zero".to_string()),
            Just("include missing.fio".to_string()),
            Just("include".to_string()),
        ],
        1 => junk(),
    ]
}

/// A change to the lines of a file.
#[derive(Clone, Debug)]
enum Edit {
    Insert(usize, String),
    Delete(usize),
    Duplicate(usize, usize),
    ReplaceValue(usize, String),
}

fn edits(
    line: BoxedStrategy<String>,
    values: BoxedStrategy<String>,
) -> impl Strategy<Value = Vec<Edit>> {
    let edit = prop_oneof![
        4 => (any::<usize>(), line).prop_map(|(at, line)| Edit::Insert(at, line)),
        1 => any::<usize>().prop_map(Edit::Delete),
        1 => (any::<usize>(), 1usize..20).prop_map(|(at, times)| Edit::Duplicate(at, times)),
        3 => (any::<usize>(), values).prop_map(|(at, value)| Edit::ReplaceValue(at, value)),
    ];
    prop::collection::vec(edit, 0..8)
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for edit in edits {
        let at = |index: usize, len: usize| if len == 0 { 0 } else { index % len };
        match edit {
            Edit::Insert(index, line) => {
                let position = at(*index, lines.len() + 1);
                lines.insert(position, line.clone());
            }
            Edit::Delete(index) if !lines.is_empty() => {
                lines.remove(at(*index, lines.len()));
            }
            Edit::Duplicate(index, times) if !lines.is_empty() => {
                let position = at(*index, lines.len());
                let copy = lines[position].clone();
                for _ in 0..*times {
                    lines.insert(position, copy.clone());
                }
            }
            Edit::ReplaceValue(index, value) if !lines.is_empty() => {
                let position = at(*index, lines.len());
                if let Some((name, _)) = lines[position].split_once('=') {
                    lines[position] = format!("{name}={value}");
                }
            }
            _ => {}
        }
    }
    lines.join("\n") + "\n"
}

fn fio_edits() -> impl Strategy<Value = Vec<Edit>> {
    let values = prop_oneof![
        8 => prop::sample::select(FIO_VALUES).prop_map(str::to_string),
        1 => junk(),
    ];
    edits(fio_line(4).boxed(), values.boxed())
}

// ---------------------------------------------------------------------------------------
// fio job files.

/// Loads `dir/main.fio`; with `trial`, as a trial run would (`--size 16m --duration 1`, which
/// lets jobs on missing files and devices load), and accepting unsupported options.
fn load_fio(dir: PathBuf, trial: bool) -> Result<(), TestCaseError> {
    let main = dir.join("main.fio");
    let outcome = bounded(format!("{}", main.display()), move || {
        let overrides = if trial {
            WorkloadOptions {
                size: Some(16 << 20),
                duration: Some(1_000_000_000),
                ..WorkloadOptions::default()
            }
        } else {
            WorkloadOptions::default()
        };
        let request = JobFileRequest {
            ignore_unsupported: trial,
            overrides,
            ..JobFileRequest::default()
        };
        load_with(&main, &request, &Environment::fixed(&[("HOME", "/root")]))
    })?;
    match outcome {
        Ok(loaded) => {
            for line in loaded.notes.iter().chain(&loaded.ignored) {
                prop_assert!(
                    !line.chars().any(char::is_control),
                    "control characters shown: {line:?}"
                );
            }
        }
        Err(error) => check_error(&error, &dir)?,
    }
    Ok(())
}

#[test]
fn fio_job_files_of_arbitrary_bytes_never_panic() {
    let mut runner = TestRunner::new(config(300));
    runner
        .run(
            &(prop::collection::vec(any::<u8>(), 0..2048), any::<bool>()),
            |(bytes, trial)| {
                let dir = tempfile::tempdir().unwrap();
                std::fs::write(dir.path().join("main.fio"), &bytes).unwrap();
                load_fio(dir.path().to_path_buf(), trial)
            },
        )
        .unwrap();
}

#[test]
fn mutated_fio_corpus_with_includes_never_panics() {
    let files = corpus().len();
    let included = prop::collection::vec(prop::collection::vec(fio_line(4), 0..12), 0..4);
    let trial = prop_oneof![3 => Just(true), 1 => Just(false)];
    let strategy = (0..files, fio_edits(), included, trial);
    let mut runner = TestRunner::new(config(1000));
    runner
        .run(&strategy, |(index, edits, included, trial)| {
            let dir = tempfile::tempdir().unwrap();
            let text = apply(&corpus()[index].1, &edits);
            std::fs::write(dir.path().join("main.fio"), text).unwrap();
            for (number, lines) in included.iter().enumerate() {
                let path = dir.path().join(format!("inc{number}.fio"));
                std::fs::write(path, lines.join("\n")).unwrap();
            }
            load_fio(dir.path().to_path_buf(), trial)
        })
        .unwrap();
}

// ---------------------------------------------------------------------------------------
// TOML job files.

const TOML_KEYS: &[&str] = &[
    "rw",
    "bs",
    "qd",
    "workers",
    "duration",
    "ramp",
    "bytes",
    "size",
    "offset",
    "read-pct",
    "random-pct",
    "align",
    "rate",
    "rate-iops",
    "spec",
    "distribution",
    "engine",
    "seed",
    "buffered",
    "sync",
    "fsync-at-end",
    "name",
    "group",
    "targets",
    "io-limit",
    "time-limit",
    "think-time",
    "unknown",
];

const TOML_VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "4096",
    "65536",
    "4294967296",
    "18446744073709551615",
    "1e400",
    "inf",
    "nan",
    "true",
    "\"\"",
    "\"4k\"",
    "\"4kk\"",
    "\"1m\"",
    "\"randread\"",
    "\"30s\"",
    "\"0s\"",
    "\"zipf:1.2\"",
    "\"64k:30:100:100, 512:50:0:0\"",
    "\"512/10,4k/60,64k/30\"",
    "[1, 2]",
    "[]",
    "[[]]",
    "{}",
    "[{ path = \"x.dat\" }]",
    "[{ path = \"x.dat\", size = \"1m\" }]",
    "[{ temporary = \".\" }]",
    "[{ path = \"/dev/zero\" }]",
    "\"\\u001b[2J\"",
    "1979-05-27T07:32:00Z",
];

fn toml_line() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (prop::sample::select(TOML_KEYS), prop::sample::select(TOML_VALUES))
            .prop_map(|(key, value)| format!("{key} = {value}")),
        2 => prop::sample::select(&["[[test]]", "[[test.job]]", "[defaults]", "[test]", "[[defaults]]", "[x.y]"][..])
            .prop_map(str::to_string),
        1 => junk(),
    ]
}

fn load_toml(dir: PathBuf, name: &str) -> Result<(), TestCaseError> {
    let path = dir.join(name);
    let outcome = bounded(format!("{}", path.display()), move || {
        toml_job::load(&path, &JobFileRequest::default())
    })?;
    if let Err(error) = outcome {
        check_error(&error, &dir)?;
    }
    Ok(())
}

#[test]
fn toml_job_files_of_arbitrary_bytes_never_panic() {
    let mut runner = TestRunner::new(config(300));
    runner
        .run(&prop::collection::vec(any::<u8>(), 0..2048), |bytes| {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("job.toml"), &bytes).unwrap();
            load_toml(dir.path().to_path_buf(), "job.toml")
        })
        .unwrap();
}

#[test]
fn mutated_toml_jobs_never_panic() {
    let documents = toml_corpus().len();
    let values = prop::sample::select(TOML_VALUES).prop_map(|value| format!(" {value}"));
    let strategy = (0..documents, edits(toml_line().boxed(), values.boxed()));
    let mut runner = TestRunner::new(config(600));
    runner
        .run(&strategy, |(index, edits)| {
            let dir = tempfile::tempdir().unwrap();
            let text = apply(&toml_corpus()[index], &edits);
            std::fs::write(dir.path().join("job.toml"), text).unwrap();
            load_toml(dir.path().to_path_buf(), "job.toml")
        })
        .unwrap();
}

// ---------------------------------------------------------------------------------------
// Saved results.

/// Reads `text` as a RunResult; when it reads, compares it with itself and runs every
/// exporter over it.
fn read_and_export(text: String) -> Result<(), TestCaseError> {
    bounded("a RunResult".into(), move || {
        let Ok(result) = read_json(&text) else {
            return;
        };
        export(&result);
    })
}

fn export(result: &RunResult) {
    let mut sink = std::io::sink();
    let single = Report::of_run(result);
    let _ = write_text(single.run(), &mut sink);
    let _ = write_markdown(single.run(), &mut sink);
    let _ = write_iometer_csv(single.run(), &mut sink);
    let _ = write_fio_json(single.run(), true, &mut sink);
    let runs = [LabeledRun::new("a", result), LabeledRun::new("b", result)];
    if let Ok(mut report) = Report::of_runs(&runs, &CompareOptions::default(), None) {
        if let Some(comparison) = &report.comparison {
            let _ = write_compare_text(comparison, &mut sink);
        }
        report.title = "fuzz".into();
        let _ = write_html(&report, &mut sink);
    }
}

/// A replacement for one value of a RunResult.
fn json_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(Value::Bool(true)),
        Just(serde_json::json!(0)),
        Just(serde_json::json!(1)),
        Just(serde_json::json!(-1)),
        Just(serde_json::json!(u64::MAX)),
        Just(serde_json::json!(i64::MIN)),
        Just(serde_json::json!(1e308)),
        Just(serde_json::json!(-1e308)),
        Just(serde_json::json!(0.5)),
        Just(serde_json::json!(1u64 << 40)),
        Just(serde_json::json!([])),
        Just(serde_json::json!({})),
        Just(serde_json::json!("")),
        Just(serde_json::json!("\u{1b}[2J<script>")),
        any::<u64>().prop_map(|n| serde_json::json!(n)),
        any::<f64>().prop_map(|n| serde_json::json!(n)),
        junk().prop_map(Value::String),
    ]
}

#[derive(Clone, Debug)]
enum JsonEdit {
    /// Another value of the same kind: a number for a number, text for text (the result
    /// still reads, and the exporters get to see it).
    Tweak(Vec<usize>, u64, String),
    Replace(Vec<usize>, Value),
    Remove(Vec<usize>),
    Repeat(Vec<usize>, usize),
}

/// The value at the end of `path` (each step picks a child, modulo their number), with its
/// parent's key or index.
fn walk<'a>(value: &'a mut Value, path: &[usize]) -> &'a mut Value {
    let Some((&step, rest)) = path.split_first() else {
        return value;
    };
    let has_children = match &*value {
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
        _ => false,
    };
    if !has_children {
        return value;
    }
    match value {
        Value::Array(items) => {
            let len = items.len();
            walk(&mut items[step % len], rest)
        }
        Value::Object(map) => {
            let len = map.len();
            let child = map.values_mut().nth(step % len).expect("in range");
            walk(child, rest)
        }
        _ => unreachable!("checked above"),
    }
}

fn edit_json(value: &mut Value, edit: &JsonEdit) {
    match edit {
        JsonEdit::Tweak(path, seed, text) => {
            let target = walk(value, path);
            *target = match &*target {
                Value::Number(number) if number.is_u64() => serde_json::json!(
                    [0, 1, u64::MAX, u64::MAX / 2, 1 << 40, *seed, seed % 1000]
                        [(seed % 7) as usize]
                ),
                Value::Number(number) if number.is_i64() => {
                    serde_json::json!(
                        [0, -1, i64::MIN, i64::MAX, *seed as i64][(seed % 5) as usize]
                    )
                }
                Value::Number(_) => serde_json::json!(
                    [0.0, -1.0, 1e308, -1e308, 1e-308, *seed as f64 / 7.0][(seed % 6) as usize]
                ),
                Value::String(_) => Value::String(text.clone()),
                Value::Bool(flag) => Value::Bool(!flag),
                other => other.clone(),
            };
        }
        JsonEdit::Replace(path, replacement) => *walk(value, path) = replacement.clone(),
        JsonEdit::Remove(path) => {
            let (last, parent) = path.split_last().unwrap_or((&0, &[]));
            match walk(value, parent) {
                Value::Object(map) if !map.is_empty() => {
                    let key = map.keys().nth(last % map.len()).unwrap().clone();
                    map.remove(&key);
                }
                Value::Array(items) if !items.is_empty() => {
                    let len = items.len();
                    items.remove(last % len);
                }
                _ => {}
            }
        }
        JsonEdit::Repeat(path, times) => {
            if let Value::Array(items) = walk(value, path)
                && let Some(first) = items.first().cloned()
            {
                items.extend(std::iter::repeat_n(first, *times));
            }
        }
    }
}

fn json_edits() -> impl Strategy<Value = Vec<JsonEdit>> {
    let path = prop::collection::vec(any::<usize>(), 0..10);
    let edit = prop_oneof![
        8 => (path.clone(), any::<u64>(), junk())
            .prop_map(|(path, seed, text)| JsonEdit::Tweak(path, seed, text)),
        1 => (path.clone(), json_value()).prop_map(|(path, value)| JsonEdit::Replace(path, value)),
        1 => path.clone().prop_map(JsonEdit::Remove),
        1 => (path, 1usize..50).prop_map(|(path, times)| JsonEdit::Repeat(path, times)),
    ];
    prop::collection::vec(edit, 1..6)
}

#[test]
fn result_files_of_arbitrary_bytes_never_panic() {
    let mut runner = TestRunner::new(config(300));
    runner
        .run(&prop::collection::vec(any::<u8>(), 0..2048), |bytes| {
            read_and_export(String::from_utf8_lossy(&bytes).into_owned())
        })
        .unwrap();
}

#[test]
fn mutated_results_never_panic_in_the_reader_or_the_exporters() {
    let original: Value = serde_json::from_str(result_text()).unwrap();
    let cut = prop_oneof![8 => Just(None), 1 => any::<usize>().prop_map(Some)];
    let strategy = (json_edits(), cut);
    let mut runner = TestRunner::new(config(120));
    runner
        .run(&strategy, |(edits, cut)| {
            let mut value = original.clone();
            for edit in &edits {
                edit_json(&mut value, edit);
            }
            let mut text = serde_json::to_string(&value).unwrap();
            if let Some(cut) = cut {
                let mut end = cut % (text.len() + 1);
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text.truncate(end);
            }
            read_and_export(text)
        })
        .unwrap();
}

#[test]
fn the_unchanged_inputs_read() {
    // The starting points themselves are valid: mutations start from real inputs.
    let result = read_json(result_text()).expect("the RunResult reads");
    export(&result);
    for (index, document) in toml_corpus().iter().enumerate() {
        let read = toml_job::read(document, Path::new("doc.toml"), &JobFileRequest::default());
        assert!(read.is_ok(), "document {index}: {read:?}\n{document}");
    }
}
