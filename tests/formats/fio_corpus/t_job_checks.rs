//! The success checks fio's `t/run-fio-tests.py` and `t/fiotestlib.py` apply to fio's run of
//! each regression job file, restated for iopath's output: its exit status and standard error,
//! the fio-format JSON it prints with `--output-format json`, the log files the job files ask
//! for (`write_iops_log`, `write_lat_log`, …), and its per-I/O trace (`--trace-io`) where fio
//! reads a per-I/O bandwidth log with offsets (`log_offset=1`). Each check returns what failed (nothing: it passed).

use super::runs_test::runs_test_p_value;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// What fio asks of a run beyond a clean exit.
#[derive(Clone, Copy, Debug)]
pub enum Check {
    /// Only the exit status and standard error.
    Exit,
    /// Exactly 100 MiB read and 100 MiB written.
    T0005,
    /// Read bytes between 1.99 and 2.01 times the written bytes.
    T0006,
    /// Exactly 85 MiB read.
    T0007,
    /// Written bytes within 3 % of 16 MiB, exactly 32 MiB read.
    T0008,
    /// At least 60 s elapsed.
    T0009,
    /// Job 0 at 950–1050 IOPS, job 1 at 6–10 times job 0.
    IopsRate,
    /// Flow ratios 1 : 5 : 10 over the first nine per-second IOPS samples.
    T0012,
    /// Flow ratios 1 : 2 (all nine samples) and 1 : 3 (first four, while job 3 runs).
    T0014,
    /// Mean submission latency + mean completion latency = mean total latency, within 1 ns;
    /// and, beyond fio's check, every read has a submission latency where the engine hands
    /// requests over apart from completing them (io_uring for libaio, null), none where it does
    /// not (psync for posixaio, whose `clat` is then all of `lat`).
    T0015,
    /// Offsets 0, 4096, … 255 × 4096, in that order.
    T0019,
    /// 256 offsets, every block once, and the order passes the runs test (p ≥ 0.05).
    T0020,
    /// At most 10 steps to the next block up, and some block repeated (`norandommap`).
    T0022,
    /// Every trim followed by a write of the same range; the four random-map jobs touch every
    /// sector of the 1 MiB file.
    T0023,
    /// As T0023, for the four jobs of t0024.
    T0024,
    /// Job 0 read 128 KiB.
    T0025,
    /// The file written equals the 16 KiB pattern file.
    T0027,
    /// Job 1 read 8 KiB.
    T0029,
    /// The first line of each log has fio's columns for the options of t0033.
    T0033,
    /// The first line of each log has fio's columns for the options of t0034.
    T0034,
}

/// What the check reads besides the exit status and standard error.
#[derive(PartialEq)]
pub enum Reads {
    /// Nothing more.
    Nothing,
    /// The fio-format JSON on standard output.
    Json,
    /// The per-I/O trace (`--trace-io trace.csv`), as fio's per-I/O bandwidth logs.
    Trace,
    /// The log files the job file asks for (`write_iops_log=PREFIX`, …), under this prefix.
    Logs(&'static str),
}

impl Check {
    /// What the check reads.
    pub fn reads(self) -> Reads {
        match self {
            Check::Exit | Check::T0027 => Reads::Nothing,
            Check::T0019 | Check::T0020 | Check::T0022 | Check::T0023 | Check::T0024 => {
                Reads::Trace
            }
            Check::T0012 => Reads::Logs("t0012.fio"),
            Check::T0014 => Reads::Logs("t0014.fio"),
            Check::T0033 | Check::T0034 => Reads::Logs("log"),
            _ => Reads::Json,
        }
    }
}

/// One run of iopath on a job file.
pub struct Run<'a> {
    /// The scratch directory it ran in.
    pub dir: &'a Path,
    /// The job file's section names other than `[global]`, in order.
    pub job_names: &'a [String],
    /// Exit status (`None`: stopped at the time limit or by a signal).
    pub status: Option<i32>,
    /// Standard output.
    pub stdout: &'a str,
    /// Standard error.
    pub stderr: &'a str,
}

/// fio's `SUCCESS_DEFAULT` (`clean`) or `SUCCESS_NONZERO`: exit 0 with nothing on standard error,
/// or an exit other than 0 with something there. iopath prints its table and notes on standard
/// error when its JSON goes to standard output, so "something there" is an `error:` or
/// `warning:` line, a panic, or a block its verification found bad (`BAD`).
pub fn exit_check(run: &Run, clean: bool) -> Vec<String> {
    let complaint = run.stderr.lines().find(|line| {
        line.starts_with("error:")
            || line.starts_with("warning:")
            || line.contains("panicked")
            || (!clean && line.trim_start().starts_with("BAD "))
    });
    let mut failures = Vec::new();
    match (clean, run.status) {
        (_, None) => failures.push("stopped at its time limit or by a signal".to_string()),
        (true, Some(0)) | (false, Some(1..)) => {}
        (true, Some(status)) => failures.push(format!("exit {status}")),
        (false, Some(_)) => failures.push("exit 0 where fio's check wants a failure".into()),
    }
    match (clean, complaint) {
        (true, Some(line)) => failures.push(format!("stderr: {line}")),
        (false, None) => failures.push("nothing on stderr where fio's check wants it".into()),
        _ => {}
    }
    failures
}

/// The check `check` on a run that exited cleanly.
pub fn check_output(check: Check, run: &Run) -> Vec<String> {
    let mut failures = Vec::new();
    let json = match check.reads() {
        Reads::Json => match fio_json(run.stdout) {
            Some(json) => json,
            None => return vec!["no fio JSON on stdout".into()],
        },
        _ => Value::Null,
    };
    let mut fail = |reason: String| failures.push(reason);
    let job = |index: usize, direction: &str, field: &str| -> f64 {
        json["jobs"][index][direction][field]
            .as_f64()
            .unwrap_or(f64::NAN)
    };
    match check {
        Check::Exit => {}
        Check::T0005 => {
            expect_equal(&mut fail, "read KiB", job(0, "read", "io_kbytes"), 102400.0);
            expect_equal(
                &mut fail,
                "write KiB",
                job(0, "write", "io_kbytes"),
                102400.0,
            );
        }
        Check::T0006 => {
            let ratio = job(0, "read", "io_kbytes") / job(0, "write", "io_kbytes");
            expect_within(&mut fail, "read/write KiB", ratio, 1.99, 2.01);
        }
        Check::T0007 => expect_equal(&mut fail, "read KiB", job(0, "read", "io_kbytes"), 87040.0),
        Check::T0008 => {
            let ratio = job(0, "write", "io_kbytes") / 16384.0;
            expect_within(&mut fail, "write KiB / 16384", ratio, 0.97, 1.03);
            expect_equal(&mut fail, "read KiB", job(0, "read", "io_kbytes"), 32768.0);
        }
        Check::T0009 => {
            let elapsed = json["jobs"][0]["elapsed"].as_f64().unwrap_or(f64::NAN);
            if elapsed.is_nan() || elapsed < 60.0 {
                fail(format!("elapsed {elapsed} s, not at least 60 s"));
            }
        }
        Check::IopsRate => {
            let first = job(0, "read", "iops");
            let second = job(1, "read", "iops");
            expect_within(&mut fail, "job 0 IOPS", first, 950.0, 1050.0);
            expect_within(&mut fail, "job 1 / job 0 IOPS", second / first, 6.0, 10.0);
        }
        Check::T0012 | Check::T0014 => flow_ratios(check, run, &mut fail),
        Check::T0015 => {
            let mean = |field: &str| json["jobs"][0]["read"][field]["mean"].as_f64();
            match (mean("slat_ns"), mean("clat_ns"), mean("lat_ns")) {
                (Some(slat), Some(clat), Some(lat)) if (slat + clat - lat).abs() <= 1.0 => {}
                means => fail(format!("slat + clat != lat (means {means:?})")),
            }
            let samples = |field: &str| json["jobs"][0]["read"][field]["N"].as_u64();
            let engine = json["jobs"][0]["job options"]["ioengine"].as_str();
            let separates = engine != Some("psync");
            match (samples("slat_ns"), samples("lat_ns")) {
                (Some(slat), Some(lat)) if lat > 0 && slat == if separates { lat } else { 0 } => {}
                counts => fail(format!(
                    "{engine:?}: slat samples do not match the engine (slat, lat samples {counts:?})"
                )),
            }
        }
        Check::T0019 | Check::T0020 | Check::T0022 | Check::T0023 | Check::T0024 => {
            match per_job_logs(run) {
                Ok(logs) => offset_checks(check, &logs, &mut fail),
                Err(reason) => fail(reason),
            }
        }
        Check::T0025 => expect_equal(&mut fail, "read KiB", job(0, "read", "io_kbytes"), 128.0),
        Check::T0027 => {
            let pattern = std::fs::read(run.dir.join("t0027.pattern")).unwrap_or_default();
            let written = std::fs::read(run.dir.join("t0027file")).unwrap_or_default();
            if pattern.is_empty() || written != pattern {
                fail("t0027file does not hold the pattern file's bytes".into());
            }
        }
        Check::T0029 => expect_equal(
            &mut fail,
            "job 1 read KiB",
            job(1, "read", "io_kbytes"),
            8.0,
        ),
        Check::T0033 | Check::T0034 => log_formats(check, run, &mut fail),
    }
    failures
}

/// fio's JSON in `stdout`: from the first line that is `{` to the last that is `}`.
fn fio_json(stdout: &str) -> Option<Value> {
    let lines: Vec<&str> = stdout.lines().collect();
    let first = lines.iter().position(|line| *line == "{")?;
    let last = lines.iter().rposition(|line| *line == "}")?;
    serde_json::from_str(&lines.get(first..=last)?.join("\n")).ok()
}

fn expect_equal(fail: &mut impl FnMut(String), what: &str, value: f64, expected: f64) {
    if value != expected {
        fail(format!("{what} {value}, not {expected}"));
    }
}

fn expect_within(fail: &mut impl FnMut(String), what: &str, value: f64, low: f64, high: f64) {
    if value.is_nan() || value < low || value > high {
        fail(format!("{what} {value}, not within {low}–{high}"));
    }
}

/// The value column of fio-style log `name` in the run's directory.
fn log_values(run: &Run, name: &str) -> Result<Vec<f64>, String> {
    let text = std::fs::read_to_string(run.dir.join(name))
        .map_err(|error| format!("{name} cannot be read: {error}"))?;
    text.lines()
        .map(|line| {
            line.split(',')
                .nth(1)
                .and_then(|value| value.trim().parse().ok())
                .ok_or_else(|| format!("{name}: no value in '{line}'"))
        })
        .collect()
}

/// t0012 and t0014: sums of the first per-second IOPS samples of the three flow jobs.
fn flow_ratios(check: Check, run: &Run, fail: &mut impl FnMut(String)) {
    let Reads::Logs(prefix) = check.reads() else {
        unreachable!("flow checks read logs")
    };
    let mut logs = Vec::new();
    for job in 1..=3 {
        match log_values(run, &format!("{prefix}_iops.{job}.log")) {
            Ok(values) => logs.push(values),
            Err(reason) => return fail(reason),
        }
    }
    let samples = if matches!(check, Check::T0012) { 9 } else { 4 };
    if logs[0].len() < 9 || logs[1].len() < 9 || logs[2].len() < samples {
        let counts: Vec<usize> = logs.iter().map(Vec::len).collect();
        return fail(format!("too few samples: {counts:?}"));
    }
    let sum = |log: &[f64], count: usize| log[..count].iter().sum::<f64>();
    let (first, second, third) = (&logs[0], &logs[1], &logs[2]);
    if matches!(check, Check::T0012) {
        let third_sum = sum(third, 9);
        let over_second = third_sum / sum(second, 9);
        let over_first = third_sum / sum(first, 9);
        expect_within(fail, "job 3 / job 2 IOPS", over_second, 1.0, 3.0);
        expect_within(fail, "job 3 / job 1 IOPS", over_first, 7.0, 13.0);
    } else {
        let while_three = sum(first, 4) / sum(second, 4);
        expect_within(fail, "job 1 / job 2 IOPS, 4 s", while_three, 0.43, 0.57);
        let over_third = sum(first, 4) / sum(third, 4);
        expect_within(fail, "job 1 / job 3 IOPS, 4 s", over_third, 0.21, 0.45);
        let whole = sum(first, 9) / sum(second, 9);
        expect_within(fail, "job 1 / job 2 IOPS, 9 s", whole, 0.43, 0.57);
    }
}

/// One I/O of a per-I/O log: fio's direction number (0 read, 1 write, 2 trim), length, offset.
#[derive(Clone, Copy, Debug)]
pub struct LoggedIo {
    direction: u8,
    length: u64,
    offset: u64,
}

/// The run's trace as fio's per-I/O logs, one per job (by the job's name), in issue order.
fn per_job_logs(run: &Run) -> Result<BTreeMap<String, Vec<LoggedIo>>, String> {
    let text = std::fs::read_to_string(run.dir.join("trace.csv"))
        .map_err(|error| format!("trace.csv cannot be read: {error}"))?;
    let mut by_worker: BTreeMap<(u64, u64), Vec<LoggedIo>> = BTreeMap::new();
    for line in text.lines().skip(1) {
        let fields: Vec<&str> = line.split(',').collect();
        let number = |index: usize| -> Result<u64, String> {
            fields
                .get(index)
                .and_then(|field| field.parse().ok())
                .ok_or_else(|| format!("trace.csv: bad line '{line}'"))
        };
        let direction = match fields.get(2) {
            Some(&"read") => 0,
            Some(&"write") => 1,
            Some(&"trim") => 2,
            _ => return Err(format!("trace.csv: bad direction in '{line}'")),
        };
        by_worker
            .entry((number(0)?, number(1)?))
            .or_default()
            .push(LoggedIo {
                direction,
                length: number(4)?,
                offset: number(3)?,
            });
    }
    if by_worker.len() != run.job_names.len() {
        return Err(format!(
            "{} traced workers for {} jobs",
            by_worker.len(),
            run.job_names.len()
        ));
    }
    Ok(run
        .job_names
        .iter()
        .cloned()
        .zip(by_worker.into_values())
        .collect())
}

/// The offset checks of t0019–t0024 on the per-job logs.
fn offset_checks(
    check: Check,
    logs: &BTreeMap<String, Vec<LoggedIo>>,
    fail: &mut impl FnMut(String),
) {
    let only = || logs.values().next().cloned().unwrap_or_default();
    match check {
        Check::T0019 => {
            let offsets: Vec<u64> = only().iter().map(|io| io.offset).collect();
            let expected: Vec<u64> = (0..256).map(|block| block * 4096).collect();
            if offsets != expected {
                fail(format!(
                    "offsets not 0, 4096, … 1044480 in order: {} of them",
                    offsets.len()
                ));
            }
        }
        Check::T0020 => {
            let blocks: Vec<f64> = only().iter().map(|io| io.offset as f64 / 4096.0).collect();
            if blocks.len() != 256 {
                fail(format!("{} offsets instead of 256", blocks.len()));
            }
            let missing = (0..256)
                .filter(|block| !blocks.contains(&f64::from(*block)))
                .count();
            if missing > 0 {
                fail(format!("{missing} blocks never read"));
            }
            let p = runs_test_p_value(&blocks);
            if p < 0.05 {
                fail(format!("runs test failed with p = {p:.4}"));
            }
        }
        Check::T0022 => {
            let ios = only();
            let steps_up = ios
                .windows(2)
                .filter(|pair| pair[1].offset == pair[0].offset + 4096);
            let steps_up = steps_up.count();
            if steps_up > 10 {
                fail(format!("too many ({steps_up}) steps to the next block"));
            }
            let distinct: BTreeSet<u64> = ios.iter().map(|io| io.offset).collect();
            if distinct.len() == 256 {
                fail("no block repeated with norandommap=1".into());
            }
        }
        Check::T0023 | Check::T0024 => {
            for (name, ios) in logs {
                trims_then_writes(name, ios, fail);
            }
            for (name, sector) in [
                ("basic", 4096),
                ("bs", 8192),
                ("bsrange", 512),
                ("bssplit", 512),
            ] {
                match logs.get(name) {
                    Some(ios) => every_sector_touched(name, ios, sector, fail),
                    None => fail(format!("no job {name}")),
                }
            }
        }
        _ => unreachable!("not an offset check"),
    }
}

/// Each write follows a trim of the same length and offset, and each trim a write (or nothing).
fn trims_then_writes(name: &str, ios: &[LoggedIo], fail: &mut impl FnMut(String)) {
    let mut previous: Option<LoggedIo> = None;
    for io in ios {
        let after_write = previous.is_none_or(|previous| previous.direction == 1);
        let good = match previous {
            _ if after_write => io.direction == 2,
            Some(trim) => io.direction == 1 && io.length == trim.length && io.offset == trim.offset,
            None => unreachable!("no previous I/O counts as after a write"),
        };
        if !good {
            return fail(format!(
                "{name}: {io:?} breaks trim-then-write after {previous:?}"
            ));
        }
        previous = Some(*io);
    }
}

/// Every `sector`-sized piece of the 1 MiB file is touched, by aligned I/Os.
fn every_sector_touched(name: &str, ios: &[LoggedIo], sector: u64, fail: &mut impl FnMut(String)) {
    let mut touched = BTreeSet::new();
    for io in ios {
        if io.offset % sector != 0 || io.length % sector != 0 {
            return fail(format!("{name}: {io:?} not aligned to {sector}"));
        }
        touched.extend((0..io.length / sector).map(|index| io.offset / sector + index));
    }
    let expected = (1 << 20) / sector;
    if touched.len() as u64 != expected {
        fail(format!(
            "{name}: {} of {expected} sectors touched",
            touched.len()
        ));
    }
}

/// One column of a log line in fio's format checks: any number, exactly 0, or hexadecimal.
#[derive(Clone, Copy)]
enum Column {
    Number,
    Zero,
    Hex,
}

/// The first line of each log named by t0033 or t0034 has the columns fio writes.
fn log_formats(check: Check, run: &Run, fail: &mut impl FnMut(String)) {
    use Column::{Hex, Number as N, Zero};
    let expected: &[(&str, &[Column])] = match check {
        Check::T0033 => &[
            ("log_bw.1.log", &[N, N, N, N, Hex]),
            ("log_clat.2.log", &[N, N, N, N, Zero, N]),
            ("log_iops.3.log", &[N, N, N, N, N, Hex]),
            ("log_iops.4.log", &[N, N, N, N, Zero, Zero, N]),
        ],
        _ => &[
            ("log_clat.1.log", &[N, N, N, N, N, N, N]),
            ("log_slat.1.log", &[N, N, N, N, N, N, N]),
            ("log_lat.1.log", &[N, N, N, N, N, N, Zero]),
            ("log_clat.2.log", &[N, N, N, N, Zero, Zero, N, Zero]),
            ("log_bw.3.log", &[N, N, N, N, N, N, Zero]),
            ("log_iops.3.log", &[N, N, N, N, N, N, Zero]),
        ],
    };
    for (name, columns) in expected {
        let text = std::fs::read_to_string(run.dir.join(name)).unwrap_or_default();
        let Some(line) = text.split_inclusive('\n').next() else {
            return fail(format!("no log {name}"));
        };
        let fields: Vec<&str> = line.strip_suffix('\n').unwrap_or("").split(", ").collect();
        let matches = fields.len() == columns.len()
            && fields
                .iter()
                .zip(columns.iter())
                .all(|(field, column)| match column {
                    Column::Number => {
                        !field.is_empty() && field.bytes().all(|b| b.is_ascii_digit())
                    }
                    Column::Zero => *field == "0",
                    Column::Hex => field.strip_prefix("0x").is_some_and(|hex| {
                        !hex.is_empty()
                            && hex
                                .bytes()
                                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
                    }),
                });
        if !matches {
            return fail(format!("wrong log file format: {name}: {line:?}"));
        }
    }
}
