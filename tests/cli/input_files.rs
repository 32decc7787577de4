//! Files the user names are bounded: job files, their includes and saved results are regular
//! files of limited size (a FIFO or a device is refused at once, never read), and a job file
//! cannot ask for more jobs or threads than the limits allow. Every refusal is exit 2 with a
//! message naming the file and the limit, before any I/O.

use crate::common::*;
use std::io::Read;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Longest any of these runs may take: they all end at once when the limits hold; a FIFO that
/// is read would block for ever.
const HANG: Duration = Duration::from_secs(60);

/// Runs `iopath ARGS` in `dir`; a run still going after [`HANG`] is killed and fails the test.
fn bounded_in(dir: &Path, args: &[&str]) -> RunOutput {
    let mut child = iopath()
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("iopath starts");
    let drain = |mut stream: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = stream.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            panic!("iopath {args:?} was still running after {HANG:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    RunOutput {
        status: status.code().unwrap_or(-1),
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
        json: None,
    }
}

use crate::support::devices::make_fifo;

fn refused(run: &RunOutput, args: &[&str], named: &[&str]) {
    assert_eq!(run.status, 2, "{args:?}: {}", run.stderr);
    for name in named {
        assert!(
            run.stderr.contains(name),
            "{args:?}: the message should name {name}: {}",
            run.stderr
        );
    }
    assert!(!run.stderr.contains("panicked"), "{args:?}: {}", run.stderr);
}

#[test]
fn fifos_and_devices_are_refused_as_job_files_includes_and_results() {
    let dir = tempfile::tempdir().unwrap();
    make_fifo(&dir.path().join("fifo.fio"));
    make_fifo(&dir.path().join("fifo.toml"));
    make_fifo(&dir.path().join("fifo.json"));
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.toml")).unwrap();
    std::fs::write(
        dir.path().join("includes-fifo.fio"),
        "[job]\ninclude fifo.fio\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("includes-zero.fio"),
        "[job]\ninclude /dev/zero\n",
    )
    .unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (&["run", "--job", "fifo.fio"], &["fifo.fio", "(FIFO)"]),
        (&["run", "--job", "fifo.toml"], &["fifo.toml", "(FIFO)"]),
        (
            &["run", "--job", "/dev/zero"],
            &["/dev/zero", "a character device"],
        ),
        (
            &["run", "--job", "zero.toml"],
            &["zero.toml", "a character device"],
        ),
        (
            &["run", "--job", "includes-fifo.fio"],
            &["includes-fifo.fio:2", "fifo.fio", "(FIFO)"],
        ),
        (
            &["job", "check", "includes-zero.fio"],
            &["includes-zero.fio:2", "/dev/zero", "a character device"],
        ),
        (&["run", "--job", "."], &["a directory"]),
        (
            &["compare", "fifo.json", "/dev/zero"],
            &["fifo.json", "(FIFO)"],
        ),
        (&["report", "fifo.json", "-o", "r.html"], &["fifo.json"]),
    ];
    for (args, named) in cases {
        refused(&bounded_in(dir.path(), args), args, named);
    }
    assert!(!dir.path().join("r.html").exists());
}

#[test]
fn oversized_job_files_and_results_are_refused_naming_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let big = |name: &str, size: u64| {
        let file = std::fs::File::create(dir.path().join(name)).unwrap();
        file.set_len(size).unwrap();
    };
    big("big.fio", (16 << 20) + 1);
    big("big.toml", (1 << 20) + 1);
    big("big.json", (256 << 20) + 1);
    std::fs::write(dir.path().join("small.fio"), "[job]\ninclude big.fio\n").unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (&["run", "--job", "big.fio"], &["big.fio", "16 MiB"]),
        (
            &["job", "convert", "big.toml"],
            &["big.toml", "1 MiB", "TOML job file"],
        ),
        (
            &["run", "--job", "small.fio"],
            &["small.fio:2", "big.fio", "16 MiB"],
        ),
        (
            &["compare", "big.json", "big.json"],
            &["big.json", "256 MiB"],
        ),
    ];
    for (args, named) in cases {
        refused(&bounded_in(dir.path(), args), args, named);
    }
}

#[test]
fn thousands_of_sections_are_refused_unless_the_limit_is_raised() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("[global]\nioengine=null\nsize=1m\nruntime=1\ntime_based\n");
    for number in 0..9000 {
        text.push_str(&format!("[j{number}]\nfilename=shared.dat\n"));
    }
    std::fs::write(dir.path().join("many.fio"), &text).unwrap();
    let args = ["run", "--job", "many.fio"];
    let run = bounded_in(dir.path(), &args);
    refused(
        &run,
        &args,
        &["many.fio", "[j1024]", "1024 jobs", "--max-jobs"],
    );
    assert_eq!(list_dir(dir.path()), ["many.fio"], "files were created");

    // The same file is accepted with higher limits (checked, not run): its 9000 jobs run
    // together, one worker thread each.
    let args = ["job", "check", "many.fio", "--max-jobs", "9000"];
    let run = bounded_in(dir.path(), &args);
    refused(
        &run,
        &args,
        &["many.fio:", "4097 worker threads", "--max-threads"],
    );
    let args = [&args[..], &["--max-threads", "9000"]].concat();
    let run = bounded_in(dir.path(), &args);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains("9000 jobs"), "{}", run.stdout);

    let toml: String = (0..1025)
        .map(|n| format!("[[test]]\nname = \"t{n}\"\nrw = \"read\"\n"))
        .collect();
    std::fs::write(dir.path().join("many.toml"), toml).unwrap();
    let args = ["job", "check", "many.toml"];
    refused(
        &bounded_in(dir.path(), &args),
        &args,
        &["many.toml:", "1024 jobs"],
    );
}

#[test]
fn too_many_worker_threads_are_refused_before_any_thread_starts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("threads.fio"),
        "[a]\nioengine=null\nsize=1m\nnumjobs=4000\nfilename=f\n[b]\nioengine=null\nsize=1m\nnumjobs=200\nfilename=f\n",
    )
    .unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["run", "--job", "threads.fio"],
            &["threads.fio:6", "4200 worker threads", "--max-threads"],
        ),
        (
            &[
                "run",
                "t.dat",
                "--size",
                "1m",
                "--engine",
                "sync",
                "--qd",
                "64",
                "--workers",
                "128",
            ],
            &["8192 worker threads", "4096"],
        ),
        (
            &[
                "run",
                "t.dat",
                "--size",
                "1m",
                "--engine",
                "null",
                "--workers",
                "64",
                "--max-threads",
                "32",
            ],
            &["64 worker threads", "more than 32"],
        ),
    ];
    for (args, named) in cases {
        refused(&bounded_in(dir.path(), args), args, named);
    }
    assert_eq!(list_dir(dir.path()), ["threads.fio"], "files were created");
    let run = bounded_in(
        dir.path(),
        &["job", "check", "threads.fio", "--max-threads", "5000"],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
}
