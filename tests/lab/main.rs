//! The lab (scripts/lab) against the real binary: links shaped with tc tbf between network
//! namespaces, `iopath net` measuring them, and NBD reads across them (nbdkit, memory plugin);
//! and `iopath net` itself on loopback (its result, its errors and exit statuses).
//!
//! Lab tests need root (network namespaces, tc) and are skipped otherwise, or fail under CI
//! (tests/support). Each
//! brings up a lab of its own under a unique prefix and always takes it down again (a Drop
//! guard), and holds a lock while it runs so that only one measures at a time: two at once
//! would share the machine's two cores and each measure less than its link carries. Every
//! measurement is 2 s, but for rates that change over time ([`burst`]: nbdkit's rate filter on
//! Unix sockets, 12–30 s, as a bucket needs time to run dry).

#[path = "../support/mod.rs"]
mod support;

mod beyond_the_client;
mod blkio;
mod burst;
mod iops_bucket;
mod link_bucket;
mod pts;
mod read_ahead;
mod server_metrics;
mod switch_snmp;

use serde_json::Value;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use support::busy_host::{busy_with_others, names_the_busy_host};
use support::priority::MEASURE_NICE;

/// TCP payload of a 1GbE wire, MB/s: 1448 payload bytes (MTU 1500 with TCP timestamps) in every
/// 1538 bytes on the wire (frame, FCS, preamble, inter-frame gap) at 125 MB/s. The lab shapes
/// its "1g" link to exactly that.
const GIGABIT_PAYLOAD_MB_S: f64 = 125.0 * 1448.0 / 1538.0;

fn iopath() -> Command {
    support::history::command(env!("CARGO_BIN_EXE_iopath"))
}

/// The iopath binary at [`MEASURE_NICE`], for measurements in the lab: other tests running at
/// the same time disturb a measurement less. The lab's servers run at the same priority
/// (`scripts/lab --nice`); both take root, as the lab does.
fn measured_iopath() -> Command {
    support::priority::measured_command(env!("CARGO_BIN_EXE_iopath"))
}

fn lab_script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/lab")
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn has_command(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(name).is_file()))
        || ["/usr/sbin", "/sbin"]
            .iter()
            .any(|dir| Path::new(dir).join(name).is_file())
}

/// Why the lab cannot run here, if it cannot.
fn lab_unavailable() -> Option<String> {
    if !is_root() {
        return Some("needs root (network namespaces, tc)".to_string());
    }
    let missing: Vec<&str> = ["ip", "tc", "nbdkit", "ss"]
        .into_iter()
        .filter(|tool| !has_command(tool))
        .collect();
    if !missing.is_empty() {
        return Some(format!(
            "{} not installed (packages iproute2, nbdkit)",
            missing.join(", ")
        ));
    }
    None
}

/// Holds the machine for one lab test at a time (released when dropped).
/// Also taken by the loopback test that loads both cores, so that it never runs while a lab
/// test measures. Without root there are no lab tests, and no lock is needed (nor possible in
/// /run).
struct MeasureLock {
    _file: Option<File>,
}

impl MeasureLock {
    fn take() -> MeasureLock {
        if !is_root() {
            return MeasureLock { _file: None };
        }
        std::fs::create_dir_all("/run/iopath-lab").expect("state directory");
        let file = File::create("/run/iopath-lab/.tests.lock").expect("lock file");
        // SAFETY: flock on a descriptor we own; blocks until the lock is ours.
        let status = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        assert_eq!(status, 0, "flock: {}", std::io::Error::last_os_error());
        MeasureLock { _file: Some(file) }
    }
}

/// Takes down the labs of test processes that died without taking theirs down (killed, say,
/// by a timeout): their prefix is `ipt` and their process id.
fn reap_stale_labs() {
    let Ok(entries) = std::fs::read_dir("/run/iopath-lab") else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("ipt") else {
            continue;
        };
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Ok(pid) = digits.parse::<u32>() else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            eprintln!("note: taking down lab {name}, left by process {pid}");
            let _ = Command::new(lab_script())
                .args(["down", "--prefix", &name])
                .status();
        }
    }
}

/// One link of a lab, as `scripts/lab up` printed it.
#[derive(Debug)]
struct LabLink {
    name: String,
    namespace: String,
    nbd: String,
    net: String,
    /// The lab's `iopath net` secret file.
    net_secret: String,
    /// The iSCSI URL, when the lab started tgtd.
    iscsi: Option<String>,
    /// The NFS URL of the export's test file, when the lab started nfs-ganesha.
    nfs: Option<String>,
    /// The SMB URL of the share's test file and the credentials file for it, when the lab
    /// started smbd.
    smb: Option<(String, String)>,
}

/// A lab of this test; taken down when dropped, whatever happened.
struct Lab {
    prefix: String,
    links: Vec<LabLink>,
    /// Released after the lab is down (fields drop after `Drop::drop`).
    _lock: MeasureLock,
}

impl Lab {
    /// Brings up `links` (e.g. `["1g", "4g"]`) under a prefix of this process, with an
    /// `iopath net` server in each namespace and no iSCSI target or NFS export. `None` (and a
    /// note) when the lab cannot run.
    fn up(links: &[&str]) -> Option<Lab> {
        Lab::up_with(links, &["--no-iscsi", "--no-nfs", "--no-smb"])
    }

    /// [`Lab::up`] with more options for `scripts/lab up`.
    fn up_with(links: &[&str], options: &[&str]) -> Option<Lab> {
        if let Some(reason) = lab_unavailable() {
            support::skip(reason);
            return None;
        }
        let lock = MeasureLock::take();
        reap_stale_labs();
        static SERIAL: AtomicU32 = AtomicU32::new(0);
        let prefix = format!(
            "ipt{}{}",
            std::process::id(),
            char::from(b'a' + (SERIAL.fetch_add(1, Ordering::Relaxed) % 26) as u8)
        );
        // The guard exists before `up`, so that even a failed `up` is cleaned away.
        let mut lab = Lab {
            prefix,
            links: Vec::new(),
            _lock: lock,
        };
        let output = Command::new(lab_script())
            .args(["up", "--prefix", &lab.prefix, "--links", &links.join(",")])
            .args(options)
            .args(["--size", "256M", "--nice", MEASURE_NICE, "--net-server"])
            .arg(env!("CARGO_BIN_EXE_iopath"))
            .output()
            .expect("scripts/lab runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "scripts/lab up failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        for line in stdout.lines() {
            let field = |key: &str| {
                line.split_whitespace()
                    .find_map(|pair| pair.strip_prefix(&format!("{key}=")))
                    .map(str::to_string)
            };
            if let (Some(name), Some(namespace), Some(nbd), Some(net), Some(net_secret)) = (
                field("link"),
                field("namespace"),
                field("nbd"),
                field("net"),
                field("net_secret"),
            ) {
                let iscsi = field("iscsi");
                let nfs = field("nfs");
                let smb = field("smb").zip(field("smb_credentials"));
                lab.links.push(LabLink {
                    name,
                    namespace,
                    nbd,
                    net,
                    net_secret,
                    iscsi,
                    nfs,
                    smb,
                });
            }
        }
        assert_eq!(
            lab.links.len(),
            links.len(),
            "scripts/lab up printed:\n{stdout}"
        );
        Some(lab)
    }

    fn link(&self, name: &str) -> &LabLink {
        self.links
            .iter()
            .find(|link| link.name == name)
            .unwrap_or_else(|| panic!("no link {name} in {:?}", self.links))
    }
}

impl Lab {
    /// Runs `scripts/lab down` for this lab; true when it succeeded.
    fn down(&self) -> bool {
        let status = Command::new(lab_script())
            .args(["down", "--prefix", &self.prefix])
            .status();
        matches!(status, Ok(status) if status.success())
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if !self.down() {
            eprintln!("warning: scripts/lab down --prefix {} failed", self.prefix);
        }
    }
}

/// Process ids of everything running inside a network namespace.
fn namespace_pids(namespace: &str) -> Vec<String> {
    let output = Command::new("ip")
        .args(["netns", "pids", namespace])
        .output()
        .expect("ip runs");
    String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// The command name of process `pid` (empty once it has ended).
fn process_name(pid: &str) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn namespace_exists(namespace: &str) -> bool {
    let output = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip runs");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .any(|line| line.split_whitespace().next() == Some(namespace))
}

#[test]
fn lab_down_removes_everything_it_made() {
    // With tgtd when it is installed, so that its target and control socket are covered too.
    let Some(lab) = Lab::up_with(&["1g", "un"], &[]) else {
        return;
    };
    let status = Command::new(lab_script())
        .args(["status", "--prefix", &lab.prefix])
        .output()
        .expect("scripts/lab runs");
    let report = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{report}");
    assert!(
        report.contains("rate=984395kbit") && report.contains("rate=unshaped"),
        "{report}"
    );
    let mut pids = Vec::new();
    for link in &lab.links {
        assert!(namespace_exists(&link.namespace), "{link:?}");
        let running = namespace_pids(&link.namespace);
        // nbdkit and iopath net, tgtd when it is installed, nfs-ganesha and its private
        // rpcbind when they are.
        let mut expected = 2;
        if has_command("tgtd") && has_command("tgtadm") {
            assert!(link.iscsi.is_some(), "no iSCSI URL: {link:?}");
            expected += 1;
        }
        if has_command("ganesha.nfsd") && has_command("rpcbind") {
            assert!(link.nfs.is_some(), "no NFS URL: {link:?}");
            expected += 2;
        }
        // smbd runs helpers of its own (smbd-notifyd, cleanupd, short-lived children):
        // counted apart, as are processes that ended meanwhile.
        let (smbd, others): (Vec<String>, Vec<String>) = running.into_iter().partition(|pid| {
            let name = process_name(pid);
            name.starts_with("smbd") || name == "cleanupd" || name.is_empty()
        });
        if has_command("smbd") && has_command("pdbedit") {
            assert!(link.smb.is_some(), "no SMB URL: {link:?}");
            assert!(!smbd.is_empty(), "{link:?}: no smbd running");
        }
        assert_eq!(others.len(), expected, "{link:?}: {others:?}");
        pids.extend(others);
        pids.extend(smbd);
    }
    assert!(lab.down(), "scripts/lab down failed");
    assert!(lab.down(), "a second scripts/lab down failed");
    for link in &lab.links {
        assert!(
            !namespace_exists(&link.namespace),
            "{} is still there",
            link.namespace
        );
    }
    for pid in &pids {
        // Gone, or a zombie waiting for its parent (init) to collect it.
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let running = state
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'));
        assert!(!running, "process {pid} still runs: {state}");
    }
    assert!(!Path::new(&format!("/run/iopath-lab/{}", lab.prefix)).exists());
    for link in &lab.links {
        let export = format!("/dev/shm/iopath-lab/{}-{}", lab.prefix, link.name);
        assert!(!Path::new(&export).exists(), "{export} is left");
    }
    let links = Command::new("ip")
        .args(["-br", "link"])
        .output()
        .expect("ip runs");
    let links = String::from_utf8_lossy(&links.stdout);
    assert!(!links.contains(&lab.prefix), "a veth is left:\n{links}");
    let status = Command::new(lab_script())
        .args(["status", "--prefix", &lab.prefix])
        .status()
        .expect("scripts/lab runs");
    assert_eq!(status.code(), Some(3), "status of a lab that is down");
}

/// Runs `iopath net SERVER --duration 2s --direction DIRECTION --json -` and returns the
/// payload rate, MB/s.
fn net_rate(link: &LabLink, direction: &str) -> f64 {
    net_measure(link, direction).0
}

/// Runs `iopath net SERVER --duration 2s --direction DIRECTION --json -` and returns the
/// payload rate, MB/s, and whether other processes kept the host busy meanwhile (as
/// `support::busy_host::busy_with_others` tells it from the link test's CPU figures).
fn net_measure(link: &LabLink, direction: &str) -> (f64, bool) {
    let output = measured_iopath()
        .args([
            "net",
            &link.net,
            "--duration",
            "2s",
            "--direction",
            direction,
            "--secret-file",
            &link.net_secret,
        ])
        .args(["--json", "-"])
        .output()
        .expect("iopath runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "iopath net failed: {stderr}");
    let json: Value = serde_json::from_slice(&output.stdout).expect("a RunResult");
    let tests = json["link_tests"].as_array().expect("link_tests");
    assert_eq!(tests.len(), 1, "{json}");
    assert_eq!(json["tests"].as_array().map(Vec::len), Some(0));
    assert_eq!(tests[0]["direction"], direction);
    assert!(
        tests[0]["warnings"].as_array().is_some_and(Vec::is_empty),
        "{}",
        tests[0]["warnings"]
    );
    let rate = tests[0]["bytes_per_second"].as_f64().expect("a rate") / 1e6;
    let busy = busy_with_others(&serde_json::json!({ "tests": [{ "cpu": tests[0]["cpu"] }] }));
    eprintln!(
        "link {} {direction}: {rate:.1} MB/s, busy with others: {busy}",
        link.name
    );
    (rate, busy)
}

/// The highest of up to `tries` measurements, stopping once `good` holds. Anything else on
/// the machine can only slow a measurement (the shaper caps it), so the highest is the best
/// estimate of what the link carries.
fn best_of(tries: u32, good: impl Fn(f64) -> bool, mut measure: impl FnMut() -> f64) -> f64 {
    let mut best = 0.0f64;
    for _ in 0..tries {
        best = best.max(measure());
        if good(best) {
            break;
        }
    }
    best
}

#[test]
fn net_measures_shaped_links() {
    let Some(lab) = Lab::up(&["1g", "4g"]) else {
        return;
    };
    let in_range = |rate: f64| (114.0..=121.0).contains(&rate);
    for direction in ["send", "receive"] {
        let one = best_of(5, in_range, || net_rate(lab.link("1g"), direction));
        assert!(
            in_range(one),
            "1gbit {direction}: {one:.1} MB/s, expected about {GIGABIT_PAYLOAD_MB_S:.1}"
        );
        // Carrying 4 Gbit/s through the shaper and both ends takes a good share of the cores;
        // 1 Gbit/s takes little. On a host whose cores other processes keep full (a CPU hog on
        // each: 3.3 ×), 4 Gbit/s is more than the host moves: then every try must show the
        // host busy with others, and the link still carry well above the 1 Gbit link's cap.
        let near_four = |rate: f64| (3.6..=4.4).contains(&(rate / one));
        let mut tries = Vec::new();
        for _ in 0..5 {
            tries.push(net_measure(lab.link("4g"), direction));
            if tries.iter().any(|(rate, _)| near_four(*rate)) {
                break;
            }
        }
        let four = tries.iter().map(|(rate, _)| *rate).fold(0.0, f64::max);
        if near_four(four) {
            continue;
        }
        let message = format!(
            "4gbit {direction}: {four:.1} MB/s = {:.2} × the 1gbit link's {one:.1} MB/s \
             (tries: rate MB/s, host busy with others: {tries:?})",
            four / one
        );
        assert!(tries.iter().all(|(_, busy)| *busy), "{message}");
        assert!(four > 2.0 * one, "{message}");
        eprintln!("note: the host was busy with other processes: {message}");
    }
}

/// Runs `iopath run URL WORKLOAD --duration 2s --ramp 500ms --json -`.
fn nbd_run(url: &str, workload: &[&str]) -> Value {
    nbd_run_all(&[url], workload)
}

/// Runs `iopath run URL… WORKLOAD --duration 2s --ramp 500ms --json -`: one test over every
/// target at once.
fn nbd_run_all(urls: &[&str], workload: &[&str]) -> Value {
    nbd_run_timed(urls, workload, "2s", "500ms")
}

/// Runs `iopath run URL… WORKLOAD --duration DURATION --ramp RAMP --json -`.
fn nbd_run_timed(urls: &[&str], workload: &[&str], duration: &str, ramp: &str) -> Value {
    let output = measured_iopath()
        .arg("run")
        .args(urls)
        .args(workload)
        .args(["--duration", duration, "--ramp", ramp, "--json", "-"])
        .output()
        .expect("iopath runs");
    assert!(
        output.status.success(),
        "iopath run {urls:?} {workload:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("a RunResult")
}

/// Read MB/s of the first test of a RunResult.
fn read_rate(json: &Value) -> f64 {
    json["tests"][0]["read"]["bytes_per_second"]
        .as_f64()
        .expect("a read rate")
        / 1e6
}

/// Busiest core of the first test of a RunResult, percent.
fn busiest_core_percent(json: &Value) -> f64 {
    support::busy_host::core_busy_percents(json)
        .into_iter()
        .fold(0.0, f64::max)
}

/// The best read rate of up to `tries` runs of `workload` against `url`, stopping once `good`
/// holds.
fn best_nbd_rate(tries: u32, url: &str, workload: &[&str], good: impl Fn(f64) -> bool) -> f64 {
    let mut best = 0.0f64;
    for _ in 0..tries {
        let json = nbd_run(url, workload);
        let rate = read_rate(&json);
        eprintln!(
            "{url} {}: {rate:.1} MB/s, busiest core {:.0} %",
            workload.join(" "),
            busiest_core_percent(&json)
        );
        best = best.max(rate);
        if good(best) {
            break;
        }
    }
    best
}

/// Sequential 1 MiB reads at QD 8 over NBD.
const SEQUENTIAL_READS: [&str; 6] = ["--rw", "read", "--bs", "1m", "--qd", "8"];
/// Random 4 KiB reads at QD 32 over NBD.
const SMALL_RANDOM_READS: [&str; 6] = ["--rw", "randread", "--bs", "4k", "--qd", "32"];

#[test]
fn nbd_sequential_reads_scale_with_the_link() {
    let Some(lab) = Lab::up(&["1g", "4g"]) else {
        return;
    };
    let near_link = |rate: f64| rate >= 0.95 * GIGABIT_PAYLOAD_MB_S;
    let one = best_nbd_rate(3, &lab.link("1g").nbd, &SEQUENTIAL_READS, near_link);
    let near_four = |rate: f64| (3.6..=4.4).contains(&(rate / one));
    let four = best_nbd_rate(3, &lab.link("4g").nbd, &SEQUENTIAL_READS, near_four);
    eprintln!("NBD 1 MiB QD 8 reads: 1gbit {one:.1} MB/s, 4gbit {four:.1} MB/s");
    assert!(
        near_four(four),
        "4gbit {four:.1} MB/s = {:.2} × 1gbit {one:.1} MB/s, expected 4 ± 10 %",
        four / one
    );
}

#[test]
fn nbd_small_random_reads_fill_a_1gbit_link() {
    // 4 KiB reads at QD 32 keep 128 KiB in flight, about 1 ms of a 1gbit link, so they fill
    // the link only while the host turns every completion around quickly. Measured here: 92
    // to 99.7 % of what `iopath net` carries on the link in most 2-s runs (unshaped, the same
    // reads ran at 360 to 460 MB/s), but 50 to 80 % in runs where other work on the machine
    // held the CPU (p99 latency 10 ms instead of 2 ms). So: the best of up to five runs must
    // fill at least 80 % of the link when the host is at least twice as fast as the link;
    // on a host slower than that, it must at least beat a path that pays each read's link
    // time and host time one after the other (the queue overlaps them). Never above the link.
    let Some(lab) = Lab::up(&["1g", "un"]) else {
        return;
    };
    let link = best_of(
        5,
        |rate| rate > 114.0,
        || net_rate(lab.link("1g"), "receive"),
    );
    // What the link can carry at most, however busy the machine was when it was measured.
    let capacity = link.max(GIGABIT_PAYLOAD_MB_S);
    let fast_host = |rate: f64| rate >= 2.0 * link;
    let host = best_nbd_rate(3, &lab.link("un").nbd, &SMALL_RANDOM_READS, fast_host);
    let filled = |rate: f64| rate >= 0.9 * link;
    let shaped = best_nbd_rate(5, &lab.link("1g").nbd, &SMALL_RANDOM_READS, filled);
    let serial = 1.0 / (1.0 / link + 1.0 / host);
    eprintln!(
        "NBD 4 KiB QD 32 reads: 1gbit {shaped:.1} MB/s of a link carrying {link:.1} MB/s \
         ({:.0} %); unshaped {host:.1} MB/s; one after the other {serial:.1} MB/s",
        shaped / link * 100.0
    );
    // NBD adds a 16-byte reply header to every 4 KiB: the data can never exceed the link.
    assert!(
        shaped <= capacity * 1.02,
        "{shaped:.1} MB/s of reads over a link that carries {capacity:.1} MB/s"
    );
    if fast_host(host) {
        assert!(
            shaped >= 0.8 * link,
            "{shaped:.1} MB/s over 1gbit: under 80 % of the link ({link:.1} MB/s) though the \
             host does {host:.1} MB/s unshaped"
        );
    } else {
        eprintln!(
            "note: the host ({host:.1} MB/s unshaped) is under twice the link: busy; only \
             checked that the queue overlaps link and host time"
        );
        assert!(
            shaped >= serial,
            "{shaped:.1} MB/s over 1gbit: no better than paying link ({link:.1} MB/s) and host \
             ({host:.1} MB/s) one after the other ({serial:.1} MB/s): the queue does not \
             overlap them"
        );
    }
}

#[test]
fn nbd_small_random_reads_unshaped_are_bound_by_the_host() {
    // Over the unshaped path the same reads are limited by the host: well above what a
    // 1gbit link carries. (A core near 100 % shows it too, but the other core shares the
    // work of client, server and softirqs, so that is reported, not asserted.)
    let Some(lab) = Lab::up(&["un"]) else {
        return;
    };
    // When other processes keep the cores full, the host is slower than the link can show:
    // such a try holds when the verdict says the host's CPU was taken by others.
    let well_above = |rate: f64| rate > GIGABIT_PAYLOAD_MB_S * 1.25;
    let mut seen = Vec::new();
    for _ in 0..3 {
        let json = nbd_run(&lab.link("un").nbd, &SMALL_RANDOM_READS);
        let rate = read_rate(&json);
        let busy = busy_with_others(&json);
        let (verdict, analysis) = verdict(&json);
        seen.push(format!(
            "{rate:.1} MB/s, busy with others: {busy}, {verdict}: {}",
            analysis["evidence"]
        ));
        if well_above(rate) {
            return;
        }
        if busy {
            assert!(names_the_busy_host(&json), "{seen:#?}");
            eprintln!("note: the host was busy with other processes: {seen:#?}");
            return;
        }
    }
    panic!(
        "unshaped: not clearly above what a 1gbit link carries ({GIGABIT_PAYLOAD_MB_S:.1} \
         MB/s), on a host not busy with others: {seen:#?}"
    );
}

/// The verdict of the first test of a RunResult, and its analysis.
fn verdict(json: &Value) -> (String, &Value) {
    let analysis = &json["tests"][0]["analysis"];
    (
        analysis["verdict"].as_str().unwrap_or("none").to_string(),
        analysis,
    )
}

/// Whether the first test of `json` is link-bound at 90–100 % of its declared link (with
/// 1.5 points for the window's edges on a loaded machine); what it found goes into `seen`
/// either way.
fn fills_the_declared_link(json: &Value, seen: &mut Vec<String>) -> bool {
    let (verdict, analysis) = verdict(json);
    let declared = analysis["hops"]
        .as_array()
        .and_then(|hops| hops.iter().find(|hop| hop["declared"] == true))
        .map(|hop| hop["utilisation_percent"].as_f64().unwrap_or(0.0));
    seen.push(format!(
        "{verdict} at {declared:?} % ({})",
        analysis["evidence"]
    ));
    // Up to 101.5 %: on the loaded 2-core CI machine, 4-second runs over a link that is
    // exactly full measured up to 100.9 % of its payload (completions are timed when they are
    // reaped, so those reaped late at the window's start count; tbf lets a bucket of 8 ms
    // through after an idle moment). A wrong verdict or a link under 90 % still fails.
    verdict == "link_bound" && declared.is_some_and(|u| (90.0..=101.5).contains(&u))
}

#[test]
fn a_declared_1gbe_link_shaped_to_1gbe_is_link_bound() {
    let Some(lab) = Lab::up(&["1g"]) else {
        return;
    };
    let mut workload = SEQUENTIAL_READS.to_vec();
    workload.extend(["--link", "1gbe"]);
    let mut seen = Vec::new();
    for _ in 0..3 {
        let json = nbd_run(&lab.link("1g").nbd, &workload);
        if fills_the_declared_link(&json, &mut seen) {
            return;
        }
    }
    panic!("expected link-bound at 90–100 % of the declared 1GbE link: {seen:?}");
}

/// The review's comparison re-enacted: iSCSI, SMB and NFS 1 MiB sequential reads at QD 8 over
/// one 1 Gbit link, then side by side in `iopath compare`. iSCSI and NFS are each link-bound at
/// 90–100 % of the declared 1GbE's payload, and each refills its queue one read at a time
/// (its replies handed back as they arrive, not in batches of the depth). SMB runs and is compared, but its rate is not held
/// to the link here: this test build leaves the signing's generic AES-GMAC code unoptimised,
/// which holds one connection to about 40 MB/s of a core; the release build fills the link
/// (docs/lab.md's table).
#[test]
fn iscsi_smb_and_nfs_sequential_reads_side_by_side_each_fill_a_1gbit_link() {
    if !support::require(
        has_command("tgtd")
            && has_command("ganesha.nfsd")
            && has_command("rpcbind")
            && has_command("smbd")
            && has_command("pdbedit"),
        "tgtd (tgt), ganesha.nfsd (nfs-ganesha, nfs-ganesha-vfs), rpcbind and smbd (samba) for \
         the lab's iSCSI, NFS and SMB servers",
    ) {
        return;
    }
    let Some(lab) = Lab::up_with(&["1g"], &[]) else {
        return;
    };
    let link = lab.link("1g");
    let directory = tempfile::tempdir().unwrap();
    let mut results = Vec::new();
    let (smb, credentials) = link.smb.clone().expect("the lab's SMB share");
    for (label, url, extra) in [
        (
            "iscsi",
            link.iscsi.clone().expect("the lab's iSCSI target"),
            None,
        ),
        ("smb", smb, Some(credentials)),
        ("nfs", link.nfs.clone().expect("the lab's NFS export"), None),
    ] {
        let measures_the_link = extra.is_none();
        let json = directory.path().join(format!("{label}.json"));
        let trace = directory.path().join(format!("{label}.csv"));
        let mut seen = Vec::new();
        let mut held = false;
        for _ in 0..3 {
            let output = measured_iopath()
                .arg("run")
                .arg(&url)
                .args(SEQUENTIAL_READS)
                // 4 s, not 2: completions are counted in the window when they are reaped, so
                // a loaded machine that reaps a few late at the window's start counts a 1 MiB
                // read or two that crossed the wire before it (+0.45 % each over 2 s, enough
                // to pass the link's 100 % on a shaped link that is exactly full).
                .args(["--link", "1gbe", "--duration", "4s", "--ramp", "500ms"])
                .args(["--label", label, "--json"])
                .arg(&json)
                .arg("--trace-io")
                .arg(&trace)
                .args(
                    extra
                        .iter()
                        .flat_map(|file| ["--smb-credentials", file.as_str()]),
                )
                .output()
                .expect("iopath runs");
            assert!(
                output.status.success(),
                "{url}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            let result: Value =
                serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
            if !measures_the_link {
                let read = &result["tests"][0]["read"];
                assert!(read["bytes"].as_u64().unwrap_or(0) > 0, "{label}: {read}");
                held = true;
                break;
            }
            if fills_the_declared_link(&result, &mut seen) {
                held = true;
                break;
            }
        }
        if measures_the_link {
            let refilled = share_issued_into_a_full_queue(&trace, 8);
            assert!(
                refilled >= 0.5,
                "{label}: only {:.0} % of the reads were issued into a full queue of 8: the \
                 engine hands completions back in batches",
                refilled * 100.0
            );
        }
        assert!(
            held,
            "{label}: expected link-bound at 90–100 % of the declared 1GbE link: {seen:?}"
        );
        results.push(json);
    }
    let compared = iopath()
        .arg("compare")
        .args(&results)
        .output()
        .expect("iopath compare runs");
    let text = String::from_utf8_lossy(&compared.stdout);
    assert!(compared.status.success(), "{text}");
    assert!(
        text.contains("iscsi")
            && text.contains("smb")
            && text.contains("nfs")
            && text.matches("link-bound").count() >= 2,
        "{text}"
    );
}

/// The share of the I/Os of an `--trace-io` CSV that found `depth` in flight once issued. A
/// pipelined engine over a paced link hands each reply back as it arrives and the worker
/// refills that one slot (nearly all issued into a full queue); one that waits, once it has a
/// completion, for replies still crossing the link hands them back in lockstep batches of the
/// depth (one in `depth` issued into a full queue).
fn share_issued_into_a_full_queue(trace: &Path, depth: u32) -> f64 {
    let text = std::fs::read_to_string(trace).expect("the I/O trace");
    let in_flight: Vec<u32> = text
        .lines()
        .skip(1)
        .filter_map(|line| line.rsplit(',').next()?.trim().parse().ok())
        .collect();
    assert!(!in_flight.is_empty(), "an empty I/O trace: {text}");
    in_flight.iter().filter(|&&count| count == depth).count() as f64 / in_flight.len() as f64
}

/// 4 KiB reads at QD 1 over an unshaped path: the queue is full and nothing visible limits,
/// but nothing seen says the server would serve more at once, so the verdict is latency-bound
/// beyond the last visible hop; the deeper queue it runs unasked finds the queue depth the
/// limit (`latency→queue`).
#[test]
fn small_reads_at_qd_1_on_the_unshaped_path_are_latency_bound_and_confirm_finds_the_queue() {
    let Some(lab) = Lab::up(&["un"]) else {
        return;
    };
    let mut seen = Vec::new();
    let mut busy = 0;
    for _ in 0..3 {
        let json = nbd_run(
            &lab.link("un").nbd,
            &["--rw", "randread", "--bs", "4k", "--qd", "1"],
        );
        let (verdict, analysis) = verdict(&json);
        let confirmation = &analysis["confirmation"];
        seen.push(format!(
            "{verdict}: {}; {}",
            analysis["evidence"], confirmation["summary"]
        ));
        assert_ne!(verdict, "queue_depth_bound", "{seen:?}");
        if verdict == "latency_bound"
            && analysis["evidence"]
                .as_str()
                .is_some_and(|e| e.starts_with("beyond the last visible hop: 1 I/O in flight"))
            && confirmation["derived_verdict"] == "queue_depth_bound"
            && confirmation["outcome"] == "refuted"
        {
            return;
        }
        if busy_with_others(&json) {
            // Other processes kept the cores full: the verdict must name them.
            assert!(names_the_busy_host(&json), "{seen:?}");
            busy += 1;
        }
    }
    if busy == 3 {
        eprintln!("note: every try ran on a host busy with other processes: {seen:?}");
        return;
    }
    panic!("expected latency-bound at QD 1, and QD 2 finding the queue: {seen:?}");
}

/// The declared hops of a test's analysis: (key, utilisation percent).
fn declared_hops(analysis: &Value) -> Vec<(String, f64)> {
    analysis["hops"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|hop| hop["declared"] == true)
        .map(|hop| {
            (
                hop["hop_key"].as_str().unwrap_or("").to_string(),
                hop["utilisation_percent"].as_f64().unwrap_or(0.0),
            )
        })
        .collect()
}

#[test]
fn four_1gbit_links_read_together_are_link_bound_on_the_four() {
    // Four NBD servers, each behind its own 1 Gbit link, read in one test with `--link 1gbe`:
    // one 1GbE per route, each at its capacity, not one 1GbE at 400 %.
    let Some(lab) = Lab::up(&["1g", "1g", "1g", "1g"]) else {
        return;
    };
    let urls: Vec<&str> = ["1g", "1g-2", "1g-3", "1g-4"]
        .iter()
        .map(|name| lab.link(name).nbd.as_str())
        .collect();
    let mut workload = SEQUENTIAL_READS.to_vec();
    workload.extend(["--link", "1gbe"]);
    let mut seen = Vec::new();
    for _ in 0..3 {
        let json = nbd_run_all(&urls, &workload);
        let (verdict, analysis) = verdict(&json);
        let links = declared_hops(analysis);
        seen.push(format!(
            "{verdict} at {links:?} ({:.1} MB/s: {})",
            read_rate(&json),
            analysis["evidence"]
        ));
        if verdict == "link_bound"
            && links.len() == 4
            && links.iter().all(|(_, u)| (90.0..=105.0).contains(u))
            && analysis["evidence"]
                .as_str()
                .is_some_and(|e| e.contains("of 4 × 1GbE"))
        {
            return;
        }
    }
    panic!("expected link-bound at 90–105 % of each of four 1GbE links: {seen:?}");
}

#[test]
fn two_targets_behind_one_1gbit_link_are_bound_by_that_link() {
    // Two exports of one server, behind one shaped link: the declared 1GbE is one hop that
    // carries both.
    let Some(lab) = Lab::up(&["1g"]) else {
        return;
    };
    let base = &lab.link("1g").nbd;
    let (first, second) = (format!("{base}a"), format!("{base}b"));
    let mut workload = SEQUENTIAL_READS.to_vec();
    workload.extend(["--link", "1gbe"]);
    let mut seen = Vec::new();
    for _ in 0..3 {
        let json = nbd_run_all(&[&first, &second], &workload);
        let (verdict, analysis) = verdict(&json);
        let links = declared_hops(analysis);
        seen.push(format!("{verdict} at {links:?} ({})", analysis["evidence"]));
        if verdict == "link_bound" && links.len() == 1 && (90.0..=105.0).contains(&links[0].1) {
            return;
        }
    }
    panic!("expected link-bound at 90–105 % of one shared 1GbE link: {seen:?}");
}

#[test]
fn a_declared_40gbe_link_over_an_unshaped_veth_is_bound_by_the_host() {
    // The veth reports 10000 Mb/s, which is not a capacity; 40GbE is far from full; the
    // host's CPU (client, server and softirqs on two cores) is what limits.
    let Some(lab) = Lab::up(&["un"]) else {
        return;
    };
    let mut workload = SMALL_RANDOM_READS.to_vec();
    workload.extend(["--link", "40gbe"]);
    let mut seen = Vec::new();
    for _ in 0..3 {
        let json = nbd_run(&lab.link("un").nbd, &workload);
        let (verdict, analysis) = verdict(&json);
        let evidence = analysis["evidence"].as_str().unwrap_or("").to_string();
        let veth_capacity = json["paths"][0]["hops"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|hop| hop["kind"] == "network_interface")
            .any(|hop| !hop["capacity"].is_null());
        assert!(
            !veth_capacity,
            "a veth was given a capacity: {}",
            json["paths"]
        );
        assert_ne!(verdict, "inconclusive", "{evidence}");
        seen.push(format!("{verdict}: {evidence}"));
        if verdict == "host_cpu_bound" {
            return;
        }
    }
    panic!("expected host-CPU-bound with 40GbE declared over a veth: {seen:?}");
}

#[test]
fn confirm_at_qd_1_finds_the_queue_depth_the_limit() {
    // 4 KiB reads at QD 1 over a 1 Gbit link use half of it at most: QD 2 raises the rate.
    // The verdict is queue-depth-bound on a quiet host (confirmed), host-CPU-bound on a busy
    // one (refuted: the experiment finds the queue); either way the finding is the queue.
    let Some(lab) = Lab::up(&["1g"]) else {
        return;
    };
    let workload = [
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "1",
        "--link",
        "1gbe",
        "--confirm",
    ];
    let mut seen = Vec::new();
    for _ in 0..3 {
        let json = nbd_run(&lab.link("1g").nbd, &workload);
        let (verdict, analysis) = verdict(&json);
        let confirmation = &analysis["confirmation"];
        assert_eq!(confirmation["experiment"], "queue_depth", "{confirmation}");
        assert_eq!(confirmation["setting_after"], 2, "{confirmation}");
        let expected = if verdict == "queue_depth_bound" {
            "confirmed"
        } else {
            "refuted"
        };
        seen.push(format!("{verdict}: {}", confirmation["summary"]));
        if confirmation["derived_verdict"] == "queue_depth_bound"
            && confirmation["outcome"] == expected
        {
            return;
        }
    }
    panic!("expected QD 2 to find the queue depth the limit: {seen:?}");
}

// `iopath net` on loopback: no root needed.

/// A port on loopback where nothing listens.
fn closed_loopback_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let address = listener.local_addr().expect("its address");
    drop(listener);
    address.to_string()
}

/// Starts `iopath net --listen 127.0.0.1:0 --once` and returns it with its address.
fn loopback_server() -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut child = iopath()
        .args(["net", "--listen", "127.0.0.1:0", "--once"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("iopath runs");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = std::io::BufReader::new(stdout).lines();
    let first = lines.next().expect("a line").expect("text");
    let address = first
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {first}"))
        .to_string();
    // Keep reading (and discarding) so the server never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (child, address)
}

/// Kills a child left running by a failed test.
struct ChildGuard(std::process::Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

#[test]
fn net_on_loopback_writes_a_run_result() {
    let _lock = MeasureLock::take();
    let (server, address) = loopback_server();
    let mut server = ChildGuard(server);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json_path = dir.path().join("link.json");
    let output = iopath()
        .args(["net", &address, "--streams", "2", "--duration", "1500ms"])
        .args(["--direction", "both", "--label", "loopback", "--json"])
        .arg(&json_path)
        .output()
        .expect("iopath runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("net send") && stdout.contains("net receive"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Gbit/s") && stdout.contains("MB/s"),
        "{stdout}"
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).expect("the JSON file"))
            .expect("a RunResult");
    assert_eq!(json["tests"].as_array().map(Vec::len), Some(0));
    assert_eq!(json["label"], "loopback");
    assert!(json["host"]["cpu_count"].as_u64() > Some(0));
    assert!(
        json["command_line"]
            .as_array()
            .is_some_and(|args| args.iter().any(|a| a == "--streams"))
    );
    let tests = json["link_tests"].as_array().expect("link_tests");
    assert_eq!(tests.len(), 2);
    for (test, direction) in tests.iter().zip(["send", "receive"]) {
        assert_eq!(test["direction"], direction);
        assert_eq!(test["streams"], 2);
        assert_eq!(test["peer"], address.as_str());
        let bytes = test["bytes"].as_u64().expect("bytes");
        let series = test["series"].as_array().expect("series");
        assert_eq!(series.len(), 2, "1.5 s in one-second intervals");
        let series_bytes: u64 = series.iter().filter_map(|p| p["bytes"].as_u64()).sum();
        assert_eq!(series_bytes, bytes);
        let measured_ns = test["measured_ns"].as_u64().expect("measured_ns");
        assert!(
            (1_500_000_000..1_700_000_000).contains(&measured_ns),
            "{measured_ns}"
        );
        assert!(test["cpu"]["wall_ns"].as_u64() > Some(0));
    }
    let status = server.0.wait().expect("the server exits after one session");
    assert!(status.success(), "server: {status}");
}

#[test]
fn net_names_the_address_it_cannot_reach() {
    let address = closed_loopback_port();
    let output = iopath()
        .args(["net", &address, "--duration", "1s"])
        .output()
        .expect("iopath runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&address), "{stderr}");
}

#[test]
fn net_refuses_bad_input_with_status_2() {
    for args in [
        vec!["net", "300.1.2.3"],
        vec!["net", "127.0.0.1:notaport"],
        vec!["net", "127.0.0.1", "--streams", "0"],
        vec!["net", "127.0.0.1", "--duration", "0"],
        vec!["net", "127.0.0.1", "--direction", "sideways"],
        vec!["net", "--listen", "not an address"],
        vec!["net"],
    ] {
        let output = iopath().args(&args).output().expect("iopath runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(!stderr.trim().is_empty(), "{args:?}: no message");
    }
}
