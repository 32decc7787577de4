//! iopath's TOML job files through the real binary: running them, their errors, `iopath job
//! check`, and `iopath job convert` issuing exactly the I/O of the file it converts.

use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::Command;

/// What one command did.
struct Outcome {
    status: i32,
    stdout: String,
    stderr: String,
}

impl Outcome {
    /// Asserts the exit status, showing the output when it differs.
    fn expect_status(self, status: i32) -> Self {
        assert_eq!(
            self.status, status,
            "stdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// Runs `iopath ARGS` in `dir`.
fn iopath(dir: &Path, args: &[&str]) -> Outcome {
    let output = Command::new(env!("CARGO_BIN_EXE_iopath"))
        .current_dir(dir)
        .env(
            "IOPATH_HISTORY",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/history.sqlite"),
        )
        .args(args)
        .output()
        .expect("iopath runs");
    Outcome {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A directory on the build's disk (O_DIRECT works there, unlike on some tmpfs).
fn work_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// Two tests, the second with two jobs at once: Iometer lines with bursts and a delay, zipf
/// offsets, a start delay and think time.
const TWO_TESTS: &str = r#"
targets = [{ path = "data.bin", size = "8m" }]

[defaults]
duration = "300ms"
ramp = 0

[[test]]
name = "sequential reads"
rw = "read"
bs = "64k"
qd = 4

[[test]]
name = "reads and writes"
distribution = "zipf:1.1"

[[test.job]]
name = "reader"
rw = "randread"
bs = "4k"
qd = 8
workers = 2

[[test.job]]
name = "writer"
group = 1
spec = "4k:60:0:100, 16k:40:20:50:4k:4:100us"
think-time = "50us"
think-blocks = 16
start-delay = "10ms"
"#;

#[test]
fn a_toml_job_with_two_tests_runs() {
    let dir = work_dir();
    fs::write(dir.path().join("job.toml"), TWO_TESTS).unwrap();
    iopath(
        dir.path(),
        &["run", "--job", "job.toml", "--json", "out.json"],
    )
    .expect_status(0);
    let json: Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("out.json")).unwrap()).unwrap();
    let names: Vec<&str> = json["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .map(|test| test["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["sequential reads", "reads and writes"]);
    let jobs: Vec<&str> = json["tests"][1]["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .filter_map(|job| job["name"].as_str())
        .collect();
    assert_eq!(jobs, ["reader", "writer"]);
}

#[test]
fn a_bad_key_is_refused_with_its_file_and_line() {
    let dir = work_dir();
    let text = "[[test]]\nrw = \"randread\"\n\nqueue-depth = 32\n";
    fs::write(dir.path().join("bad.toml"), text).unwrap();
    let outcome = iopath(dir.path(), &["run", "--job", "bad.toml"]).expect_status(2);
    assert!(
        outcome
            .stderr
            .contains("bad.toml:4: unknown key 'queue-depth'"),
        "{}",
        outcome.stderr
    );
    let text = "[defaults]\nbs = \"4kk\"\n[[test]]\n";
    fs::write(dir.path().join("value.toml"), text).unwrap();
    let outcome = iopath(dir.path(), &["run", "--job", "value.toml"]).expect_status(2);
    assert!(
        outcome.stderr.contains("value.toml:2: bs:") && outcome.stderr.contains("4kk"),
        "{}",
        outcome.stderr
    );
    assert!(
        fs::read_dir(dir.path()).unwrap().count() == 2,
        "nothing was created"
    );
}

#[test]
fn job_check_lists_a_good_file_and_refuses_a_bad_one() {
    let dir = work_dir();
    fs::write(dir.path().join("job.toml"), TWO_TESTS).unwrap();
    let outcome = iopath(dir.path(), &["job", "check", "job.toml"]).expect_status(0);
    for expected in [
        "2 tests, 3 jobs, 1 target",
        "data.bin (will be created, 8m)",
        "sequential reads",
        "reader",
        "writer [group 1]",
    ] {
        assert!(
            outcome.stdout.contains(expected),
            "{expected}:\n{}",
            outcome.stdout
        );
    }
    assert!(
        !dir.path().join("data.bin").exists(),
        "check does no I/O and creates nothing"
    );

    let missing = "[[test]]\nrw = \"read\"\ntargets = [\"no-such.dat\"]\n";
    fs::write(dir.path().join("missing.toml"), missing).unwrap();
    let outcome = iopath(dir.path(), &["job", "check", "missing.toml"]).expect_status(2);
    assert!(
        outcome
            .stderr
            .contains("missing.toml:3: targets: no-such.dat"),
        "{}",
        outcome.stderr
    );

    let too_small = "[[test]]\nbs = \"1m\"\ntargets = [{ path = \"s.dat\", size = \"64k\" }]\n";
    fs::write(dir.path().join("small.toml"), too_small).unwrap();
    let outcome = iopath(dir.path(), &["job", "check", "small.toml"]).expect_status(2);
    assert!(
        outcome.stderr.contains("smaller than the block size"),
        "{}",
        outcome.stderr
    );
}

/// Runs `job` with a byte count on the null engine and returns its I/O trace.
fn traced(dir: &Path, job: &str, trace: &str, extra: &[&str]) -> String {
    traced_with(dir, job, trace, "null", extra)
}

/// Like [`traced`], with the given engine.
fn traced_with(dir: &Path, job: &str, trace: &str, engine: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "run",
        "--job",
        job,
        "--engine",
        engine,
        "--bytes",
        "1m",
        "--trace-io",
        trace,
    ];
    args.extend_from_slice(extra);
    iopath(dir, &args).expect_status(0);
    fs::read_to_string(dir.join(trace)).unwrap()
}

#[test]
fn a_toml_file_and_its_conversion_issue_the_same_io() {
    let dir = work_dir();
    fs::write(dir.path().join("a.toml"), TWO_TESTS).unwrap();
    let converted = iopath(dir.path(), &["job", "convert", "a.toml"]).expect_status(0);
    assert!(converted.stdout.starts_with("# Converted from a.toml"));
    fs::write(dir.path().join("b.toml"), &converted.stdout).unwrap();
    let original = traced(dir.path(), "a.toml", "a.csv", &[]);
    let again = traced(dir.path(), "b.toml", "b.csv", &[]);
    assert!(original.lines().count() > 100, "{original}");
    assert!(original.lines().any(|line| line.starts_with("1,2,write")));
    assert_eq!(original, again);
    let other_seed = traced(dir.path(), "a.toml", "c.csv", &["--seed", "9"]);
    assert_ne!(original, other_seed, "the trace depends on the seed");
    let again = traced(dir.path(), "b.toml", "d.csv", &["--seed", "9"]);
    assert_eq!(other_seed, again);
}

#[test]
fn a_fio_file_and_its_conversion_issue_the_same_io() {
    let dir = work_dir();
    let fio = "\
[global]
filename=data.bin
size=8m
direct=1

[random-reads]
rw=randread
bs=4k
iodepth=8

[mixed]
stonewall
rw=randrw
rwmixread=70
bssplit=4k/50:64k/50
iodepth=4
";
    fs::write(dir.path().join("a.fio"), fio).unwrap();
    let converted = iopath(
        dir.path(),
        &["job", "convert", "a.fio", "--ignore-unsupported"],
    );
    let converted = converted.expect_status(0);
    fs::write(dir.path().join("b.toml"), &converted.stdout).unwrap();
    iopath(dir.path(), &["job", "check", "b.toml"]).expect_status(0);
    let lenient = ["--ignore-unsupported"];
    // A real engine: the null engine lets a fio job shrink its files to one block.
    let original = traced_with(dir.path(), "a.fio", "a.csv", "sync", &lenient);
    let again = traced_with(dir.path(), "b.toml", "b.csv", "sync", &[]);
    assert!(original.lines().count() > 100, "{original}");
    assert_eq!(original, again);
}

#[test]
fn control_characters_of_a_fio_file_are_escaped_in_its_conversion_and_messages() {
    let dir = work_dir();
    // An ignored option whose value holds ESC and BEL, in a file whose name holds a line break
    // (which would end a comment and start a TOML line).
    let name = "evil\ntargets = 1.fio";
    fs::write(
        dir.path().join(name),
        "[global]\nbs=4k\nfoo_unknown=x\u{1b}[2J\u{7}y\n[reader]\nrw=randread\nsize=1m\n\
         filename=data\u{1b}.bin\n",
    )
    .unwrap();
    let converted = iopath(
        dir.path(),
        &["job", "convert", name, "--ignore-unsupported"],
    )
    .expect_status(0)
    .stdout;
    assert!(converted.contains("x\\u{1b}[2J\\u{7}y"), "{converted}");
    assert!(converted.contains("evil\\ntargets = 1.fio"), "{converted}");
    let parsed: toml::Table = toml::from_str(&converted)
        .unwrap_or_else(|error| panic!("the conversion does not parse: {error}\n{converted}"));
    assert!(parsed.contains_key("test"), "{converted}");
    fs::write(dir.path().join("converted.toml"), &converted).unwrap();
    iopath(dir.path(), &["job", "check", "converted.toml"]).expect_status(0);

    // A value echoed in an error reaches the terminal escaped.
    fs::write(
        dir.path().join("bad.fio"),
        "[job]\nrw=randread\nbs=4k\u{1b}[2J\nsize=1m\n",
    )
    .unwrap();
    let refused = iopath(dir.path(), &["run", "--job", "bad.fio"]).expect_status(2);
    assert!(!refused.stderr.contains('\u{1b}'), "{:?}", refused.stderr);
    assert!(
        refused.stderr.contains("4k\\u{1b}[2J"),
        "{}",
        refused.stderr
    );
}
