//! A hostile NBD server for the binary's tests: a thread on a Unix socket in a fresh directory
//! that answers each connection as its [`Mode`] says — correctly, endlessly, dripping, with an
//! export that changed, or by going silent in the middle of a reply.
//!
//! Connection 0 is the probe before the run; connections 1 and on are the workers'. Every
//! loop here is bounded: a connection's thread ends when the client hangs up, when the server
//! is dropped, or after [`CONNECTION_LIMIT`].

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest life of one connection's thread.
pub const CONNECTION_LIMIT: Duration = Duration::from_secs(60);

/// `NBDMAGIC`, `IHAVEOPT` and the handshake flags (fixed newstyle, no zeroes).
const GREETING: &[u8; 18] = b"NBDMAGICIHAVEOPT\0\x03";
/// Starts every option reply.
const OPTION_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
/// Starts every simple reply.
const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
/// `NBD_OPT_ABORT`.
const OPT_ABORT: u32 = 2;
/// `NBD_OPT_GO`.
const OPT_GO: u32 = 7;
/// `NBD_REP_ACK`.
const REP_ACK: u32 = 1;
/// `NBD_REP_INFO`.
const REP_INFO: u32 = 3;
/// `NBD_REP_ERR_UNSUP`.
const REP_ERR_UNSUP: u32 = (1 << 31) | 1;
/// `NBD_INFO_EXPORT`.
const INFO_EXPORT: u16 = 0;
/// `NBD_INFO_BLOCK_SIZE`.
const INFO_BLOCK_SIZE: u16 = 3;
/// `NBD_CMD_READ`.
const CMD_READ: u16 = 0;
/// `NBD_CMD_WRITE`.
const CMD_WRITE: u16 = 1;
/// `NBD_CMD_DISC`.
const CMD_DISC: u16 = 2;
/// Transmission flags: flags valid, flush, FUA.
const FLAGS: u16 = 0b1101;

/// The export a connection offers.
#[derive(Clone, Copy, Debug)]
pub struct Export {
    /// Size, bytes.
    pub size: u64,
    /// Minimum, preferred and maximum block size, when announced.
    pub block_sizes: Option<[u32; 3]>,
}

/// How one connection is answered.
#[derive(Clone, Copy, Debug)]
pub enum Mode {
    /// A correct server of a zero-filled export (writes are taken and dropped).
    Serve(Export),
    /// Information replies to `NBD_OPT_GO`, without end.
    EndlessInfo,
    /// The greeting one byte every 300 ms, then silence.
    DripGreeting,
    /// Serves `answered` requests correctly, then sends the next reply's header and half its
    /// data (`part_way`) or nothing, and never another byte.
    StallAfter {
        /// The export.
        export: Export,
        /// Requests answered before the stall.
        answered: usize,
        /// Whether part of the next reply goes out.
        part_way: bool,
    },
}

/// What the server saw, shared with its threads.
#[derive(Default)]
struct Seen {
    /// Connections accepted.
    connections: AtomicUsize,
    /// Requests (other than disconnect) per connection.
    requests: Mutex<Vec<usize>>,
    /// A connection has gone silent as its mode says.
    stalled: AtomicBool,
}

/// The server; dropping it stops it.
pub struct HostileServer {
    directory: tempfile::TempDir,
    socket: PathBuf,
    stop: Arc<AtomicBool>,
    seen: Arc<Seen>,
    acceptor: Option<JoinHandle<()>>,
}

impl HostileServer {
    /// Listens at once; connection `i` is answered as `modes[i]` (the last mode for every later
    /// one).
    pub fn start(modes: Vec<Mode>) -> HostileServer {
        assert!(!modes.is_empty());
        let directory = tempfile::tempdir().unwrap();
        let socket = directory.path().join("hostile.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Seen::default());
        let acceptor = {
            let (stop, seen) = (Arc::clone(&stop), Arc::clone(&seen));
            std::thread::spawn(move || accept(&listener, &modes, &stop, &seen))
        };
        HostileServer {
            directory,
            socket,
            stop,
            seen,
            acceptor: Some(acceptor),
        }
    }

    /// The URL of the server's (only, default) export.
    pub fn url(&self) -> String {
        format!("nbd+unix:///?socket={}", self.socket.display())
    }

    /// The socket path.
    pub fn socket(&self) -> &std::path::Path {
        &self.socket
    }

    /// A scratch directory that lives as long as the server.
    pub fn directory(&self) -> &std::path::Path {
        self.directory.path()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.seen.connections.load(Ordering::SeqCst)
    }

    /// Requests (other than disconnect) connection `index` received.
    pub fn requests_on(&self, index: usize) -> usize {
        let requests = self.seen.requests.lock().unwrap();
        requests.get(index).copied().unwrap_or(0)
    }

    /// Whether a connection has gone silent as its mode says.
    pub fn stalled(&self) -> bool {
        self.seen.stalled.load(Ordering::SeqCst)
    }
}

impl Drop for HostileServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

/// Accepts connections until `stop`, each on a thread of its own.
fn accept(listener: &UnixListener, modes: &[Mode], stop: &Arc<AtomicBool>, seen: &Arc<Seen>) {
    let started = Instant::now();
    let mut threads = Vec::new();
    while !stop.load(Ordering::SeqCst) && started.elapsed() < CONNECTION_LIMIT {
        match listener.accept() {
            Ok((stream, _)) => {
                let index = seen.connections.fetch_add(1, Ordering::SeqCst);
                seen.requests.lock().unwrap().push(0);
                let mode = modes[index.min(modes.len() - 1)];
                let (stop, seen) = (Arc::clone(stop), Arc::clone(seen));
                threads.push(std::thread::spawn(move || {
                    let mut connection = Connection {
                        stream,
                        index,
                        stop,
                        seen,
                        started: Instant::now(),
                    };
                    // A client that hangs up ends the script early; that is no failure.
                    let _ = connection.run(mode);
                }));
            }
            Err(error) if error.kind() == ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(error) => panic!("accept: {error}"),
        }
    }
    for thread in threads {
        let _ = thread.join();
    }
}

/// One connection and what it may look at.
struct Connection {
    stream: UnixStream,
    index: usize,
    stop: Arc<AtomicBool>,
    seen: Arc<Seen>,
    started: Instant,
}

/// One request as read.
struct Request {
    command: u16,
    handle: u64,
    length: u32,
}

impl Connection {
    /// Whether this connection must end (the server is dropped, or its time is up).
    fn over(&self) -> bool {
        self.stop.load(Ordering::SeqCst) || self.started.elapsed() > CONNECTION_LIMIT
    }

    fn run(&mut self, mode: Mode) -> std::io::Result<()> {
        self.stream
            .set_read_timeout(Some(Duration::from_millis(100)))?;
        // A client that stops reading ends a flood instead of blocking it forever.
        self.stream
            .set_write_timeout(Some(Duration::from_secs(5)))?;
        match mode {
            Mode::Serve(export) => {
                self.negotiate(export)?;
                self.serve(usize::MAX, false)
            }
            Mode::EndlessInfo => {
                self.greet()?;
                self.read_option()?;
                let mut item = INFO_EXPORT.to_be_bytes().to_vec();
                item.extend_from_slice(&(1u64 << 20).to_be_bytes());
                item.extend_from_slice(&FLAGS.to_be_bytes());
                while !self.over() {
                    self.option_reply(OPT_GO, REP_INFO, &item)?;
                }
                Ok(())
            }
            Mode::DripGreeting => {
                for byte in GREETING {
                    if self.over() {
                        return Ok(());
                    }
                    self.stream.write_all(&[*byte])?;
                    std::thread::sleep(Duration::from_millis(300));
                }
                self.silence()
            }
            Mode::StallAfter {
                export,
                answered,
                part_way,
            } => {
                self.negotiate(export)?;
                self.serve(answered, part_way)
            }
        }
    }

    /// Sends the greeting and reads the client's flags.
    fn greet(&mut self) -> std::io::Result<()> {
        self.stream.write_all(GREETING)?;
        self.read_exact(&mut [0u8; 4])
    }

    /// Reads `buffer` whole, waiting through read timeouts until the connection is over.
    fn read_exact(&mut self, buffer: &mut [u8]) -> std::io::Result<()> {
        let mut filled = 0;
        while filled < buffer.len() {
            if self.over() {
                return Err(ErrorKind::TimedOut.into());
            }
            match self.stream.read(&mut buffer[filled..]) {
                Ok(0) => return Err(ErrorKind::UnexpectedEof.into()),
                Ok(read) => filled += read,
                Err(error)
                    if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }

    /// Reads one option: (option, data).
    fn read_option(&mut self) -> std::io::Result<(u32, Vec<u8>)> {
        let mut header = [0u8; 16];
        self.read_exact(&mut header)?;
        assert_eq!(&header[..8], b"IHAVEOPT");
        let option = u32::from_be_bytes(header[8..12].try_into().unwrap());
        let length = u32::from_be_bytes(header[12..16].try_into().unwrap());
        assert!(length <= 8192, "option of {length} bytes");
        let mut data = vec![0; length as usize];
        self.read_exact(&mut data)?;
        Ok((option, data))
    }

    /// Sends one option reply.
    fn option_reply(&mut self, option: u32, reply: u32, data: &[u8]) -> std::io::Result<()> {
        let mut message = OPTION_REPLY_MAGIC.to_be_bytes().to_vec();
        message.extend_from_slice(&option.to_be_bytes());
        message.extend_from_slice(&reply.to_be_bytes());
        message.extend_from_slice(&(data.len() as u32).to_be_bytes());
        message.extend_from_slice(data);
        self.stream.write_all(&message)
    }

    /// The handshake of a correct server offering `export`.
    fn negotiate(&mut self, export: Export) -> std::io::Result<()> {
        self.greet()?;
        loop {
            match self.read_option()? {
                (OPT_GO, _) => break,
                (OPT_ABORT, _) => return Err(ErrorKind::ConnectionAborted.into()),
                (other, _) => self.option_reply(other, REP_ERR_UNSUP, &[])?,
            }
        }
        let mut item = INFO_EXPORT.to_be_bytes().to_vec();
        item.extend_from_slice(&export.size.to_be_bytes());
        item.extend_from_slice(&FLAGS.to_be_bytes());
        self.option_reply(OPT_GO, REP_INFO, &item)?;
        if let Some(sizes) = export.block_sizes {
            let mut item = INFO_BLOCK_SIZE.to_be_bytes().to_vec();
            for size in sizes {
                item.extend_from_slice(&size.to_be_bytes());
            }
            self.option_reply(OPT_GO, REP_INFO, &item)?;
        }
        self.option_reply(OPT_GO, REP_ACK, &[])
    }

    /// Reads one request (and drops a write's data); `None` at a disconnect.
    fn read_request(&mut self) -> std::io::Result<Option<Request>> {
        let mut header = [0u8; 28];
        self.read_exact(&mut header)?;
        assert_eq!(&header[..4], &0x2560_9513u32.to_be_bytes());
        let request = Request {
            command: u16::from_be_bytes([header[6], header[7]]),
            handle: u64::from_be_bytes(header[8..16].try_into().unwrap()),
            length: u32::from_be_bytes(header[24..28].try_into().unwrap()),
        };
        if request.command == CMD_DISC {
            return Ok(None);
        }
        if request.command == CMD_WRITE {
            self.read_exact(&mut vec![0; request.length as usize])?;
        }
        self.seen.requests.lock().unwrap()[self.index] += 1;
        Ok(Some(request))
    }

    /// Answers `answered` requests, then stalls on the next (after half of its reply when
    /// `part_way`).
    fn serve(&mut self, answered: usize, part_way: bool) -> std::io::Result<()> {
        let mut count = 0;
        while let Some(request) = self.read_request()? {
            let mut reply = SIMPLE_REPLY_MAGIC.to_be_bytes().to_vec();
            reply.extend_from_slice(&0u32.to_be_bytes());
            reply.extend_from_slice(&request.handle.to_be_bytes());
            if request.command == CMD_READ {
                reply.resize(reply.len() + request.length as usize, 0);
            }
            if count == answered {
                if part_way {
                    let half = 16 + (reply.len() - 16) / 2;
                    self.stream.write_all(&reply[..half])?;
                }
                return self.silence();
            }
            self.stream.write_all(&reply)?;
            count += 1;
        }
        Ok(())
    }

    /// Sends nothing more, reading (and dropping) whatever comes, until the client hangs up
    /// or the connection is over.
    fn silence(&mut self) -> std::io::Result<()> {
        self.seen.stalled.store(true, Ordering::SeqCst);
        let mut sink = [0u8; 4096];
        while !self.over() {
            match self.stream.read(&mut sink) {
                Ok(0) => return Ok(()),
                Ok(_) => {}
                Err(error)
                    if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }
}
