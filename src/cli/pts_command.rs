//! `iopath pts TARGET`: the SNIA PTS tests (docs/pts.md) — flags checked before any I/O, the
//! rounds reported as they end, the state saved after each so that `--resume DIR` continues
//! an interrupted run, and the report as HTML, CSV (one file per table) and JSON.

use super::exit::{self, Failed, Usage};
use super::history_command::{check_history_location, record_pts};
use super::messages::for_terminal;
use clap::Args;
use iopath::gate::read::{FileLimit, read_text};
use iopath::gate::replace::OutputFile;
use iopath::pts::plan::{SPEC_BLOCK_SIZES, TRACKED_BLOCK_SIZE};
use iopath::pts::purge::PurgeMethod;
use iopath::pts::steady_rule::{MAX_ROUNDS, WINDOW_ROUNDS};
use iopath::pts::{PtsError, PtsObserver, PtsPlan, PtsSettings, check, default_load, run};
use iopath::report::html::pts::{outcome_text, write_pts_html};
use iopath::report::pts_rate_steps::{step_rows, step_words};
use iopath::report::pts_tables::csv_tables;
use iopath::result::pts::{PtsEdition, PtsResult, PtsTestKind, PtsTestResult};
use iopath::run::RunOptions;
use iopath::targets::TargetSpec;
use iopath::targets::safety::WritePolicy;
use iopath::text::url_password::masked_arguments;
use iopath::units::{parse_duration_ns, parse_size};
use std::path::{Path, PathBuf};

const EXAMPLES: &str = "\
Examples:
  iopath pts /dev/nvme1n1 --allow-destructive --output-dir pts-nvme1
  iopath pts /dev/sdb --allow-destructive --client --tests iops,latency --output-dir pts-sdb
  iopath pts nbd://array/lun0 --allow-destructive --round 5s --capacity-pct 10 --max-rounds 8 --output-dir small
  iopath pts /dev/sdb --allow-destructive --resume pts-sdb      (continue an interrupted run)
  iopath pts /dev/sdb --allow-destructive --label fw-2.1 --output-dir pts-fw21

The state is saved in DIR/pts.json after every round; the report is DIR/pts.html and one
CSV file per table. Write saturation's rounds are looked at for a write cliff or a burst
bucket (the summary, pts.html and pts-rate-steps.csv say where it came). Each run is kept in
the local history (iopath history lists it; iopath report @last -o pts.html draws it again;
--no-history: not this one); a resumed run replaces the partial entry its interruption left,
under the same number. Exit status: 0 done (steady or not: the report says), 1 an I/O error,
2 bad input (nothing was written), 130 interrupted (resume with --resume DIR).";

/// The state and result file inside the output directory.
const STATE_FILE: &str = "pts.json";
/// Most bytes of a state file read back.
const STATE_LIMIT: FileLimit = FileLimit {
    what: "PTS state file",
    max_bytes: 64 << 20,
};

/// Flags of `iopath pts`.
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct PtsArgs {
    /// The device, file or network volume (nbd://…) to test; it must exist. Everything on it
    /// is overwritten.
    #[arg(value_name = "TARGET")]
    pub target: PathBuf,
    /// Measured time of each element of a round (one read/write mix × block size); the
    /// specification: 1 minute.
    #[arg(long, value_name = "TIME", default_value = "60s", value_parser = duration_arg)]
    pub round: u64,
    /// Share of the capacity the tests use (the active range, from offset 0), percent.
    #[arg(long = "capacity-pct", value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub capacity_percent: u32,
    /// Tests to run, in order: iops, throughput, latency, saturation.
    #[arg(long, value_name = "LIST", default_value = "iops,throughput,latency,saturation", value_parser = tests_arg)]
    pub tests: TestList,
    /// The Client edition: QD 16 × 2 workers, rounds over 75 % of the active range,
    /// throughput at 1024 KiB only.
    #[arg(long)]
    pub client: bool,
    /// How each test's target is purged: discard (trims of the whole target through its
    /// engine: BLKDISCARD on a block device, NBD_CMD_TRIM on an NBD export whose server takes
    /// trims, UNMAP on a thin-provisioned iSCSI LUN, punched holes in a file iopath created;
    /// any other target is tested as it is, and the report says so), none, or secure-erase
    /// (refused: iopath issues no NVMe or ATA secure erase).
    #[arg(long, value_name = "METHOD", default_value = "discard", value_parser = purge_arg)]
    pub purge: PurgeMethod,
    /// Most rounds of a test before "steady state not reached" (5 to 25; the specification: 25).
    #[arg(long = "max-rounds", value_name = "N", default_value_t = MAX_ROUNDS, value_parser = clap::value_parser!(u32).range(WINDOW_ROUNDS as i64..=MAX_ROUNDS as i64))]
    pub max_rounds: u32,
    /// Block sizes of the IOPS and latency tests (a subset of 512,4k,8k,16k,32k,64k,128k,1m
    /// that includes 4k, the tracked size).
    #[arg(long = "block-sizes", value_name = "LIST", value_parser = block_sizes_arg)]
    pub block_sizes: Option<BlockSizes>,
    /// Queue depth per worker of the IOPS, throughput and saturation tests (default 32, or
    /// 16 with --client).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub qd: Option<u32>,
    /// Workers of the IOPS and saturation tests (default 4, or 2 with --client).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub workers: Option<u32>,
    /// Longest write saturation test (it ends earlier after writing 4 × the active range).
    #[arg(long = "saturation-time", value_name = "TIME", default_value = "24h", value_parser = duration_arg)]
    pub saturation_time: u64,
    /// Allow writing the target (a block device, or a file iopath did not create).
    #[arg(long)]
    pub allow_destructive: bool,
    /// Also write a device that carries a filesystem, partition table or volume signature.
    #[arg(long)]
    pub force_overwrite_signature: bool,
    /// Directory of the report: pts.json (the state, saved after every round), pts.html and
    /// pts-*.csv. Created when missing.
    #[arg(long = "output-dir", value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Continue the run whose output directory is DIR, with its settings, where the device
    /// state allows: finished rounds are kept; a test stopped during its preconditioning
    /// starts again from its purge.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["round", "capacity_percent", "tests", "client", "purge", "max_rounds", "block_sizes", "qd", "workers", "saturation_time", "output_dir", "label"])]
    pub resume: Option<PathBuf>,
    /// Also write the HTML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Also write the result (the state file's content) to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write the CSV tables (pts-*.csv) into DIR.
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,
    /// Do not keep this run in the local history (`iopath history`; `iopath report @last`
    /// draws a kept one).
    #[arg(long)]
    pub no_history: bool,
    /// Label of this run, as `iopath run --label`: its name in the history (`iopath history
    /// --label TEXT`, `@label:TEXT`) and in the report's title. A resumed run keeps its own.
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
}

/// The tests of `--tests`.
#[derive(Clone, Debug)]
pub struct TestList(Vec<PtsTestKind>);

/// The block sizes of `--block-sizes`.
#[derive(Clone, Debug)]
pub struct BlockSizes(Vec<u64>);

fn duration_arg(text: &str) -> Result<u64, Usage> {
    let ns = parse_duration_ns(text).map_err(|error| Usage(error.to_string()))?;
    if ns < 100_000_000 {
        return Err(Usage("must be at least 100ms".to_string()));
    }
    Ok(ns)
}

fn tests_arg(text: &str) -> Result<TestList, Usage> {
    let mut tests = Vec::new();
    for name in text.split(',').map(str::trim) {
        let kind = match name {
            "iops" => PtsTestKind::Iops,
            "throughput" => PtsTestKind::Throughput,
            "latency" => PtsTestKind::Latency,
            "saturation" => PtsTestKind::Saturation,
            other => {
                return Err(Usage(format!(
                    "unknown test '{}' (iops, throughput, latency, saturation)",
                    for_terminal(other)
                )));
            }
        };
        if tests.contains(&kind) {
            return Err(Usage(format!("test '{name}' given twice")));
        }
        tests.push(kind);
    }
    Ok(TestList(tests))
}

fn purge_arg(text: &str) -> Result<PurgeMethod, Usage> {
    PurgeMethod::parse(text).ok_or_else(|| {
        Usage(format!(
            "unknown purge method '{}' (none, discard, secure-erase)",
            for_terminal(text)
        ))
    })
}

fn block_sizes_arg(text: &str) -> Result<BlockSizes, Usage> {
    let mut sizes = Vec::new();
    for item in text.split(',').map(str::trim) {
        let size = parse_size(item).map_err(|error| Usage(error.to_string()))?;
        if !SPEC_BLOCK_SIZES.contains(&size) {
            return Err(Usage(format!(
                "{} is not a block size of the specification (512, 4k, 8k, 16k, 32k, 64k, 128k, 1m)",
                for_terminal(item)
            )));
        }
        if !sizes.contains(&size) {
            sizes.push(size);
        }
    }
    if !sizes.contains(&TRACKED_BLOCK_SIZE) {
        return Err(Usage(
            "must include 4k: the IOPS and latency tests are tracked on 4 KiB random writes".into(),
        ));
    }
    // The specification's order: largest first.
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    Ok(BlockSizes(sizes))
}

/// Runs `iopath pts` and returns the exit status.
pub fn run_pts(args: &PtsArgs) -> i32 {
    match checked(args) {
        Ok((plan, state, outputs)) => measure(&plan, state, &outputs, !args.no_history),
        Err(error) => {
            eprintln!("error: {}", for_terminal(&error));
            error.status()
        }
    }
}

/// A refusal before any I/O, or a failure.
struct Refused {
    message: String,
    status: i32,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl Refused {
    fn usage(message: impl Into<String>) -> Self {
        Refused {
            message: message.into(),
            status: exit::BAD_INPUT,
        }
    }

    fn status(&self) -> i32 {
        self.status
    }
}

impl From<PtsError> for Refused {
    fn from(error: PtsError) -> Self {
        Refused {
            status: if error.is_bad_input() {
                exit::BAD_INPUT
            } else {
                exit::RUN_FAILED
            },
            message: error.to_string(),
        }
    }
}

/// Where the outputs go, checked before any I/O.
struct Outputs {
    directory: Option<PathBuf>,
    html: Option<OutputFile>,
    json: Option<OutputFile>,
    csv: Option<PathBuf>,
}

/// Everything checked before any I/O: the flags, the outputs, the saved state, the target
/// and every plan.
fn checked(args: &PtsArgs) -> Result<(PtsPlan, PtsResult, Outputs), Refused> {
    if args.purge == PurgeMethod::SecureErase {
        return Err(Refused::usage(
            "--purge secure-erase: iopath issues no NVMe format or ATA security erase; erase \
             the device with its own tool (nvme format --ses=1, hdparm --security-erase) and \
             run with --purge none",
        ));
    }
    if !args.no_history {
        check_history_location().map_err(|error| Refused::usage(for_terminal(&error)))?;
    }
    let saved = args.resume.as_deref().map(read_state).transpose()?;
    let target = TargetSpec::from_argument(&args.target, None)
        .map_err(|error| Refused::usage(error.to_string()))?;
    let options = RunOptions {
        write_policy: WritePolicy {
            allow_destructive: args.allow_destructive,
            force_overwrite_signature: args.force_overwrite_signature,
        },
        command_line: masked_arguments(std::env::args()),
        ..RunOptions::default()
    };
    let settings = match &saved {
        Some(saved) => PtsSettings::of(saved),
        None => settings_of(args),
    };
    let plan = check(target, settings, options)?;
    let directory = args.resume.clone().or_else(|| args.output_dir.clone());
    let outputs = check_outputs(args, directory)?;
    let state = match saved {
        Some(mut saved) => {
            if saved.conditions.target.path != plan.info.path {
                return Err(Refused::usage(format!(
                    "--resume: the saved run tested {}, not {}",
                    for_terminal(&saved.conditions.target.path),
                    for_terminal(&plan.info.path)
                )));
            }
            if saved.complete {
                return Err(Refused::usage(
                    "--resume: that run has finished; nothing to continue",
                ));
            }
            let done: usize = saved.tests.iter().map(|test| test.rounds.len()).sum();
            saved.conditions.notes.push(format!(
                "resumed at {} after {done} rounds",
                iopath::host::time::now_rfc3339()
            ));
            saved
        }
        None => PtsResult {
            label: args.label.clone(),
            ..plan.fresh_result()
        },
    };
    Ok((plan, state, outputs))
}

fn settings_of(args: &PtsArgs) -> PtsSettings {
    let edition = if args.client {
        PtsEdition::Client
    } else {
        PtsEdition::Enterprise
    };
    let (queue_depth, workers) = default_load(edition);
    PtsSettings {
        edition,
        tests: args.tests.0.clone(),
        element_ns: args.round,
        capacity_percent: args.capacity_percent,
        max_rounds: args.max_rounds,
        queue_depth: args.qd.unwrap_or(queue_depth),
        workers: args.workers.unwrap_or(workers),
        block_sizes: args
            .block_sizes
            .as_ref()
            .map_or(SPEC_BLOCK_SIZES.to_vec(), |sizes| sizes.0.clone()),
        purge: args.purge,
        saturation_limit_ns: args.saturation_time,
    }
}

/// Reads the state file of `directory`.
fn read_state(directory: &Path) -> Result<PtsResult, Refused> {
    let path = directory.join(STATE_FILE);
    let text = read_text(&path, STATE_LIMIT).map_err(|error| {
        Refused::usage(format!(
            "--resume {}: {}: {error}",
            for_terminal(directory.display()),
            for_terminal(path.display())
        ))
    })?;
    let state: PtsResult = serde_json::from_str(&text).map_err(|error| {
        Refused::usage(format!(
            "--resume: {} is not a PTS state file: {}",
            for_terminal(path.display()),
            for_terminal(error)
        ))
    })?;
    if state.schema_version != iopath::result::pts::PTS_SCHEMA_VERSION {
        return Err(Refused::usage(format!(
            "--resume: {} has schema version {}; this iopath reads {}",
            for_terminal(path.display()),
            state.schema_version,
            iopath::result::pts::PTS_SCHEMA_VERSION
        )));
    }
    Ok(state)
}

fn check_outputs(args: &PtsArgs, directory: Option<PathBuf>) -> Result<Outputs, Refused> {
    let file = |flag: &str, path: &Option<PathBuf>| {
        path.as_deref()
            .map(OutputFile::check)
            .transpose()
            .map_err(|error| Refused::usage(format!("{flag}: {}", for_terminal(error))))
    };
    if let Some(directory) = &directory {
        if !directory.exists() {
            iopath::gate::created::create_directories(directory).map_err(|error| {
                Refused::usage(format!(
                    "--output-dir {}: {error}",
                    for_terminal(directory.display())
                ))
            })?;
        }
        iopath::gate::replace::check_output_directory(directory)
            .map_err(|reason| Refused::usage(format!("--output-dir: {}", for_terminal(reason))))?;
    }
    if let Some(csv) = &args.csv {
        iopath::gate::replace::check_output_directory(csv)
            .map_err(|reason| Refused::usage(format!("--csv: {}", for_terminal(reason))))?;
    }
    Ok(Outputs {
        directory,
        html: file("--html", &args.html)?,
        json: file("--json", &args.json)?,
        csv: args.csv.clone(),
    })
}

/// Prints each phase and round, and saves the state after each.
struct Progress<'a> {
    outputs: &'a Outputs,
    save_error: Option<String>,
}

impl PtsObserver for Progress<'_> {
    fn phase(&mut self, text: &str) {
        eprintln!("pts: {}", for_terminal(text));
    }

    fn round_finished(&mut self, test: &PtsTestResult) {
        let Some(round) = test.rounds.last() else {
            return;
        };
        let figures: Vec<String> = test
            .tracking
            .iter()
            .zip(&round.tracked)
            .map(|(name, value)| format!("{name} {value:.1}"))
            .collect();
        let window = match test.windows.first() {
            Some(window)
                if test.kind != PtsTestKind::Saturation
                    && test.rounds.len() >= WINDOW_ROUNDS
                    && window.average > 0.0 =>
            {
                format!(
                    " · window {}–{}: excursion {:.1} %, slope {:.1} %",
                    window.first_round,
                    round.number,
                    window.excursion / window.average * 100.0,
                    window.slope_excursion / window.average * 100.0
                )
            }
            _ => String::new(),
        };
        eprintln!(
            "pts: {} round {}: {}{window}",
            test.kind.title(),
            round.number,
            for_terminal(figures.join(", "))
        );
    }

    fn checkpoint(&mut self, result: &PtsResult) {
        if let Some(directory) = &self.outputs.directory
            && let Err(error) = write_json(&directory.join(STATE_FILE), result)
        {
            self.save_error = Some(error);
        }
    }
}

fn write_json(path: &Path, result: &PtsResult) -> Result<(), String> {
    let file = OutputFile::check(path).map_err(|error| error.to_string())?;
    file.write(|out| {
        serde_json::to_writer_pretty(&mut *out, result).map_err(std::io::Error::other)?;
        out.write_all(b"\n")
    })
    .map_err(|error| error.to_string())
}

/// Runs the checked plan, writes the report and keeps the result in the history (`keep`).
fn measure(plan: &PtsPlan, state: PtsResult, outputs: &Outputs, keep: bool) -> i32 {
    let stop = match iopath::run::interrupt::install(|forced| {
        std::process::exit(128 + forced.signal);
    }) {
        Ok(stop) => stop,
        Err(error) => {
            return exit::fail(&Failed(format!(
                "cannot install the Ctrl-C handler: {error}"
            )));
        }
    };
    let mut progress = Progress {
        outputs,
        save_error: None,
    };
    progress.checkpoint(&state);
    let outcome = run(plan, state.clone(), &stop, &mut progress);
    let (result, failure) = match outcome {
        Ok(result) => (result, None),
        Err(error) => (state, Some(error)),
    };
    let mut status = write_report(&result, outputs);
    if let Some(error) = progress.save_error {
        eprintln!("error: the state file: {}", for_terminal(error));
        status = status.max(exit::RUN_FAILED);
    }
    print_summary(&result);
    if keep && failure.is_none() {
        record_pts(&result);
    }
    if let Some(error) = failure {
        eprintln!("error: {}", for_terminal(&error));
        return if error.is_bad_input() {
            exit::BAD_INPUT
        } else {
            exit::RUN_FAILED
        };
    }
    if !result.complete || stop.is_raised() {
        eprintln!("interrupted: resume with --resume DIR (the --output-dir of this run)");
        return exit::INTERRUPTED;
    }
    status
}

fn print_summary(result: &PtsResult) {
    for test in &result.tests {
        println!(
            "{}: {}",
            test.kind.title(),
            for_terminal(outcome_text(test))
        );
    }
    let steps = step_rows(result);
    for row in steps.iter().filter(|row| row.element.is_none()) {
        println!(
            "{}: {}",
            row.test.title(),
            for_terminal(step_words(row.step))
        );
    }
    let within: Vec<_> = steps.iter().filter(|row| row.element.is_some()).collect();
    for row in within.iter().take(MAX_ELEMENT_STEPS_SHOWN) {
        println!(
            "{}: {}",
            for_terminal(row.place()),
            for_terminal(step_words(row.step))
        );
    }
    if within.len() > MAX_ELEMENT_STEPS_SHOWN {
        println!(
            "… and {} more elements whose rate stepped down (the report lists them)",
            within.len() - MAX_ELEMENT_STEPS_SHOWN
        );
    }
    for line in &result.conditions.scaled_down {
        println!("scaled down: {}", for_terminal(line));
    }
}

/// Most steps within elements printed at the end (the report lists them all).
const MAX_ELEMENT_STEPS_SHOWN: usize = 5;

fn write_report(result: &PtsResult, outputs: &Outputs) -> i32 {
    let mut errors = Vec::new();
    let mut html_files: Vec<OutputFile> = outputs.html.iter().cloned().collect();
    let mut json_files: Vec<OutputFile> = outputs.json.iter().cloned().collect();
    let mut csv_directories: Vec<PathBuf> = outputs.csv.iter().cloned().collect();
    if let Some(directory) = &outputs.directory {
        match OutputFile::check(&directory.join("pts.html")) {
            Ok(file) => html_files.push(file),
            Err(error) => errors.push(error.to_string()),
        }
        match OutputFile::check(&directory.join(STATE_FILE)) {
            Ok(file) => json_files.push(file),
            Err(error) => errors.push(error.to_string()),
        }
        csv_directories.push(directory.clone());
    }
    for file in &html_files {
        if let Err(error) = file.write(|out| write_pts_html(result, out)) {
            errors.push(error.to_string());
        }
    }
    for file in &json_files {
        if let Err(error) = write_json(file.path(), result) {
            errors.push(error);
        }
    }
    for directory in &csv_directories {
        for (stem, text) in csv_tables(result) {
            let written = OutputFile::check(&directory.join(format!("{stem}.csv")))
                .map_err(|error| error.to_string())
                .and_then(|file| {
                    file.write(|out| out.write_all(text.as_bytes()))
                        .map_err(|error| error.to_string())
                });
            if let Err(error) = written {
                errors.push(error);
            }
        }
    }
    for error in &errors {
        eprintln!("error: {}", for_terminal(error));
    }
    if errors.is_empty() {
        exit::SUCCESS
    } else {
        exit::RUN_FAILED
    }
}
