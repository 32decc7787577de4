//! The client against a real server: nbdkit, started by each test on a Unix socket in a
//! directory of its own and killed when the test ends. Without nbdkit the tests are skipped
//! (a line on stderr says so), unless `CI` or `IOPATH_REQUIRE_ALL` is set: then they fail.

use nbd_client::{
    Completion, Connection, DeadlineStream, Export, FlushState, HandshakeError, Negotiation,
    ServerAddress, Slots, Socket, Watch, negotiate, wire,
};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// How long a handshake or a wait for replies may take.
const TIMEOUT: Duration = Duration::from_secs(20);

/// Bytes of each slot's buffer and of each request.
const BLOCK: usize = 4096;

/// An nbdkit process serving on `nbd.sock` in a fresh directory, killed when dropped.
struct Nbdkit {
    child: Child,
    directory: tempfile::TempDir,
}

impl Nbdkit {
    /// `nbdkit ARGS`, once it listens; `None` (the test is skipped) when nbdkit is missing.
    fn start(args: &[&str]) -> Option<Nbdkit> {
        let installed = Command::new("nbdkit")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        if !installed {
            let strict = ["CI", "IOPATH_REQUIRE_ALL"].iter().any(|name| {
                std::env::var(name).is_ok_and(|value| !matches!(value.trim(), "" | "0" | "false"))
            });
            assert!(!strict, "nbdkit is not installed (apt-get install nbdkit)");
            eprintln!("SKIPPED: nbdkit is not installed (apt-get install nbdkit)");
            return None;
        }
        let directory = tempfile::tempdir().unwrap();
        let pid_file = directory.path().join("nbdkit.pid");
        let child = Command::new("nbdkit")
            .arg("--exit-with-parent")
            .arg("-U")
            .arg(directory.path().join("nbd.sock"))
            .arg("-P")
            .arg(&pid_file)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let server = Nbdkit { child, directory };
        let started = Instant::now();
        // nbdkit writes its pid file once it listens.
        while !has_content(&pid_file) {
            assert!(started.elapsed() < TIMEOUT, "nbdkit did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(server)
    }

    /// Where the server listens.
    fn address(&self) -> ServerAddress {
        ServerAddress::Unix(self.directory.path().join("nbd.sock"))
    }
}

impl Drop for Nbdkit {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether `path` exists and is not empty.
fn has_content(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|metadata| metadata.len() > 0)
}

/// Connects to `server` and negotiates its default export.
fn open(server: &Nbdkit) -> (Socket, Export) {
    let started = Instant::now();
    let mut socket = Socket::connect(&server.address(), started + TIMEOUT).unwrap();
    let stop = AtomicBool::new(false);
    let mut stream = DeadlineStream::new(&mut socket, started, TIMEOUT, &stop).unwrap();
    let export = negotiate(&mut stream, "").unwrap();
    (socket, export)
}

/// Sends every queued request, reading replies meanwhile when the send buffer fills.
fn send_all(connection: &mut Connection, slots: &mut Slots<Vec<Box<[u8]>>>) {
    while !connection.send(slots).unwrap() {
        connection.receive(slots, false).unwrap();
    }
}

/// Reads replies until `count` completions are ready or the server stalls for [`TIMEOUT`].
fn wait_for(connection: &mut Connection, slots: &mut Slots<Vec<Box<[u8]>>>, count: usize) {
    let mut watch = Watch::new();
    while slots.ready() < count {
        connection.receive(slots, true).unwrap();
        assert!(
            !watch.expired(Instant::now(), connection.progress(), TIMEOUT),
            "no reply from nbdkit within {TIMEOUT:?}"
        );
    }
}

/// Queues a request of `command` for `slot` at `offset`.
fn queue(
    connection: &mut Connection,
    slots: &mut Slots<Vec<Box<[u8]>>>,
    slot: u32,
    command: u16,
    offset: u64,
) {
    slots.begin(slot as usize, 0, command, BLOCK as u32);
    let request = wire::Request {
        flags: 0,
        command,
        handle: u64::from(slot),
        offset,
        length: BLOCK as u32,
    };
    connection.queue(slot, &request);
}

#[test]
fn pipelined_writes_read_back_after_a_flush() {
    let Some(server) = Nbdkit::start(&["memory", "size=1M"]) else {
        return;
    };
    let (socket, export) = open(&server);
    assert_eq!(export.size_bytes, 1 << 20);
    assert!(
        export.flags.flush() && !export.flags.read_only(),
        "{export:?}"
    );
    let depth = 8;
    let mut slots = Slots::new(vec![vec![0u8; BLOCK].into_boxed_slice(); depth]);
    let mut connection = Connection::new(socket, 0, server.address().to_string(), depth);

    // Eight writes in flight at once, each block filled with its own byte.
    for slot in 0..depth as u32 {
        slots.buffer_mut(slot as usize).fill(0xa0 + slot as u8);
        queue(
            &mut connection,
            &mut slots,
            slot,
            wire::CMD_WRITE,
            u64::from(slot) * 8192,
        );
    }
    send_all(&mut connection, &mut slots);
    wait_for(&mut connection, &mut slots, depth);
    let mut done = [Completion::default(); 8];
    assert_eq!(slots.take_ready(&mut done, |completion| completion), depth);
    assert!(
        done.iter()
            .all(|completion| completion.result == BLOCK as i64),
        "{done:?}"
    );

    connection.queue_flush();
    send_all(&mut connection, &mut slots);
    while connection.flush == FlushState::Waiting {
        connection.receive(&mut slots, true).unwrap();
    }
    assert_eq!(connection.flush, FlushState::Done(0));

    // Read them back in the reverse order, into cleared buffers.
    for slot in 0..depth as u32 {
        slots.buffer_mut(slot as usize).fill(0);
        let block = depth as u64 - 1 - u64::from(slot);
        queue(
            &mut connection,
            &mut slots,
            slot,
            wire::CMD_READ,
            block * 8192,
        );
    }
    send_all(&mut connection, &mut slots);
    wait_for(&mut connection, &mut slots, depth);
    assert_eq!(slots.take_ready(&mut done, |completion| completion), depth);
    assert!(
        done.iter()
            .all(|completion| completion.result == BLOCK as i64),
        "{done:?}"
    );
    for slot in 0..depth {
        let expected = 0xa0 + (depth - 1 - slot) as u8;
        assert!(
            slots.buffer(slot).iter().all(|byte| *byte == expected),
            "slot {slot}"
        );
    }
    assert_eq!(connection.in_flight(), 0);
}

#[test]
fn failed_requests_complete_with_the_servers_errno() {
    let Some(server) = Nbdkit::start(&[
        "--filter=error",
        "memory",
        "size=1M",
        "error=ENOSPC",
        "error-pwrite-rate=100%",
    ]) else {
        return;
    };
    let (socket, _) = open(&server);
    let mut slots = Slots::new(vec![vec![0u8; BLOCK].into_boxed_slice(); 2]);
    let mut connection = Connection::new(socket, 0, server.address().to_string(), 2);
    queue(&mut connection, &mut slots, 0, wire::CMD_WRITE, 0);
    queue(&mut connection, &mut slots, 1, wire::CMD_READ, 0);
    send_all(&mut connection, &mut slots);
    wait_for(&mut connection, &mut slots, 2);
    let mut done = [Completion::default(); 2];
    assert_eq!(slots.take_ready(&mut done, |completion| completion), 2);
    done.sort_by_key(|completion| completion.slot);
    assert_eq!(
        done,
        [
            Completion {
                slot: 0,
                result: -i64::from(libc::ENOSPC)
            },
            Completion {
                slot: 1,
                result: BLOCK as i64
            },
        ]
    );
}

#[test]
fn a_missing_export_is_named_and_a_listed_one_is_served() {
    let Some(server) = Nbdkit::start(&[
        "--filter=exportname",
        "memory",
        "size=1M",
        "exportname=disk",
        "exportname-strict=true",
    ]) else {
        return;
    };
    let negotiate_export = |name: &str| {
        let started = Instant::now();
        let mut socket = Socket::connect(&server.address(), started + TIMEOUT).unwrap();
        let stop = AtomicBool::new(false);
        let mut stream = DeadlineStream::new(&mut socket, started, TIMEOUT, &stop).unwrap();
        negotiate(&mut stream, name)
    };
    let error = negotiate_export("missing").unwrap_err();
    assert!(
        matches!(error, HandshakeError::UnknownExport { ref export, .. } if export == "missing"),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .starts_with("the server has no export named 'missing'"),
        "{error}"
    );
    let export = negotiate_export("disk").unwrap();
    assert_eq!(
        (export.size_bytes, export.negotiation),
        (1 << 20, Negotiation::Go)
    );
}
