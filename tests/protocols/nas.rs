//! NAS targets against real servers on loopback (tests/support/nas.rs): nfs-ganesha for the
//! NFSv3 and NFSv4.1 engine, Samba's smbd for the SMB servers' set-up. Each test starts its own server
//! with a temporary export or share and stops it on drop.
//!
//! Skipped where the servers cannot run (not root; nfs-ganesha, nfs-ganesha-vfs, rpcbind or
//! samba not installed), or failed under CI (tests/support).

use crate::support;

use iopath::engine::nfs::{self, NfsEngine, NfsUrl, SlotReport};
use iopath::engine::{Completion, Engine, EngineOptions, IoRequest};
use iopath::result::Direction;
use std::process::Command;
use std::time::Duration;
use support::nas::{
    GaneshaServer, SAMBA_PASSWORD, SAMBA_SHARE, SAMBA_USER, SambaServer, assert_holds_pattern,
    move_blocks, read_back_pattern,
};

const TIMEOUT: Duration = Duration::from_secs(10);
const BLOCK: usize = 64 * 1024;
const BLOCKS: usize = 64;
const MIB: usize = 1 << 20;

/// The URL of `name` on `server`, with its MOUNT port (no portmapper asked).
fn url(server: &GaneshaServer, name: &str) -> NfsUrl {
    NfsUrl::parse(&server.url(name)).expect("a valid URL")
}

/// A read-write export, the URL of `name` on it (not there yet) and what `find` says of it;
/// `None` when the server cannot run here (the test was skipped).
fn export_without(name: &str) -> Option<(GaneshaServer, NfsUrl, nfs::NfsFile)> {
    let server = GaneshaServer::start("RW")?;
    let url = url(&server, name);
    let missing = nfs::find(&url, TIMEOUT).expect("the export is found");
    assert!(missing.existing.is_none(), "no {name} yet");
    Some((server, url, missing))
}

/// Creates `name` through `url`, writes the pattern at queue depth `depth` (UNSTABLE, then
/// COMMIT), reads it back, and checks the server's own file (left in place); returns the
/// NFSv4.1 engine's slot report (`None` for NFSv3).
fn pattern_round_trip(
    server: &GaneshaServer,
    url: &NfsUrl,
    name: &str,
    depth: u32,
) -> Option<SlotReport> {
    let missing = nfs::find(url, TIMEOUT).expect("the export is found");
    assert!(missing.existing.is_none(), "no {name} yet");
    assert!(!missing.read_only);
    assert_eq!(missing.export, "/export");
    assert!(
        missing.limits.read_max_bytes >= BLOCK as u32,
        "{:?}",
        missing.limits
    );
    let handle = nfs::create_file(url, &missing, TIMEOUT).expect("the file is created");
    let on_server = server.export_directory().join(name);
    assert!(on_server.exists());

    let mut options = EngineOptions::new(depth, BLOCK);
    options.net_timeout = TIMEOUT;
    let mut engine = NfsEngine::open(url, handle.clone(), &options).expect("the engine opens");
    let written = move_blocks(
        &mut engine,
        Direction::Write,
        depth as usize,
        (BLOCK, BLOCKS),
        &mut |_, _| {},
    );
    engine.sync_data().expect("COMMIT");
    let read = read_back_pattern(&mut engine, depth as usize, (BLOCK, BLOCKS));
    let slots = engine.slots();
    drop(engine);

    // The server's own view: the file's size and content.
    let total = (BLOCKS * BLOCK) as u64;
    assert_eq!((written, read), (total, total));
    assert_eq!(
        nfs::file_size(url, &handle, TIMEOUT).expect("GETATTR"),
        total
    );
    assert_holds_pattern(&on_server, (BLOCK, BLOCKS));
    slots
}

#[test]
fn nfs_pattern_written_at_qd8_reads_back_and_matches_the_servers_file() {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let url = url(&server, "test.bin");
    assert_eq!(pattern_round_trip(&server, &url, "test.bin", 8), None);
    // Without ?mountport= the portmapper names the MOUNT port.
    let by_portmapper =
        NfsUrl::parse(&format!("nfs://127.0.0.1:{}/export/test.bin", server.port)).unwrap();
    let found = nfs::find(&by_portmapper, TIMEOUT).expect("the file is found");
    assert_eq!(
        found.existing.as_ref().map(|(_, a)| a.size_bytes),
        Some((BLOCKS * BLOCK) as u64)
    );
    nfs::remove_file(&url, &found, TIMEOUT).expect("the file is removed");
    assert!(!server.export_directory().join("test.bin").exists());
}

/// [`pattern_round_trip`] over NFSv4.1 at queue depth `depth`, then the file removed (by
/// name, after LOOKUP); returns the slot report.
fn nfs41_round_trip(server: &GaneshaServer, name: &str, depth: u32) -> SlotReport {
    let url = NfsUrl::parse(&server.url41(name)).expect("a valid URL");
    let slots = pattern_round_trip(server, &url, name, depth).expect("an NFSv4.1 engine");
    let found = nfs::find(&url, TIMEOUT).expect("the file is found");
    assert!(found.session_slots.unwrap_or(0) >= 1, "{found:?}");
    nfs::remove_file(&url, &found, TIMEOUT).expect("the file is removed");
    assert!(!server.export_directory().join(name).exists());
    slots
}

#[test]
fn nfs41_pattern_written_at_qd8_reads_back_and_matches_the_servers_file() {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let slots = nfs41_round_trip(&server, "test41.bin", 8);
    assert_eq!(slots.wanted, 8, "{slots:?}");
    assert!(slots.granted >= 8, "{slots:?}");
    assert_eq!(slots.stalls, 0, "{slots:?}");
}

#[test]
fn nfs41_a_server_granting_fewer_slots_than_the_queue_depth_stalls_requests_but_loses_none() {
    let Some(server) = GaneshaServer::start_with("RW", "slot_table_size = 4;") else {
        return;
    };
    let slots = nfs41_round_trip(&server, "few.bin", 16);
    assert_eq!((slots.wanted, slots.granted), (16, 4), "{slots:?}");
    assert!(slots.stalls > 0, "{slots:?}");
}

#[test]
fn nfs_one_mib_file_sync_writes_and_reads_at_qd8_match_the_servers_file() {
    let Some((server, url, missing)) = export_without("big.bin") else {
        return;
    };
    let limits = missing.limits;
    assert!(
        limits.write_max_bytes >= MIB as u32 && limits.read_max_bytes >= MIB as u32,
        "the server takes less than 1 MiB per call: {limits:?}"
    );
    let handle = nfs::create_file(&url, &missing, TIMEOUT).expect("created");
    let mut options = EngineOptions::new(8, MIB);
    options.net_timeout = TIMEOUT;
    options.write_through = true;
    let mut engine = NfsEngine::open(&url, handle, &options).expect("opens");
    let written = move_blocks(&mut engine, Direction::Write, 8, (MIB, 24), &mut |_, _| {});
    let read = read_back_pattern(&mut engine, 8, (MIB, 24));
    assert_eq!((written, read), (24 * MIB as u64, 24 * MIB as u64));
    assert_holds_pattern(&server.export_directory().join("big.bin"), (MIB, 24));
}

#[test]
fn nfs_file_sync_writes_need_no_commit_and_short_reads_stop_at_the_end() {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    std::fs::write(server.export_directory().join("small"), vec![7u8; 6000]).expect("a file");
    let url = url(&server, "small");
    let (handle, attributes) = nfs::find(&url, TIMEOUT)
        .expect("found")
        .existing
        .expect("exists");
    assert_eq!(attributes.size_bytes, 6000);
    let mut options = EngineOptions::new(2, 8192);
    options.write_through = true;
    let mut engine = NfsEngine::open(&url, handle, &options).expect("opens");
    assert_eq!(engine.stability(), nfs::nfs3::Stability::FileSync);
    let request = |slot, direction, offset| IoRequest {
        slot,
        file: 0,
        direction,
        offset,
        length: 8192,
    };
    engine.submit(request(0, Direction::Read, 0)).unwrap();
    engine.submit(request(1, Direction::Read, 4096)).unwrap();
    engine.flush().unwrap();
    let mut done = [Completion::default(); 2];
    let mut results = Vec::new();
    while results.len() < 2 {
        let reaped = engine.reap(1, &mut done).unwrap();
        results.extend(done[..reaped].iter().map(|c| (c.slot, c.result)));
    }
    results.sort();
    assert_eq!(results, vec![(0, 6000), (1, 6000 - 4096)]);
    assert!(engine.buffer_mut(0)[..6000].iter().all(|byte| *byte == 7));
    engine.sync_data().expect("nothing to commit");
}

#[test]
fn nfs_errors_name_the_target() {
    // Nothing listens: unreachable, and the message names the URL.
    let port = support::free_port();
    let unreachable =
        NfsUrl::parse(&format!("nfs://127.0.0.1:{port}/export/f?mountport={port}")).unwrap();
    let error = nfs::find(&unreachable, TIMEOUT).expect_err("nothing listens");
    assert!(error.unreachable, "{error}");
    assert!(
        error.to_string().contains(&unreachable.to_string()),
        "{error}"
    );

    let Some(server) = GaneshaServer::start("RO") else {
        return;
    };
    // A path under no export.
    let wrong = NfsUrl::parse(&format!(
        "nfs://127.0.0.1:{}/nowhere/f?mountport={}",
        server.port, server.mount_port
    ))
    .unwrap();
    let error = nfs::find(&wrong, TIMEOUT)
        .expect_err("no such export")
        .to_string();
    assert!(
        error.contains("no export") && error.contains("/nowhere/f"),
        "{error}"
    );
    // A missing directory below the export.
    let error = nfs::find(&url(&server, "missing/f"), TIMEOUT)
        .expect_err("no directory")
        .to_string();
    assert!(error.contains("no such file or directory"), "{error}");
    // A read-only export: found read-only, and a write fails with an errno, not a panic.
    std::fs::write(server.export_directory().join("ro"), vec![1u8; 8192]).unwrap();
    let url = url(&server, "ro");
    let file = nfs::find(&url, TIMEOUT).expect("found");
    assert!(file.read_only, "the export is read-only");
    let (handle, _) = file.existing.expect("exists");
    let mut engine = NfsEngine::open(&url, handle, &EngineOptions::new(1, 4096)).unwrap();
    engine
        .submit(IoRequest {
            slot: 0,
            file: 0,
            direction: Direction::Write,
            offset: 0,
            length: 4096,
        })
        .unwrap();
    engine.flush().unwrap();
    let mut done = [Completion::default(); 1];
    assert_eq!(engine.reap(1, &mut done).unwrap(), 1);
    assert!(
        [
            -i64::from(libc::EROFS),
            -i64::from(libc::EACCES),
            -i64::from(libc::EPERM)
        ]
        .contains(&done[0].result),
        "{:?}",
        done[0]
    );
    assert_eq!(
        std::fs::read(server.export_directory().join("ro")).unwrap(),
        vec![1u8; 8192]
    );
}

#[test]
fn nfs_a_server_that_dies_fails_the_engine_with_a_message() {
    let Some(mut server) = GaneshaServer::start("RW") else {
        return;
    };
    std::fs::write(server.export_directory().join("f"), vec![0u8; 65536]).unwrap();
    let url = url(&server, "f");
    let (handle, _) = nfs::find(&url, TIMEOUT).unwrap().existing.unwrap();
    let mut options = EngineOptions::new(4, 4096);
    options.net_timeout = Duration::from_secs(3);
    let mut engine = NfsEngine::open(&url, handle, &options).unwrap();
    server.kill();
    let outcome = engine
        .submit(IoRequest {
            slot: 0,
            file: 0,
            direction: Direction::Read,
            offset: 0,
            length: 4096,
        })
        .and_then(|()| engine.flush())
        .and_then(|()| engine.reap(1, &mut [Completion::default(); 4]));
    let error = outcome.expect_err("the server is gone").to_string();
    assert!(error.starts_with("nfs:"), "{error}");
}

#[test]
fn samba_serves_its_share_to_its_user_only() {
    let Some(server) = SambaServer::start(&[]) else {
        return;
    };
    let Some(smbclient) = support::devices::required_tool("smbclient", "smbclient") else {
        return;
    };
    std::fs::write(server.share_directory().join("hello"), b"hello over SMB").unwrap();
    let share = format!("//127.0.0.1/{SAMBA_SHARE}");
    let output = Command::new(&smbclient)
        .args(["-p", &server.port.to_string(), &share, "-U"])
        .arg(format!("{SAMBA_USER}%{SAMBA_PASSWORD}"))
        .args(["-c", "get hello -"])
        .output()
        .expect("smbclient runs");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("hello over SMB"),
        "{text} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let refused = Command::new(&smbclient)
        .args(["-p", &server.port.to_string(), &share, "-U"])
        .arg(format!("{SAMBA_USER}%wrong"))
        .args(["-c", "ls"])
        .output()
        .expect("smbclient runs");
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stdout).contains("NT_STATUS_LOGON_FAILURE"));
}

#[test]
fn timing_nfs_a_silent_or_lying_server_fails_the_engine_in_bounded_time() {
    use std::io::Write;
    use std::net::TcpListener;
    use std::time::Instant;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let url = NfsUrl::parse(&format!("nfs://127.0.0.1:{port}/export/f?mountport={port}")).unwrap();
    let read = IoRequest {
        slot: 0,
        file: 0,
        direction: Direction::Read,
        offset: 0,
        length: 4096,
    };
    let mut done = [Completion::default(); 2];

    // Silent: the wait ends after the network timeout.
    let mut options = EngineOptions::new(2, 4096);
    options.net_timeout = Duration::from_secs(1);
    let mut engine = NfsEngine::open(&url, vec![1; 32], &options).unwrap();
    let _silent = listener.accept().unwrap();
    engine.submit(read).unwrap();
    engine.flush().unwrap();
    let started = Instant::now();
    let error = engine.reap(1, &mut done).expect_err("no reply").to_string();
    assert!(error.contains("no reply within"), "{error}");
    assert!(
        started.elapsed() >= Duration::from_secs(1) && started.elapsed() < Duration::from_secs(5)
    );

    // Silent, with the run stopping: the wait ends after the stop grace, not the timeout.
    options.net_timeout = Duration::from_secs(60);
    let mut engine = NfsEngine::open(&url, vec![1; 32], &options).unwrap();
    let _silent_too = listener.accept().unwrap();
    engine.submit(read).unwrap();
    engine.flush().unwrap();
    options.stop.raise();
    let started = Instant::now();
    let error = engine.reap(1, &mut done).expect_err("no reply").to_string();
    assert!(error.contains("the run stopped"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(10));

    // Lying: a reply to a call never made is a protocol error, not a completion.
    let mut engine = NfsEngine::open(&url, vec![1; 32], &EngineOptions::new(2, 4096)).unwrap();
    let (mut liar, _) = listener.accept().unwrap();
    engine.submit(read).unwrap();
    engine.flush().unwrap();
    let mut reply = Vec::new();
    for word in [0x8000_0018u32, 0xDEAD_0001, 1, 0, 0, 0, 0] {
        reply.extend_from_slice(&word.to_be_bytes());
    }
    liar.write_all(&reply).unwrap();
    let error = engine.reap(1, &mut done).expect_err("a lie").to_string();
    assert!(error.contains("not made"), "{error}");
}

/// A scripted NFS server's READ reply to `xid` carrying `data` (record mark not included).
fn read_reply(xid: u32, data: &[u8]) -> Vec<u8> {
    let mut reply = Vec::new();
    // xid, REPLY, MSG_ACCEPTED, AUTH_NONE verifier (flavor, length), SUCCESS, NFS3_OK, no
    // attributes, count, eof, data length.
    for word in [
        xid,
        1,
        0,
        0,
        0,
        0,
        0,
        0,
        data.len() as u32,
        0,
        data.len() as u32,
    ] {
        reply.extend_from_slice(&word.to_be_bytes());
    }
    reply.extend_from_slice(data);
    reply.resize(reply.len().next_multiple_of(4), 0);
    reply
}

/// The xid of the next call a scripted server receives on `stream`.
fn next_call_xid(stream: &mut std::net::TcpStream) -> u32 {
    use std::io::Read;
    let mut mark = [0u8; 4];
    stream.read_exact(&mut mark).unwrap();
    let mut call = vec![0u8; (u32::from_be_bytes(mark) & 0x7FFF_FFFF) as usize];
    stream.read_exact(&mut call).unwrap();
    u32::from_be_bytes(call[..4].try_into().unwrap())
}

/// `bytes` written in pieces with a pause after each, so the client receives them in as many
/// parts: 32 pieces of `first` bytes, then pieces of `then` bytes.
fn send_in_pieces(stream: &mut std::net::TcpStream, bytes: &[u8], first: usize, then: usize) {
    use std::io::Write;
    let split = bytes.len().min(32 * first);
    for part in bytes[..split]
        .chunks(first)
        .chain(bytes[split..].chunks(then))
    {
        stream.write_all(part).unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn nfs_read_replies_split_anywhere_out_of_order_or_in_fragments_land_in_their_slots() {
    use std::net::TcpListener;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let url = NfsUrl::parse(&format!("nfs://127.0.0.1:{port}/export/f?mountport={port}")).unwrap();
    const LENGTH: u32 = 64 * 1024;
    let read = |slot: u32| IoRequest {
        slot,
        file: 0,
        direction: Direction::Read,
        offset: u64::from(slot) * u64::from(LENGTH),
        length: LENGTH,
    };
    let data = |seed: u8, length: usize| -> Vec<u8> {
        (0..length)
            .map(|index| (index as u8).wrapping_mul(7) ^ seed)
            .collect()
    };
    let mark = |length: usize, last: bool| -> [u8; 4] {
        (length as u32 | if last { 0x8000_0000 } else { 0 }).to_be_bytes()
    };
    let mut options = EngineOptions::new(2, LENGTH as usize);
    options.net_timeout = TIMEOUT;
    let mut engine = NfsEngine::open(&url, vec![1; 32], &options).unwrap();
    let (mut server, _) = listener.accept().unwrap();
    server.set_nodelay(true).unwrap();
    let mut done = [Completion::default(); 2];

    // Rounds of two reads answered in reverse order; each reply written in small pieces (the
    // header itself split), whole, in two fragments, or short with padding.
    for round in 0..4u8 {
        engine.submit(read(0)).unwrap();
        engine.submit(read(1)).unwrap();
        engine.flush().unwrap();
        let xids = [next_call_xid(&mut server), next_call_xid(&mut server)];
        let lengths = match round {
            2 => [1001, LENGTH as usize],
            _ => [LENGTH as usize, LENGTH as usize],
        };
        let payloads = [data(round, lengths[0]), data(round + 100, lengths[1])];
        let mut replies = Vec::new();
        for slot in [1, 0] {
            let reply = read_reply(xids[slot], &payloads[slot]);
            if round == 3 {
                // Two fragments: the first ends inside the data.
                replies.extend_from_slice(&mark(1000, false));
                replies.extend_from_slice(&reply[..1000]);
                replies.extend_from_slice(&mark(reply.len() - 1000, true));
                replies.extend_from_slice(&reply[1000..]);
            } else {
                replies.extend_from_slice(&mark(reply.len(), true));
                replies.extend_from_slice(&reply);
            }
        }
        let (first, then) = match round {
            0 => (7, 1500),
            1 => (replies.len(), replies.len()),
            _ => (4093, 4093),
        };
        let writer = {
            let mut server = server.try_clone().unwrap();
            std::thread::spawn(move || send_in_pieces(&mut server, &replies, first, then))
        };
        let mut reaped = 0;
        while reaped < 2 {
            reaped += engine.reap(2 - reaped, &mut done[reaped..]).unwrap();
        }
        writer.join().unwrap();
        let mut got: Vec<(u32, i64)> = done.iter().map(|c| (c.slot, c.result)).collect();
        got.sort();
        assert_eq!(
            got,
            [(0, lengths[0] as i64), (1, lengths[1] as i64)],
            "round {round}"
        );
        for slot in 0..2 {
            assert!(
                engine.buffer_mut(slot)[..lengths[slot]] == payloads[slot][..],
                "round {round}: slot {slot}'s data"
            );
        }
    }

    // More data than asked is refused, not written past the request.
    engine.submit(read(0)).unwrap();
    engine.flush().unwrap();
    let xid = next_call_xid(&mut server);
    let mut reply = read_reply(xid, &data(9, LENGTH as usize + 4));
    let mut marked = mark(reply.len(), true).to_vec();
    marked.append(&mut reply);
    let writer = {
        let mut server = server.try_clone().unwrap();
        std::thread::spawn(move || send_in_pieces(&mut server, &marked[..8192], 4096, 4096))
    };
    let error = engine
        .reap(1, &mut done)
        .expect_err("too much data")
        .to_string();
    writer.join().unwrap();
    assert!(error.contains("announced"), "{error}");
}
