//! NFSv3 (RFC 1813) and MOUNT v3 as this crate uses them: the procedure numbers, the few result
//! structures it reads, status codes in words and as errno values, and [`Nfs3Session`], the
//! blocking calls made before and after the run (MNT, LOOKUP, GETATTR, SETATTR, ACCESS, FSINFO,
//! FSSTAT, CREATE, RENAME, REMOVE); the engine sends its own COMMIT on its pipelined connection.

pub use crate::error::NfsError;
use crate::rpc::{Credentials, RpcConnection, RpcError};
pub use crate::status::nfs3_text as status_text;
use crate::xdr::{Decoder, Encoder, XdrError};
use std::time::Duration;

/// The portmapper (rpcbind) program.
pub const PORTMAP_PROGRAM: u32 = 100_000;
/// The portmapper's port.
pub const PORTMAP_PORT: u16 = 111;
/// The MOUNT program.
pub const MOUNT_PROGRAM: u32 = 100_005;
/// The NFS program.
pub const NFS_PROGRAM: u32 = 100_003;
/// The NFS server's standard port.
pub const NFS_PORT: u16 = 2049;
/// The longest NFSv3 file handle.
pub const MAX_HANDLE_BYTES: usize = 64;

/// NFSv3 procedure numbers.
pub mod procedure {
    /// GETATTR.
    pub const GETATTR: u32 = 1;
    /// SETATTR.
    pub const SETATTR: u32 = 2;
    /// LOOKUP.
    pub const LOOKUP: u32 = 3;
    /// ACCESS.
    pub const ACCESS: u32 = 4;
    /// READ.
    pub const READ: u32 = 6;
    /// WRITE.
    pub const WRITE: u32 = 7;
    /// CREATE.
    pub const CREATE: u32 = 8;
    /// REMOVE.
    pub const REMOVE: u32 = 12;
    /// RENAME.
    pub const RENAME: u32 = 14;
    /// FSSTAT.
    pub const FSSTAT: u32 = 18;
    /// FSINFO.
    pub const FSINFO: u32 = 19;
    /// COMMIT.
    pub const COMMIT: u32 = 21;
}

/// How durable a WRITE must be when the server answers (`stable_how`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stability {
    /// The server may cache the data until a COMMIT.
    Unstable = 0,
    /// Data (not all metadata) is on stable storage.
    DataSync = 1,
    /// Data and metadata are on stable storage.
    FileSync = 2,
}

/// An NFS status other than OK as a negative errno for a completion (the NFSv3 codes below
/// 10000 are the errno values of the same name).
pub fn status_errno(status: u32) -> i64 {
    let errno = match status {
        1..=9999 => status as i32,
        10001 => libc::ESTALE,
        10004 => libc::EOPNOTSUPP,
        10008 => libc::EAGAIN,
        _ => libc::EIO,
    };
    -i64::from(errno)
}

/// The file types of `ftype3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileType {
    /// A regular file.
    Regular,
    /// A directory.
    Directory,
    /// Anything else (device, link, socket, fifo).
    Other(u32),
}

/// The parts of `fattr3` this crate reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attributes {
    /// What the object is.
    pub file_type: FileType,
    /// Permission bits.
    pub mode: u32,
    /// Size, bytes.
    pub size_bytes: u64,
    /// Bytes the server has allocated.
    pub used_bytes: u64,
    /// The time of the last change of the file's data (`mtime`): seconds and nanoseconds.
    pub modified: (u32, u32),
    /// The time of the last change of the file's attributes or names (`ctime`): seconds and
    /// nanoseconds.
    pub changed: (u32, u32),
}

/// Reads an `fattr3`.
pub fn attributes(decoder: &mut Decoder<'_>) -> Result<Attributes, XdrError> {
    let file_type = match decoder.u32("file type")? {
        1 => FileType::Regular,
        2 => FileType::Directory,
        other => FileType::Other(other),
    };
    let mode = decoder.u32("mode")?;
    decoder.skip(12, "nlink, uid, gid")?;
    let size_bytes = decoder.u64("size")?;
    let used_bytes = decoder.u64("used")?;
    decoder.skip(8 + 8 + 8 + 8, "rdev, fsid, fileid, atime")?;
    let modified = (decoder.u32("mtime")?, decoder.u32("mtime")?);
    let changed = (decoder.u32("ctime")?, decoder.u32("ctime")?);
    Ok(Attributes {
        file_type,
        mode,
        size_bytes,
        used_bytes,
        modified,
        changed,
    })
}

/// Reads a `post_op_attr`.
pub fn post_op_attributes(decoder: &mut Decoder<'_>) -> Result<Option<Attributes>, XdrError> {
    if decoder.bool("attributes follow")? {
        attributes(decoder).map(Some)
    } else {
        Ok(None)
    }
}

/// Skips a `wcc_data` (attributes before and after).
pub fn skip_wcc_data(decoder: &mut Decoder<'_>) -> Result<(), XdrError> {
    if decoder.bool("pre-operation attributes follow")? {
        decoder.skip(24, "pre-operation attributes")?;
    }
    post_op_attributes(decoder).map(|_| ())
}

/// What FSINFO says about transfer sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransferLimits {
    /// Largest READ, bytes.
    pub read_max_bytes: u32,
    /// Preferred READ, bytes.
    pub read_preferred_bytes: u32,
    /// Largest WRITE, bytes.
    pub write_max_bytes: u32,
    /// Preferred WRITE, bytes.
    pub write_preferred_bytes: u32,
}

/// What FSSTAT says about space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Space {
    /// Size of the file system, bytes.
    pub total_bytes: u64,
    /// Free bytes available to this user.
    pub available_bytes: u64,
}

/// Asks the portmapper at `host` for the TCP port of `program` `version` (0: not registered).
pub fn portmap_lookup(
    host: &str,
    program: u32,
    version: u32,
    timeout: Duration,
) -> Result<u16, RpcError> {
    let mut connection =
        RpcConnection::open(host, PORTMAP_PORT, timeout, Credentials::of_process())?;
    let mut arguments = Encoder::default();
    arguments.u32(program).u32(version).u32(6).u32(0);
    let reply = connection.call(PORTMAP_PROGRAM, 2, 3, &arguments.bytes)?;
    let port = Decoder::new(&reply).u32("port")?;
    u16::try_from(port).map_err(|_| XdrError(format!("port {port}")).into())
}

/// Asks MOUNT v3 at `host:port` for the root handle of `export`.
pub fn mount(
    host: &str,
    port: u16,
    export: &str,
    timeout: Duration,
    credentials: &Credentials,
) -> Result<Vec<u8>, NfsError> {
    let mut connection =
        RpcConnection::open(host, port, timeout, credentials.clone()).map_err(RpcError::from)?;
    let mut arguments = Encoder::default();
    arguments.opaque(export.as_bytes());
    let reply = connection.call(MOUNT_PROGRAM, 3, 1, &arguments.bytes)?;
    let mut decoder = Decoder::new(&reply);
    let status = decoder.u32("mount status")?;
    if status != 0 {
        return Err(NfsError::Status {
            operation: "MOUNT",
            subject: export.to_string(),
            status,
        });
    }
    Ok(decoder
        .opaque(MAX_HANDLE_BYTES, "root file handle")?
        .to_vec())
}

/// The blocking NFSv3 calls made before and after the run, on one connection.
#[derive(Debug)]
pub struct Nfs3Session {
    connection: RpcConnection,
}

impl Nfs3Session {
    /// Connects to the NFS service at `host:port`.
    pub fn open(
        host: &str,
        port: u16,
        timeout: Duration,
        credentials: Credentials,
    ) -> Result<Self, NfsError> {
        Ok(Nfs3Session {
            connection: RpcConnection::open(host, port, timeout, credentials)
                .map_err(RpcError::from)?,
        })
    }

    fn call(
        &mut self,
        procedure: u32,
        arguments: &Encoder,
        operation: &'static str,
        subject: &str,
    ) -> Result<(Vec<u8>, usize), NfsError> {
        let reply = self
            .connection
            .call(NFS_PROGRAM, 3, procedure, &arguments.bytes)?;
        let mut decoder = Decoder::new(&reply);
        let status = decoder.u32("status")?;
        if status != 0 {
            return Err(NfsError::Status {
                operation,
                subject: subject.to_string(),
                status,
            });
        }
        let position = decoder.position();
        Ok((reply, position))
    }

    /// Sends `procedure` with `arguments` and reads its results with `read`, from past the
    /// object's post-operation attributes (what ACCESS, FSINFO and FSSTAT answer first).
    fn call_past_attributes<T>(
        &mut self,
        procedure: u32,
        arguments: &Encoder,
        operation: &'static str,
        subject: &str,
        read: impl FnOnce(&mut Decoder<'_>) -> Result<T, XdrError>,
    ) -> Result<T, NfsError> {
        let (reply, at) = self.call(procedure, arguments, operation, subject)?;
        let mut decoder = Decoder::new(&reply[at..]);
        post_op_attributes(&mut decoder)?;
        Ok(read(&mut decoder)?)
    }

    /// The attributes of `handle`.
    pub fn getattr(&mut self, handle: &[u8], subject: &str) -> Result<Attributes, NfsError> {
        let mut arguments = Encoder::default();
        arguments.opaque(handle);
        let (reply, at) = self.call(procedure::GETATTR, &arguments, "GETATTR", subject)?;
        Ok(attributes(&mut Decoder::new(&reply[at..]))?)
    }

    /// The handle of `name` in `directory`.
    pub fn lookup(
        &mut self,
        directory: &[u8],
        name: &str,
        subject: &str,
    ) -> Result<Vec<u8>, NfsError> {
        let mut arguments = Encoder::default();
        arguments.opaque(directory).opaque(name.as_bytes());
        let (reply, at) = self.call(procedure::LOOKUP, &arguments, "LOOKUP", subject)?;
        Ok(Decoder::new(&reply[at..])
            .opaque(MAX_HANDLE_BYTES, "file handle")?
            .to_vec())
    }

    /// Which of the `wanted` ACCESS bits the server grants on `handle`.
    pub fn access(&mut self, handle: &[u8], wanted: u32, subject: &str) -> Result<u32, NfsError> {
        let mut arguments = Encoder::default();
        arguments.opaque(handle).u32(wanted);
        self.call_past_attributes(procedure::ACCESS, &arguments, "ACCESS", subject, |reply| {
            reply.u32("access")
        })
    }

    /// Transfer sizes of the file system holding `handle`.
    pub fn fsinfo(&mut self, handle: &[u8], subject: &str) -> Result<TransferLimits, NfsError> {
        let mut arguments = Encoder::default();
        arguments.opaque(handle);
        self.call_past_attributes(procedure::FSINFO, &arguments, "FSINFO", subject, |reply| {
            let read_max_bytes = reply.u32("rtmax")?;
            let read_preferred_bytes = reply.u32("rtpref")?;
            reply.u32("rtmult")?;
            let write_max_bytes = reply.u32("wtmax")?;
            let write_preferred_bytes = reply.u32("wtpref")?;
            Ok(TransferLimits {
                read_max_bytes,
                read_preferred_bytes,
                write_max_bytes,
                write_preferred_bytes,
            })
        })
    }

    /// Space of the file system holding `handle`.
    pub fn fsstat(&mut self, handle: &[u8], subject: &str) -> Result<Space, NfsError> {
        let mut arguments = Encoder::default();
        arguments.opaque(handle);
        self.call_past_attributes(procedure::FSSTAT, &arguments, "FSSTAT", subject, |reply| {
            let total_bytes = reply.u64("tbytes")?;
            reply.u64("fbytes")?;
            let available_bytes = reply.u64("abytes")?;
            Ok(Space {
                total_bytes,
                available_bytes,
            })
        })
    }

    /// Creates `name` in `directory` (GUARDED: an existing file is an error) with mode 0644
    /// and returns its handle.
    pub fn create(
        &mut self,
        directory: &[u8],
        name: &str,
        subject: &str,
    ) -> Result<Vec<u8>, NfsError> {
        let mut arguments = Encoder::default();
        arguments.opaque(directory).opaque(name.as_bytes());
        // GUARDED; sattr3: mode 0644, no uid, gid or size, times not changed.
        arguments
            .u32(1)
            .u32(1)
            .u32(0o644)
            .u32(0)
            .u32(0)
            .u32(0)
            .u32(0)
            .u32(0);
        let (reply, at) = self.call(procedure::CREATE, &arguments, "CREATE", subject)?;
        let mut decoder = Decoder::new(&reply[at..]);
        if decoder.bool("handle follows")? {
            Ok(decoder.opaque(MAX_HANDLE_BYTES, "file handle")?.to_vec())
        } else {
            self.lookup(directory, name, subject)
        }
    }

    /// Sets the access and modification times of `handle` to `seconds` after the epoch
    /// (SETATTR, client time, no guard).
    pub fn set_times(
        &mut self,
        handle: &[u8],
        seconds: u32,
        subject: &str,
    ) -> Result<(), NfsError> {
        let mut arguments = Encoder::default();
        arguments.opaque(handle);
        // sattr3: mode, uid, gid and size not set; atime and mtime SET_TO_CLIENT_TIME.
        arguments.u32(0).u32(0).u32(0).u32(0);
        arguments.u32(2).u32(seconds).u32(0);
        arguments.u32(2).u32(seconds).u32(0);
        // sattrguard3: no ctime check.
        arguments.u32(0);
        self.call(procedure::SETATTR, &arguments, "SETATTR", subject)
            .map(|_| ())
    }

    /// Writes all of `data` at `offset` of `handle` with `stability` (one WRITE per call of
    /// at most the server's largest write; a short write is sent on).
    pub fn write(
        &mut self,
        handle: &[u8],
        offset: u64,
        data: &[u8],
        stability: Stability,
        subject: &str,
    ) -> Result<(), NfsError> {
        let mut done = 0usize;
        while done < data.len() {
            let mut arguments = Encoder::default();
            arguments
                .opaque(handle)
                .u64(offset + done as u64)
                .u32((data.len() - done) as u32)
                .u32(stability as u32)
                .opaque(&data[done..]);
            let (reply, at) = self.call(procedure::WRITE, &arguments, "WRITE", subject)?;
            let mut decoder = Decoder::new(&reply[at..]);
            skip_wcc_data(&mut decoder)?;
            let count = decoder.u32("count")? as usize;
            if count == 0 || count > data.len() - done {
                return Err(NfsError::Rpc(RpcError::Malformed(XdrError(format!(
                    "{count} bytes written of {}",
                    data.len() - done
                )))));
            }
            done += count;
        }
        Ok(())
    }

    /// Commits every UNSTABLE write of `handle` to stable storage.
    pub fn commit(&mut self, handle: &[u8], subject: &str) -> Result<(), NfsError> {
        let mut arguments = Encoder::default();
        arguments.opaque(handle).u64(0).u32(0);
        self.call(procedure::COMMIT, &arguments, "COMMIT", subject)
            .map(|_| ())
    }

    /// Renames `from` in `directory` to `to` in the same directory (a file already called
    /// `to` is replaced: callers pick a name nobody uses).
    pub fn rename(
        &mut self,
        directory: &[u8],
        from: &str,
        to: &str,
        subject: &str,
    ) -> Result<(), NfsError> {
        let mut arguments = Encoder::default();
        arguments.opaque(directory).opaque(from.as_bytes());
        arguments.opaque(directory).opaque(to.as_bytes());
        self.call(procedure::RENAME, &arguments, "RENAME", subject)
            .map(|_| ())
    }

    /// Removes `name` from `directory`.
    pub fn remove(&mut self, directory: &[u8], name: &str, subject: &str) -> Result<(), NfsError> {
        let mut arguments = Encoder::default();
        arguments.opaque(directory).opaque(name.as_bytes());
        self.call(procedure::REMOVE, &arguments, "REMOVE", subject)
            .map(|_| ())
    }
}

/// The ACCESS bits of writing: MODIFY and EXTEND.
pub const ACCESS_WRITE: u32 = 0x04 | 0x08;
/// The ACCESS bit of reading.
pub const ACCESS_READ: u32 = 0x01;
