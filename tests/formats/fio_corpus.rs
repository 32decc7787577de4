//! fio's own example job files (`../shared/fio-examples`), run through the real binary with a
//! short duration and a small size: each either runs — exit 0, a JSON result whose jobs are the
//! file's jobs, in order — or is refused — exit 2, stderr naming FILE:LINE and the option.
//!
//! Files that name a device or a directory that does not exist here, or a character device
//! (`/dev/null`), get a target on the command line (like fio's `--filename`), or a directory
//! (like fio's `--directory`) when their jobs name files of their own in it. One file is
//! adapted: `1mbs_clients.fio` starts its 32 jobs up to 124 s apart, so its start delays are
//! read in tens of milliseconds instead of seconds.
//! `nbd.fio` runs against a real nbdkit memory export when nbdkit is installed (its `$uri`
//! points there); `libiscsi.fio` names a portal on 127.0.0.1 where no iSCSI target listens, so
//! it must get as far as trying to log in to the LUN its escaped `filename` names.
//!
//! Without the corpus or nbdkit the tests are skipped, or fail under CI (tests/support).
//!
//! job files laid out as fio's examples of its file-operation engines are run and
//! compared with fio in [`file_engines`].
//!
//! fio's regression job files (`../shared/fio-t-jobs`) run here too, held to fio's own success
//! checks: [`t_jobs`].

use crate::support;

#[path = "fio_corpus/file_engines.rs"]
mod file_engines;
#[path = "fio_corpus/runs_test.rs"]
mod runs_test;
#[path = "fio_corpus/t_job_checks.rs"]
mod t_job_checks;
#[path = "fio_corpus/t_jobs.rs"]
mod t_jobs;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a corpus file should do.
enum Expect {
    /// Exit 0 with a result.
    Runs,
    /// Exit 2 naming this line and option.
    Refused { line: usize, option: &'static str },
    /// Mapped, but the server it names is not there: exit 2 naming it, no result.
    NeedsServer { names: &'static str },
    /// Runs against an nbdkit memory export when nbdkit is installed, else is refused at the
    /// line of its (then empty) `uri`.
    RunsOnNbdkit { uri_line: usize },
}

/// How a file is run.
struct Case {
    file: &'static str,
    expect: Expect,
    /// Give `target.dat` on the command line (the file names a device or missing directory).
    target: bool,
    /// Give the directory `scratch` on the command line instead (like fio's `--directory`).
    directory: bool,
    /// `--size` (16m unless a file needs less to stay fast).
    size: &'static str,
}

const fn runs(file: &'static str) -> Case {
    Case {
        file,
        expect: Expect::Runs,
        target: false,
        directory: false,
        size: "16m",
    }
}

const fn runs_on_target(file: &'static str) -> Case {
    Case {
        target: true,
        ..runs(file)
    }
}

const fn runs_in_directory(file: &'static str) -> Case {
    Case {
        directory: true,
        ..runs(file)
    }
}

/// enospc-pressure.fio in `scratch`, with room enough: its files are named in the directory,
/// no job has an error, the punch-hole job trims, and the verifier — rw=randrw on a file
/// `create_on_open` starts empty, on libaio (io_uring) — checks blocks and finds none bad; its
/// reads past what its writes laid out complete with no data, as in fio.
fn enospc_pressure_result(work: &Path, result: &Value) {
    assert!(work.join("scratch/raicer").is_file());
    assert!(work.join("scratch/aio-dio-verifier").is_file());
    let jobs = result["tests"][0]["jobs"].as_array().unwrap();
    for job in jobs {
        assert_eq!(job["errors"]["count"], 0, "{job}");
    }
    assert!(
        jobs[1]["trim"]["io_count"].as_u64().unwrap() > 0,
        "{}",
        jobs[1]
    );
    let verifier = &jobs[2];
    let verification = &verifier["verification"];
    assert_eq!(verification["kind"], "crc32c", "{verification}");
    assert!(
        verification["blocks_checked"].as_u64().unwrap() > 0,
        "{verification}"
    );
    assert_eq!(verification["mismatch_count"], 0, "{verification}");
    let reads = verifier["read"]["io_count"].as_u64().unwrap();
    let read_bytes = verifier["read"]["bytes"].as_u64().unwrap();
    assert!(
        read_bytes < reads * 4096,
        "{reads} reads, {read_bytes} bytes"
    );
}

/// fio's examples (`../shared/fio-examples`, tests/support/corpus.rs), or `None` after a skip.
fn corpus_dir() -> Option<PathBuf> {
    support::corpus::shared_dir("fio-examples")
}

/// Section names other than `[global]`, in order.
fn job_names(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter_map(|line| line.strip_prefix('[')?.strip_suffix(']'))
        .filter(|name| *name != "global")
        .map(str::to_string)
        .collect()
}

/// An nbdkit serving a 256 MiB memory export on a Unix socket, stopped when dropped.
struct Nbdkit {
    child: std::process::Child,
    uri: String,
}

impl Nbdkit {
    /// Starts nbdkit in `dir`, or `None` when it is not installed.
    fn start(dir: &Path) -> Option<Nbdkit> {
        let socket = dir.join("nbd.sock");
        let child = Command::new("nbdkit")
            .args(["-f", "-U"])
            .arg(&socket)
            .args(["memory", "size=256M"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let started = Instant::now();
        while !socket.exists() && started.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Nbdkit {
            child,
            uri: format!("nbd+unix:///?socket={}", socket.display()),
        })
    }
}

impl Drop for Nbdkit {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `iopath ARGS` in `dir` with `uri` in its environment, killing it after a minute.
fn run_iopath(dir: &Path, args: &[String], uri: Option<&str>) -> (i32, String) {
    let mut command = support::history::command(env!("CARGO_BIN_EXE_iopath"));
    command.env_remove("uri");
    if let Some(uri) = uri {
        command.env("uri", uri);
    }
    command.current_dir(dir).args(args);
    support::run_with_limit(&mut command, Duration::from_secs(60))
}

fn check(case: Case) {
    let Some(corpus) = corpus_dir() else { return };
    let source = corpus.join(case.file);
    let text = std::fs::read_to_string(&source).expect("corpus file reads");
    let scratch = support::scratch::Scratch::fresh(
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("fio-corpus"),
        case.file.trim_end_matches(".fio"),
    );
    let work = scratch.path();
    let job_file = if case.file == "1mbs_clients.fio" {
        // Seconds become tens of milliseconds: the jobs still start one after the other.
        std::fs::create_dir_all(work.join("tmp")).unwrap();
        let adapted: String = text
            .lines()
            .map(|line| match line.strip_prefix("startdelay=") {
                Some(seconds) => format!("startdelay={}0ms\n", seconds.trim()),
                None => format!("{line}\n"),
            })
            .collect();
        let path = work.join(case.file);
        std::fs::write(&path, adapted).unwrap();
        path
    } else {
        source.clone()
    };
    let json = work.join("out.json");
    let mut args: Vec<String> = [
        "run",
        "--job",
        job_file.to_str().unwrap(),
        "--duration",
        "0.3",
        "--ramp",
        "0",
        "--size",
        case.size,
        "--json",
        json.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec();
    if case.target {
        args.push("target.dat".into());
    }
    if case.directory {
        std::fs::create_dir_all(work.join("scratch")).unwrap();
        args.push("scratch".into());
    }
    let nbdkit = match case.expect {
        Expect::RunsOnNbdkit { .. } => Nbdkit::start(work),
        _ => None,
    };
    if nbdkit.is_some() {
        // The export is nbdkit's memory, made for this test.
        args.push("--allow-destructive".into());
    }
    let (status, stderr) = run_iopath(work, &args, nbdkit.as_ref().map(|n| n.uri.as_str()));
    let expect = match (case.expect, &nbdkit) {
        (Expect::RunsOnNbdkit { .. }, Some(_)) => Expect::Runs,
        (Expect::RunsOnNbdkit { uri_line }, None) => {
            support::skip(format_args!(
                "nbdkit is not installed (apt-get install nbdkit): {} is only checked for its \
                 refusal",
                case.file
            ));
            Expect::Refused {
                line: uri_line,
                option: "uri",
            }
        }
        (expect, _) => expect,
    };
    match expect {
        Expect::RunsOnNbdkit { .. } => unreachable!("resolved above"),
        Expect::NeedsServer { names } => {
            assert_eq!(status, 2, "{}: exit {status}\n{stderr}", case.file);
            assert!(
                stderr.contains(names),
                "{}: expected '{names}' in:\n{stderr}",
                case.file
            );
            let result = std::fs::read_to_string(&json).unwrap_or_default();
            assert!(
                serde_json::from_str::<Value>(&result).is_err(),
                "{}: wrote a result without a server",
                case.file
            );
        }
        Expect::Runs => {
            assert_eq!(status, 0, "{}: exit {status}\n{stderr}", case.file);
            let result: Value =
                serde_json::from_str(&std::fs::read_to_string(&json).expect("JSON written"))
                    .expect("valid JSON");
            let tests = result["tests"].as_array().expect("tests[]");
            assert!(!tests.is_empty(), "{}: no test", case.file);
            let mut names = Vec::new();
            for test in tests {
                assert!(
                    test["name"].is_string(),
                    "{}: test without a name",
                    case.file
                );
                for job in test["jobs"].as_array().expect("tests[].jobs[]") {
                    assert!(job["group"].is_u64(), "{}: job without a group", case.file);
                    names.push(job["name"].as_str().expect("job name").to_string());
                }
            }
            assert_eq!(names, job_names(&text), "{}: job names", case.file);
            if case.file == "enospc-pressure.fio" {
                enospc_pressure_result(work, &result);
            }
        }
        Expect::Refused { line, option } => {
            assert_eq!(status, 2, "{}: exit {status}\n{stderr}", case.file);
            let place = format!("{}:{line}:", job_file.display());
            assert!(
                stderr.contains(&place) && stderr.contains(option),
                "{}: expected {place} and '{option}' in:\n{stderr}",
                case.file
            );
            assert!(
                !json.exists(),
                "{}: a refused file wrote a result",
                case.file
            );
        }
    }
}

macro_rules! corpus {
    ($($test:ident => $case:expr;)*) => {
        $(
            #[test]
            fn $test() {
                check($case);
            }
        )*

        /// Every file of the corpus has a case above.
        #[test]
        fn every_corpus_file_has_a_case() {
            let Some(corpus) = corpus_dir() else { return };
            let known: Vec<&str> = vec![$($case.file),*];
            let files = support::corpus::fio_files(&corpus);
            for file in &files {
                assert!(known.contains(&file.as_str()), "{file} has no case");
            }
            assert_eq!(files.len(), 30, "30 job files (and a README)");
        }
    };
}

corpus! {
    mbs_clients => Case { size: "1m", ..runs("1mbs_clients.fio") };
    aio_read => runs_on_target("aio-read.fio");
    backwards_read => runs("backwards-read.fio");
    basic_verify => runs_on_target("basic-verify.fio");
    butterfly => runs_on_target("butterfly.fio");
    enospc_pressure => runs_in_directory("enospc-pressure.fio");
    example_latency_steadystate => runs_on_target("example_latency_steadystate.fio");
    fio_rand_rw => runs("fio-rand-RW.fio");
    fio_rand_read => runs("fio-rand-read.fio");
    fio_rand_write => runs("fio-rand-write.fio");
    fio_seq_rw => runs("fio-seq-RW.fio");
    fio_seq_read => runs("fio-seq-read.fio");
    fio_seq_write => runs("fio-seq-write.fio");
    fixed_rate_submission => runs("fixed-rate-submission.fio");
    iometer_file_access_server => runs("iometer-file-access-server.fio");
    jesd219 => runs_on_target("jesd219.fio");
    latency_profile => runs_on_target("latency-profile.fio");
    libiscsi => Case {
        expect: Expect::NeedsServer { names: "iqn.2016-02.com.fio:system:fio" },
        ..runs("libiscsi.fio")
    };
    nbd => Case { expect: Expect::RunsOnNbdkit { uri_line: 22 }, ..runs("nbd.fio") };
    null => runs("null.fio");
    numa => runs_on_target("numa.fio");
    poisson_rate_submission => runs("poisson-rate-submission.fio");
    rand_zones => runs("rand-zones.fio");
    sequence_distribution => runs("sequence-distribution.fio");
    ssd_steadystate => runs_on_target("ssd-steadystate.fio");
    ssd_test => runs_on_target("ssd-test.fio");
    steadystate => runs_on_target("steadystate.fio");
    surface_scan => runs_on_target("surface-scan.fio");
    tiobench_example => Case { size: "4m", ..runs("tiobench-example.fio") };
    zipf => runs("zipf.fio");
}

/// fio's flow semantics under `flow_sleep`: a job ahead of its share sleeps that long and
/// gives its CPU to the jobs behind, so three flows 1 : 5 : 10 with `flow_sleep=100` (µs) on the
/// null engine keep their ratio while the fastest issues a fair share of the 10 000 I/Os a
/// second that one sleep per I/O allows (fio ran about 11 800 here). When the wait spun instead,
/// more workers than free cores starved those behind, and the fastest flow ran some 40 IOPS.
#[test]
fn timing_flow_sleep_keeps_flows_near_their_sleep_bound() {
    let dir = tempfile::Builder::new()
        .prefix("flow-sleep-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let job = "[global]\nbs=4k\nioengine=null\nsize=100g\nruntime=2\nflow_id=1\nflow_sleep=100\n\
               thread\ntime_based\n[flow1]\nflow=1\n[flow2]\nflow=5\n[flow3]\nflow=10\n";
    std::fs::write(dir.path().join("flows.fio"), job).unwrap();
    let args: Vec<String> = "run --job flows.fio --json out.json --no-history"
        .split_whitespace()
        .map(String::from)
        .collect();
    let (status, stderr) = run_iopath(dir.path(), &args, None);
    assert_eq!(status, 0, "{stderr}");
    let text = std::fs::read_to_string(dir.path().join("out.json")).unwrap();
    let result: Value = serde_json::from_str(&text).expect("a RunResult");
    let iops: Vec<f64> = result["tests"][0]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|job| job["read"]["iops"].as_f64().unwrap())
        .collect();
    let ratio = iops[2] / iops[0];
    assert!((7.0..=13.0).contains(&ratio), "flow 3 / flow 1: {iops:?}");
    let sleep_bound = 1e6 / 100.0;
    assert!(
        iops[2] >= 0.2 * sleep_bound,
        "the fastest flow ran {:.0} IOPS, under a fifth of the {sleep_bound:.0} its sleep allows: {iops:?}",
        iops[2]
    );
}
