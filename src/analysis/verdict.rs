//! The verdict of one test: the utilisation of every hop, of the host CPU and of the queue,
//! and the one classification that explains the result, with its evidence.
//!
//! The checks run in a fixed order and the first that holds decides (docs/verdict.md):
//! 1. nothing completed, or the null engine → inconclusive (or host-CPU-bound);
//! 2. the user's rate cap reached (≥ 90 %) or think time / transfer delay set → rate-limited;
//! 3. a hop below a cache exceeded (> 100 % + margin), or buffered random reads of a working
//!    set that fits in memory at page-cache latency → cached;
//! 4. the busiest hop at ≥ 85 % → link-, bus- or device-bound by its kind;
//! 5. the rate stepped down once in the measured window ([`super::bucket_or_cliff`]): a
//!    token bucket ran dry → burst-bucket; writes fell after a number of bytes → write-cliff;
//! 6. buffered I/O that waited for the device, whose requests show the kernel's queue: a
//!    read-ahead window in flight → read-ahead-bound; write-back carrying the writes →
//!    write-back-bound ([`super::hidden_queue`]);
//! 7. a core ≥ 95 %, iopath's busiest thread ≥ 90 % of a core, or the host ≥ 90 % →
//!    host-CPU-bound;
//! 8. the queue kept full (Little's law ≥ 75 % of the configured outstanding I/O): below 32
//!    outstanding and below the device's limit → queue-depth-bound when the device is seen to
//!    have idle parallelism (a local device reached directly, its queue limit known and not
//!    reached), else latency-bound, naming where the time goes unseen; 32 or more, or at the
//!    device's limit → device-bound;
//! 9. anything else → inconclusive, saying what is missing.

use super::HostFacts;
use super::protocols::Protocol;
use super::trust::{self, TrustInputs, main_direction, working_set_bytes};
use crate::result::{
    CoreUtilisation, CpuUtilisation, Direction, Duplex, Hop, HopKind, HopOrigin, HopUtilisation,
    QueueUtilisation, RateStep, StoragePath, TargetInfo, TargetKind, TestAnalysis, TestConfidence,
    TestResult, Verdict,
};
use crate::units::{format_bytes, format_iops, format_percent, format_rate};

/// A hop at or above this utilisation (percent) limits the result.
pub const HOP_BOUND_PERCENT: f64 = 85.0;
/// A rate cap reached to this percentage limits the result.
pub const RATE_LIMIT_REACHED_PERCENT: f64 = 90.0;
/// iopath's busiest thread at this share of a core saturates the host.
pub const THREAD_BOUND_PERCENT: f64 = 90.0;
/// A core this busy (all processes) saturates the host.
pub const CORE_BOUND_PERCENT: f64 = 95.0;
/// The whole host this busy saturates it.
pub const HOST_BOUND_PERCENT: f64 = 90.0;
/// A worker that waited this share of the measured time for a CPU (runnable, not running)
/// was held back by the host's CPU: on a host full of other work, a step in its rate is then
/// no proof of a burst bucket or a write cliff.
pub const CPU_WAIT_BOUND_PERCENT: f64 = 25.0;
/// From this share of the measured time spent waiting for a CPU, the host-CPU evidence says it.
pub const CPU_WAIT_NAMED_PERCENT: f64 = 10.0;
/// Little's law outstanding I/O at this share of the configured outstanding I/O: the queue was
/// kept full.
pub const QUEUE_FULL_PERCENT: f64 = 75.0;
/// From this many outstanding I/Os on, more rarely helps: a full queue this deep is the
/// device's limit, not the queue's.
pub const DEEP_QUEUE: u32 = 32;
/// Base latency of a read served from the page cache, ns (plus copying at memory speed).
pub const PAGE_CACHE_BASE_LATENCY_NS: f64 = 20_000.0;
/// Memory copy speed assumed when it was not measured, bytes per second.
const ASSUMED_MEMORY_COPY: f64 = 2e9;

/// Traffic of one target during a test.
#[derive(Clone, Copy, Debug, Default)]
struct TargetTraffic {
    read_bytes_per_second: f64,
    write_bytes_per_second: f64,
    read_iops: f64,
    write_iops: f64,
    buffered: bool,
}

impl TargetTraffic {
    fn read_io_bytes(&self) -> u64 {
        if self.read_iops > 0.0 {
            (self.read_bytes_per_second / self.read_iops).round() as u64
        } else {
            0
        }
    }

    fn write_io_bytes(&self) -> u64 {
        if self.write_iops > 0.0 {
            (self.write_bytes_per_second / self.write_iops).round() as u64
        } else {
            0
        }
    }
}

/// Traffic of each target the test used, from its jobs (a job over several targets spreads
/// evenly over them).
fn target_traffic(test: &TestResult, target_count: usize) -> Vec<Option<TargetTraffic>> {
    let mut traffic: Vec<Option<TargetTraffic>> = vec![None; target_count];
    for job in &test.jobs {
        let count = job.target_indexes.len().max(1) as f64;
        for &index in &job.target_indexes {
            let Some(slot) = traffic.get_mut(index) else {
                continue;
            };
            let entry = slot.get_or_insert_with(TargetTraffic::default);
            entry.read_bytes_per_second += job.read.bytes_per_second / count;
            entry.write_bytes_per_second += job.write.bytes_per_second / count;
            entry.read_iops += job.read.iops / count;
            entry.write_iops += job.write.iops / count;
            entry.buffered |= !job.direct;
        }
    }
    traffic
}

/// A hop's traffic as it is added up over targets.
struct HopLoad<'a> {
    hop: &'a Hop,
    inbound_data: f64,
    outbound_data: f64,
    overhead_in: f64,
    overhead_out: f64,
    iops: f64,
    below_page_cache: bool,
    protocol: Option<Protocol>,
}

/// Utilisation of every hop with a capacity on the paths of the test's targets; hops shared by
/// several targets (same key) carry their sum.
fn hop_loads<'a>(traffic: &[Option<TargetTraffic>], paths: &'a [StoragePath]) -> Vec<HopLoad<'a>> {
    let mut loads: Vec<HopLoad> = Vec::new();
    for (index, traffic) in traffic.iter().enumerate() {
        let (Some(traffic), Some(path)) = (traffic, paths.get(index)) else {
            continue;
        };
        let mut below_page_cache = false;
        for hop in &path.hops {
            if hop.kind == HopKind::PageCache {
                // The page cache above the target is passed by buffered I/O only; one deeper in
                // the stack (under a buffered loop device) by every I/O.
                let passed = traffic.buffered || hop.key != super::path::PAGE_CACHE_KEY;
                below_page_cache |= passed;
                if !passed {
                    continue;
                }
            }
            let Some(_) = &hop.capacity else {
                continue;
            };
            let protocol = hop.protocol.as_deref().and_then(Protocol::from_key);
            let read_iops = traffic.read_iops * hop.read_share;
            let write_iops = traffic.write_iops * hop.write_share;
            let (mut overhead_in, mut overhead_out) = (0.0, 0.0);
            if let Some(protocol) = protocol {
                let read = protocol.per_io_overhead(Direction::Read, traffic.read_io_bytes());
                let write = protocol.per_io_overhead(Direction::Write, traffic.write_io_bytes());
                overhead_in = read_iops * read.from_target_bytes as f64
                    + write_iops * write.from_target_bytes as f64;
                overhead_out = read_iops * read.to_target_bytes as f64
                    + write_iops * write.to_target_bytes as f64;
            }
            let is_page_cache = hop.kind == HopKind::PageCache;
            let load = HopLoad {
                hop,
                inbound_data: traffic.read_bytes_per_second * hop.read_share,
                outbound_data: traffic.write_bytes_per_second * hop.write_share,
                overhead_in,
                overhead_out,
                iops: read_iops + write_iops,
                below_page_cache: below_page_cache && !is_page_cache,
                protocol,
            };
            match loads.iter_mut().find(|l| l.hop.key == hop.key) {
                Some(existing) => {
                    existing.inbound_data += load.inbound_data;
                    existing.outbound_data += load.outbound_data;
                    existing.overhead_in += load.overhead_in;
                    existing.overhead_out += load.overhead_out;
                    existing.iops += load.iops;
                    existing.below_page_cache |= load.below_page_cache;
                }
                None => loads.push(load),
            }
        }
    }
    loads
}

fn utilisation(load: &HopLoad) -> HopUtilisation {
    let capacity = load
        .hop
        .capacity
        .as_ref()
        .expect("only hops with a capacity");
    let inbound = load.inbound_data + load.overhead_in;
    let outbound = load.outbound_data + load.overhead_out;
    let cap = capacity.payload_bytes_per_second.max(1) as f64;
    let bytes_percent = capacity.duplex.carried(inbound, outbound) / cap * 100.0;
    let iops_percent = capacity
        .iops
        .map_or(0.0, |iops| load.iops / iops.max(1) as f64 * 100.0);
    HopUtilisation {
        hop_key: load.hop.key.clone(),
        hop_name: load.hop.name.clone(),
        kind: load.hop.kind,
        declared: load.hop.origin == HopOrigin::Declared,
        inbound_bytes_per_second: inbound,
        outbound_bytes_per_second: outbound,
        protocol_overhead_bytes_per_second: load.overhead_in + load.overhead_out,
        capacity_bytes_per_second: capacity.payload_bytes_per_second,
        iops: load.iops,
        iops_capacity: capacity.iops,
        utilisation_percent: bytes_percent.max(iops_percent),
        below_page_cache: load.below_page_cache,
    }
}

fn cpu_utilisation(test: &TestResult) -> CpuUtilisation {
    let cpu = &test.cpu;
    let cores: Vec<CoreUtilisation> = cpu
        .cores
        .iter()
        .filter(|core| core.total_ns > 0)
        .map(|core| {
            let total = core.total_ns as f64;
            CoreUtilisation {
                cpu: core.cpu,
                busy_percent: core.busy_ns as f64 / total * 100.0,
                irq_percent: core.irq_ns as f64 / total * 100.0,
                softirq_percent: core.softirq_ns as f64 / total * 100.0,
            }
        })
        .collect();
    let busiest = cores
        .iter()
        .max_by(|a, b| a.busy_percent.total_cmp(&b.busy_percent));
    CpuUtilisation {
        process_percent_of_host: cpu.process_percent_of_host(),
        busiest_thread_percent: cpu.busiest_thread_percent(),
        busiest_core: busiest.map(|core| core.cpu),
        busiest_core_percent: busiest.map_or(0.0, |core| core.busy_percent),
        cores,
    }
}

fn queue_utilisation(
    test: &TestResult,
    traffic: &[Option<TargetTraffic>],
    paths: &[StoragePath],
) -> QueueUtilisation {
    let configured = test
        .jobs
        .iter()
        .map(|job| {
            job.worker_threads
                .saturating_mul(job.queue_depth_per_worker)
        })
        .sum();
    let achieved = test.read.iops * test.read.latency.mean_ns / 1e9
        + test.write.iops * test.write.latency.mean_ns / 1e9;
    // The devices at the bottom of each path: their limits add up (stripes, several targets).
    let mut seen: Vec<&str> = Vec::new();
    let mut limit: Option<u32> = Some(0);
    for (index, path) in paths.iter().enumerate() {
        if traffic.get(index).is_none_or(Option::is_none) {
            continue;
        }
        for hop in path.hops.iter().filter(|hop| hop.kind == HopKind::Disk) {
            if seen.contains(&hop.key.as_str()) {
                continue;
            }
            seen.push(&hop.key);
            limit = match (
                limit,
                hop.queue.as_ref().and_then(|q| q.outstanding_limit()),
            ) {
                (Some(sum), Some(device)) => Some(sum.saturating_add(device)),
                _ => None,
            };
        }
    }
    QueueUtilisation {
        configured_outstanding: configured,
        achieved_outstanding: achieved,
        device_queue_limit: limit.filter(|l| *l > 0 && !seen.is_empty()),
    }
}

/// Analyses one test against the paths of the run's targets.
pub fn analyse_test(
    test: &TestResult,
    targets: &[TargetInfo],
    paths: &[StoragePath],
    facts: &HostFacts,
) -> TestAnalysis {
    let traffic = target_traffic(test, targets.len().max(paths.len()));
    let loads = hop_loads(&traffic, paths);
    let hops: Vec<HopUtilisation> = loads.iter().map(utilisation).collect();
    let cpu = cpu_utilisation(test);
    let queue = queue_utilisation(test, &traffic, paths);
    let confidence = trust::test_confidence(test);
    let rate_step = super::bucket_or_cliff::rate_step_of(test);
    let target_indexes: Vec<usize> = traffic
        .iter()
        .enumerate()
        .filter_map(|(index, t)| t.map(|_| index))
        .collect();
    let trust_notes = trust::trust_notes(&TrustInputs {
        test,
        targets,
        paths,
        target_indexes: &target_indexes,
        hops: &hops,
        confidence: &confidence,
        memory_available_bytes: facts.memory_available_bytes,
        rate_step: rate_step.as_ref(),
    });
    let context = Context {
        test,
        targets,
        paths,
        facts,
        loads: &loads,
        hops: &hops,
        cpu: &cpu,
        queue: &queue,
        confidence: &confidence,
        target_indexes: &target_indexes,
        rate_step: rate_step.as_ref(),
    };
    let decision = classify(&context);
    TestAnalysis {
        verdict: decision.verdict,
        evidence: decision.evidence,
        limiting_hop: decision.hop,
        missing: decision.missing,
        hops,
        cpu,
        queue,
        confidence,
        trust_notes,
        memory_available_bytes: facts.memory_available_bytes,
        confirmation: None,
        server_hops: Vec::new(),
        rate_step,
    }
}

struct Context<'a> {
    test: &'a TestResult,
    targets: &'a [TargetInfo],
    paths: &'a [StoragePath],
    facts: &'a HostFacts,
    loads: &'a [HopLoad<'a>],
    hops: &'a [HopUtilisation],
    cpu: &'a CpuUtilisation,
    queue: &'a QueueUtilisation,
    confidence: &'a TestConfidence,
    target_indexes: &'a [usize],
    /// The rate stepped down during the test (a burst bucket, a write cliff).
    rate_step: Option<&'a RateStep>,
}

struct Decision {
    verdict: Verdict,
    evidence: String,
    hop: Option<String>,
    missing: Vec<String>,
}

impl Decision {
    fn new(verdict: Verdict, evidence: String) -> Self {
        Decision {
            verdict,
            evidence,
            hop: None,
            missing: Vec::new(),
        }
    }

    fn inconclusive(missing: Vec<String>) -> Self {
        Decision {
            verdict: Verdict::Inconclusive,
            evidence: format!("missing: {}", missing.join("; ")),
            hop: None,
            missing,
        }
    }
}

fn classify(context: &Context) -> Decision {
    let test = context.test;
    let (main, direction) = main_direction(test);
    if main.io_count == 0 {
        return Decision::inconclusive(vec!["no I/O completed in the measured time".into()]);
    }
    if direction == "trim" {
        return Decision::inconclusive(vec![
            "a test of trims only: trims move no data over the path, so no hop's capacity explains their rate".into(),
        ]);
    }
    if test
        .jobs
        .iter()
        .any(|job| !job.engine.capabilities.performs_io)
    {
        if let Some(evidence) = cpu_saturation(context) {
            return Decision::new(
                Verdict::HostCpuBound,
                format!("null engine (no I/O): {evidence}"),
            );
        }
        return Decision::inconclusive(vec![
            "the null engine does no I/O: only iopath's own overhead was measured, and the CPU was not saturated".into(),
        ]);
    }
    if let Some(decision) = rate_limit(context) {
        return decision;
    }
    if let Some(decision) = cached(context) {
        return decision;
    }
    if let Some(decision) = hop_bound(context) {
        return decision;
    }
    if let Some(step) = context.rate_step {
        // Other processes that filled the cores while a worker waited long for a CPU make
        // steps of their own (the scheduler handing iopath less of a core): the busy host is
        // what is known to limit, and the step stays in the evidence as what it may also be.
        // A worker that mostly waited for its I/O keeps the step as the verdict.
        if let Some(evidence) = cpu_saturation(context).filter(|_| {
            busy_with_others(context.cpu)
                && test.cpu.busiest_thread_cpu_wait_percent() >= CPU_WAIT_BOUND_PERCENT
        }) {
            return Decision::new(
                Verdict::HostCpuBound,
                format!(
                    "{evidence}; {}, which a host busy with other work can make too; {}",
                    super::bucket_or_cliff::evidence(step),
                    busiest_hop_summary(context)
                ),
            );
        }
        let verdict = match step {
            RateStep::BurstBucket(_) => Verdict::BurstBucket,
            RateStep::WriteCliff(_) => Verdict::WriteCliff,
        };
        return Decision::new(
            verdict,
            format!(
                "{}; {}",
                super::bucket_or_cliff::evidence(step),
                busiest_hop_summary(context)
            ),
        );
    }
    if let Some(decision) = hidden_queue(context) {
        return decision;
    }
    if let Some(evidence) = cpu_saturation(context) {
        return Decision::new(
            Verdict::HostCpuBound,
            format!(
                "{evidence}; {}{}",
                busiest_hop_summary(context),
                encryption_note(context)
            ),
        );
    }
    queue_or_device(context)
}

/// The most an I/O of `size_bytes` served by the page cache takes: the base latency plus one
/// copy at the memory copy bandwidth.
fn page_cache_latency_ns(context: &Context, size_bytes: f64) -> f64 {
    let copy = context
        .facts
        .memory_copy_bytes_per_second
        .map_or(ASSUMED_MEMORY_COPY, |b| b as f64);
    PAGE_CACHE_BASE_LATENCY_NS + size_bytes / copy * 1e9
}

/// Buffered I/O whose device requests show the kernel's own queue at work: a read-ahead
/// window in flight (read-ahead-bound), or write-back carrying the writes (write-back-bound).
///
/// Only where the stream waited for the device — its mean I/O took at least twice what one
/// served by the page cache takes — and iopath's own thread was not the limit: a stream that
/// never waited was not held back by the kernel's queue, whatever size its requests were.
fn hidden_queue(context: &Context) -> Option<Decision> {
    let (test, paths, targets) = (context.test, context.paths, context.target_indexes);
    if context.cpu.busiest_thread_percent >= THREAD_BOUND_PERCENT {
        return None;
    }
    let (main, _) = main_direction(test);
    let io_bytes = main.bytes as f64 / main.io_count.max(1) as f64;
    if main.latency.mean_ns < 2.0 * page_cache_latency_ns(context, io_bytes) {
        return None;
    }
    let summary = format!("{}, {}", busiest_hop_summary(context), cpu_summary(context));
    if let Some(window) = super::hidden_queue::read_ahead_window(test, paths, targets) {
        let evidence = window.evidence(test.read.bytes_per_second);
        let (figures, remedy) = evidence
            .split_once("; the kernel's")
            .unwrap_or((&evidence, ""));
        return Some(Decision::new(
            Verdict::ReadAheadBound,
            format!("{figures}, {summary}; the kernel's{remedy}"),
        ));
    }
    let evidence = super::hidden_queue::write_back(test, paths, targets)?;
    let (figures, remedy) = evidence
        .split_once("; the kernel's")
        .unwrap_or((&evidence, ""));
    Some(Decision::new(
        Verdict::WriteBackBound,
        format!("{figures}, {summary}; the kernel's{remedy}"),
    ))
}

/// For a CPU-bound test on an encrypted SMB session: that the client encrypts and decrypts
/// every byte (with the session's cipher), so the CPU is where encryption's cost shows.
fn encryption_note(context: &Context) -> String {
    let cipher = context
        .target_indexes
        .iter()
        .find_map(|&index| encrypted_with(context.targets.get(index)?.file_session.as_deref()?));
    match cipher {
        Some(cipher) => format!(
            "; the SMB session is encrypted{cipher}: the client encrypts and decrypts every byte on its CPU"
        ),
        None => String::new(),
    }
}

/// For an encrypted session as its `file_session` says (`SMB 3.0, encrypted (AES-128-CCM)`):
/// its cipher in words, ` (AES-128-CCM)`, or nothing when unnamed; `None` when not encrypted.
fn encrypted_with(session: &str) -> Option<&str> {
    let (_, after) = session.split_once("encrypted")?;
    Some(match after.find(')') {
        Some(end) if after.starts_with(" (") => &after[..=end],
        _ => "",
    })
}

fn rate_limit(context: &Context) -> Option<Decision> {
    for job in &context.test.jobs {
        let workload = &job.workload;
        if let Some(cap) = workload.rate_bytes_per_second.filter(|c| *c > 0) {
            let achieved = job.total.bytes_per_second;
            let percent = achieved / cap as f64 * 100.0;
            if percent >= RATE_LIMIT_REACHED_PERCENT {
                return Some(Decision::new(
                    Verdict::RateLimited,
                    format!(
                        "{} = {} of the rate cap {} ({}/s)",
                        format_rate(achieved),
                        format_percent(percent),
                        format_rate(cap as f64),
                        format_bytes(cap)
                    ),
                ));
            }
        }
        if let Some(cap) = workload.rate_iops.filter(|c| *c > 0) {
            let achieved = job.total.iops;
            let percent = achieved / cap as f64 * 100.0;
            if percent >= RATE_LIMIT_REACHED_PERCENT {
                return Some(Decision::new(
                    Verdict::RateLimited,
                    format!(
                        "{} = {} of the cap {}",
                        format_iops(achieved),
                        format_percent(percent),
                        format_iops(cap as f64)
                    ),
                ));
            }
        }
        if workload.think_time_ns > 0 {
            return Some(Decision::new(
                Verdict::RateLimited,
                format!(
                    "think time of {} after every {} I/O(s) paces the workload",
                    crate::units::format_latency(workload.think_time_ns as f64),
                    workload.think_time_blocks.max(1)
                ),
            ));
        }
        if let Some(line) = workload
            .access
            .active_lines()
            .find(|line| line.delay_ns > 0)
        {
            return Some(Decision::new(
                Verdict::RateLimited,
                format!(
                    "a transfer delay of {} after every burst of {} paces the workload",
                    crate::units::format_latency(line.delay_ns as f64),
                    line.burst_length.max(1)
                ),
            ));
        }
    }
    None
}

/// The margin above 100 % before a rate counts as above a hop's capacity.
fn above_capacity_margin(context: &Context) -> f64 {
    let (_, direction) = main_direction(context.test);
    let confidence = match direction {
        "total" => &context.confidence.total,
        "write" => &context.confidence.write,
        _ => &context.confidence.read,
    };
    confidence
        .bytes_per_second
        .as_ref()
        .map_or(0.0, |ci| ci.half_width_percent)
        .max(trust::ABOVE_CAPACITY_MARGIN_PERCENT)
}

fn cached(context: &Context) -> Option<Decision> {
    let limit = 100.0 + above_capacity_margin(context);
    let exceeded = busiest(
        context
            .hops
            .iter()
            .enumerate()
            .filter(|(_, hop)| hop.utilisation_percent > limit),
    );
    if let Some((index, hop)) = exceeded {
        let evidence = format!(
            "{} is {} of what {} can carry",
            format_rate(data_rate(&context.loads[index])),
            format_percent(hop.utilisation_percent),
            hop_label(&context.loads[index])
        );
        if hop.below_page_cache {
            let what = match (
                context.test.read.io_count > 0,
                context.test.write.io_count > 0,
            ) {
                (true, false) => "buffered reads came from the page cache",
                (false, true) => "buffered writes were absorbed by the page cache",
                _ => "buffered I/O was served by the page cache",
            };
            let mut decision = Decision::new(Verdict::Cached, format!("{evidence}: {what}"));
            decision.hop = Some(hop.hop_key.clone());
            return Some(decision);
        }
        let compression = super::written_data::compression_reason(context.test);
        if matches!(hop.kind, HopKind::Disk | HopKind::Device) {
            let or_compression =
                compression.map_or(String::new(), |reason| format!(" (or {reason})"));
            let mut decision = Decision::new(
                Verdict::Cached,
                format!("{evidence}: served by a cache{or_compression} in the device or array"),
            );
            decision.hop = Some(hop.hop_key.clone());
            return Some(decision);
        }
        let mut decision = Decision::inconclusive(vec![format!(
            "{evidence}, which no cache above it explains: {}",
            match (hop.declared, compression) {
                (true, _) => "check the declared figure",
                (false, Some(_)) =>
                    "a discovered figure is wrong, or the data was compressed on the way",
                (false, None) =>
                    "a discovered figure is wrong (the data written neither compresses nor repeats)",
            }
        )]);
        decision.hop = Some(hop.hop_key.clone());
        return Some(decision);
    }
    page_cache_reads(context)
}

/// Buffered, mostly random reads of a working set that fits in free memory, at the latency of
/// a copy from memory: the page cache answered them.
fn page_cache_reads(context: &Context) -> Option<Decision> {
    let test = context.test;
    if test.read.io_count == 0
        || !test
            .jobs
            .iter()
            .any(|job| !job.direct && job.workload.reads())
    {
        return None;
    }
    let random = test
        .jobs
        .iter()
        .filter(|job| job.workload.reads())
        .all(|job| job.workload.access.random_percent() >= 50.0);
    let available = context.facts.memory_available_bytes?;
    let working_set = working_set_bytes(test, context.targets);
    if !random || working_set == 0 || working_set > available {
        return None;
    }
    let read_size = test.read.bytes as f64 / test.read.io_count as f64;
    let bound_ns = page_cache_latency_ns(context, read_size);
    let latency = test.read.latency.mean_ns;
    (latency <= bound_ns).then(|| {
        Decision::new(
            Verdict::Cached,
            format!(
                "buffered random reads at {} mean latency (a copy from memory takes up to {}) with a working set of {} in {} of free memory: served by the page cache",
                crate::units::format_latency(latency),
                crate::units::format_latency(bound_ns),
                format_bytes(working_set),
                format_bytes(available)
            ),
        )
    })
}

/// The payload rate through a hop: the busier direction, or both for a shared hop.
fn data_rate(load: &HopLoad) -> f64 {
    let duplex = load
        .hop
        .capacity
        .as_ref()
        .map_or(Duplex::Full, |c| c.duplex);
    duplex.carried(load.inbound_data, load.outbound_data)
}

/// `1GbE (TCP/IP MTU 1500 payload 117.7 MB/s)`, `eth0 (10GbE TCP/IP MTU 9000 payload …)`,
/// `array (declared 3.80 GB/s)`.
fn hop_label(load: &HopLoad) -> String {
    let hop = load.hop;
    let Some(capacity) = &hop.capacity else {
        return hop.name.clone();
    };
    let mut parts = Vec::new();
    if let Some(catalog) = &capacity.catalog_name
        && catalog != &hop.name
    {
        parts.push(catalog.clone());
    }
    if let Some(variant) = &capacity.variant {
        parts.push(variant.clone());
    }
    let rate = format_rate(capacity.payload_bytes_per_second as f64);
    if capacity.catalog_name.is_none() && hop.origin == HopOrigin::Declared {
        parts.push(format!("declared {rate}"));
    } else if matches!(hop.kind, HopKind::PageCache | HopKind::Memory) || hop.name == "lo" {
        parts.push(format!("memory copy {rate}"));
    } else {
        parts.push(format!("payload {rate}"));
    }
    if capacity.duplex == Duplex::Half {
        parts.push("shared by both directions".into());
    }
    format!("{} ({})", hop.name, parts.join(" "))
}

/// The busiest of `hops`; of several equally busy, the first (the outermost: a bond before
/// its members).
fn busiest<'h>(
    hops: impl Iterator<Item = (usize, &'h HopUtilisation)>,
) -> Option<(usize, &'h HopUtilisation)> {
    // Rounding of the capacities (a bond's against its members') is not a difference.
    const SAME_PERCENT: f64 = 0.001;
    hops.fold(None, |best, candidate| match best {
        Some((_, hop))
            if hop.utilisation_percent + SAME_PERCENT >= candidate.1.utilisation_percent =>
        {
            best
        }
        _ => Some(candidate),
    })
}

/// Hops like the one at `index`: same kind, capacity and catalog link. The paths of a
/// multipath device over two FC ports, the members of a stripe, the links of targets that
/// leave by different NICs (one declared link per route).
fn sibling_hops(context: &Context, index: usize) -> Vec<usize> {
    let chosen = &context.hops[index];
    let catalog = |i: usize| {
        context.loads[i]
            .hop
            .capacity
            .as_ref()
            .and_then(|c| c.catalog_name.clone())
    };
    context
        .hops
        .iter()
        .enumerate()
        .filter(|(i, hop)| {
            hop.kind == chosen.kind
                && hop.capacity_bytes_per_second == chosen.capacity_bytes_per_second
                && hop.iops_capacity == chosen.iops_capacity
                && catalog(*i) == catalog(index)
        })
        .map(|(i, _)| i)
        .collect()
}

/// Of `siblings`, the ones at their capacity ([`HOP_BOUND_PERCENT`] or more): they carry the
/// test together.
fn parallel_hops(context: &Context, siblings: &[usize]) -> Vec<usize> {
    siblings
        .iter()
        .copied()
        .filter(|&i| context.hops[i].utilisation_percent >= HOP_BOUND_PERCENT)
        .collect()
}

/// When only some of `siblings` are at capacity: `; 1 of 4 1GbE at 85 % or more (98 %), the
/// others at 3.0–12 %: the load is not spread evenly`.
fn imbalance(context: &Context, siblings: &[usize], parallel: &[usize]) -> Option<String> {
    let idle: Vec<f64> = siblings
        .iter()
        .filter(|i| !parallel.contains(i))
        .map(|&i| context.hops[i].utilisation_percent)
        .collect();
    if idle.is_empty() || parallel.is_empty() {
        return None;
    }
    let range = |values: &[f64]| {
        let low = values.iter().copied().fold(f64::INFINITY, f64::min);
        let high = values.iter().copied().fold(0.0, f64::max);
        if format_percent(low) == format_percent(high) {
            format_percent(high)
        } else {
            format!(
                "{}–{}",
                format_percent(low).trim_end_matches(" %"),
                format_percent(high)
            )
        }
    };
    let busy: Vec<f64> = parallel
        .iter()
        .map(|&i| context.hops[i].utilisation_percent)
        .collect();
    Some(format!(
        "; {} of {} {} at {} or more ({}), the {} at {}: the load is not spread evenly",
        parallel.len(),
        siblings.len(),
        context.hops[parallel[0]].hop_name,
        format_percent(HOP_BOUND_PERCENT),
        range(&busy),
        if idle.len() == 1 { "other" } else { "others" },
        range(&idle)
    ))
}

fn hop_bound(context: &Context) -> Option<Decision> {
    let (index, hop) = busiest(context.hops.iter().enumerate())?;
    if hop.utilisation_percent < HOP_BOUND_PERCENT {
        return None;
    }
    let load = &context.loads[index];
    let capacity = load.hop.capacity.as_ref()?;
    let siblings = sibling_hops(context, index);
    let bytes_percent = capacity
        .duplex
        .carried(hop.inbound_bytes_per_second, hop.outbound_bytes_per_second)
        / capacity.payload_bytes_per_second.max(1) as f64
        * 100.0;
    let mut evidence = if capacity.iops.is_some() && bytes_percent < hop.utilisation_percent {
        format!(
            "{} = {} of {}'s {}",
            format_iops(hop.iops),
            format_percent(hop.utilisation_percent),
            hop.hop_name,
            format_iops(capacity.iops.unwrap_or(0) as f64)
        )
    } else {
        let parallel = parallel_hops(context, &siblings);
        if parallel.len() > 1 {
            let total: f64 = parallel.iter().map(|&i| data_rate(&context.loads[i])).sum();
            let together = parallel
                .iter()
                .map(|&i| context.hops[i].utilisation_percent)
                .sum::<f64>()
                / parallel.len() as f64;
            let label = hop_label(load);
            let label = match label.strip_suffix(')') {
                Some(open) => format!("{open} each)"),
                None => label,
            };
            format!(
                "{} = {} of {} × {label}",
                format_rate(total),
                format_percent(together),
                parallel.len()
            )
        } else {
            format!(
                "{} = {} of {}",
                format_rate(data_rate(load)),
                format_percent(hop.utilisation_percent),
                hop_label(load)
            )
        }
    };
    let traffic = hop.inbound_bytes_per_second + hop.outbound_bytes_per_second;
    let uneven = imbalance(context, &siblings, &parallel_hops(context, &siblings));
    if let Some(protocol) = load.protocol
        && traffic > 0.0
        && hop.protocol_overhead_bytes_per_second / traffic >= 0.005
    {
        evidence.push_str(&format!(
            ", {} of it {} headers",
            format_percent(hop.protocol_overhead_bytes_per_second / traffic * 100.0),
            protocol.name()
        ));
    }
    if let Some(uneven) = uneven {
        evidence.push_str(&uneven);
    }
    let verdict = match hop.kind {
        HopKind::PageCache => {
            evidence.push_str(": buffered I/O ran at memory speed");
            Verdict::Cached
        }
        HopKind::Memory => {
            evidence.push_str(": copying memory is the limit");
            Verdict::HostCpuBound
        }
        HopKind::Bus => Verdict::BusBound,
        HopKind::Disk | HopKind::Device => Verdict::DeviceBound,
        HopKind::NetworkInterface if hop.hop_name == "lo" => {
            evidence.push_str(": the loopback network copies through memory");
            Verdict::HostCpuBound
        }
        _ => Verdict::LinkBound,
    };
    let mut decision = Decision::new(verdict, evidence);
    decision.hop = Some(hop.hop_key.clone());
    Some(decision)
}

/// Why the CPU limits the test, if it does.
fn cpu_saturation(context: &Context) -> Option<String> {
    let cpu = context.cpu;
    if context.test.cpu.wall_ns == 0 {
        return None;
    }
    let host_busy = if cpu.cores.is_empty() {
        0.0
    } else {
        cpu.cores.iter().map(|c| c.busy_percent).sum::<f64>() / cpu.cores.len() as f64
    };
    let thread = cpu.busiest_thread_percent >= THREAD_BOUND_PERCENT;
    let core = cpu.busiest_core_percent >= CORE_BOUND_PERCENT;
    let host = host_busy >= HOST_BOUND_PERCENT;
    if !(thread || core || host) {
        return None;
    }
    let mut parts = Vec::new();
    if let Some(busiest) = cpu
        .busiest_core
        .and_then(|n| cpu.cores.iter().find(|c| c.cpu == n))
    {
        let mut text = format!(
            "core {} at {} busy",
            busiest.cpu,
            format_percent(busiest.busy_percent)
        );
        if busiest.irq_percent + busiest.softirq_percent >= 1.0 {
            text.push_str(&format!(
                " (interrupts {}, softirq {})",
                format_percent(busiest.irq_percent),
                format_percent(busiest.softirq_percent)
            ));
        }
        parts.push(text);
    }
    parts.push(format!(
        "iopath's busiest thread {} of a core",
        format_percent(cpu.busiest_thread_percent)
    ));
    parts.push(format!(
        "iopath {} of the host",
        format_percent(cpu.process_percent_of_host)
    ));
    let waited = context.test.cpu.busiest_thread_cpu_wait_percent();
    if waited >= CPU_WAIT_NAMED_PERCENT {
        parts.push(format!(
            "a worker waited {} of the time for a CPU",
            format_percent(waited)
        ));
    }
    if host {
        parts.push(format!("all cores {} busy", format_percent(host_busy)));
    }
    let others = host_busy - cpu.process_percent_of_host;
    if others >= OTHERS_NAMED_PERCENT {
        parts.push(format!(
            "other processes {} of the host{}",
            format_percent(others),
            busiest_others(context.test)
        ));
        if busy_with_others(cpu) {
            parts.insert(0, "the host's CPU, taken by other processes".to_string());
        }
    }
    Some(parts.join(", "))
}

/// Other processes' share of the host (percent) from which the verdict's evidence names them.
const OTHERS_NAMED_PERCENT: f64 = 30.0;

/// Whether the cores were full, mostly with other processes' work: all cores together at least
/// [`HOST_BOUND_PERCENT`] busy, the others' share at least [`OTHERS_NAMED_PERCENT`] of the
/// host and twice iopath's own. The host is then busy, not iopath.
fn busy_with_others(cpu: &CpuUtilisation) -> bool {
    if cpu.cores.is_empty() {
        return false;
    }
    let host_busy = cpu.cores.iter().map(|c| c.busy_percent).sum::<f64>() / cpu.cores.len() as f64;
    let others = host_busy - cpu.process_percent_of_host;
    host_busy >= HOST_BOUND_PERCENT
        && others >= OTHERS_NAMED_PERCENT
        && others >= 2.0 * cpu.process_percent_of_host
}

/// ` (stress-ng 61 %, fio 24 %)`: the other processes that used the most CPU while the test
/// ran, each as a share of the host; empty when none were recorded.
fn busiest_others(test: &TestResult) -> String {
    let cpu = &test.cpu;
    let capacity_ns = cpu.wall_ns as f64 * f64::from(cpu.cpu_count.max(1));
    if cpu.other_processes.is_empty() || capacity_ns <= 0.0 {
        return String::new();
    }
    let named: Vec<String> = cpu
        .other_processes
        .iter()
        .map(|process| {
            format!(
                "{} {}",
                crate::text::shorten::shorten(&process.name, 40),
                format_percent(process.cpu_ns as f64 / capacity_ns * 100.0)
            )
        })
        .collect();
    format!(" ({})", named.join(", "))
}

fn busiest_hop_summary(context: &Context) -> String {
    match busiest(context.hops.iter().enumerate()) {
        Some((_, hop)) => format!(
            "busiest hop {} at {}",
            hop.hop_name,
            format_percent(hop.utilisation_percent)
        ),
        None => "no hop capacity known".into(),
    }
}

fn cpu_summary(context: &Context) -> String {
    if context.test.cpu.wall_ns == 0 {
        return "CPU not sampled".into();
    }
    format!(
        "busiest core {}, iopath {} of the host",
        format_percent(context.cpu.busiest_core_percent),
        format_percent(context.cpu.process_percent_of_host)
    )
}

/// Whether the bottom of some path of the test is a device iopath can name: a local disk, or
/// a declared device or array.
fn device_visible(context: &Context) -> bool {
    context.target_indexes.iter().any(|&index| {
        context.paths.get(index).is_some_and(|path| {
            path.hops
                .iter()
                .any(|hop| matches!(hop.kind, HopKind::Disk | HopKind::Device | HopKind::Memory))
        })
    })
}

/// Where the time of each I/O goes unseen, when a full, shallow queue is all that is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unseen {
    /// A network protocol, link or declared device lies between iopath and the storage: the
    /// far end's parallelism is not visible.
    BeyondLastHop,
    /// Buffered I/O: the page cache (read-ahead, write-back) decides what reaches the device.
    BehindPageCache,
    /// A local device whose queue limit is not known.
    DeviceQueueUnknown,
}

impl Unseen {
    /// Where the latency is, as the evidence starts.
    fn place(self) -> &'static str {
        match self {
            Unseen::BeyondLastHop => "beyond the last visible hop",
            Unseen::BehindPageCache => {
                "behind the page cache (buffered I/O: read-ahead and write-back decide what reaches the device)"
            }
            Unseen::DeviceQueueUnknown => "in the device, whose queue limit is not known",
        }
    }

    /// What would tell whether more outstanding I/O helps.
    fn what_would_tell(self) -> &'static str {
        match self {
            Unseen::BeyondLastHop => {
                "more outstanding I/O helps only if the far end has idle parallelism: --confirm tries a deeper queue; the server's own metrics, or its link and storage declared with --link / --path, show the far end"
            }
            Unseen::BehindPageCache => {
                "iopath's queue is not the device's: --confirm tries a deeper queue; a run without --buffered measures the device's own queue"
            }
            Unseen::DeviceQueueUnknown => {
                "more outstanding I/O helps only if the device has idle parallelism: --confirm tries a deeper queue"
            }
        }
    }
}

/// Evidence that the device has idle parallelism, so that more outstanding I/O would raise
/// throughput: every I/O reaches it directly (no page cache on the way), it is a local device
/// with nothing unseen beyond it (no network protocol or link, no Fibre Channel fabric, no
/// declared device), and its queue limit is known and was not reached. Otherwise, where the
/// time of each I/O goes unseen.
fn idle_parallelism(context: &Context) -> Result<String, Unseen> {
    let queue = context.queue;
    let remote = context.target_indexes.iter().any(|&index| {
        context.paths.get(index).is_some_and(|path| {
            path.hops.iter().any(|hop| {
                matches!(
                    hop.kind,
                    HopKind::NetworkInterface
                        | HopKind::NetworkLink
                        | HopKind::Protocol
                        | HopKind::FibreChannelLink
                        | HopKind::Device
                )
            })
        }) || context.targets.get(index).is_some_and(|target| {
            matches!(
                target.kind,
                TargetKind::Nbd | TargetKind::Iscsi | TargetKind::Nfs | TargetKind::Smb
            )
        })
    });
    if remote {
        return Err(Unseen::BeyondLastHop);
    }
    let page_cache = context.test.jobs.iter().any(|job| !job.direct)
        || context.loads.iter().any(|load| {
            load.hop.kind == HopKind::PageCache && load.hop.key != super::path::PAGE_CACHE_KEY
        });
    if page_cache {
        return Err(Unseen::BehindPageCache);
    }
    let Some(limit) = queue.device_queue_limit else {
        return Err(Unseen::DeviceQueueUnknown);
    };
    Ok(format!("device queue limit {limit} not reached"))
}

fn queue_or_device(context: &Context) -> Decision {
    let queue = context.queue;
    let test = context.test;
    let configured = queue.configured_outstanding;
    if configured == 0 {
        return Decision::inconclusive(vec!["the configured queue depth".into()]);
    }
    let achieved = queue.achieved_outstanding;
    let full = achieved >= f64::from(configured) * QUEUE_FULL_PERCENT / 100.0;
    let at_limit = queue
        .device_queue_limit
        .is_some_and(|limit| configured >= limit);
    let (main, _) = main_direction(test);
    let little = format!(
        "Little's law: {} × {} = {:.1}",
        format_iops(main.iops),
        crate::units::format_latency(main.latency.mean_ns),
        achieved
    );
    let limit_text = queue
        .device_queue_limit
        .map(|limit| format!(", device queue limit {limit}"))
        .unwrap_or_default();
    if full && configured < DEEP_QUEUE && !at_limit {
        return match idle_parallelism(context) {
            Ok(room) => Decision::new(
                Verdict::QueueDepthBound,
                format!(
                    "{configured} I/O{} outstanding ({little}), {room}, {}, {}: more outstanding I/O would raise throughput",
                    if configured == 1 { "" } else { "s" },
                    busiest_hop_summary(context),
                    cpu_summary(context)
                ),
            ),
            Err(unseen) => Decision::new(
                Verdict::LatencyBound,
                format!(
                    "{}: {configured} I/O{} in flight, {} each ({little}){limit_text}, {}, {}; {}",
                    unseen.place(),
                    if configured == 1 { "" } else { "s" },
                    crate::units::format_latency(main.latency.mean_ns),
                    busiest_hop_summary(context),
                    cpu_summary(context),
                    unseen.what_would_tell()
                ),
            ),
        };
    }
    let held_at_limit = at_limit
        && queue
            .device_queue_limit
            .is_some_and(|limit| achieved >= f64::from(limit) * QUEUE_FULL_PERCENT / 100.0);
    if full || held_at_limit {
        if !device_visible(context) {
            return Decision::inconclusive(vec![format!(
                "what lies beyond the last visible hop ({}, {configured} outstanding, {}, {}): declare the link and the server's storage with --link / --path",
                little,
                busiest_hop_summary(context),
                cpu_summary(context)
            )]);
        }
        return Decision::new(
            Verdict::DeviceBound,
            format!(
                "queue kept full at {configured} outstanding ({little}){limit_text}, {}, {}: the device's own speed",
                busiest_hop_summary(context),
                cpu_summary(context)
            ),
        );
    }
    let network = context.target_indexes.iter().any(|&index| {
        context.targets.get(index).is_some_and(|t| {
            matches!(
                t.kind,
                TargetKind::Nbd | TargetKind::Iscsi | TargetKind::Nfs | TargetKind::Smb
            )
        })
    });
    Decision::inconclusive(vec![format!(
        "why only {achieved:.1} of {configured} configured I/Os were in flight ({little}) with the CPU not saturated ({}){}: submission or completion stalled",
        cpu_summary(context),
        if network {
            ", perhaps the server's own queue"
        } else {
            ""
        }
    )])
}

#[cfg(test)]
pub(crate) mod tests;
