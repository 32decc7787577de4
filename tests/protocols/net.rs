//! `iopath net` as a server that strangers can reach: the real binary on loopback, against its
//! own client and against scripted peers that misbehave (idle, dripping, never reading,
//! sending escape codes, asking too much, knowing the wrong secret).
//!
//! Everything stays on 127.0.0.1, except one check that `--insecure-any-address` really binds
//! every address, which runs in a network namespace of its own (root only).

use crate::support;

use iopath::net::protocol::{
    CONTROL_MAGIC, ControlMessage, DataHeader, PROTOCOL_VERSION, StreamRole, read_message,
    write_message,
};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn iopath() -> Command {
    let mut command = support::history::command(env!("CARGO_BIN_EXE_iopath"));
    command.env_remove("IOPATH_NET_SECRET");
    command
}

/// A secret file with owner-only permissions in `dir`.
fn secret_file(dir: &Path, name: &str, contents: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("a secret file");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    path
}

/// A running `iopath net --listen` and the lines it printed after the first.
struct Server {
    child: Child,
    address: String,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Starts `iopath net --listen ARGS` and reads its address from the first line.
    fn start(command: Command) -> Server {
        let mut command = command;
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("iopath runs");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let Some(Ok(first)) = lines.next() else {
            let mut stderr = String::new();
            let _ = child
                .stderr
                .take()
                .expect("stderr")
                .read_to_string(&mut stderr);
            let _ = child.kill();
            let _ = child.wait();
            panic!("the server printed nothing: {stderr}");
        };
        let address = first
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line: {first}"))
            .to_string();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let keep = Arc::clone(&seen);
        // Keep reading so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                keep.lock().unwrap().push(line);
            }
        });
        Server {
            child,
            address,
            lines: seen,
        }
    }

    fn listen(args: &[&str]) -> Server {
        let mut command = iopath();
        command.args(["net", "--listen"]).args(args);
        Server::start(command)
    }

    /// Waits up to `within` for a printed line that holds `text`, and returns it.
    fn wait_for_line(&self, text: &str, within: Duration) -> String {
        let until = Instant::now() + within;
        loop {
            if let Some(line) = self.lines.lock().unwrap().iter().find(|l| l.contains(text)) {
                return line.clone();
            }
            assert!(
                Instant::now() < until,
                "no line with '{text}' in {:?}",
                self.lines.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn output(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the client; returns (status, stdout, stderr).
fn client(args: &[&str], secret: Option<&str>) -> (i32, String, String) {
    let mut command = iopath();
    command.arg("net").args(args);
    if let Some(secret) = secret {
        command.env("IOPATH_NET_SECRET", secret);
    }
    let output = command.output().expect("iopath runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn net_wrong_secret_is_refused_on_both_sides() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let key = secret_file(dir.path(), "net.key", "the secret of this server\n");
    let server = Server::listen(&["127.0.0.1:0", "--secret-file", key.to_str().unwrap()]);
    let address = server.address.clone();

    // A client with another secret: refused, and the server logs why.
    let (status, _, stderr) = client(
        &[&address, "--duration", "500ms"],
        Some("some other secret entirely"),
    );
    assert_eq!(status, 1, "{stderr}");
    assert!(stderr.contains("wrong secret"), "{stderr}");
    assert!(
        !stderr.contains("entirely"),
        "the secret was shown: {stderr}"
    );
    server.wait_for_line("wrong secret", Duration::from_secs(5));

    // A client with no secret at all.
    let (status, _, stderr) = client(&[&address, "--duration", "500ms"], None);
    assert_eq!(status, 1, "{stderr}");
    assert!(stderr.contains("needs the shared secret"), "{stderr}");
    server.wait_for_line("needs the shared secret", Duration::from_secs(5));

    // The same secret from a file works; the output never holds it.
    let same = secret_file(dir.path(), "same.key", "the secret of this server");
    let (status, stdout, stderr) = client(
        &[
            &address,
            "--duration",
            "500ms",
            "--secret-file",
            same.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(status, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("net send"), "{stdout}");
    server.wait_for_line("session from", Duration::from_secs(5));
    let everything = format!("{stdout}{stderr}{}", server.output());
    assert!(
        !everything.contains("the secret of this server"),
        "{everything}"
    );

    // The other way: a client with a secret refuses a server that asks for none.
    let open = Server::listen(&["127.0.0.1:0"]);
    let (status, _, stderr) = client(
        &[&open.address, "--duration", "500ms"],
        Some("the secret of this server"),
    );
    assert_eq!(status, 1, "{stderr}");
    assert!(stderr.contains("does not ask for one"), "{stderr}");
}

#[test]
fn net_secret_files_others_can_read_are_refused() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let key = secret_file(dir.path(), "net.key", "a secret that is long enough");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let short = secret_file(dir.path(), "short.key", "short");
    for args in [
        vec![
            "net",
            "--listen",
            "127.0.0.1:0",
            "--secret-file",
            key.to_str().unwrap(),
        ],
        vec!["net", "127.0.0.1:9", "--secret-file", key.to_str().unwrap()],
        vec![
            "net",
            "--listen",
            "127.0.0.1:0",
            "--secret-file",
            short.to_str().unwrap(),
        ],
        vec![
            "net",
            "--listen",
            "127.0.0.1:0",
            "--secret-file",
            "/nonexistent/key",
        ],
    ] {
        let output = iopath().args(&args).output().expect("iopath runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("--secret-file"), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("long enough"),
            "the secret was shown: {stderr}"
        );
    }
    let output = iopath()
        .args(["net", "--listen", "127.0.0.1:0"])
        .env("IOPATH_NET_SECRET", "short")
        .output()
        .expect("iopath runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("IOPATH_NET_SECRET"), "{stderr}");
    assert!(
        stderr.contains("too open") || stderr.contains("16"),
        "{stderr}"
    );
}

#[test]
fn net_without_a_secret_listens_on_loopback_only() {
    let server = Server::listen(&[":0"]);
    assert!(
        server.address.starts_with("127.0.0.1:"),
        "{}",
        server.address
    );
    drop(server);
    for listen in ["0.0.0.0:0", "[::]:0", "0.0.0.0"] {
        let output = iopath()
            .args(["net", "--listen", listen])
            .output()
            .expect("iopath runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{listen}: {stderr}");
        assert!(stderr.contains("--insecure-any-address"), "{stderr}");
        assert!(stderr.contains("loopback"), "{stderr}");
        assert!(stderr.contains("--secret-file"), "{stderr}");
    }
}

#[test]
fn net_with_a_secret_or_the_flag_listens_on_every_address() {
    // Every address of a network namespace of our own, where nothing else can reach.
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| output.stdout == b"0\n");
    if !support::require(root, "root: unshare --net needs it") {
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let key = secret_file(dir.path(), "net.key", "a secret that is long enough");
    let in_namespace = |args: &[&str]| {
        let mut command = Command::new("unshare");
        command
            .env("IOPATH_HISTORY", support::history::path())
            .arg("--net")
            .arg(env!("CARGO_BIN_EXE_iopath"))
            .args(["net", "--listen"])
            .args(args)
            .env_remove("IOPATH_NET_SECRET");
        Server::start(command)
    };
    let server = in_namespace(&[":0", "--secret-file", key.to_str().unwrap()]);
    assert!(server.address.starts_with("0.0.0.0:"), "{}", server.address);
    let server = in_namespace(&["0.0.0.0:0", "--insecure-any-address"]);
    assert!(server.address.starts_with("0.0.0.0:"), "{}", server.address);
    server.wait_for_line("anyone who reaches", Duration::from_secs(5));
}

#[test]
fn net_idle_and_dripping_connections_do_not_keep_a_client_out() {
    let server = Server::listen(&["127.0.0.1:0"]);
    let address = server.address.clone();
    // From another address than the client's: one address gets 8 handshakes at most.
    let other = std::net::Ipv4Addr::new(127, 0, 0, 2);
    let to: std::net::SocketAddr = address.parse().expect("an address");
    let idle: Vec<TcpStream> = (0..6)
        .map(|_| support::peer::connect_from(other, to).expect("a connection"))
        .collect();
    // A hello that drips one byte every 1.5 s: the magic, then a parameter line.
    let dripping = {
        std::thread::spawn(move || {
            let mut stream = support::peer::connect_from(other, to).expect("a connection");
            let hello = [&CONTROL_MAGIC[..], br#"{"type":"hello"}"#].concat();
            let started = Instant::now();
            for byte in hello {
                if stream.write_all(&[byte]).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(1500));
            }
            started.elapsed()
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    let (status, stdout, stderr) = client(&[&address, "--duration", "1s"], None);
    assert_eq!(status, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("net send"), "{stdout}");
    // While they hung, a real test ran; then the server cut them at its handshake deadline.
    let dripped_for = dripping.join().expect("the dripping thread");
    assert!(dripped_for < Duration::from_secs(12), "{dripped_for:?}");
    for mut stream in idle {
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("a timeout");
        let mut byte = [0u8; 1];
        assert!(
            matches!(stream.read(&mut byte), Ok(0) | Err(_)),
            "an idle connection is still open"
        );
    }
    server.wait_for_line("no greeting", Duration::from_secs(5));
}

/// Whether the server has closed `stream` (read without waiting; what it sent is dropped).
fn closed_by_server(stream: &mut TcpStream) -> bool {
    stream.set_nonblocking(true).expect("non-blocking");
    let mut buffer = [0u8; 512];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
}

/// A peer without the secret keeping `count` handshakes open from `source`: half send
/// nothing, half the magic and a piece of a hello; each one the server closes is opened
/// again, until `stop`. Returns the connections it opened in all.
fn flood(
    source: std::net::Ipv4Addr,
    server: std::net::SocketAddr,
    count: usize,
    stop: Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let open = |index: usize| {
            let mut stream = support::peer::connect_from(source, server).expect("a connection");
            if index % 2 == 1 {
                let _ = stream.write_all(&[&CONTROL_MAGIC[..], br#"{"type":"hel"#].concat());
            }
            stream
        };
        let mut streams: Vec<TcpStream> = (0..count).map(open).collect();
        let mut opened = count;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
            for (index, stream) in streams.iter_mut().enumerate() {
                if closed_by_server(stream) {
                    *stream = open(index);
                    opened += 1;
                }
            }
        }
        opened
    })
}

#[test]
fn timing_a_handshake_flood_from_one_address_does_not_delay_a_client_from_another() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let key = secret_file(dir.path(), "net.key", "the secret of this server\n");
    let server = Server::listen(&["127.0.0.1:0", "--secret-file", key.to_str().unwrap()]);
    let address: std::net::SocketAddr = server.address.parse().expect("an address");
    let hostile = std::net::Ipv4Addr::new(127, 0, 0, 2);
    // One address gets at most 8 handshakes: of 100 connections, the rest are closed at once.
    let mut first: Vec<TcpStream> = (0..100)
        .map(|_| support::peer::connect_from(hostile, address).expect("a connection"))
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let held = first
        .iter_mut()
        .map(closed_by_server)
        .filter(|closed| !closed)
        .count();
    assert!((1..=8).contains(&held), "{held} of 100 handshakes held");
    drop(first);
    // While the peer keeps 100 handshakes going, a client from 127.0.0.1 runs its test at
    // once, not after the hostile handshakes' 5 s deadline.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flooding = flood(hostile, address, 100, Arc::clone(&stop));
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let (status, stdout, stderr) = client(
        &[&server.address, "--duration", "1s"],
        Some("the secret of this server"),
    );
    let took = started.elapsed();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let opened = flooding.join().expect("the flooding thread");
    assert_eq!(status, 0, "{stdout}\n{stderr}\n{}", server.output());
    assert!(stdout.contains("net send"), "{stdout}");
    assert!(took < Duration::from_secs(5), "the client took {took:?}");
    assert!(opened > 100, "the peer reopened no connection ({opened})");
}

/// Connects as a client without a secret, asks for a test of `streams` and `duration_ns`
/// (the server sending when `server_sends`), and returns the control connection, its reader
/// and the session, or the server's refusal.
fn scripted_client(
    address: &str,
    streams: u32,
    duration_ns: u64,
    server_sends: bool,
) -> Result<(TcpStream, BufReader<TcpStream>, u64), String> {
    let mut control = TcpStream::connect(address).expect("a connection");
    control
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("a timeout");
    control.write_all(&CONTROL_MAGIC).expect("the magic");
    let mut reader = BufReader::new(control.try_clone().expect("a clone"));
    match read_message(&mut reader).expect("a challenge") {
        Some(ControlMessage::Challenge {
            secret_required: false,
            ..
        }) => {}
        other => panic!("expected a challenge without a secret, got {other:?}"),
    }
    let hello = ControlMessage::Hello {
        version: PROTOCOL_VERSION,
        streams,
        duration_ns,
        interval_ns: 1_000_000_000,
        client_sends: !server_sends,
        server_sends,
        nonce: "ab".repeat(32),
        proof: None,
    };
    write_message(&mut control, &hello).expect("the hello");
    match read_message(&mut reader).expect("an answer") {
        Some(ControlMessage::Welcome { session, .. }) => Ok((control, reader, session)),
        Some(ControlMessage::Refused { reason }) => Err(reason),
        other => panic!("unexpected answer {other:?}"),
    }
}

#[test]
fn net_a_client_that_never_reads_is_cut_off() {
    let server = Server::listen(&["127.0.0.1:0"]);
    // A 60 s test where the server sends, on a stream this client never reads.
    let (mut control, mut reader, session) =
        scripted_client(&server.address, 1, 60_000_000_000, true).expect("accepted");
    let mut data = TcpStream::connect(&server.address).expect("a data connection");
    let header = DataHeader {
        session,
        stream: 0,
        role: StreamRole::ServerSends,
    };
    data.write_all(&header.encode()).expect("the header");
    assert_eq!(
        read_message(&mut reader).expect("ready"),
        Some(ControlMessage::Ready)
    );
    write_message(&mut control, &ControlMessage::Start).expect("start");
    let started = Instant::now();
    // The server stops sending once the stream stalls for 5 s, says why, and closes.
    let mut reason = None;
    while let Ok(Some(message)) = read_message(&mut reader) {
        if let ControlMessage::Abort { reason: why } = message {
            reason = Some(why);
        }
        assert!(started.elapsed() < Duration::from_secs(30), "still running");
    }
    let elapsed = started.elapsed();
    assert!(
        elapsed < Duration::from_secs(12),
        "cut off only after {elapsed:?}"
    );
    let reason = reason.expect("an abort");
    assert!(reason.contains("stalled"), "{reason}");
    server.wait_for_line("stalled", Duration::from_secs(5));
    drop(data);
}

#[test]
fn net_peer_messages_are_shown_escaped() {
    // A scripted server that refuses with a message that would clear the terminal.
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let address = listener.local_addr().expect("its address").to_string();
    let scripted = std::thread::spawn(move || {
        let (mut control, _) = listener.accept().expect("the client");
        control
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("a timeout");
        let mut magic = [0u8; 8];
        control.read_exact(&mut magic).expect("the magic");
        let refusal = ControlMessage::Refused {
            reason: "\x1b[2J\x1b]0;owned\x07 gone".to_string(),
        };
        write_message(&mut control, &refusal).expect("the refusal");
    });
    let (status, stdout, stderr) = client(&[&address, "--duration", "1s"], None);
    scripted.join().expect("the scripted server");
    assert_eq!(status, 1, "{stderr}");
    assert!(
        !stderr.contains('\x1b') && !stdout.contains('\x1b'),
        "{stderr:?}"
    );
    assert!(stderr.contains("\\u{1b}[2J"), "{stderr}");

    // A client whose message quotes escape codes: the server's log shows them escaped.
    let server = Server::listen(&["127.0.0.1:0"]);
    let mut control = TcpStream::connect(&server.address).expect("a connection");
    control.write_all(&CONTROL_MAGIC).expect("the magic");
    control
        .write_all(b"{\"type\":\"\\u001b[2J\"}\n")
        .expect("a message");
    let line = server.wait_for_line("refused", Duration::from_secs(10));
    assert!(!line.contains('\x1b'), "{line:?}");
    assert!(line.contains("\\u{1b}[2J"), "{line}");
}

#[test]
fn net_more_streams_or_time_than_allowed_is_refused() {
    let server = Server::listen(&["127.0.0.1:0", "--max-streams", "2", "--max-duration", "2s"]);
    let (status, _, stderr) = client(&[&server.address, "--streams", "3"], None);
    assert_eq!(status, 1, "{stderr}");
    assert!(
        stderr.contains("3 streams: this server allows 1 to 2 (its --max-streams)"),
        "{stderr}"
    );
    let (status, _, stderr) = client(&[&server.address, "--duration", "5s"], None);
    assert_eq!(status, 1, "{stderr}");
    assert!(
        stderr.contains("at most 2.0 s (its --max-duration)"),
        "{stderr}"
    );
    server.wait_for_line("--max-duration", Duration::from_secs(5));
    // Within the limits, the same server runs the test.
    let (status, stdout, stderr) = client(
        &[&server.address, "--streams", "2", "--duration", "500ms"],
        None,
    );
    assert_eq!(status, 0, "{stdout}\n{stderr}");
    // Out-of-range limits are bad input.
    for args in [
        ["--max-streams", "0"],
        ["--max-streams", "1000"],
        ["--max-duration", "2h"],
        ["--max-sessions", "0"],
        ["--stall-timeout", "0"],
        ["--stall-timeout", "2h"],
    ] {
        let output = iopath()
            .args(["net", "--listen", "127.0.0.1:0"])
            .args(args)
            .output()
            .expect("iopath runs");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
    }
}
