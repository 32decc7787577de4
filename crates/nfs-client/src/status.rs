//! NFS status codes in words: NFSv3 and MOUNT v3 (RFC 1813), NFSv4.1 (RFC 8881).

/// An NFS or MOUNT status other than OK, in words.
pub fn nfs3_text(status: u32) -> &'static str {
    match status {
        1 => "not owner (NFS3ERR_PERM)",
        2 => "no such file or directory (NFS3ERR_NOENT)",
        5 => "I/O error (NFS3ERR_IO)",
        6 => "no such device (NFS3ERR_NXIO)",
        13 => "access denied (NFS3ERR_ACCES)",
        17 => "file exists (NFS3ERR_EXIST)",
        20 => "not a directory (NFS3ERR_NOTDIR)",
        21 => "is a directory (NFS3ERR_ISDIR)",
        22 => "invalid argument (NFS3ERR_INVAL)",
        27 => "file too large (NFS3ERR_FBIG)",
        28 => "no space left (NFS3ERR_NOSPC)",
        30 => "read-only file system (NFS3ERR_ROFS)",
        63 => "name too long (NFS3ERR_NAMETOOLONG)",
        69 => "quota exceeded (NFS3ERR_DQUOT)",
        70 => "stale file handle (NFS3ERR_STALE)",
        10001 => "bad file handle (NFS3ERR_BADHANDLE)",
        10004 => "operation not supported (NFS3ERR_NOTSUPP)",
        10006 => "server fault (NFS3ERR_SERVERFAULT)",
        10008 => "server busy, try later (NFS3ERR_JUKEBOX)",
        _ => "error",
    }
}

/// An NFSv4 status other than OK, in words.
pub fn nfs4_text(status: u32) -> &'static str {
    match status {
        1 => "not owner (NFS4ERR_PERM)",
        2 => "no such file or directory (NFS4ERR_NOENT)",
        5 => "I/O error (NFS4ERR_IO)",
        13 => "access denied (NFS4ERR_ACCESS)",
        17 => "file exists (NFS4ERR_EXIST)",
        20 => "not a directory (NFS4ERR_NOTDIR)",
        21 => "is a directory (NFS4ERR_ISDIR)",
        22 => "invalid argument (NFS4ERR_INVAL)",
        27 => "file too large (NFS4ERR_FBIG)",
        28 => "no space left (NFS4ERR_NOSPC)",
        30 => "read-only file system (NFS4ERR_ROFS)",
        63 => "name too long (NFS4ERR_NAMETOOLONG)",
        69 => "quota exceeded (NFS4ERR_DQUOT)",
        70 => "stale file handle (NFS4ERR_STALE)",
        10001 => "bad file handle (NFS4ERR_BADHANDLE)",
        10004 => "operation not supported (NFS4ERR_NOTSUPP)",
        10006 => "server fault (NFS4ERR_SERVERFAULT)",
        10008 => "server busy, try later (NFS4ERR_DELAY)",
        10011 => "the client's lease expired (NFS4ERR_EXPIRED)",
        10013 => "the server is in its grace period (NFS4ERR_GRACE)",
        10015 => "the file is open with a conflicting share (NFS4ERR_SHARE_DENIED)",
        10016 => "wrong security flavor (NFS4ERR_WRONGSEC)",
        10018 => "the server is out of resources (NFS4ERR_RESOURCE)",
        10021 => {
            "the server does not speak NFSv4.1 (NFS4ERR_MINOR_VERS_MISMATCH); use version=3 or \
             a server with NFSv4.1"
        }
        10022 => "stale client id (NFS4ERR_STALE_CLIENTID)",
        10025 => "bad stateid (NFS4ERR_BAD_STATEID)",
        10038 => "the file is not open for this (NFS4ERR_OPENMODE)",
        10052 => "bad session (NFS4ERR_BADSESSION)",
        10053 => "bad slot (NFS4ERR_BADSLOT)",
        10063 => "slot sequence out of order (NFS4ERR_SEQ_MISORDERED)",
        10065 => "request too big for the session (NFS4ERR_REQ_TOO_BIG)",
        10066 => "reply too big for the session (NFS4ERR_REP_TOO_BIG)",
        10071 => "operation not in a session (NFS4ERR_OP_NOT_IN_SESSION)",
        _ => "error",
    }
}
