//! The file an `smb://` URL names, as the server sees it: whether it exists and its size,
//! whether this user may write on the share, the share's free space; creating the test file
//! (only when missing: an existing file is never replaced) and removing it afterwards.

use super::url::{SmbCredentials, SmbUrl, share_address};
use crate::engine::pipelined;
use crate::targets::network_target::SmbSecurity;
use smb_client::connection::no_cipher_reason;
use smb_client::wire::{self, HEADER_BYTES, command, status, u32_at, u64_at};
use smb_client::{SmbConnection, SmbError, SmbSessionFacts};
use std::time::Duration;

/// Desired access: read data and attributes.
pub const READ_ACCESS: u32 = 0x0000_0001 | 0x0000_0080 | 0x0010_0000;
/// Desired access: write data, append, write attributes.
pub const WRITE_ACCESS: u32 = 0x0000_0002 | 0x0000_0004 | 0x0000_0100;
/// Desired access: read attributes only.
pub const ATTRIBUTES_ACCESS: u32 = 0x0000_0080;
/// Desired access: delete.
pub const DELETE_ACCESS: u32 = 0x0001_0000;
/// Share access: read, write, delete (other opens are not kept out).
const SHARE_ALL: u32 = 0x7;
/// Create disposition: open an existing file.
pub const OPEN: u32 = 1;
/// Create disposition: create a missing file (fail when it exists).
pub const CREATE: u32 = 2;
/// Create option: the name must be a file, not a directory.
pub const NON_DIRECTORY_FILE: u32 = 0x40;
/// Create option: the name must be a directory.
const DIRECTORY_FILE: u32 = 0x01;
/// Create option: the file is deleted when this open is closed.
pub const DELETE_ON_CLOSE: u32 = 0x1000;
/// File attribute: directory.
const ATTRIBUTE_DIRECTORY: u32 = 0x10;

/// An open file on the share: its id and what CREATE said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenFile {
    /// The file id (persistent and volatile halves).
    pub id: [u8; 16],
    /// End of file, bytes.
    pub size_bytes: u64,
    /// Whether it is a directory.
    pub directory: bool,
}

/// CREATE `path` (below the share; "" for its root) with `access`, `disposition` and
/// `options`.
pub fn create(
    connection: &mut SmbConnection,
    path: &str,
    access: u32,
    disposition: u32,
    options: u32,
) -> Result<OpenFile, SmbError> {
    let name = wire::utf16(path);
    let mut body = vec![0u8; 56];
    body[0..2].copy_from_slice(&57u16.to_le_bytes());
    body[4..8].copy_from_slice(&2u32.to_le_bytes());
    body[24..28].copy_from_slice(&access.to_le_bytes());
    body[28..32].copy_from_slice(&0x80u32.to_le_bytes());
    body[32..36].copy_from_slice(&SHARE_ALL.to_le_bytes());
    body[36..40].copy_from_slice(&disposition.to_le_bytes());
    body[40..44].copy_from_slice(&options.to_le_bytes());
    body[44..46].copy_from_slice(&((HEADER_BYTES + 56) as u16).to_le_bytes());
    body[46..48].copy_from_slice(&(name.len() as u16).to_le_bytes());
    body.extend_from_slice(&name);
    if name.is_empty() {
        body.push(0);
    }
    let reply = connection.call(command::CREATE, &body)?;
    if reply.len() < 80 {
        return Err(SmbError::Protocol(format!(
            "{} sent a CREATE response too short",
            connection.server
        )));
    }
    Ok(OpenFile {
        id: reply[64..80].try_into().expect("16 bytes"),
        size_bytes: u64_at(&reply, 48),
        directory: u32_at(&reply, 56) & ATTRIBUTE_DIRECTORY != 0,
    })
}

/// CLOSE the file `id`.
pub fn close(connection: &mut SmbConnection, id: &[u8; 16]) -> Result<(), SmbError> {
    let mut body = vec![0u8; 24];
    body[0..2].copy_from_slice(&24u16.to_le_bytes());
    body[8..24].copy_from_slice(id);
    connection.call(command::CLOSE, &body).map(drop)
}

/// FLUSH the file `id` (its data made durable on the server).
pub fn flush(connection: &mut SmbConnection, id: &[u8; 16]) -> Result<(), SmbError> {
    let mut body = vec![0u8; 24];
    body[0..2].copy_from_slice(&24u16.to_le_bytes());
    body[8..24].copy_from_slice(id);
    connection.call(command::FLUSH, &body).map(drop)
}

/// The server's number for the open file `id` (FileInternalInformation's IndexNumber): the
/// same for every open of one file, whatever its name.
pub fn file_number(connection: &mut SmbConnection, id: &[u8; 16]) -> Result<u64, SmbError> {
    let mut body = vec![0u8; 40];
    body[0..2].copy_from_slice(&41u16.to_le_bytes());
    body[2] = 1; // file information
    body[3] = 6; // FileInternalInformation
    body[4..8].copy_from_slice(&8u32.to_le_bytes());
    body[24..40].copy_from_slice(id);
    body.push(0);
    let reply = connection.call(command::QUERY_INFO, &body)?;
    query_info_output(&reply, 8)
        .map(|number| u64_at(number, 0))
        .ok_or_else(|| {
            SmbError::Protocol(format!(
                "{} sent a file number too short",
                connection.server
            ))
        })
}

/// The first `length` bytes of a QUERY_INFO response's output (`reply` is the body), `None`
/// when the response is shorter than it says or too short to say.
fn query_info_output(reply: &[u8], length: usize) -> Option<&[u8]> {
    if reply.len() < 8 {
        return None;
    }
    let offset = (wire::u16_at(reply, 2) as usize).saturating_sub(HEADER_BYTES);
    reply.get(offset..offset + length)
}

/// Marks the open file `id` for deletion when it is closed (FileDispositionInformation): the
/// file this handle opened, whatever name it has now.
pub fn delete_on_close(connection: &mut SmbConnection, id: &[u8; 16]) -> Result<(), SmbError> {
    let mut body = vec![0u8; 32];
    body[0..2].copy_from_slice(&33u16.to_le_bytes());
    body[2] = 1; // file information
    body[3] = 13; // FileDispositionInformation
    body[4..8].copy_from_slice(&1u32.to_le_bytes());
    body[8..10].copy_from_slice(&((HEADER_BYTES + 32) as u16).to_le_bytes());
    body[16..32].copy_from_slice(id);
    body.push(1);
    connection.call(wire::command::SET_INFO, &body).map(drop)
}

/// The share's space: `(total, free to this user)` in bytes (FileFsFullSizeInformation).
pub fn share_space(connection: &mut SmbConnection) -> Result<(u64, u64), SmbError> {
    let root = create(connection, "", READ_ACCESS, OPEN, DIRECTORY_FILE)?;
    let mut body = vec![0u8; 40];
    body[0..2].copy_from_slice(&41u16.to_le_bytes());
    body[2] = 2; // file system information
    body[3] = 7; // FileFsFullSizeInformation
    body[4..8].copy_from_slice(&64u32.to_le_bytes());
    body[24..40].copy_from_slice(&root.id);
    body.push(0);
    let reply = connection.call(command::QUERY_INFO, &body);
    let _ = close(connection, &root.id);
    let reply = reply?;
    let Some(info) = query_info_output(&reply, 32) else {
        return Err(SmbError::Protocol(format!(
            "{} sent a file system size too short",
            connection.server
        )));
    };
    let unit = u64::from(u32_at(info, 24)) * u64::from(u32_at(info, 28));
    Ok((
        u64_at(info, 0).saturating_mul(unit),
        u64_at(info, 8).saturating_mul(unit),
    ))
}

/// FSCTL_QUERY_NETWORK_INTERFACE_INFO: the server's network interfaces (multichannel).
const FSCTL_QUERY_NETWORK_INTERFACE_INFO: u32 = 0x0014_01FC;
/// The most interfaces read from one answer.
const MAX_INTERFACES: usize = 64;

/// A network interface of the server, as FSCTL_QUERY_NETWORK_INTERFACE_INFO lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerInterface {
    /// Its address (`None` for an address family other than IPv4 and IPv6).
    pub address: Option<std::net::IpAddr>,
    /// Its link speed as the server states it, bits per second.
    pub link_speed_bits_per_second: u64,
    /// The server says it spreads receive work over several queues (RSS).
    pub rss: bool,
    /// The server says it takes RDMA there.
    pub rdma: bool,
}

impl ServerInterface {
    /// In words: `127.0.0.1 at 10 Gbit/s with RSS`.
    pub fn describe(&self) -> String {
        let address = self
            .address
            .map_or_else(|| "an address".to_string(), |address| address.to_string());
        let speed = self.link_speed_bits_per_second;
        let speed = if speed >= 1_000_000_000 && speed.is_multiple_of(1_000_000_000) {
            format!("{} Gbit/s", speed / 1_000_000_000)
        } else {
            format!("{} Mbit/s", speed / 1_000_000)
        };
        let features: Vec<&str> = [(self.rss, "RSS"), (self.rdma, "RDMA")]
            .into_iter()
            .filter_map(|(on, name)| on.then_some(name))
            .collect();
        if features.is_empty() {
            format!("{address} at {speed}")
        } else {
            format!("{address} at {speed} with {}", features.join(" and "))
        }
    }
}

/// The server's network interfaces (FSCTL_QUERY_NETWORK_INTERFACE_INFO), at most
/// [`MAX_INTERFACES`] of them.
pub fn network_interfaces(
    connection: &mut SmbConnection,
) -> Result<Vec<ServerInterface>, SmbError> {
    let mut body = vec![0u8; 56];
    body[0..2].copy_from_slice(&57u16.to_le_bytes());
    body[4..8].copy_from_slice(&FSCTL_QUERY_NETWORK_INTERFACE_INFO.to_le_bytes());
    body[8..24].fill(0xFF);
    body[24..28].copy_from_slice(&((HEADER_BYTES + 56) as u32).to_le_bytes());
    body[36..40].copy_from_slice(&((HEADER_BYTES + 56) as u32).to_le_bytes());
    body[44..48].copy_from_slice(&65536u32.to_le_bytes());
    body[48..52].copy_from_slice(&1u32.to_le_bytes()); // SMB2_0_IOCTL_IS_FSCTL
    let reply = connection.call(command::IOCTL, &body)?;
    let broken = || {
        SmbError::Protocol(format!(
            "{} sent a network interface list out of bounds",
            connection.server
        ))
    };
    if reply.len() < 48 {
        return Err(broken());
    }
    let at = (u32_at(&reply, 32) as usize).saturating_sub(HEADER_BYTES);
    let count = u32_at(&reply, 36) as usize;
    let output = reply.get(at..at + count).ok_or_else(broken)?;
    let mut interfaces = Vec::new();
    let mut offset = 0;
    while interfaces.len() < MAX_INTERFACES {
        let entry = output.get(offset..offset + 152).ok_or_else(broken)?;
        let capability = u32_at(entry, 8);
        let address = &entry[24..];
        let address = match wire::u16_at(address, 0) {
            0x0002 => Some(std::net::IpAddr::from(
                <[u8; 4]>::try_from(&address[4..8]).expect("4 bytes"),
            )),
            0x0017 => Some(std::net::IpAddr::from(
                <[u8; 16]>::try_from(&address[8..24]).expect("16 bytes"),
            )),
            _ => None,
        };
        interfaces.push(ServerInterface {
            address,
            link_speed_bits_per_second: u64_at(entry, 16),
            rss: capability & 0x1 != 0,
            rdma: capability & 0x2 != 0,
        });
        let next = u32_at(entry, 0) as usize;
        if next == 0 {
            break;
        }
        offset += next;
    }
    Ok(interfaces)
}

/// Opens `url`'s file for the run: read access, and write access with `write`.
pub fn open_for_io(
    connection: &mut SmbConnection,
    url: &SmbUrl,
    write: bool,
) -> Result<OpenFile, SmbError> {
    let access = if write {
        READ_ACCESS | WRITE_ACCESS
    } else {
        READ_ACCESS
    };
    create(
        connection,
        &url.smb_path(),
        access,
        OPEN,
        NON_DIRECTORY_FILE,
    )
}

/// The file an `smb://` URL names, as found on the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SmbFile {
    /// Its size when it exists.
    pub existing_size_bytes: Option<u64>,
    /// Whether this user may not write on the share.
    pub read_only: bool,
    /// The share's size, bytes.
    pub share_total_bytes: u64,
    /// The share's free space for this user, bytes.
    pub share_free_bytes: u64,
    /// What the session negotiated.
    pub session: SmbSessionFacts,
    /// The server's network interfaces, when it offers multichannel (empty when it lists
    /// none or does not answer).
    pub interfaces: Vec<ServerInterface>,
}

/// Why an `smb://` target cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{url}: {problem}")]
pub struct SmbTargetError {
    /// The target.
    pub url: String,
    /// What went wrong.
    pub problem: String,
    /// The server could not be reached at all (connection refused, timed out).
    pub unreachable: bool,
}

/// An error of `what` on `url`, in words a user acts on.
pub fn target_error(
    url: &SmbUrl,
    credentials: &SmbCredentials,
    what: &str,
    error: SmbError,
) -> SmbTargetError {
    let problem = match (&error, error.status()) {
        (SmbError::Io(_), _) if what == "connecting" => {
            format!("cannot reach {}: {error}", url.server)
        }
        (_, Some(status::LOGON_FAILURE)) => format!(
            "logon failure: {} refused user '{}' with this password (from the environment or the credentials file)",
            url.server, credentials.user
        ),
        (_, Some(status::BAD_NETWORK_NAME)) => {
            format!("{} has no share '{}'", url.server, url.share)
        }
        (_, Some(status::ACCESS_DENIED)) => {
            format!("{what}: access denied to user '{}'", credentials.user)
        }
        (_, Some(status::OBJECT_PATH_NOT_FOUND)) => format!(
            "{what}: a directory of '{}' does not exist on share '{}'",
            url.path, url.share
        ),
        (
            SmbError::NoCipher {
                server,
                dialect,
                asked,
            },
            _,
        ) => {
            let who = if *asked {
                "--smb-encrypt cannot be met"
            } else {
                "the server asks for encryption, which cannot be met"
            };
            let why = no_cipher_reason(*dialect, "iopath");
            format!("{what}: {server}: {who}: {why}")
        }
        (SmbError::ShareRequiresEncryption { server, share }, _) => {
            format!("{what}: {server}: share '{share}' requires encryption; add --smb-encrypt")
        }
        _ => format!("{what}: {error}"),
    };
    SmbTargetError {
        url: url.to_string(),
        problem,
        unreachable: matches!(error, SmbError::Io(_)) && what == "connecting",
    }
}

/// The client crate's form of `security`.
pub fn client_security(security: SmbSecurity) -> smb_client::SmbSecurity {
    smb_client::SmbSecurity {
        sign: security.sign,
        encrypt: security.encrypt,
    }
}

/// A connection to `url`'s share (see [`SmbConnection::open`]).
pub fn connect(
    url: &SmbUrl,
    credentials: &SmbCredentials,
    security: SmbSecurity,
    timeout: Duration,
) -> Result<SmbConnection, SmbTargetError> {
    let stream = pipelined::connect(&url.server.host, url.server.port, timeout)
        .map_err(|error| target_error(url, credentials, "connecting", SmbError::Io(error)))?;
    SmbConnection::open(
        stream,
        &share_address(url),
        credentials,
        client_security(security),
        timeout,
    )
    .map_err(|error| target_error(url, credentials, "connecting", error))
}

/// Looks at the file `url` names and its share (see the module documentation).
pub fn find(
    url: &SmbUrl,
    credentials: &SmbCredentials,
    security: SmbSecurity,
    timeout: Duration,
) -> Result<SmbFile, SmbTargetError> {
    let mut connection = connect(url, credentials, security, timeout)?;
    let failed = |what: &str, error| target_error(url, credentials, what, error);
    let existing = match create(&mut connection, &url.smb_path(), READ_ACCESS, OPEN, 0) {
        Ok(file) => {
            let _ = close(&mut connection, &file.id);
            if file.directory {
                return Err(SmbTargetError {
                    url: url.to_string(),
                    problem: "a directory, not a file".into(),
                    unreachable: false,
                });
            }
            Some(file.size_bytes)
        }
        Err(error) if error.status() == Some(status::OBJECT_NAME_NOT_FOUND) => None,
        Err(error) => return Err(failed("the file", error)),
    };
    let (total, free) =
        share_space(&mut connection).map_err(|error| failed("the share's free space", error))?;
    let interfaces = if connection.facts.multichannel {
        network_interfaces(&mut connection).unwrap_or_default()
    } else {
        Vec::new()
    };
    Ok(SmbFile {
        interfaces,
        existing_size_bytes: existing,
        read_only: !connection.facts.share_writable,
        share_total_bytes: total,
        share_free_bytes: free,
        session: connection.facts,
    })
}

/// Creates the missing file `url` names (a file that appeared meanwhile is an error, never
/// replaced).
pub fn create_file(
    url: &SmbUrl,
    credentials: &SmbCredentials,
    security: SmbSecurity,
    timeout: Duration,
) -> Result<(), SmbTargetError> {
    let mut connection = connect(url, credentials, security, timeout)?;
    let file = create(
        &mut connection,
        &url.smb_path(),
        READ_ACCESS | WRITE_ACCESS,
        CREATE,
        NON_DIRECTORY_FILE,
    )
    .map_err(|error| {
        if error.status() == Some(status::OBJECT_NAME_COLLISION) {
            SmbTargetError {
                url: url.to_string(),
                problem:
                    "the file appeared while the test file was being created; it is left alone"
                        .into(),
                unreachable: false,
            }
        } else {
            target_error(url, credentials, "creating the test file", error)
        }
    })?;
    close(&mut connection, &file.id)
        .map_err(|error| target_error(url, credentials, "closing the test file", error))
}

/// Removes the file `url` names (a test file iopath created).
pub fn remove_file(
    url: &SmbUrl,
    credentials: &SmbCredentials,
    security: SmbSecurity,
    timeout: Duration,
) -> Result<(), SmbTargetError> {
    let mut connection = connect(url, credentials, security, timeout)?;
    let file = create(
        &mut connection,
        &url.smb_path(),
        DELETE_ACCESS | READ_ACCESS,
        OPEN,
        NON_DIRECTORY_FILE | DELETE_ON_CLOSE,
    )
    .map_err(|error| target_error(url, credentials, "removing the test file", error))?;
    close(&mut connection, &file.id)
        .map_err(|error| target_error(url, credentials, "removing the test file", error))
}

/// The size the server reports for the file `url` names now.
pub fn file_size(
    url: &SmbUrl,
    credentials: &SmbCredentials,
    security: SmbSecurity,
    timeout: Duration,
) -> Result<u64, SmbTargetError> {
    let mut connection = connect(url, credentials, security, timeout)?;
    let file = create(
        &mut connection,
        &url.smb_path(),
        READ_ACCESS,
        OPEN,
        NON_DIRECTORY_FILE,
    )
    .map_err(|error| target_error(url, credentials, "the file", error))?;
    let _ = close(&mut connection, &file.id);
    Ok(file.size_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The client crate's encryption refusals read as before, naming iopath's flag.
    #[test]
    fn encryption_refusals_name_the_flag() {
        let url = SmbUrl::parse("smb://alice@nas:4450/data/file").unwrap();
        let credentials = SmbCredentials {
            user: "alice".into(),
            password: "secret".into(),
            domain: String::new(),
        };
        let server = "nas:4450".to_string();
        let refused = |error| target_error(&url, &credentials, "connecting", error).to_string();
        let asked = refused(SmbError::NoCipher {
            server: server.clone(),
            dialect: 0x0210,
            asked: true,
        });
        assert_eq!(
            asked,
            "smb://alice@nas:4450/data/file: connecting: nas:4450: --smb-encrypt cannot be met: \
             SMB 2.1 has no encryption (SMB 3.0 and later have)"
        );
        let required = refused(SmbError::NoCipher {
            server: server.clone(),
            dialect: 0x0311,
            asked: false,
        });
        assert!(
            required.contains(
                "nas:4450: the server asks for encryption, which cannot be met: SMB 3.1.1: \
                 the server chose none of the ciphers iopath offers (AES-128-GCM"
            ),
            "{required}"
        );
        let share = refused(SmbError::ShareRequiresEncryption {
            server,
            share: "data".into(),
        });
        assert!(
            share.ends_with("nas:4450: share 'data' requires encryption; add --smb-encrypt"),
            "{share}"
        );
    }
}
