//! The second corpus of public job files (`../shared/fio-jobs-public`, through
//! tests/support/corpus.rs), run unchanged as its README says: in `/var/tmp/rwfio-work` (the
//! directory the files name), with what each file's `# harness-*` header lines supply —
//! `harness-env` (variables the file reads as `${VAR}`), `harness-prep` and
//! `harness-prep-iopath` (shell run in the directory first), `harness-iopath-args` (the target
//! and size the upstream wrapper gives on the command line) — plus `--duration 0.3 --ramp 0`.
//! Each is held to its [`Expect`] as in the first corpus. The files share one directory, so the
//! runs take turns (a lock file beside it) and each starts from an empty directory.
//!
//! Two adaptations, both outside the file's options: a `startdelay` is read in milliseconds
//! instead of seconds in a copy that keeps every line where it was (30-cvo-oltp-staggered
//! starts its jobs up to 1 470 s apart), and a target that `harness-prep` wrote with `dd` is
//! overwritten with `--allow-destructive` (iopath refuses to write over a file it did not
//! create; here the test created it).
//!
//! docs/fio-compatibility.md ("A second corpus") lists what runs and what is refused.

use super::{Expect, Run, content, judge, refused, support, with_start_delays_as};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Where the files put their data.
const WORK: &str = "/var/tmp/rwfio-work";

/// The corpus, or `None` after a skip.
fn corpus_dir() -> Option<PathBuf> {
    support::corpus::shared_dir("fio-jobs-public")
}

/// Every value of the `# harness-KEY:` header lines, in order.
fn harness<'a>(text: &'a str, key: &str) -> Vec<&'a str> {
    let prefix = format!("# harness-{key}:");
    text.lines()
        .filter_map(|line| line.strip_prefix(prefix.as_str()))
        .map(str::trim)
        .collect()
}

/// Runs `script` with `sh` in the work directory with `env`.
fn shell(script: &str, env: &[(String, String)], corpus: &Path) {
    let status = Command::new("sh")
        .args(["-c", script])
        .current_dir(WORK)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("IOPATH", env!("CARGO_BIN_EXE_iopath"))
        .env("RWFIO_DIR", corpus)
        .env("IOPATH_HISTORY", support::history::path())
        .status()
        .expect("sh runs");
    assert!(status.success(), "harness-prep '{script}': {status}");
}

fn check(file: &str, expect: Expect) {
    let Some(corpus) = corpus_dir() else { return };
    let source = corpus.join(file);
    let text = std::fs::read_to_string(&source).expect("corpus file reads");
    std::fs::create_dir_all(Path::new(WORK).parent().unwrap()).unwrap();
    let lock = File::create(format!("{WORK}.lock")).expect("the lock file opens");
    lock.lock().expect("the lock is taken");
    let _ = std::fs::remove_dir_all(WORK);
    std::fs::create_dir_all(WORK).unwrap();
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("fio-jobs-public")
        .join(file.trim_end_matches(".fio"));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();

    let env: Vec<(String, String)> = harness(&text, "env")
        .iter()
        .flat_map(|line| line.split_whitespace())
        .map(|pair| {
            let (key, value) = pair.split_once('=').expect("harness-env holds K=V pairs");
            (key.to_string(), value.to_string())
        })
        .collect();
    let preparations = harness(&text, "prep");
    for script in preparations.iter().chain(&harness(&text, "prep-iopath")) {
        shell(script, &env, &corpus);
    }
    let job_file = if text.lines().any(|l| content(l).starts_with("startdelay=")) {
        let adapted = scratch.join(file);
        std::fs::write(&adapted, with_start_delays_as(&text, "ms")).unwrap();
        adapted
    } else {
        source
    };
    let json = scratch.join("out.json");
    let mut args: Vec<String> = ["run", "--job", job_file.to_str().unwrap()]
        .map(String::from)
        .to_vec();
    for line in harness(&text, "iopath-args") {
        args.extend(line.split_whitespace().map(String::from));
    }
    if preparations.iter().any(|script| script.contains("dd ")) {
        args.push("--allow-destructive".into());
    }
    args.extend(
        [
            "--duration",
            "0.3",
            "--ramp",
            "0",
            "--json",
            json.to_str().unwrap(),
        ]
        .map(String::from),
    );
    let mut command = support::history::command(env!("CARGO_BIN_EXE_iopath"));
    command
        .current_dir(WORK)
        .args(&args)
        .envs(env.iter().map(|(k, v)| (k, v)));
    let (status, stderr) = support::run_with_limit(&mut command, Duration::from_secs(120));
    let _ = std::fs::remove_dir_all(WORK);
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

/// Include files of the corpus: read by the job files that include them, not run alone.
const INCLUDES: [&str; 3] = ["common-include.fio", "glob-include.fio", "iops-include.fio"];

macro_rules! public_corpus {
    ($($test:ident => $file:literal, $expect:expr;)*) => {
        $(
            #[test]
            fn $test() {
                check($file, $expect);
            }
        )*

        /// Every job file of the corpus has a case above, and names its source on line 1.
        #[test]
        fn every_public_corpus_file_has_a_case_and_a_source() {
            let known = [$($file),*];
            let Some(corpus) = corpus_dir() else { return };
            let files: Vec<String> = support::corpus::fio_files(&corpus)
                .into_iter()
                .filter(|file| !INCLUDES.contains(&file.as_str()))
                .collect();
            for file in &files {
                assert!(known.contains(&file.as_str()), "{file} has no case");
                let text = std::fs::read_to_string(corpus.join(file)).unwrap();
                let first = text.lines().next().unwrap_or("");
                assert!(first.starts_with("# source: "), "{file}: line 1 must name its source");
            }
            assert_eq!(files.len(), known.len(), "a case names a file that is not there");
            let runs = [$(matches!($expect, Expect::Runs | Expect::RunsOrJobEndsOn { .. })),*];
            let accepted = runs.iter().filter(|runs| **runs).count();
            assert!(accepted >= 33, "only {accepted} of {} files run", runs.len());
        }
    };
}

public_corpus! {
    kbench_iops => "01-kbench-iops.fio", Expect::Runs;
    kubestr_default => "02-kubestr-default.fio", Expect::Runs;
    fioplot_precondition => "03-fioplot-precondition.fio", Expect::Runs;
    fioplot_remote => "04-fioplot-remote.fio", Expect::Runs;
    zfs_mkfiles => "05-zfs-mkfiles.fio", Expect::Runs;
    zfs_random_readwrite => "06-zfs-random-readwrite.fio", Expect::Runs;
    pkb_fio_job => "07-pkb-fio-job.fio", Expect::Runs;
    pkb_parent_rendered => "08-pkb-parent-rendered.fio", Expect::Runs;
    pkb_iops_under_sla_rendered => "09-pkb-iops-under-sla-rendered.fio", Expect::Runs;
    azure_fioreadwrite => "10-azure-fioreadwrite.fio", Expect::Runs;
    spdk_vhost_perf => "11-spdk-vhost-perf.fio", Expect::Runs;
    spdk_default_performance => "12-spdk-default-performance.fio", Expect::Runs;
    spdk_default_integrity => "13-spdk-default-integrity.fio", Expect::Runs;
    virtualclient_oltp_c => "14-virtualclient-oltp-c.fio", Expect::Runs;
    mcgrof_steady_state => "15-mcgrof-steady-state.fio",
        refused(27, "steadystate", "steady state is judged per test: every job of a test needs the same criterion, with group_reporting");
    pts_fio => "16-pts-fio.fio", Expect::Runs;
    cm4_nvme_nas => "17-cm4-nvme-nas.fio", Expect::Runs;
    bench_settings_cdm => "18-bench-settings-cdm.fio", Expect::Runs;
    shelldk_indented => "19-shelldk-indented.fio", Expect::Runs;
    csd5000_randread => "20-csd5000-randread.fio", Expect::Runs;
    ceph_test_randrw => "21-ceph-test-randrw.fio", Expect::Runs;
    storpool_sustain => "22-storpool-sustain.fio", Expect::Runs;
    cloudbench => "23-cloudbench.fio", Expect::Runs;
    netapp_poc => "24-netapp-poc.fio", Expect::Runs;
    cloud_scale_lab => "25-cloud-scale-lab.fio",
        refused(9, "direcotry", "the file misspells directory; fio refuses the unknown option too");
    ifio => "26-ifio.fio", Expect::Runs;
    sfs_verify => "27-sfs-verify.fio", Expect::Runs;
    io_tester_seqwrite => "28-io-tester-seqwrite.fio", Expect::Runs;
    efs_sync_64jobs => "29-efs-sync-64jobs.fio", Expect::Runs;
    cvo_oltp_staggered => "30-cvo-oltp-staggered.fio", Expect::Runs;
    nvmevirt_hotcold => "31-nvmevirt-hotcold.fio", Expect::Runs;
    xfstests_generic_095 => "32-xfstests-generic-095.fio",
        Expect::RunsOrJobEndsOn { job: "job9", errno: "EIO" };
    nic_perf_seqwrite => "33-nic-perf-seqwrite.fio", Expect::Runs;
    rfio => "34-rfio.fio", Expect::Runs;
    nvmevirt_hotcold_zoned => "35-nvmevirt-hotcold-zoned.fio", Expect::Runs;
}
