//! Moving and counting bytes: one thread per data connection (a sender writes a fixed buffer
//! until told to stop; a receiver reads and adds to its stream's counter), and the window that
//! turns the receivers' counters into a per-interval series.
//!
//! The hot loops allocate nothing: each thread owns one buffer, made before the window opens.
//! Every socket has a short timeout so that a thread notices its flags within [`POLL`] even when
//! its peer has gone quiet; no thread outlives [`DataPlane::finish`]. A stream that moves no
//! byte for the plane's stall timeout inside the window stops with an error, and
//! [`DataPlane::stalled`] says so, so that a peer that never reads (or never sends) cannot hold
//! the other end.

use crate::host::cpu::{CpuSnapshot, thread_cpu_ns};
use crate::result::{CpuResult, IntervalPoint};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Bytes written or read per system call.
pub const BUFFER_BYTES: usize = 128 * 1024;
/// How often a blocked thread looks at its flags.
pub const POLL: Duration = Duration::from_millis(100);

/// Flags shared by the threads of one side of a test.
#[derive(Debug, Default)]
struct Flags {
    /// The measured window is over: threads note their CPU time once they see it, and errors
    /// after it no longer count.
    window_over: AtomicBool,
    /// Senders stop and close their sending side.
    stop_sending: AtomicBool,
    /// Receivers stop waiting for their peer to close.
    abandon: AtomicBool,
    /// The first stream that stalled, and how.
    stall: OnceLock<String>,
}

/// Where a stream's last byte moved, to tell a stall.
struct Progress {
    last: Instant,
    timeout: Duration,
}

impl Progress {
    fn new(timeout: Duration) -> Self {
        Progress {
            last: Instant::now(),
            timeout,
        }
    }

    fn moved(&mut self) {
        self.last = Instant::now();
    }

    /// Whether nothing has moved for the timeout.
    fn stalled(&self) -> bool {
        self.last.elapsed() >= self.timeout
    }
}

/// What one data thread did.
#[derive(Debug, Default)]
struct StreamOutcome {
    /// CPU time of the thread from its start to the end of the window, ns.
    cpu_ns: u64,
    /// The first error inside the window.
    error: Option<String>,
}

/// Errors of the data connections and the CPU time of the busiest one.
#[derive(Debug, Default)]
pub struct PlaneOutcome {
    /// Errors inside the window of senders, then receivers, each naming its stream.
    pub sender_errors: Vec<String>,
    /// Errors of receivers.
    pub receiver_errors: Vec<String>,
    /// CPU time of the busiest data thread up to the end of the window, ns.
    pub busiest_thread_ns: u64,
}

/// The data connections of one side of a test and their threads.
pub struct DataPlane {
    flags: Arc<Flags>,
    counters: Arc<Vec<AtomicU64>>,
    senders: Vec<JoinHandle<StreamOutcome>>,
    receivers: Vec<JoinHandle<StreamOutcome>>,
}

fn is_timeout(error: &std::io::Error) -> bool {
    matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

fn note_cpu(flags: &Flags, start_cpu_ns: u64, cpu_ns: &mut Option<u64>) {
    if cpu_ns.is_none() && flags.window_over.load(Ordering::Relaxed) {
        *cpu_ns = Some(thread_cpu_ns().saturating_sub(start_cpu_ns));
    }
}

fn send_loop(
    mut stream: TcpStream,
    index: usize,
    flags: &Flags,
    hard_deadline: Instant,
    stall_timeout: Duration,
) -> StreamOutcome {
    let mut buffer = vec![0u8; BUFFER_BYTES];
    fastrand::Rng::with_seed(0x6e65_7473).fill(&mut buffer);
    let start_cpu_ns = thread_cpu_ns();
    let mut cpu_ns = None;
    let mut error = None;
    let mut progress = Progress::new(stall_timeout);
    while !flags.stop_sending.load(Ordering::Relaxed) && Instant::now() < hard_deadline {
        note_cpu(flags, start_cpu_ns, &mut cpu_ns);
        match stream.write(&buffer) {
            Ok(_) => progress.moved(),
            Err(e) if is_timeout(&e) || e.kind() == ErrorKind::Interrupted => {
                if progress.stalled() && !flags.window_over.load(Ordering::Relaxed) {
                    let stall = format!(
                        "stalled: the peer took no data for {:.1} s",
                        stall_timeout.as_secs_f64()
                    );
                    let _ = flags.stall.set(format!("sending stream {index} {stall}"));
                    error = Some(stall);
                    break;
                }
            }
            Err(e) => {
                if !flags.window_over.load(Ordering::Relaxed) {
                    error = Some(e.to_string());
                }
                break;
            }
        }
    }
    let _ = stream.shutdown(Shutdown::Write);
    StreamOutcome {
        cpu_ns: cpu_ns.unwrap_or_else(|| thread_cpu_ns().saturating_sub(start_cpu_ns)),
        error,
    }
}

fn receive_loop(
    mut stream: TcpStream,
    index: usize,
    flags: &Flags,
    counter: &AtomicU64,
    stall_timeout: Duration,
) -> StreamOutcome {
    let mut buffer = vec![0u8; BUFFER_BYTES];
    let start_cpu_ns = thread_cpu_ns();
    let mut cpu_ns = None;
    let mut error = None;
    let mut progress = Progress::new(stall_timeout);
    while !flags.abandon.load(Ordering::Relaxed) {
        note_cpu(flags, start_cpu_ns, &mut cpu_ns);
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => {
                counter.fetch_add(read as u64, Ordering::Relaxed);
                progress.moved();
            }
            Err(e) if is_timeout(&e) || e.kind() == ErrorKind::Interrupted => {
                if progress.stalled() && !flags.window_over.load(Ordering::Relaxed) {
                    let stall =
                        format!("stalled: no data for {:.1} s", stall_timeout.as_secs_f64());
                    let _ = flags.stall.set(format!("receiving stream {index} {stall}"));
                    error = Some(stall);
                    break;
                }
            }
            Err(e) => {
                if !flags.window_over.load(Ordering::Relaxed) {
                    error = Some(e.to_string());
                }
                break;
            }
        }
    }
    StreamOutcome {
        cpu_ns: cpu_ns.unwrap_or_else(|| thread_cpu_ns().saturating_sub(start_cpu_ns)),
        error,
    }
}

impl DataPlane {
    /// Starts one sender thread per stream of `send` (each stops by itself at
    /// `hard_deadline` at the latest) and one receiver thread per stream of `receive`. A
    /// stream that moves nothing for `stall_timeout` inside the window stops with an error.
    pub fn start(
        send: Vec<TcpStream>,
        receive: Vec<TcpStream>,
        hard_deadline: Instant,
        stall_timeout: Duration,
    ) -> std::io::Result<DataPlane> {
        let flags = Arc::new(Flags::default());
        let counters: Arc<Vec<AtomicU64>> =
            Arc::new((0..receive.len()).map(|_| AtomicU64::new(0)).collect());
        let mut plane = DataPlane {
            flags,
            counters,
            senders: Vec::new(),
            receivers: Vec::new(),
        };
        for (index, stream) in send.into_iter().enumerate() {
            stream.set_write_timeout(Some(POLL))?;
            let flags = Arc::clone(&plane.flags);
            let spawned = std::thread::Builder::new()
                .name(format!("net-send-{index}"))
                .spawn(move || send_loop(stream, index, &flags, hard_deadline, stall_timeout));
            match spawned {
                Ok(handle) => plane.senders.push(handle),
                Err(error) => {
                    plane.finish(Duration::ZERO);
                    return Err(error);
                }
            }
        }
        for (index, stream) in receive.into_iter().enumerate() {
            stream.set_read_timeout(Some(POLL))?;
            let flags = Arc::clone(&plane.flags);
            let counters = Arc::clone(&plane.counters);
            let spawned = std::thread::Builder::new()
                .name(format!("net-receive-{index}"))
                .spawn(move || {
                    receive_loop(stream, index, &flags, &counters[index], stall_timeout)
                });
            match spawned {
                Ok(handle) => plane.receivers.push(handle),
                Err(error) => {
                    plane.finish(Duration::ZERO);
                    return Err(error);
                }
            }
        }
        Ok(plane)
    }

    /// Bytes received so far by every receiver together.
    pub fn received_bytes(&self) -> u64 {
        self.counters
            .iter()
            .map(|counter| counter.load(Ordering::Relaxed))
            .sum()
    }

    /// Bytes received so far, per receiving stream.
    pub fn stream_bytes(&self) -> Vec<u64> {
        self.counters
            .iter()
            .map(|counter| counter.load(Ordering::Relaxed))
            .collect()
    }

    /// The first stream that stalled, if one did.
    pub fn stalled(&self) -> Option<String> {
        self.flags.stall.get().cloned()
    }

    /// Marks the end of the measured window.
    pub fn end_window(&self) {
        self.flags.window_over.store(true, Ordering::Relaxed);
    }

    /// Stops the senders, gives the receivers up to `drain` to see their peers close, then
    /// stops them too and joins every thread.
    pub fn finish(self, drain: Duration) -> PlaneOutcome {
        self.end_window();
        self.flags.stop_sending.store(true, Ordering::Relaxed);
        let deadline = Instant::now() + drain;
        while Instant::now() < deadline && self.receivers.iter().any(|r| !r.is_finished()) {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.flags.abandon.store(true, Ordering::Relaxed);
        let mut outcome = PlaneOutcome::default();
        let mut collect = |handles: Vec<JoinHandle<StreamOutcome>>, errors: &mut Vec<String>| {
            for (index, handle) in handles.into_iter().enumerate() {
                match handle.join() {
                    Ok(stream) => {
                        outcome.busiest_thread_ns = outcome.busiest_thread_ns.max(stream.cpu_ns);
                        if let Some(error) = stream.error {
                            errors.push(format!("stream {index}: {error}"));
                        }
                    }
                    Err(_) => errors.push(format!("stream {index}: its thread panicked")),
                }
            }
        };
        let mut sender_errors = Vec::new();
        let mut receiver_errors = Vec::new();
        collect(self.senders, &mut sender_errors);
        collect(self.receivers, &mut receiver_errors);
        outcome.sender_errors = sender_errors;
        outcome.receiver_errors = receiver_errors;
        outcome
    }
}

/// A window that closes one interval at each due time, and its series.
#[derive(Clone, Debug)]
pub struct WindowSampler {
    duration_ns: u64,
    interval_ns: u64,
    last_elapsed_ns: u64,
    last_total: u64,
    closed: bool,
    points: Vec<IntervalPoint>,
}

/// A closed window.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    /// Length, ns.
    pub measured_ns: u64,
    /// Bytes counted in it.
    pub bytes: u64,
    /// Per-interval series.
    pub series: Vec<IntervalPoint>,
}

impl WindowSampler {
    /// A window of `duration_ns` in intervals of `interval_ns` (both above 0).
    pub fn new(duration_ns: u64, interval_ns: u64) -> Self {
        let interval_ns = interval_ns.max(1);
        WindowSampler {
            duration_ns: duration_ns.max(1),
            interval_ns,
            last_elapsed_ns: 0,
            last_total: 0,
            closed: false,
            points: Vec::with_capacity(duration_ns.div_ceil(interval_ns) as usize + 1),
        }
    }

    /// When the next interval ends, ns after the window opened.
    pub fn next_due_ns(&self) -> u64 {
        let next = (self.points.len() as u64 + 1).saturating_mul(self.interval_ns);
        next.min(self.duration_ns)
    }

    /// Intervals closed so far.
    pub fn interval_count(&self) -> usize {
        self.points.len()
    }

    /// Whether the window is closed.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Closes the interval in progress at `elapsed_ns` with `total` bytes counted since the
    /// window opened, and returns it. The window closes with it once its time is up, or at
    /// once when `last` (an early stop).
    pub fn sample(&mut self, elapsed_ns: u64, total: u64, last: bool) -> IntervalPoint {
        let elapsed_ns = elapsed_ns.max(self.last_elapsed_ns);
        let point = IntervalPoint {
            start_ns: self.last_elapsed_ns,
            duration_ns: elapsed_ns - self.last_elapsed_ns,
            bytes: total.saturating_sub(self.last_total),
            io_count: 0,
            mean_latency_ns: 0,
            p99_latency_ns: 0,
            latency_buckets: Vec::new(),
        };
        self.last_elapsed_ns = elapsed_ns;
        self.last_total = total.max(self.last_total);
        self.closed = last || elapsed_ns >= self.duration_ns;
        self.points.push(point.clone());
        point
    }

    /// The window as measured.
    pub fn window(&self) -> Window {
        Window {
            measured_ns: self.last_elapsed_ns,
            bytes: self.last_total,
            series: self.points.clone(),
        }
    }
}

/// CPU readings at the opening of a window.
pub struct CpuWindow {
    opened: Instant,
    snapshot: CpuSnapshot,
}

impl CpuWindow {
    /// Reads the process's CPU time and every core's counters now.
    pub fn open() -> Self {
        CpuWindow {
            opened: Instant::now(),
            snapshot: CpuSnapshot::now(),
        }
    }

    /// The CPU used since [`CpuWindow::open`] (`busiest_thread_ns` is filled in later).
    pub fn close(&self) -> CpuResult {
        let wall_ns = self.opened.elapsed().as_nanos() as u64;
        CpuSnapshot::now().used_since(&self.snapshot, wall_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn window_closes_intervals_at_their_due_times() {
        let mut window = WindowSampler::new(2_500_000_000, 1_000_000_000);
        assert_eq!(window.next_due_ns(), 1_000_000_000);
        let first = window.sample(1_001_000_000, 100, false);
        assert_eq!(
            (first.start_ns, first.duration_ns, first.bytes),
            (0, 1_001_000_000, 100)
        );
        assert_eq!(window.next_due_ns(), 2_000_000_000);
        window.sample(2_000_000_000, 300, false);
        assert_eq!(window.next_due_ns(), 2_500_000_000);
        assert!(!window.is_closed());
        let last = window.sample(2_500_000_000, 350, false);
        assert_eq!((last.duration_ns, last.bytes), (500_000_000, 50));
        assert!(window.is_closed());
        let measured = window.window();
        assert_eq!(measured.measured_ns, 2_500_000_000);
        assert_eq!(measured.bytes, 350);
        assert_eq!(
            measured.series.iter().map(|p| p.bytes).sum::<u64>(),
            measured.bytes
        );
    }

    #[test]
    fn an_early_stop_closes_the_window() {
        let mut window = WindowSampler::new(10_000_000_000, 1_000_000_000);
        window.sample(400_000_000, 7, true);
        assert!(window.is_closed());
        assert_eq!(window.window().measured_ns, 400_000_000);
    }

    #[test]
    fn bytes_sent_are_bytes_counted() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let sending = TcpStream::connect(address).unwrap();
        let (receiving, _) = listener.accept().unwrap();
        let deadline = Instant::now() + Duration::from_millis(200);
        let stall = Duration::from_secs(5);
        let sender = DataPlane::start(vec![sending], Vec::new(), deadline, stall).unwrap();
        let receiver = DataPlane::start(Vec::new(), vec![receiving], deadline, stall).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let sent = sender.finish(Duration::from_secs(2));
        assert!(sent.sender_errors.is_empty(), "{sent:?}");
        let total = receiver.received_bytes();
        let outcome = receiver.finish(Duration::from_secs(2));
        assert!(outcome.receiver_errors.is_empty(), "{outcome:?}");
        assert!(
            total > BUFFER_BYTES as u64,
            "only {total} bytes over loopback"
        );
    }

    #[test]
    fn a_peer_that_never_reads_stalls_the_sender() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let sending = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (never_read, _) = listener.accept().unwrap();
        let started = Instant::now();
        let deadline = started + Duration::from_secs(30);
        let plane = DataPlane::start(
            vec![sending],
            Vec::new(),
            deadline,
            Duration::from_millis(300),
        )
        .unwrap();
        while plane.stalled().is_none() && started.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let stall = plane.stalled().expect("the sender stalls");
        assert!(stall.contains("took no data"), "{stall}");
        let outcome = plane.finish(Duration::ZERO);
        assert_eq!(outcome.sender_errors.len(), 1, "{outcome:?}");
        drop(never_read);
    }

    #[test]
    fn a_peer_that_never_sends_stalls_the_receiver() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let silent = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (receiving, _) = listener.accept().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        let plane = DataPlane::start(
            Vec::new(),
            vec![receiving],
            deadline,
            Duration::from_millis(300),
        )
        .unwrap();
        let started = Instant::now();
        while plane.stalled().is_none() && started.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            plane
                .stalled()
                .expect("the receiver stalls")
                .contains("no data")
        );
        plane.finish(Duration::ZERO);
        drop(silent);
    }
}
