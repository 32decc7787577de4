//! Real-world fio job files (`../shared/fio-real-world`, found through tests/support/corpus.rs: Kubernetes storage benchmarks, cloud
//! vendors' and database vendors' disk checks, SPDK, ZFS, PerfKitBenchmarker, Phoronix,
//! fio-plot, Ceph, NAS tests …), run through the real binary with a short duration and a small
//! size, the files unchanged: each either runs — exit 0, a JSON result whose jobs are the file's
//! jobs, in order — or is refused as listed below — exit 2, stderr naming FILE:LINE and what is
//! refused, no result. A file that starts to run or to be refused differently fails its test,
//! so both a regression and a newly supported option show up here (then move the file from
//! refused to runs, and update docs/fio-compatibility.md).
//!
//! Each file starts with a comment naming its project and source. Its header may say
//! `# compare-target: …` (the file names a device or a directory that is not here, so the run
//! gets `target.dat` on the command line, like fio's `--filename`) and `# compare-env: K=V …`
//! (environment variables the file reads as `${K}`; `@DIR` is the run's directory).
//! scripts/compare-real-world reads the same headers and compares the figures with fio's.
//!
//! One adaptation: a `startdelay` is read in tens of milliseconds instead of seconds
//! (`startdelay=30s` becomes `startdelay=300ms`), as tests/formats/fio_corpus.rs does, so that
//! the test stays short; the adapted copy keeps every line where it was.

use crate::support;

#[path = "fio_real_world/public.rs"]
mod public;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a corpus file does.
enum Expect {
    /// Exit 0 with a result.
    Runs,
    /// A result, and exit 0 or 1 where 1 comes only from job `job` ending on `errno` (as its
    /// fio job ends on the same error: xfstests' mmap job with `direct=1` gets `EIO` from
    /// `msync` when the other jobs' O_DIRECT writes leave its pages stale).
    RunsOrJobEndsOn {
        job: &'static str,
        errno: &'static str,
    },
    /// Exit 2 naming this line and containing `what` (the option, or the message); `why` says
    /// what iopath lacks, for the reader of this list.
    Refused {
        line: usize,
        what: &'static str,
        why: &'static str,
    },
}

const fn refused(line: usize, what: &'static str, why: &'static str) -> Expect {
    Expect::Refused { line, what, why }
}

/// The corpus (`../shared/fio-real-world`, tests/support/corpus.rs), or `None` after a skip.
fn corpus_dir() -> Option<PathBuf> {
    support::corpus::shared_dir("fio-real-world")
}

/// The value of the first `# compare-KEY:` header line.
fn header<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let prefix = format!("compare-{key}:");
    text.lines()
        .filter_map(|line| line.strip_prefix('#').or_else(|| line.strip_prefix(';')))
        .find_map(|line| line.trim().strip_prefix(prefix.as_str()))
        .map(str::trim)
}

/// The job-file text without its comments (`#` or `;` end a line), trimmed.
fn content(line: &str) -> &str {
    line.split(['#', ';']).next().unwrap_or("").trim()
}

/// The names of the file's jobs, in order: a section's own `name=`, else its section name.
fn job_names(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut in_job = false;
    for line in text.lines() {
        let line = line.trim();
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            in_job = section != "global";
            if in_job {
                names.push(section.to_string());
            }
        } else if let Some(name) = content(line).strip_prefix("name=")
            && in_job
        {
            *names.last_mut().expect("a job") = name.trim().to_string();
        }
    }
    names
}

/// The file with every `startdelay` read in tens of milliseconds (20 → 200ms, 30s → 300ms).
fn with_short_start_delays(text: &str) -> String {
    with_start_delays_as(text, "0ms")
}

/// The file with every `startdelay` of whole seconds given `unit` instead (`"ms"`: 210 →
/// 210ms), each line where it was.
fn with_start_delays_as(text: &str, unit: &str) -> String {
    text.lines()
        .map(|line| match content(line).strip_prefix("startdelay=") {
            Some(value) => {
                let seconds = value.trim().trim_end_matches('s');
                assert!(
                    seconds.chars().all(|c| c.is_ascii_digit()),
                    "startdelay '{value}' is not whole seconds: adapt this test"
                );
                format!("startdelay={seconds}{unit}\n")
            }
            None => format!("{line}\n"),
        })
        .collect()
}

/// Runs `iopath ARGS` in `dir` with `env`, killing it after [`HANG_GUARD`].
///
/// At a raised priority (`support::priority`): a few files make the run's preparation large
/// whatever `--size` says (dbench's `offset_increment=500M` over 4 jobs lays out a 1.5 GiB
/// file; GCP's 16 jobs at QD 64 of 1 MiB fill 1 GiB of buffers, slow in this unoptimised
/// build), and with a CPU hog on each core at the same priority that took 90 s.
fn run_iopath(dir: &Path, args: &[String], env: &[(String, String)]) -> (i32, String) {
    let mut command = support::priority::measured_command(env!("CARGO_BIN_EXE_iopath"));
    command
        .current_dir(dir)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)));
    support::run_with_limit(&mut command, HANG_GUARD)
}

/// Longest a run of one file may take before it counts as hung: the largest preparations
/// above take some 10 s on a quiet machine, a shared disk under other engineers' builds can
/// make a file's layout several times slower.
const HANG_GUARD: Duration = Duration::from_secs(120);

fn check(file: &str, expect: Expect) {
    let Some(corpus) = corpus_dir() else { return };
    let source = corpus.join(file);
    let text = std::fs::read_to_string(&source).expect("corpus file reads");
    let scratch = support::scratch::Scratch::fresh(
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("fio-real-world"),
        file.trim_end_matches(".fio"),
    );
    let work = scratch.path();

    let env: Vec<(String, String)> = header(&text, "env")
        .unwrap_or("")
        .split_whitespace()
        .map(|pair| {
            let (key, value) = pair.split_once('=').expect("compare-env holds K=V pairs");
            (
                key.to_string(),
                value.replace("@DIR", work.to_str().unwrap()),
            )
        })
        .collect();
    // A relative directory the file names is made first, as its users do (etcd's test-data).
    for line in text.lines() {
        if let Some(directory) = content(line).strip_prefix("directory=")
            && !directory.starts_with(['/', '$'])
        {
            std::fs::create_dir_all(work.join(directory)).unwrap();
        }
    }
    let job_file = if text.lines().any(|l| content(l).starts_with("startdelay=")) {
        let adapted = work.join(file);
        std::fs::write(&adapted, with_short_start_delays(&text)).unwrap();
        adapted
    } else {
        source
    };

    let json = work.join("out.json");
    let mut args: Vec<String> = ["run", "--job", job_file.to_str().unwrap()]
        .map(String::from)
        .to_vec();
    if header(&text, "target").is_some() {
        args.push("target.dat".into());
    }
    args.extend(
        [
            "--duration",
            "0.3",
            "--ramp",
            "0",
            "--size",
            "4m",
            "--json",
            json.to_str().unwrap(),
        ]
        .map(String::from),
    );
    let (status, stderr) = run_iopath(work, &args, &env);

    judge(
        file,
        expect,
        Run {
            status,
            stderr: &stderr,
            json: &json,
            job_file: &job_file,
            text: &text,
        },
    );
}

/// What one run of a corpus file left.
struct Run<'a> {
    status: i32,
    stderr: &'a str,
    /// The RunResult JSON file asked for.
    json: &'a Path,
    /// The job file run (the corpus file, or its adapted copy).
    job_file: &'a Path,
    /// The corpus file's text.
    text: &'a str,
}

/// Holds the run of `file` to `expect`.
fn judge(file: &str, expect: Expect, run: Run<'_>) {
    let Run {
        status,
        stderr,
        json,
        job_file,
        text,
    } = run;
    if let Expect::RunsOrJobEndsOn { job, errno } = expect
        && status == 1
    {
        let result: Value =
            serde_json::from_str(&std::fs::read_to_string(json).expect("JSON written"))
                .expect("valid JSON");
        for test in result["tests"].as_array().expect("tests[]") {
            for ended in test["jobs"].as_array().expect("tests[].jobs[]") {
                let stop = ended["stop_reason"].as_str().unwrap_or_default();
                let name = ended["name"].as_str().unwrap_or_default();
                assert!(
                    stop != "error" || name == job,
                    "{file}: job {name} ended on an error\n{stderr}"
                );
            }
            for kind in test["errors"]["by_kind"].as_array().into_iter().flatten() {
                assert_eq!(kind["name"], errno, "{file}: {kind}\n{stderr}");
            }
        }
    }
    match expect {
        Expect::RunsOrJobEndsOn { .. } if status == 1 => {}
        Expect::Runs | Expect::RunsOrJobEndsOn { .. } => {
            assert_eq!(status, 0, "{file}: exit {status}\n{stderr}");
            let result: Value =
                serde_json::from_str(&std::fs::read_to_string(json).expect("JSON written"))
                    .expect("valid JSON");
            let mut names = Vec::new();
            for test in result["tests"].as_array().expect("tests[]") {
                for job in test["jobs"].as_array().expect("tests[].jobs[]") {
                    assert!(job["group"].is_u64(), "{file}: job without a group");
                    names.push(job["name"].as_str().expect("job name").to_string());
                }
            }
            assert_eq!(names, job_names(text), "{file}: job names");
        }
        Expect::Refused { line, what, why } => {
            assert_eq!(
                status, 2,
                "{file}: listed as refused ({why}) but exit {status}; if iopath supports it \
                 now, list the file as Expect::Runs\n{stderr}"
            );
            let place = format!("{}:{line}:", job_file.display());
            assert!(
                stderr.contains(&place) && stderr.contains(what),
                "{file}: expected {place} and '{what}' in:\n{stderr}"
            );
            assert!(!json.exists(), "{file}: a refused file wrote a result");
        }
    }
}

macro_rules! corpus {
    ($($test:ident => $file:literal, $expect:expr;)*) => {
        $(
            #[test]
            fn $test() {
                check($file, $expect);
            }
        )*

        /// Every corpus file has a case above, and cites where it comes from.
        #[test]
        fn every_corpus_file_has_a_case_and_a_source() {
            let known = [$($file),*];
            let Some(corpus) = corpus_dir() else { return };
            let files = support::corpus::fio_files(&corpus);
            for file in &files {
                assert!(known.contains(&file.as_str()), "{file} has no case");
                let text = std::fs::read_to_string(corpus.join(file)).unwrap();
                let first = text.lines().next().unwrap_or("");
                assert!(
                    first.starts_with("# Source: ") || first.starts_with("; Source: "),
                    "{file}: the first line must name the project (# Source: …)"
                );
                let head: String = text.lines().take(6).collect();
                assert!(head.contains("https://"), "{file}: no source address in its header");
            }
            assert_eq!(files.len(), known.len(), "a case names a file that is not there");
        }
    };
}

corpus! {
    aws_ebs_piops_randwrite => "aws-ebs-piops-randwrite.fio", Expect::Runs;
    azure_disks_fioread => "azure-disks-fioread.fio", Expect::Runs;
    azure_disks_fioreadwrite => "azure-disks-fioreadwrite.fio", Expect::Runs;
    azure_disks_fiowrite => "azure-disks-fiowrite.fio", Expect::Runs;
    azure_netapp_files_8k_random_reads => "azure-netapp-files-8k-random-reads.fio", Expect::Runs;
    benchmark_operator_randread => "benchmark-operator-randread.fio", Expect::Runs;
    benchmark_operator_write => "benchmark-operator-write.fio", Expect::Runs;
    ceph_bluestore => "ceph-bluestore.fio",
        refused(9, "ioengine=libfio_ceph_objectstore.so", "no external (Ceph objectstore) engine");
    dbench_read_seq => "dbench-read-seq.fio", Expect::Runs;
    dbench_rw_mix => "dbench-rw-mix.fio", Expect::Runs;
    deepsea_cephfs_benchmark => "deepsea-cephfs-benchmark.fio", Expect::Runs;
    etcd_fdatasync_check => "etcd-fdatasync-check.fio", Expect::Runs;
    fio_plot_ceph_rbd => "fio-plot-ceph-rbd.fio",
        refused(7, "ioengine=rbd", "no Ceph RBD engine");
    fio_plot_precondition => "fio-plot-precondition.fio", Expect::Runs;
    fio_plot_remote_template => "fio-plot-remote-template.fio", Expect::Runs;
    gcp_pd_raw_read_iops => "gcp-pd-raw-read-iops.fio", Expect::Runs;
    gcp_pd_write_throughput => "gcp-pd-write-throughput.fio", Expect::Runs;
    kubestr_default => "kubestr-default.fio", Expect::Runs;
    mountpoint_s3_mix_2r2w => "mountpoint-s3-mix-2r2w.fio", Expect::Runs;
    mountpoint_s3_rand_read_4t_direct => "mountpoint-s3-rand-read-4t-direct.fio", Expect::Runs;
    oci_block_volume_randreadwrite => "oci-block-volume-randreadwrite.fio", Expect::Runs;
    perfkitbenchmarker_fio_job => "perfkitbenchmarker-fio-job.fio", Expect::Runs;
    phoronix_fio_randread_io_uring => "phoronix-fio-randread-io_uring.fio", Expect::Runs;
    spdk_vhost_default_integrity => "spdk-vhost-default-integrity.fio", Expect::Runs;
    spdk_vhost_default_performance => "spdk-vhost-default-performance.fio", Expect::Runs;
    tidb_randread_seqwrite_check => "tidb-randread-seqwrite-check.fio", Expect::Runs;
    virtualclient_oltp_c2_diskfill => "virtualclient-oltp-c2-diskfill.fio", Expect::Runs;
    virtualclient_oltp_c2_operations_4k => "virtualclient-oltp-c2-operations-4k.fio", Expect::Runs;
    xfstests_generic_095 => "xfstests-generic-095.fio",
        Expect::RunsOrJobEndsOn { job: "job9", errno: "EIO" };
    yugabyte_disk_benchmark => "yugabyte-disk-benchmark.fio", Expect::Runs;
    zfs_random_reads => "zfs-random-reads.fio", Expect::Runs;
    zfs_random_readwrite => "zfs-random-readwrite.fio", Expect::Runs;
    zfs_random_writes_fill => "zfs-random-writes-fill.fio", Expect::Runs;
    zfs_sequential_readwrite => "zfs-sequential-readwrite.fio", Expect::Runs;
    zfs_sequential_writes => "zfs-sequential-writes.fio", Expect::Runs;
}
