//! Multi-client runs over MPI (built with `--features mpi`): `mpirun -np N iopath run …` on this
//! machine against one real nbdkit server, each rank one client. The merged figures are checked
//! against the ranks' own (exact sums, bucket-wise histograms) and against the server's own
//! counters (nbdkit's stats filter); a bad input and a rank that cannot reach its target stop
//! every rank before any I/O; a rank killed mid-run stops the others, and the partial result
//! names it.

#[path = "../support/mod.rs"]
mod support;

mod slow_finish;

use iopath::result::RunResult;
use iopath::stats::histogram::LatencyHistogram;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
const IOPATH: &str = env!("CARGO_BIN_EXE_iopath");

/// The MPI the binary under test was built against, and whose launcher runs it: Open MPI
/// (`mpirun`), or MPICH (`mpiexec.mpich`, Hydra) with `IOPATH_TEST_MPI=mpich` (scripts/test
/// builds iopath against MPICH in a target directory of its own for that).
#[derive(Clone, Copy, PartialEq)]
enum Mpi {
    OpenMpi,
    Mpich,
}

fn mpi() -> Mpi {
    match std::env::var("IOPATH_TEST_MPI").as_deref() {
        Ok("mpich") => Mpi::Mpich,
        _ => Mpi::OpenMpi,
    }
}

/// Whether the launcher and nbdkit are here; skips the calling test when not.
fn have_tools() -> bool {
    let launcher = match mpi() {
        Mpi::OpenMpi => support::require(
            support::devices::has_command("mpirun"),
            "mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev)",
        ),
        Mpi::Mpich => support::require(
            support::devices::has_command("mpiexec.mpich"),
            "mpiexec.mpich is not installed (apt-get install mpich libmpich-dev)",
        ),
    };
    launcher
        && support::require(
            support::devices::has_command("nbdkit"),
            "nbdkit is not installed (apt-get install nbdkit)",
        )
}

/// Whether the calling test can run under this MPI: those built on Open MPI's own settings
/// (its rsh agent, its `--mca` parameters) need Open MPI.
fn open_mpi_only() -> bool {
    support::require(
        mpi() == Mpi::OpenMpi,
        "this test uses Open MPI's own launcher settings (IOPATH_TEST_MPI=mpich is set)",
    )
}

/// The launcher for `ranks` ranks on this machine (as root too, more ranks than cores), its
/// transport on loopback.
fn mpirun(ranks: u32) -> Command {
    let mut command = match mpi() {
        Mpi::OpenMpi => {
            let mut command = Command::new("mpirun");
            command
                .args(["--allow-run-as-root", "--oversubscribe", "-np"])
                .arg(ranks.to_string())
                .args([
                    "--mca",
                    "btl",
                    "self,tcp",
                    "--mca",
                    "btl_tcp_if_include",
                    "lo",
                ])
                .args(["--mca", "oob_tcp_if_include", "lo"]);
            command
        }
        Mpi::Mpich => {
            // Hydra passes the environment on, and runs as root without being asked.
            let mut command = Command::new("mpiexec.mpich");
            command.args(["-n", &ranks.to_string()]);
            command
        }
    };
    command.env("IOPATH_HISTORY", history_path());
    command
}

fn history_path() -> PathBuf {
    support::history::path()
}

/// An nbdkit memory server on a TCP port with the stats filter (and `filters` before it),
/// stopped (and its statistics written) when dropped or by [`Nbdkit::stop`].
struct Nbdkit {
    child: Option<Child>,
    port: u16,
    stats: PathBuf,
    _directory: tempfile::TempDir,
}

impl Nbdkit {
    fn start(filters: &[&str], extra: &[&str]) -> Nbdkit {
        let directory = tempfile::tempdir().unwrap();
        let stats = directory.path().join("stats.txt");
        let port = support::process::free_port();
        let mut command = Command::new("nbdkit");
        command
            .args([
                "--foreground",
                "--exit-with-parent",
                "-i",
                "127.0.0.1",
                "-p",
            ])
            .arg(port.to_string());
        for filter in filters {
            command.arg(format!("--filter={filter}"));
        }
        command
            .args(["--filter=stats", "memory", "256M"])
            .arg(format!("statsfile={}", stats.display()))
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = command.spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "nbdkit did not come up");
            std::thread::sleep(Duration::from_millis(50));
        }
        Nbdkit {
            child: Some(child),
            port,
            stats,
            _directory: directory,
        }
    }

    fn url(&self) -> String {
        format!("nbd://127.0.0.1:{}/", self.port)
    }

    /// Stops the server and returns the read operations it counted.
    fn stop(&mut self) -> u64 {
        if let Some(mut child) = self.child.take() {
            terminate(&child);
            let _ = child.wait();
        }
        let text = std::fs::read_to_string(&self.stats).unwrap_or_default();
        text.lines()
            .find_map(|line| line.trim().strip_prefix("read: "))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|count| count.parse().ok())
            .unwrap_or_else(|| panic!("no read count in nbdkit's statistics:\n{text}"))
    }
}

/// Asks a child to end (SIGTERM), so that it writes what it must on exit.
fn terminate(child: &Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
}

impl Drop for Nbdkit {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn read_result(path: &Path) -> RunResult {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn histogram_of(sparse: &iopath::result::SparseHistogram) -> LatencyHistogram {
    LatencyHistogram::from_sparse(sparse).unwrap()
}

#[test]
fn four_ranks_merge_exactly_and_agree_with_the_server() {
    if !have_tools() {
        return;
    }
    let mut server = Nbdkit::start(&[], &[]);
    let directory = tempfile::tempdir().unwrap();
    let json = directory.path().join("run.json");
    let fio = directory.path().join("fio.json");
    let output = mpirun(4)
        .arg(IOPATH)
        .args([
            "run",
            &server.url(),
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--qd",
            "4",
        ])
        // Each rank's whole tests, to check the merge against.
        .args([
            "--duration",
            "2",
            "--ramp",
            "0",
            "--per-rank-series",
            "--json",
        ])
        .arg(&json)
        .arg("--output-format")
        .arg("json")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    std::fs::write(&fio, &output.stdout).unwrap();
    let server_reads = server.stop();
    let result = read_result(&json);
    let cluster = result.cluster.as_ref().expect("a cluster section");
    assert_eq!(cluster.size, 4);
    assert_eq!(cluster.ranks.len(), 4);
    assert!(cluster.lost_ranks.is_empty());
    let merged = &result.tests[0];
    let ranks: Vec<&iopath::result::TestResult> =
        cluster.ranks.iter().map(|rank| &rank.tests[0]).collect();
    // Exact sums.
    let sum: u64 = ranks.iter().map(|test| test.total.io_count).sum();
    assert_eq!(merged.total.io_count, sum);
    assert_eq!(
        merged.total.bytes,
        ranks.iter().map(|test| test.total.bytes).sum::<u64>()
    );
    assert!(ranks.iter().all(|test| test.total.io_count > 0));
    // The merged histogram is the bucket-wise sum of the ranks'.
    let mut expected = LatencyHistogram::new();
    for test in &ranks {
        expected.merge(&histogram_of(&test.total.histogram));
    }
    assert_eq!(merged.total.histogram, expected.to_sparse());
    // The cluster p99 is the p99 of every rank's I/Os together: the samples of all ranks,
    // bucket by bucket, ranked.
    let mut all: Vec<(u64, u64)> = Vec::new();
    for test in &ranks {
        for &[bucket, count] in &test.total.histogram.buckets {
            all.push((bucket, count));
        }
    }
    all.sort();
    let rank_of_p99 = (sum as f64 * 0.99).ceil() as u64;
    let mut seen = 0;
    let bucket_of_p99 = all
        .iter()
        .find(|(_, count)| {
            seen += count;
            seen >= rank_of_p99
        })
        .unwrap()
        .0;
    let (low, width) = iopath::stats::histogram::bucket_bounds(bucket_of_p99 as usize);
    let high = low + width - 1;
    let p99 = merged.total.latency.percentile("99");
    assert!(
        (low..=high).contains(&p99),
        "cluster p99 {p99} ns outside the bucket [{low}, {high}] of the concatenated samples"
    );
    // Each second's cluster p99 is the p99 of the ranks' I/Os of that second together (their
    // interval histograms merged bucket by bucket): it lies between the ranks' own p99s of
    // that second, as a percentile of a union does, and its I/Os are their sum.
    for (index, point) in merged.total.series.iter().enumerate() {
        let own: Vec<&iopath::result::IntervalPoint> = ranks
            .iter()
            .filter_map(|test| test.total.series.get(index))
            .filter(|point| point.io_count > 0)
            .collect();
        assert_eq!(
            point.io_count,
            own.iter().map(|point| point.io_count).sum::<u64>()
        );
        if point.io_count == 0 {
            continue;
        }
        let lowest = own.iter().map(|point| point.p99_latency_ns).min().unwrap();
        let highest = own.iter().map(|point| point.p99_latency_ns).max().unwrap();
        assert!(
            (lowest..=highest).contains(&point.p99_latency_ns),
            "second {index}: cluster p99 {} outside the ranks' [{lowest}, {highest}]",
            point.p99_latency_ns
        );
        // The buckets served the merge only.
        assert!(point.latency_buckets.is_empty());
    }
    // The server counted the same reads, within 1 % (its count includes the probes and the
    // I/Os in flight when the window closed).
    let difference = server_reads.abs_diff(sum) as f64 / sum as f64;
    assert!(
        difference <= 0.01,
        "server counted {server_reads} reads, the merged result {sum}"
    );
    // The intervals of every rank start on one clock: offsets were measured.
    assert!(
        cluster
            .ranks
            .iter()
            .all(|rank| rank.clock_uncertainty_ns < 1_000_000_000)
    );
    // fio's client/server layout: each host's jobs, then "All clients".
    let fio: serde_json::Value = serde_json::from_slice(&std::fs::read(&fio).unwrap()).unwrap();
    let clients = fio["client_stats"].as_array().expect("client_stats");
    let all_clients = clients
        .iter()
        .find(|job| job["jobname"] == "All clients")
        .expect("an All clients entry");
    assert_eq!(all_clients["read"]["total_ios"].as_u64(), Some(sum));
    assert!(clients.iter().any(|job| job["hostname"].is_string()));
}

#[test]
fn by_default_each_rank_keeps_a_summary_of_a_few_kb_and_its_host_the_exact_merge() {
    if !have_tools() {
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let json = directory.path().join("run.json");
    let output = mpirun(4)
        .arg(IOPATH)
        .args(["run", "--engine", "null", "--rw", "randrw", "--bs", "4k"])
        .args(["--duration", "3", "--ramp", "0", "--json"])
        .arg(&json)
        .arg("--output-format")
        .arg("json")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let result = read_result(&json);
    let cluster = result.cluster.as_ref().expect("a cluster section");
    let merged = &result.tests[0];
    let ranks: Vec<&iopath::result::TestResult> =
        cluster.ranks.iter().map(|rank| &rank.tests[0]).collect();
    assert_eq!(ranks.len(), 4);
    for test in &ranks {
        assert!(test.total.io_count > 0);
        assert!(test.total.histogram.buckets.is_empty() && test.total.series.is_empty());
        assert!(test.jobs.is_empty());
    }
    let sum = |tests: &[&iopath::result::TestResult]| -> u64 {
        tests.iter().map(|test| test.total.io_count).sum()
    };
    assert_eq!(merged.total.io_count, sum(&ranks));
    // Every rank runs on this machine: one host, its ranks' I/Os merged exactly.
    assert_eq!(cluster.hosts.len(), 1);
    let host = &cluster.hosts[0].tests[0];
    assert_eq!(host.total.io_count, merged.total.io_count);
    assert_eq!(host.total.latency, merged.total.latency);
    assert_eq!(host.jobs.len(), merged.jobs.len());
    let per_rank = serde_json::to_vec_pretty(&cluster.ranks).unwrap().len() / ranks.len();
    assert!(per_rank <= 20_000, "{per_rank} bytes per rank");
    // fio's client/server layout still lists the host's jobs.
    let fio: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let clients = fio["client_stats"].as_array().expect("client_stats");
    assert!(clients.iter().any(|job| job["hostname"].is_string()));
}

#[test]
fn a_bad_input_stops_every_rank_before_any_io_with_one_message() {
    if !have_tools() {
        return;
    }
    let output = mpirun(3)
        .arg(IOPATH)
        .args(["run", "--engine", "null", "--rw", "randread", "--qd", "0"])
        .args(["--duration", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
}

#[test]
fn a_rank_that_cannot_open_its_target_stops_all_before_io_naming_its_host() {
    if !have_tools() {
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    // Each rank's target is a new file in its own directory; rank 2's directory is missing.
    for rank in 0..2 {
        std::fs::create_dir(directory.path().join(format!("d{rank}"))).unwrap();
    }
    let target = directory.path().join("d{rank}/file");
    let output = mpirun(3)
        .arg(IOPATH)
        .arg("run")
        .arg(&target)
        .args([
            "--size",
            "1m",
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--duration",
            "1",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("rank 2 on "), "{stderr}");
    assert!(stderr.contains("d2"), "{stderr}");
    assert!(!stderr.contains("rank 0 on "), "{stderr}");
    // Nobody wrote: the other ranks' files were never created.
    for rank in 0..2 {
        assert!(!directory.path().join(format!("d{rank}/file")).exists());
    }
}

/// The process of rank `rank` of the run marked `mark` (an environment variable the ranks
/// inherit), found in /proc.
fn rank_process(mark: &str, rank: u32) -> Option<u32> {
    let wanted_rank = match mpi() {
        Mpi::OpenMpi => format!("OMPI_COMM_WORLD_RANK={rank}"),
        Mpi::Mpich => format!("PMI_RANK={rank}"),
    };
    let wanted_mark = format!("IOPATH_TEST_MARK={mark}");
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let environ = std::fs::read(entry.path().join("environ")).ok()?;
            let variables: Vec<&[u8]> = environ.split(|&byte| byte == 0).collect();
            let has = |wanted: &str| variables.contains(&wanted.as_bytes());
            (has(&wanted_rank) && has(&wanted_mark)).then_some(pid)
        })
}

/// Whether process `pid` has started a worker thread (threads are named `iopath-worker-N`).
fn has_worker_thread(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks.flatten().any(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|name| name.starts_with("iopath-worker"))
            })
        })
        .unwrap_or(false)
}

/// How a run of 4 ranks ended after rank 2 was sent `signal` mid-run.
struct Faulted {
    status: std::process::ExitStatus,
    stderr: String,
    result: RunResult,
    /// When the signal was sent, from the start of `mpirun`.
    signalled_after: Duration,
}

/// Runs 4 ranks of a 30 s test (with `mpirun_args`), sends rank 2 `signal` once every rank's workers run, and
/// waits (at most 20 s) for `mpirun` to end. Every rank left is killed at the end.
fn fault_rank_2(signal: &str, mpirun_args: &[&str]) -> Faulted {
    let directory = tempfile::tempdir().unwrap();
    let json = directory.path().join("run.json");
    let mark = format!("{}-{:?}-{signal}", std::process::id(), Instant::now());
    let started = Instant::now();
    let mut child = mpirun(4)
        .args(mpirun_args)
        .env("IOPATH_TEST_MARK", &mark)
        .arg(IOPATH)
        .args(["run", "--engine", "null", "--rw", "randread", "--bs", "4k"])
        .args(["--duration", "30", "--ramp", "0", "--json"])
        .arg(&json)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Mid-run means every rank's workers are issuing I/O: on a loaded host the ranks may take
    // longer than any fixed pause to start, so wait for their worker threads, then a little more.
    let all_running = Instant::now() + Duration::from_secs(60);
    while !(0..4).all(|rank| rank_process(&mark, rank).is_some_and(has_worker_thread)) {
        assert!(
            Instant::now() < all_running,
            "the 4 ranks did not start their workers"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(2));
    let victim = rank_process(&mark, 2).expect("rank 2 runs");
    let signalled_after = started.elapsed();
    Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(victim.to_string())
        .status()
        .unwrap();
    let signalled = Instant::now();
    let deadline = signalled + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let ended_after = signalled.elapsed();
    // Whatever happened, nothing of the run is left behind (a stopped rank is woken to die).
    for rank in 0..4 {
        if let Some(pid) = rank_process(&mark, rank) {
            let _ = Command::new("kill")
                .args(["-CONT", &pid.to_string()])
                .status();
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("mpirun still runs 20 s after rank 2 was sent SIG{signal}");
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(
        ended_after < Duration::from_secs(10),
        "the run ended {ended_after:?} after SIG{signal}\n{stderr}"
    );
    assert!(json.exists(), "no result file\n{stderr}");
    Faulted {
        status,
        stderr,
        result: read_result(&json),
        signalled_after,
    }
}

/// The partial result names rank 2 as lost, the others stopped within 5 s of the fault, and
/// their figures are kept.
fn assert_rank_2_lost(faulted: &Faulted) {
    let result = &faulted.result;
    assert!(result.partial);
    let cluster = result.cluster.as_ref().unwrap();
    assert_eq!(cluster.lost_ranks, [2], "{}", faulted.stderr);
    assert!(cluster.ranks[2].lost.is_some());
    let measured = Duration::from_nanos(result.tests[0].measured_ns);
    assert!(
        measured < faulted.signalled_after + Duration::from_secs(5),
        "measured {measured:?}, signalled after {:?}",
        faulted.signalled_after
    );
    let kept: u64 = [0, 1, 3]
        .iter()
        .map(|&rank| cluster.ranks[rank].tests[0].total.io_count)
        .sum();
    assert!(kept > 0);
    assert!(
        [0, 1, 3]
            .iter()
            .all(|&rank| cluster.ranks[rank].lost.is_none())
    );
    assert_eq!(result.tests[0].total.io_count, kept);
}

#[test]
fn a_rank_killed_mid_run_under_open_mpis_defaults_leaves_the_partial_result() {
    if !have_tools() || !open_mpi_only() {
        return;
    }
    // Open MPI ends the job when a rank dies: SIGCONT to the others, SIGTERM a second later,
    // SIGKILL a second after that; rank 0 writes the partial result in between.
    let faulted = fault_rank_2("KILL", &[]);
    assert!(!faulted.status.success(), "{}", faulted.stderr);
    // mpirun's own status: the dead rank's signal (128 + 9).
    assert_eq!(faulted.status.code(), Some(137), "{}", faulted.stderr);
    assert!(faulted.stderr.contains("rank 2 on "), "{}", faulted.stderr);
    assert_rank_2_lost(&faulted);
}

#[test]
fn a_rank_killed_mid_run_stops_the_others_and_is_named_in_the_partial_result() {
    if !have_tools() || !open_mpi_only() {
        return;
    }
    // Told not to end the job on a death, Open MPI leaves it to iopath: the rank is lost
    // after 3 s of silence, and rank 0 ends the job (MPI_Abort with 1); mpirun still
    // reports the dead rank's signal.
    let faulted = fault_rank_2("KILL", &["--mca", "orte_abort_on_non_zero_status", "0"]);
    assert_eq!(faulted.status.code(), Some(137), "{}", faulted.stderr);
    assert!(faulted.stderr.contains("rank 2 on "), "{}", faulted.stderr);
    assert_rank_2_lost(&faulted);
}

#[test]
fn a_rank_that_hangs_mid_run_stops_the_others_and_is_named_in_the_partial_result() {
    if !have_tools() {
        return;
    }
    let faulted = fault_rank_2("STOP", &[]);
    match mpi() {
        // Rank 0 ends the job with MPI_Abort(1), and mpirun exits with that.
        Mpi::OpenMpi => {
            assert_eq!(faulted.status.code(), Some(1), "{}", faulted.stderr);
            assert!(faulted.stderr.contains("rank 2 on "), "{}", faulted.stderr);
        }
        // Hydra kills every rank at the MPI_Abort, and exits with the status of whichever it
        // saw end first (1, or 9 for a rank it killed), at times before rank 0's last lines
        // reached it: the result file is what counts.
        Mpi::Mpich => assert!(!faulted.status.success(), "{}", faulted.stderr),
    }
    assert_rank_2_lost(&faulted);
}

/// The clients and server of scripts/mpi-lab (namespaces on a bridge), removed when dropped.
struct MpiLab {
    tag: &'static str,
    state: PathBuf,
    servers: Vec<Child>,
}

impl MpiLab {
    /// `clients` namespaces each behind a link of `client_rate`, the server behind
    /// `server_rate` (`un`: unshaped).
    fn up(tag: &'static str, clients: u32, client_rate: &str, server_rate: &str) -> MpiLab {
        let output = Command::new(lab_script())
            .args(["up", "--tag", tag, "--clients", &clients.to_string()])
            .args(["--client-rate", client_rate, "--server-rate", server_rate])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let state = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
        MpiLab {
            tag,
            state,
            servers: Vec::new(),
        }
    }

    /// An nbdkit memory export in the server namespace on `port`, with `filters` (each
    /// `--filter=NAME`) and their `parameters`.
    fn serve(&mut self, port: u16, filters: &[&str], parameters: &[&str]) -> String {
        let mut command = Command::new("ip");
        command
            .args(["netns", "exec", &format!("{}-srv", self.tag), "nbdkit"])
            .args([
                "--foreground",
                "-i",
                "198.19.250.1",
                "-p",
                &port.to_string(),
            ]);
        for filter in filters {
            command.arg(filter);
        }
        command
            .args(["memory", "1G"])
            .args(parameters)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        self.servers.push(command.spawn().unwrap());
        let deadline = Instant::now() + Duration::from_secs(20);
        while !Command::new("ip")
            .args(["netns", "exec", &format!("{}-c1", self.tag)])
            .args([
                "bash",
                "-c",
                &format!("exec 3<>/dev/tcp/198.19.250.1/{port}"),
            ])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
        {
            if Instant::now() > deadline {
                panic!("nbdkit did not come up on port {port}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        format!("nbd://198.19.250.1:{port}/")
    }

    /// `mpirun` placing `ranks` ranks one per client namespace.
    fn mpirun(&self, ranks: u32) -> Command {
        let args = std::fs::read_to_string(self.state.join("mpirun-args")).unwrap();
        let mut command = Command::new("mpirun");
        command
            .arg("--allow-run-as-root")
            .args(args.split_whitespace())
            .arg("-np")
            .arg(ranks.to_string())
            .env("IOPATH_HISTORY", history_path());
        command
    }
}

impl Drop for MpiLab {
    fn drop(&mut self) {
        for server in &mut self.servers {
            let _ = server.kill();
            let _ = server.wait();
        }
        let _ = Command::new(lab_script())
            .args(["down", "--tag", self.tag])
            .status();
    }
}

/// One of the project's scripts/.
fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(name)
}

fn lab_script() -> PathBuf {
    script("mpi-lab")
}

/// Runs `iopath run ARGS --json FILE` from `ranks` clients of `lab` and reads the result.
fn lab_run(lab: &MpiLab, ranks: u32, args: &[&str]) -> RunResult {
    let directory = tempfile::tempdir().unwrap();
    let json = directory.path().join("run.json");
    let output = lab
        .mpirun(ranks)
        .arg(IOPATH)
        .arg("run")
        .args(args)
        .args(["--duration", "3", "--ramp", "1", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    read_result(&json)
}

fn cluster_verdict(result: &RunResult) -> &iopath::result::ClusterVerdict {
    &result.cluster.as_ref().unwrap().verdicts[0]
}

#[test]
fn clients_in_namespaces_add_their_links_until_the_servers_link_is_the_limit() {
    if !have_tools()
        || !open_mpi_only()
        || !support::require(
            support::devices::is_root(),
            "namespaces and tc need root (run as root)",
        )
        || !support::require(
            support::devices::has_command("tc") && support::devices::has_command("unshare"),
            "tc and unshare are not installed (apt-get install iproute2 util-linux)",
        )
    {
        return;
    }
    let read = ["--rw", "read", "--bs", "1m", "--qd", "8", "--link", "1gbe"];
    // Three clients, each behind its own 1 Gbit link, the server's link unshaped.
    let mut lab = MpiLab::up("mpt", 3, "1g", "un");
    let url = lab.serve(10809, &[], &[]);
    let one = lab_run(&lab, 1, &[&[url.as_str()][..], &read].concat());
    let three = lab_run(&lab, 3, &[&[url.as_str()][..], &read].concat());
    let one_rate = one.tests[0].total.bytes_per_second;
    let three_rate = three.tests[0].total.bytes_per_second;
    assert!(
        (three_rate / (3.0 * one_rate) - 1.0).abs() <= 0.10,
        "three clients moved {three_rate:.0} B/s, one {one_rate:.0} B/s"
    );
    let cluster = three.cluster.as_ref().unwrap();
    let hosts: Vec<&str> = cluster.ranks.iter().map(|r| r.host.as_str()).collect();
    assert_eq!(hosts, ["c1", "c2", "c3"]);
    let verdict = cluster_verdict(&three);
    assert_eq!(
        verdict.limit,
        iopath::result::ClusterLimit::ClientLinks,
        "{}",
        verdict.evidence
    );
    assert!(verdict.straggler.is_none(), "{}", verdict.evidence);

    // One client's export is rate-limited: that client is the straggler.
    let slow = lab.serve(10810, &["--filter=rate"], &["rate=40M"]);
    let map = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(map.path(), format!("c3 {slow}\n* {url}\n")).unwrap();
    let map_flag = map.path().to_str().unwrap();
    let mixed = lab_run(&lab, 3, &[&["--target-map", map_flag][..], &read].concat());
    let straggler = cluster_verdict(&mixed)
        .straggler
        .clone()
        .expect("a straggler");
    assert_eq!((straggler.rank, straggler.host.as_str()), (2, "c3"));
    drop(lab);

    // The server's own link shaped to 2 Gbit: the three clients share it, and it is the limit.
    let mut lab = MpiLab::up("mpt", 3, "1g", "2g");
    let url = lab.serve(10809, &[], &[]);
    let shared = lab_run(
        &lab,
        3,
        &[&[url.as_str()][..], &read, &["--shared", "2x1gbe"]].concat(),
    );
    let verdict = cluster_verdict(&shared);
    assert_eq!(
        verdict.limit,
        iopath::result::ClusterLimit::SharedLink,
        "{}",
        verdict.evidence
    );
    assert!(shared.tests[0].total.bytes_per_second < 0.8 * three_rate);
}

/// Flips one bit in the middle of 4 KiB block `block` of `path`.
fn flip_bit_in_block(path: &Path, block: u64) {
    let offset = block * 4096 + 2048;
    let mut bytes = std::fs::read(path).unwrap();
    bytes[offset as usize] ^= 0x10;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn verification_of_every_rank_is_merged_and_each_bad_block_names_its_rank() {
    if !support::require(
        support::devices::has_command("mpirun"),
        "mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev)",
    ) {
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let target = directory.path().join("vr-{rank}.bin");
    let run = |only: bool, json: &Path| {
        let mut command = mpirun(2);
        command
            .current_dir(directory.path())
            .arg(IOPATH)
            .arg("run")
            .arg(&target)
            .args([
                "--size", "1m", "--rw", "write", "--bs", "4k", "--bytes", "1m",
            ])
            .args(["--qd", "4", "--ramp", "0", "--verify", "crc32c"])
            .arg(if only {
                "--verify-only"
            } else {
                "--verify-read-back=false"
            })
            .arg("--json")
            .arg(json);
        command.output().unwrap()
    };
    // Each rank writes its own file with headers; then one block of rank 0's file and two of
    // rank 1's get a flipped bit; a verify-only run checks every block of both.
    let written = run(false, &directory.path().join("written.json"));
    assert!(
        written.status.success(),
        "{}",
        String::from_utf8_lossy(&written.stderr)
    );
    flip_bit_in_block(&directory.path().join("vr-0.bin"), 3);
    flip_bit_in_block(&directory.path().join("vr-1.bin"), 7);
    flip_bit_in_block(&directory.path().join("vr-1.bin"), 9);
    let json = directory.path().join("checked.json");
    let checked = run(true, &json);
    assert_eq!(
        checked.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    let result = read_result(&json);
    let cluster = result.cluster.as_ref().expect("a cluster section");
    let merged = result.tests[0].verification.as_ref().expect("verification");
    let ranks: Vec<&iopath::result::VerificationResult> = cluster
        .ranks
        .iter()
        .map(|rank| rank.tests[0].verification.as_ref().unwrap())
        .collect();
    // Counts summed over the ranks: 256 blocks each, three bad.
    assert_eq!(
        merged.blocks_checked,
        ranks.iter().map(|found| found.blocks_checked).sum::<u64>()
    );
    assert_eq!(merged.blocks_checked, 512);
    assert_eq!(merged.mismatch_count, 3);
    let mut found: Vec<(Option<u32>, u64, &str)> = merged
        .mismatches
        .iter()
        .map(|bad| (bad.rank, bad.offset, bad.kind.name()))
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            (Some(0), 3 * 4096, "checksum"),
            (Some(1), 7 * 4096, "checksum"),
            (Some(1), 9 * 4096, "checksum")
        ]
    );
    // The job's figures are merged too, and the text report names the rank.
    let job = result.tests[0].jobs[0].verification.as_ref().unwrap();
    assert_eq!((job.blocks_checked, job.mismatch_count), (512, 3));
    let verify_errors = result.tests[0]
        .errors
        .by_kind
        .iter()
        .find(|count| count.kind == iopath::result::ErrorKind::Verify)
        .expect("verify errors counted");
    assert_eq!(verify_errors.count, 3);
    let stdout = String::from_utf8_lossy(&checked.stdout);
    assert!(stdout.contains("[found by rank 1]"), "{stdout}");
}

/// A one-node Slurm cluster (scripts/slurm-lab), stopped when dropped.
struct SlurmLab {
    conf: PathBuf,
}

impl SlurmLab {
    fn up() -> SlurmLab {
        let output = Command::new(script("slurm-lab"))
            .arg("up")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "slurm-lab up: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let state = String::from_utf8_lossy(&output.stdout).trim().to_string();
        SlurmLab {
            conf: Path::new(&state).join("slurm.conf"),
        }
    }
}

impl Drop for SlurmLab {
    fn drop(&mut self) {
        let _ = Command::new(script("slurm-lab")).arg("down").status();
    }
}

#[test]
fn four_tasks_of_srun_are_four_clients_merged_exactly() {
    if !have_tools()
        || !open_mpi_only()
        || !support::require(
            support::devices::is_root(),
            "slurmd needs root (run as root)",
        )
        || !support::require(
            support::devices::has_command("slurmctld") && support::devices::has_command("srun"),
            "Slurm is not installed (apt-get install slurm-wlm)",
        )
    {
        return;
    }
    let lab = SlurmLab::up();
    let directory = tempfile::tempdir().unwrap();
    let json = directory.path().join("run.json");
    let output = Command::new("srun")
        .env("SLURM_CONF", &lab.conf)
        .env("IOPATH_HISTORY", history_path())
        .args(["--mpi=pmix", "-n", "4", "--time", "2"])
        .arg(IOPATH)
        .args(["run", "--engine", "null", "--rw", "randread", "--bs", "4k"])
        .args(["--duration", "2", "--ramp", "0", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let result = read_result(&json);
    let cluster = result.cluster.as_ref().expect("a cluster section");
    assert_eq!(cluster.size, 4);
    assert!(cluster.lost_ranks.is_empty());
    // Every task is a client, with its rank on the node from Slurm.
    let mut local: Vec<u32> = cluster.ranks.iter().map(|rank| rank.local_rank).collect();
    local.sort();
    assert_eq!(local, [0, 1, 2, 3]);
    let sum: u64 = cluster
        .ranks
        .iter()
        .map(|rank| rank.tests[0].total.io_count)
        .sum();
    assert!(
        cluster
            .ranks
            .iter()
            .all(|rank| rank.tests[0].total.io_count > 0)
    );
    assert_eq!(result.tests[0].total.io_count, sum);
}
