//! Real NAS servers for tests, on loopback, each with a temporary share or export and stopped
//! on drop even when an assertion fails:
//!
//! - [`SambaServer`]: Samba's `smbd` (Debian: samba) on a free port with one share over a
//!   temporary directory and one user in a temporary password database;
//! - [`GaneshaServer`]: nfs-ganesha with its VFS FSAL (Debian: nfs-ganesha, nfs-ganesha-vfs)
//!   exporting a temporary directory over NFSv3 and NFSv4 on a free port, MOUNT on another
//!   (ganesha does not answer MOUNT on the NFS port even when told to use it for both).
//!
//! Both need root (ganesha's VFS FSAL opens files by handle; smbd switches users). Where the
//! machine cannot run one, the constructor skips the calling test through [`require`] and
//! returns `None`. nfs-ganesha registers with rpcbind and waits a long time for one that is
//! absent, so [`GaneshaServer::start`] starts the system's `rpcbind` when none answers (and
//! leaves it running: it is a shared system service, not the test's).

use super::devices::{is_root, required_tool, tool};
use super::{free_port, require};
use iopath::engine::{Completion, Engine, IoRequest};
use iopath::result::Direction;
use std::fs::File;
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a server may take to listen after it was started.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Waits until `daemon` listens on `port` of loopback and, when `ready_line` is given, its
/// `log` holds that line; an error says why not.
fn wait_for_port(
    daemon: &mut Child,
    port: u16,
    log: &Path,
    ready_line: Option<&str>,
) -> Result<(), String> {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if let Ok(Some(status)) = daemon.try_wait() {
            let log = std::fs::read_to_string(log).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(8).collect();
            return Err(format!("it exited at start ({status}): {tail:?}"));
        }
        let logged = ready_line
            .is_none_or(|line| std::fs::read_to_string(log).is_ok_and(|text| text.contains(line)));
        if logged && TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "it did not listen on port {port} in {START_TIMEOUT:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The server `start` starts on ports free when asked; when another process took one first
/// (`start` fails: the server it made is dropped, and stopped), tried again on other ports,
/// up to five times more.
fn start_on_a_free_port<T>(daemon: &str, mut start: impl FnMut() -> Result<T, String>) -> T {
    let mut attempts = 0;
    loop {
        match start() {
            Ok(server) => return server,
            Err(error) if attempts < 5 => {
                attempts += 1;
                eprintln!("{daemon} did not start ({error}); trying another port");
            }
            Err(error) => panic!("{daemon} did not start: {error}"),
        }
    }
}

/// Stops `daemon`: SIGTERM (to its whole process group with `group`, when it leads one of
/// its own), then SIGKILL after `grace`.
fn stop(daemon: &mut Child, grace: Duration, group: bool) {
    if let Ok(None) = daemon.try_wait() {
        let pid = daemon.id() as libc::pid_t;
        // SAFETY: kill has no memory preconditions; the pid is our own child's, not yet
        // reaped (so neither it nor its group id can have been reused).
        unsafe { libc::kill(if group { -pid } else { pid }, libc::SIGTERM) };
        let deadline = Instant::now() + grace;
        while matches!(daemon.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let _ = daemon.kill();
    let _ = daemon.wait();
}

/// The Samba user the tests log in as: the account the tests run as (root), known to the
/// server through its temporary password database only, so no system account is made.
pub const SAMBA_USER: &str = "root";
/// That user's password (in the server's temporary password database only).
pub const SAMBA_PASSWORD: &str = "iopath-test-secret";
/// The share's name.
pub const SAMBA_SHARE: &str = "share";
/// A second share, read-only, over its own directory.
pub const SAMBA_READ_ONLY_SHARE: &str = "readonly";

/// A private `smbd` on loopback with one share.
pub struct SambaServer {
    daemon: Child,
    /// The SMB port.
    pub port: u16,
    directory: tempfile::TempDir,
}

impl SambaServer {
    /// Starts smbd with the share [`SAMBA_SHARE`] over an empty temporary directory, written
    /// to by [`SAMBA_USER`] (password [`SAMBA_PASSWORD`]); `global` adds lines to its
    /// `[global]` section (`server smb encrypt = required`). `None` when it cannot run here
    /// (the test was skipped).
    pub fn start(global: &[&str]) -> Option<SambaServer> {
        if !require(is_root(), "not root (smbd needs root)") {
            return None;
        }
        let smbd = required_tool("smbd", "samba")?;
        let pdbedit = required_tool("pdbedit", "samba")?;
        Some(start_on_a_free_port("smbd", || {
            let directory = tempfile::tempdir().expect("a temporary directory");
            let root = directory.path();
            for sub in [
                "share", "readonly", "private", "lock", "state", "cache", "pid", "ncalrpc",
            ] {
                std::fs::create_dir(root.join(sub)).expect("a server directory");
            }
            let port = free_port();
            let config = root.join("smb.conf");
            let at = |sub: &str| root.join(sub).display().to_string();
            let mut text = format!(
                "[global]\n  server role = standalone server\n  smb ports = {port}\n  \
                 interfaces = 127.0.0.1\n  bind interfaces only = yes\n  private dir = {}\n  \
                 lock directory = {}\n  state directory = {}\n  cache directory = {}\n  \
                 pid directory = {}\n  ncalrpc dir = {}\n  passdb backend = tdbsam:{}/passdb.tdb\n  \
                 log file = {}/smbd.log\n  log level = 1\n  disable spoolss = yes\n  \
                 load printers = no\n  printcap name = /dev/null\n  map to guest = never\n  \
                 server min protocol = SMB2_10\n",
                at("private"),
                at("lock"),
                at("state"),
                at("cache"),
                at("pid"),
                at("ncalrpc"),
                at("private"),
                root.display(),
            );
            for line in global {
                text.push_str(&format!("  {line}\n"));
            }
            text.push_str(&format!(
                "[{SAMBA_SHARE}]\n  path = {}\n  read only = no\n  valid users = {SAMBA_USER}\n  \
                 force user = root\n[{SAMBA_READ_ONLY_SHARE}]\n  path = {}\n  read only = yes\n  \
                 valid users = {SAMBA_USER}\n  force user = root\n",
                at("share"),
                at("readonly")
            ));
            std::fs::write(&config, text).expect("smb.conf");
            let mut add_user = Command::new(&pdbedit)
                .arg("-s")
                .arg(&config)
                .args(["-a", "-t", "-u", SAMBA_USER])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("pdbedit runs");
            {
                use std::io::Write;
                let mut input = add_user.stdin.take().expect("pdbedit's stdin");
                let _ = write!(input, "{SAMBA_PASSWORD}\n{SAMBA_PASSWORD}\n");
            }
            assert!(
                add_user.wait().expect("pdbedit ends").success(),
                "pdbedit failed"
            );
            let log = root.join("smbd.out");
            // Its own process group: smbd signals its whole group when it stops.
            let daemon = Command::new(&smbd)
                .process_group(0)
                .args(["--foreground", "--no-process-group", "-s"])
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(File::create(&log).expect("a log file"))
                .stderr(Stdio::null())
                .spawn()
                .expect("smbd starts");
            let mut server = SambaServer {
                daemon,
                port,
                directory,
            };
            wait_for_port(&mut server.daemon, port, &log, None).map(|()| server)
        }))
    }

    /// The directory the share serves (to put files in and check them).
    pub fn share_directory(&self) -> PathBuf {
        self.directory.path().join("share")
    }

    /// The directory the read-only share serves.
    pub fn read_only_directory(&self) -> PathBuf {
        self.directory.path().join("readonly")
    }

    /// `smb://USER@127.0.0.1:PORT/share/NAME`.
    pub fn url(&self, name: &str) -> String {
        format!(
            "smb://{SAMBA_USER}@127.0.0.1:{}/{SAMBA_SHARE}/{name}",
            self.port
        )
    }

    /// Stops (`SIGSTOP`) or continues (`SIGCONT`) every smbd process of this server: its
    /// process group.
    pub fn signal_all(&self, signal: libc::c_int) {
        // SAFETY: kill(2) on this server's own process group; no memory is involved.
        let sent = unsafe { libc::kill(-(self.daemon.id() as libc::pid_t), signal) };
        assert_eq!(sent, 0, "signalling smbd's process group");
    }

    /// Kills smbd at once.
    pub fn kill(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

impl Drop for SambaServer {
    fn drop(&mut self) {
        stop(&mut self.daemon, Duration::from_secs(5), true);
    }
}

/// The pseudo path of the export (NFSv4, and NFSv3 MOUNT since `Mount_Path_Pseudo` is set).
pub const GANESHA_EXPORT: &str = "/export";

/// A private nfs-ganesha on loopback exporting one temporary directory. One runs at a time on
/// the machine (a lock file held for its life): each registers its programs with the shared
/// rpcbind and removes what another one registered, which makes one that starts beside
/// another fail.
pub struct GaneshaServer {
    daemon: Child,
    _one_at_a_time: File,
    /// The NFS port.
    pub port: u16,
    /// The MOUNT port.
    pub mount_port: u16,
    directory: tempfile::TempDir,
}

/// Takes an exclusive lock on `name` in the temporary directory, shared by every test
/// process; held until the returned file is dropped.
fn exclusive_lock(name: &str) -> File {
    let lock = File::create(std::env::temp_dir().join(name)).expect("a test lock file");
    // SAFETY: flock has no memory preconditions; the descriptor is open for the call.
    let locked = unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&lock), libc::LOCK_EX) };
    assert_eq!(locked, 0, "locking {name}");
    lock
}

/// Whether an rpcbind answers on loopback (started when none does).
fn ensure_rpcbind() -> bool {
    let answers = || TcpStream::connect(("127.0.0.1", 111)).is_ok();
    if answers() {
        return true;
    }
    let Some(rpcbind) = tool("rpcbind") else {
        return false;
    };
    // Tests run as parallel processes: one starts rpcbind at a time, and the others wait for
    // it to answer (a second rpcbind started beside the first aborts with "another rpcbind is
    // already running" before the first one listens).
    let _lock = exclusive_lock("iopath-tests-rpcbind.lock");
    if answers() {
        return true;
    }
    // rpcbind forks into the background and stays: a system service shared by all tests.
    let _ = Command::new(rpcbind)
        .arg("-w")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    // Whether this start or another's wins, wait for an rpcbind to answer.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !answers() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    answers()
}

impl GaneshaServer {
    /// Starts nfs-ganesha exporting an empty temporary directory read-write (`access_type =
    /// "RO"` for a read-only export) as [`GANESHA_EXPORT`], root not squashed. `None` when it
    /// cannot run here (the test was skipped).
    pub fn start(access_type: &str) -> Option<GaneshaServer> {
        Self::start_with(access_type, "")
    }

    /// As [`GaneshaServer::start`], with `nfsv4` added to the `NFSV4` block (such as
    /// `slot_table_size = 4;`).
    pub fn start_with(access_type: &str, nfsv4: &str) -> Option<GaneshaServer> {
        if !require(is_root(), "not root (nfs-ganesha's VFS FSAL needs root)") {
            return None;
        }
        let ganesha = required_tool("ganesha.nfsd", "nfs-ganesha")?;
        let has_vfs = ["/usr/lib/x86_64-linux-gnu/ganesha", "/usr/lib/ganesha"]
            .iter()
            .any(|dir| Path::new(dir).join("libfsalvfs.so").exists());
        if !require(
            has_vfs,
            "nfs-ganesha's VFS FSAL is not installed (apt-get install nfs-ganesha-vfs)",
        ) {
            return None;
        }
        if !require(
            ensure_rpcbind(),
            "no rpcbind answers and none could be started (apt-get install rpcbind)",
        ) {
            return None;
        }
        let lock = exclusive_lock("iopath-tests-ganesha.lock");
        Some(start_on_a_free_port("nfs-ganesha", || {
            let directory = tempfile::tempdir().expect("a temporary directory");
            let root = directory.path();
            std::fs::create_dir(root.join("export")).expect("the export directory");
            std::fs::create_dir(root.join("recovery")).expect("the recovery directory");
            let port = free_port();
            let mount_port = free_port();
            let config = root.join("ganesha.conf");
            std::fs::write(
                &config,
                format!(
                    "NFS_CORE_PARAM {{\n  Bind_Addr = 127.0.0.1;\n  NFS_Port = {port};\n  \
                     MNT_Port = {mount_port};\n  Enable_NLM = false;\n  Enable_RQUOTA = false;\n  \
                     Enable_UDP = false;\n  Mount_Path_Pseudo = true;\n  Protocols = 3, 4;\n}}\n\
                     NFSV4 {{ Graceless = true; RecoveryBackend = fs; RecoveryRoot = {}; {nfsv4} }}\n\
                     NFS_KRB5 {{ Active_krb5 = false; }}\n\
                     EXPORT {{\n  Export_Id = 1;\n  Path = {};\n  Pseudo = {GANESHA_EXPORT};\n  \
                     Access_Type = {access_type};\n  Squash = No_Root_Squash;\n  SecType = sys;\n  \
                     Protocols = 3, 4;\n  Transports = TCP;\n  FSAL {{ Name = VFS; }}\n}}\n",
                    root.join("recovery").display(),
                    root.join("export").display(),
                ),
            )
            .expect("ganesha.conf");
            let log = root.join("ganesha.log");
            let daemon = Command::new(&ganesha)
                .arg("-F")
                .arg("-f")
                .arg(&config)
                .arg("-L")
                .arg(&log)
                .arg("-p")
                .arg(root.join("ganesha.pid"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("ganesha.nfsd starts");
            let mut server = GaneshaServer {
                daemon,
                _one_at_a_time: lock.try_clone().expect("the lock file"),
                port,
                mount_port,
                directory,
            };
            wait_for_port(
                &mut server.daemon,
                port,
                &log,
                Some("NFS SERVER INITIALIZED"),
            )
            .map(|()| server)
        }))
    }

    /// The exported directory (to put files in and check them).
    pub fn export_directory(&self) -> PathBuf {
        self.directory.path().join("export")
    }

    /// `nfs://127.0.0.1:PORT/export/NAME?mountport=MOUNT-PORT`.
    pub fn url(&self, name: &str) -> String {
        format!(
            "nfs://127.0.0.1:{}{GANESHA_EXPORT}/{name}?mountport={}",
            self.port, self.mount_port
        )
    }

    /// `nfs://127.0.0.1:PORT/export/NAME?version=4.1` (no MOUNT: the pseudo path).
    pub fn url41(&self, name: &str) -> String {
        format!(
            "nfs://127.0.0.1:{}{GANESHA_EXPORT}/{name}?version=4.1",
            self.port
        )
    }

    /// Kills the server at once (connections drop).
    pub fn kill(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

impl Drop for GaneshaServer {
    fn drop(&mut self) {
        stop(&mut self.daemon, Duration::from_secs(5), false);
    }
}

/// The arguments of a run during which [`swap_once_filled`] swaps the test file: a 4 MiB
/// test file ([`SWAP_TEST_FILE_BYTES`]) read and written for 4 seconds.
pub const SWAP_RUN: [&str; 8] = [
    "--rw",
    "randrw",
    "--bs",
    "4k",
    "--size",
    "4m",
    "--duration",
    "4",
];
/// The size of the test file of [`SWAP_RUN`].
pub const SWAP_TEST_FILE_BYTES: u64 = 4 << 20;

/// Once `on_server` holds `size` bytes (iopath filled it), waits half a second (the run is
/// under way), moves it aside (to the same name with the extension `aside`) behind the
/// server's back and writes a file of `foreign_bytes` bytes of 0xa5 under its name.
pub fn swap_once_filled(on_server: &Path, size: u64, foreign_bytes: u64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::metadata(on_server).map_or(0, |m| m.len()) < size {
        assert!(
            Instant::now() < deadline,
            "{} was filled",
            on_server.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    std::fs::rename(on_server, on_server.with_extension("aside")).expect("moved aside");
    std::fs::write(on_server, vec![0xa5; foreign_bytes as usize]).expect("another file");
}

/// After a run whose test file `on_server` was swapped by [`swap_once_filled`] with a file
/// of `foreign_bytes`: the other file is intact, the test file is where it was moved to and
/// nothing else is in the directory, and the run's `output` says the test file was not
/// removed and what was left in place.
pub fn assert_the_swap_survived(on_server: &Path, foreign_bytes: u64, output: &str) {
    assert_eq!(
        std::fs::read(on_server).expect("the other file is still there"),
        vec![0xa5; foreign_bytes as usize],
        "the other file is intact"
    );
    let name = |path: &Path| path.file_name().unwrap().to_string_lossy().into_owned();
    let mut expected = [name(on_server), name(&on_server.with_extension("aside"))];
    expected.sort();
    assert_eq!(
        names_in(on_server.parent().expect("a directory")),
        expected,
        "the test file stays where it was moved to, and nothing else is left"
    );
    assert!(
        output.contains("the test file was not removed") && output.contains("left in place"),
        "{output}"
    );
}

/// The names in `directory`, sorted.
pub fn names_in(directory: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(directory)
        .expect("the directory")
        .map(|entry| {
            entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// Established TCP connections from this machine to `port` on loopback (IPv4 and IPv6), by
/// /proc/net/tcp and /proc/net/tcp6: the client ends, each counted once.
pub fn established_connections_to(port: u16) -> usize {
    let wanted = format!(":{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|table| std::fs::read_to_string(table).ok())
        .map(|text| {
            text.lines()
                .skip(1)
                .filter(|line| {
                    let fields: Vec<&str> = line.split_whitespace().collect();
                    // Remote address, then state: 01 is ESTABLISHED.
                    fields.len() > 3 && fields[2].ends_with(&wanted) && fields[3] == "01"
                })
                .count()
        })
        .sum()
}

/// Block `index`'s pattern: every 8 bytes hold the block's index and their own offset.
pub fn pattern(index: usize, buffer: &mut [u8]) {
    for (word, chunk) in buffer.chunks_exact_mut(8).enumerate() {
        let value = ((index as u64) << 32) | word as u64;
        chunk.copy_from_slice(&value.to_le_bytes());
    }
}

/// Asserts that the file at `path` (the server's own view) holds `count` blocks of
/// `block_size` bytes of [`pattern`] and nothing more.
pub fn assert_holds_pattern(path: &Path, (block_size, count): (usize, usize)) {
    let content = std::fs::read(path).expect("the server's file");
    assert_eq!(content.len(), block_size * count, "{}", path.display());
    let mut expected = vec![0u8; block_size];
    for (block, data) in content.chunks_exact(block_size).enumerate() {
        pattern(block, &mut expected);
        assert!(
            data == expected.as_slice(),
            "block {block} differs on the server"
        );
    }
}

/// Reads `count` blocks of `block_size` bytes back at queue depth `depth`, each checked
/// against its [`pattern`]; returns the bytes read.
pub fn read_back_pattern(
    engine: &mut impl Engine,
    depth: usize,
    (block_size, count): (usize, usize),
) -> u64 {
    let mut expected = vec![0u8; block_size];
    move_blocks(
        engine,
        Direction::Read,
        depth,
        (block_size, count),
        &mut |block, data| {
            pattern(block, &mut expected);
            assert!(data == expected.as_slice(), "block {block} differs");
        },
    )
}

/// Moves `count` blocks of `block_size` bytes once in `direction` at queue depth `depth`,
/// checking each completion; returns the bytes moved.
pub fn move_blocks(
    engine: &mut impl Engine,
    direction: Direction,
    depth: usize,
    (block_size, count): (usize, usize),
    check: &mut dyn FnMut(usize, &[u8]),
) -> u64 {
    let mut next = 0usize;
    let mut block_of_slot = vec![0usize; depth];
    let mut free: Vec<u32> = (0..depth as u32).rev().collect();
    let mut done = vec![Completion::default(); depth];
    let mut finished = 0;
    let mut bytes = 0u64;
    while finished < count {
        while next < count {
            let Some(slot) = free.pop() else { break };
            if direction == Direction::Write {
                pattern(next, &mut engine.buffer_mut(slot as usize)[..block_size]);
            }
            block_of_slot[slot as usize] = next;
            engine
                .submit(IoRequest {
                    slot,
                    file: 0,
                    direction,
                    offset: (next * block_size) as u64,
                    length: block_size as u32,
                })
                .expect("submit");
            next += 1;
        }
        engine.flush().expect("flush");
        let reaped = engine.reap(1, &mut done).expect("reap");
        for completion in &done[..reaped] {
            assert_eq!(completion.result, block_size as i64, "{completion:?}");
            let block = block_of_slot[completion.slot as usize];
            check(
                block,
                &engine.buffer_mut(completion.slot as usize)[..block_size],
            );
            free.push(completion.slot);
            finished += 1;
            bytes += block_size as u64;
        }
    }
    bytes
}
