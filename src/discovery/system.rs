//! What discovery learns from system calls rather than from files: a name's address, the
//! interface the kernel routes an address through, where a file lives and whether its first
//! blocks were ever written.
//!
//! On this host these are answered by the kernel ([`ThisHost`]); on a recorded machine by
//! what the recording kept ([`RecordedSystem`], read from its `machine.toml`). A
//! [`RecordingSystem`] answers from the kernel and keeps every answer for the recording.

use super::HostView;
use super::machine_file::{RecordedFile, RecordedHost, RecordedRoute};
use super::route;
use super::sysfs::DeviceNumber;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::CStr;
use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs, UdpSocket};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Bytes read from the start of a volume to tell whether it was ever written.
pub const HEAD_CHECK_BYTES: usize = 64 * 1024;

/// What a file target looks like now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileState {
    /// It still exists (a temporary test file may be gone).
    pub exists: bool,
    /// `st_dev`: the filesystem holding it.
    pub device: Option<DeviceNumber>,
    /// Bytes the filesystem allocated to it.
    pub allocated_bytes: Option<u64>,
    /// Its first [`HEAD_CHECK_BYTES`] read as zeros.
    pub head_zero: Option<bool>,
    /// The nearest existing directory above it, with links resolved.
    pub directory: Option<PathBuf>,
}

/// The answers discovery needs from system calls.
pub trait System {
    /// The address of `host` (a name or a literal address) for `port`; the error says why
    /// there is none.
    fn resolve_host(&self, host: &str, port: u16) -> Result<SocketAddr, String>;

    /// The interface the kernel sends packets to `address` through.
    fn interface_towards(&self, view: &HostView, address: IpAddr) -> Option<String>;

    /// The state of the file at `path`; `with_head` also reads its first blocks.
    fn file_state(&self, path: &Path, with_head: bool) -> FileState;

    /// [`System::file_state`] of a file whose parent (as named) is that of a file asked
    /// before, whose state gave `directory`: a system that can, takes that directory instead
    /// of resolving it again for every file of a directory.
    fn file_state_beside(
        &self,
        path: &Path,
        with_head: bool,
        directory: Option<PathBuf>,
    ) -> FileState {
        let _ = directory;
        self.file_state(path, with_head)
    }
}

/// The kernel of the host iopath runs on.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThisHost;

impl System for ThisHost {
    fn resolve_host(&self, host: &str, port: u16) -> Result<SocketAddr, String> {
        match (host, port).to_socket_addrs() {
            Ok(mut addresses) => addresses
                .next()
                .ok_or_else(|| format!("{host}: no address found")),
            Err(error) => Err(format!("{host}: cannot resolve ({error})")),
        }
    }

    fn interface_towards(&self, _view: &HostView, address: IpAddr) -> Option<String> {
        local_address_towards(SocketAddr::new(address, 9)).and_then(interface_with_address)
    }

    fn file_state(&self, path: &Path, with_head: bool) -> FileState {
        let directory = path
            .ancestors()
            .skip(1)
            .find_map(|directory| std::fs::canonicalize(directory).ok());
        self.file_state_beside(path, with_head, directory)
    }

    fn file_state_beside(
        &self,
        path: &Path,
        with_head: bool,
        directory: Option<PathBuf>,
    ) -> FileState {
        let metadata = std::fs::metadata(path).ok();
        FileState {
            exists: metadata.is_some(),
            device: metadata.as_ref().map(|m| DeviceNumber::from_dev_t(m.dev())),
            allocated_bytes: metadata
                .as_ref()
                .filter(|m| m.is_file())
                .map(|m| m.blocks() * 512),
            head_zero: if with_head { head_is_zero(path) } else { None },
            directory,
        }
    }
}

/// Whether the first [`HEAD_CHECK_BYTES`] of `path` are all zeros (`None` when unreadable).
pub fn head_is_zero(path: &Path) -> Option<bool> {
    let mut file = std::fs::File::open(path).ok()?;
    let mut buffer = vec![0u8; HEAD_CHECK_BYTES];
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(count) => filled += count,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        }
    }
    if filled == 0 {
        return None;
    }
    Some(buffer[..filled].iter().all(|byte| *byte == 0))
}

/// The local address the kernel would use to reach `destination` (a connected UDP socket;
/// nothing is sent).
fn local_address_towards(destination: SocketAddr) -> Option<IpAddr> {
    let bind: SocketAddr = match destination {
        SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let socket = UdpSocket::bind(bind).ok()?;
    socket.connect(destination).ok()?;
    Some(socket.local_addr().ok()?.ip())
}

/// The interface holding `address`.
fn interface_with_address(address: IpAddr) -> Option<String> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs stores the head of a list it allocates into `list`; the list is freed
    // with freeifaddrs below and not used after.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return None;
    }
    let mut found = None;
    let mut cursor = list;
    while !cursor.is_null() && found.is_none() {
        // SAFETY: `cursor` is a non-null node of the list getifaddrs returned, valid until
        // freeifaddrs.
        let entry = unsafe { &*cursor };
        if !entry.ifa_addr.is_null() && !entry.ifa_name.is_null() {
            // SAFETY: ifa_addr points to a sockaddr whose family tells its real type; the
            // casts below read only the type the family names.
            let family = i32::from(unsafe { (*entry.ifa_addr).sa_family });
            let entry_address = match family {
                libc::AF_INET => {
                    // SAFETY: AF_INET addresses are sockaddr_in.
                    let ipv4 = unsafe { &*(entry.ifa_addr as *const libc::sockaddr_in) };
                    Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(
                        ipv4.sin_addr.s_addr,
                    ))))
                }
                libc::AF_INET6 => {
                    // SAFETY: AF_INET6 addresses are sockaddr_in6.
                    let ipv6 = unsafe { &*(entry.ifa_addr as *const libc::sockaddr_in6) };
                    Some(IpAddr::V6(Ipv6Addr::from(ipv6.sin6_addr.s6_addr)))
                }
                _ => None,
            };
            if entry_address == Some(address) {
                // SAFETY: ifa_name is a NUL-terminated string owned by the list.
                let name = unsafe { CStr::from_ptr(entry.ifa_name) };
                found = Some(name.to_string_lossy().into_owned());
            }
        }
        cursor = entry.ifa_next;
    }
    // SAFETY: `list` came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(list) };
    found
}

/// Answers kept by a recording: name lookups, routes and files.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Answers {
    /// Name lookups.
    pub hosts: Vec<RecordedHost>,
    /// Route lookups.
    pub routes: Vec<RecordedRoute>,
    /// File states.
    pub files: Vec<RecordedFile>,
}

/// A recorded machine: every answer comes from what the recording kept.
#[derive(Clone, Debug, Default)]
pub struct RecordedSystem {
    answers: Answers,
    /// Where each recorded file is in `answers.files`, by path (the first recording of a path
    /// answers, as a search through the list would find it): a run of 100 000 files looks each up
    /// once, not through the whole list.
    files_by_path: HashMap<PathBuf, usize>,
}

impl RecordedSystem {
    /// A system answering from `answers`.
    pub fn new(answers: Answers) -> Self {
        let files_by_path = answers
            .files
            .iter()
            .enumerate()
            .rev()
            .map(|(index, file)| (file.path.clone(), index))
            .collect();
        RecordedSystem {
            answers,
            files_by_path,
        }
    }
}

impl System for RecordedSystem {
    fn resolve_host(&self, host: &str, port: u16) -> Result<SocketAddr, String> {
        if let Ok(address) = host.trim_matches(['[', ']']).parse::<IpAddr>() {
            return Ok(SocketAddr::new(address, port));
        }
        match self.answers.hosts.iter().find(|entry| entry.name == host) {
            Some(RecordedHost {
                address: Some(address),
                ..
            }) => Ok(SocketAddr::new(*address, port)),
            Some(RecordedHost {
                error: Some(error), ..
            }) => Err(error.clone()),
            _ => Err(format!("{host}: not resolved in the recording")),
        }
    }

    fn interface_towards(&self, view: &HostView, address: IpAddr) -> Option<String> {
        if let Some(route) = self
            .answers
            .routes
            .iter()
            .find(|route| route.destination == address)
        {
            return route.interface.clone();
        }
        // Not asked when the machine was recorded: the routing table decides (IPv4).
        match address {
            IpAddr::V4(destination) => {
                route::ipv4_route(view, destination).map(|(interface, _)| interface)
            }
            IpAddr::V6(_) => None,
        }
    }

    fn file_state(&self, path: &Path, _with_head: bool) -> FileState {
        let Some(file) = self
            .files_by_path
            .get(path)
            .map(|&index| &self.answers.files[index])
        else {
            // Not asked when recorded: nothing is known of it but where it is.
            return FileState {
                exists: true,
                directory: path.parent().map(Path::to_path_buf),
                ..FileState::default()
            };
        };
        FileState {
            exists: file.exists,
            device: file.device.as_deref().and_then(DeviceNumber::parse),
            allocated_bytes: file.allocated_bytes,
            head_zero: file.head_zero,
            directory: file
                .directory
                .clone()
                .or_else(|| path.parent().map(Path::to_path_buf)),
        }
    }
}

/// This host's kernel, keeping every answer for a recording.
#[derive(Debug, Default)]
pub struct RecordingSystem {
    answers: RefCell<Answers>,
}

impl RecordingSystem {
    /// A recorder with nothing kept yet.
    pub fn new() -> Self {
        RecordingSystem::default()
    }

    /// The answers kept so far.
    pub fn answers(&self) -> Answers {
        self.answers.borrow().clone()
    }
}

impl System for RecordingSystem {
    fn resolve_host(&self, host: &str, port: u16) -> Result<SocketAddr, String> {
        let answer = ThisHost.resolve_host(host, port);
        if host.trim_matches(['[', ']']).parse::<IpAddr>().is_err() {
            let mut answers = self.answers.borrow_mut();
            if !answers.hosts.iter().any(|entry| entry.name == host) {
                answers.hosts.push(RecordedHost {
                    name: host.to_string(),
                    address: answer.as_ref().ok().map(SocketAddr::ip),
                    error: answer.as_ref().err().cloned(),
                });
            }
        }
        answer
    }

    fn interface_towards(&self, view: &HostView, address: IpAddr) -> Option<String> {
        let answer = ThisHost.interface_towards(view, address);
        let mut answers = self.answers.borrow_mut();
        if !answers
            .routes
            .iter()
            .any(|route| route.destination == address)
        {
            answers.routes.push(RecordedRoute {
                destination: address,
                interface: answer.clone(),
            });
        }
        answer
    }

    fn file_state(&self, path: &Path, with_head: bool) -> FileState {
        let state = ThisHost.file_state(path, with_head);
        let mut answers = self.answers.borrow_mut();
        let entry = RecordedFile {
            path: path.to_path_buf(),
            exists: state.exists,
            device: state.device.map(|number| number.to_string()),
            allocated_bytes: state.allocated_bytes,
            head_zero: state.head_zero,
            directory: state.directory.clone(),
        };
        match answers.files.iter_mut().find(|file| file.path == path) {
            Some(existing) => {
                if existing.head_zero.is_none() {
                    existing.head_zero = entry.head_zero;
                }
            }
            None => answers.files.push(entry),
        }
        state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_file_is_answered_by_its_first_recording_and_an_unknown_one_by_its_place() {
        let recorded = |path: &str, bytes: u64| RecordedFile {
            path: path.into(),
            exists: true,
            allocated_bytes: Some(bytes),
            ..RecordedFile::default()
        };
        let system = RecordedSystem::new(Answers {
            files: vec![
                recorded("/data/a", 1),
                recorded("/data/b", 2),
                recorded("/data/a", 3),
            ],
            ..Answers::default()
        });
        let a = system.file_state(Path::new("/data/a"), false);
        assert_eq!(a.allocated_bytes, Some(1));
        assert_eq!(
            system
                .file_state(Path::new("/data/b"), false)
                .allocated_bytes,
            Some(2)
        );
        let unknown = system.file_state(Path::new("/data/c"), false);
        assert_eq!(
            (unknown.exists, unknown.allocated_bytes, unknown.directory),
            (true, None, Some(PathBuf::from("/data")))
        );
    }

    #[test]
    fn the_loopback_address_belongs_to_lo() {
        assert_eq!(
            interface_with_address(IpAddr::V4(Ipv4Addr::LOCALHOST)).as_deref(),
            Some("lo")
        );
        assert_eq!(
            local_address_towards((Ipv4Addr::LOCALHOST, 9).into()),
            Some(IpAddr::V4(Ipv4Addr::LOCALHOST))
        );
    }

    #[test]
    fn a_recording_answers_what_this_host_answered() {
        let directory = tempfile::tempdir().unwrap();
        let file = directory.path().join("data");
        std::fs::write(&file, vec![0u8; 8192]).unwrap();
        let view = HostView::live();
        let recording = RecordingSystem::new();
        let live = recording.file_state(&file, true);
        assert!(live.exists);
        assert_eq!(live.head_zero, Some(true));
        assert_eq!(recording.resolve_host("127.0.0.1", 80).unwrap().port(), 80);
        assert!(recording.resolve_host("no-such-host.invalid", 80).is_err());
        let lo = recording.interface_towards(&view, IpAddr::V4(Ipv4Addr::LOCALHOST));

        let recorded = RecordedSystem::new(recording.answers());
        assert_eq!(recorded.file_state(&file, true), live);
        assert!(recorded.resolve_host("no-such-host.invalid", 80).is_err());
        assert!(
            recorded
                .resolve_host("unknown.invalid", 80)
                .unwrap_err()
                .contains("recording")
        );
        assert_eq!(
            recorded.interface_towards(&view, IpAddr::V4(Ipv4Addr::LOCALHOST)),
            lo
        );
        let unknown = recorded.file_state(Path::new("/data/x"), false);
        assert_eq!((unknown.device, unknown.allocated_bytes), (None, None));
        assert_eq!(unknown.directory.as_deref(), Some(Path::new("/data")));
    }
}
