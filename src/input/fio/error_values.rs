//! Values of fio's error options: errno names as fio's `str2error` knows them, and the
//! per-kind lists of `ignore_error`.
//!
//! ```
//! use iopath::input::fio::error_values::{errno_name, ignore_lists};
//! assert_eq!(errno_name(28), Some("ENOSPC"));
//! let lists = ignore_lists(",ENOSPC:122").unwrap();
//! assert_eq!(lists[0], None);
//! assert_eq!(lists[1], Some(vec![28, 122]));
//! ```

use super::parsers::OptionError;

/// The errno names fio's `ignore_error` accepts (its `str2error` list), with their values
/// here. `EWOULDBLOCK` and `EDEADLOCK` are other names of `EAGAIN` and `EDEADLK`.
const ERRNO_NAMES: &[(&str, i32)] = &[
    ("EPERM", libc::EPERM),
    ("ENOENT", libc::ENOENT),
    ("ESRCH", libc::ESRCH),
    ("EINTR", libc::EINTR),
    ("EIO", libc::EIO),
    ("ENXIO", libc::ENXIO),
    ("E2BIG", libc::E2BIG),
    ("ENOEXEC", libc::ENOEXEC),
    ("EBADF", libc::EBADF),
    ("ECHILD", libc::ECHILD),
    ("EAGAIN", libc::EAGAIN),
    ("ENOMEM", libc::ENOMEM),
    ("EACCES", libc::EACCES),
    ("EFAULT", libc::EFAULT),
    ("ENOTBLK", libc::ENOTBLK),
    ("EBUSY", libc::EBUSY),
    ("EEXIST", libc::EEXIST),
    ("EXDEV", libc::EXDEV),
    ("ENODEV", libc::ENODEV),
    ("ENOTDIR", libc::ENOTDIR),
    ("EISDIR", libc::EISDIR),
    ("EINVAL", libc::EINVAL),
    ("ENFILE", libc::ENFILE),
    ("EMFILE", libc::EMFILE),
    ("ENOTTY", libc::ENOTTY),
    ("ETXTBSY", libc::ETXTBSY),
    ("EFBIG", libc::EFBIG),
    ("ENOSPC", libc::ENOSPC),
    ("ESPIPE", libc::ESPIPE),
    ("EROFS", libc::EROFS),
    ("EMLINK", libc::EMLINK),
    ("EPIPE", libc::EPIPE),
    ("EDOM", libc::EDOM),
    ("ERANGE", libc::ERANGE),
    ("EDEADLK", libc::EDEADLK),
    ("ENAMETOOLONG", libc::ENAMETOOLONG),
    ("ENOLCK", libc::ENOLCK),
    ("ENOSYS", libc::ENOSYS),
    ("ENOTEMPTY", libc::ENOTEMPTY),
    ("ELOOP", libc::ELOOP),
    ("EWOULDBLOCK", libc::EWOULDBLOCK),
    ("ENOMSG", libc::ENOMSG),
    ("EIDRM", libc::EIDRM),
    ("ECHRNG", libc::ECHRNG),
    ("EL2NSYNC", libc::EL2NSYNC),
    ("EL3HLT", libc::EL3HLT),
    ("EL3RST", libc::EL3RST),
    ("ELNRNG", libc::ELNRNG),
    ("EUNATCH", libc::EUNATCH),
    ("ENOCSI", libc::ENOCSI),
    ("EL2HLT", libc::EL2HLT),
    ("EBADE", libc::EBADE),
    ("EBADR", libc::EBADR),
    ("EXFULL", libc::EXFULL),
    ("ENOANO", libc::ENOANO),
    ("EBADRQC", libc::EBADRQC),
    ("EBADSLT", libc::EBADSLT),
    ("EDEADLOCK", libc::EDEADLOCK),
    ("EBFONT", libc::EBFONT),
    ("ENOSTR", libc::ENOSTR),
    ("ENODATA", libc::ENODATA),
    ("ETIME", libc::ETIME),
    ("ENOSR", libc::ENOSR),
    ("ENONET", libc::ENONET),
    ("ENOPKG", libc::ENOPKG),
    ("EREMOTE", libc::EREMOTE),
    ("ENOLINK", libc::ENOLINK),
    ("EADV", libc::EADV),
    ("ESRMNT", libc::ESRMNT),
    ("ECOMM", libc::ECOMM),
    ("EPROTO", libc::EPROTO),
    ("EMULTIHOP", libc::EMULTIHOP),
    ("EDOTDOT", libc::EDOTDOT),
    ("EBADMSG", libc::EBADMSG),
    ("EOVERFLOW", libc::EOVERFLOW),
    ("ENOTUNIQ", libc::ENOTUNIQ),
    ("EBADFD", libc::EBADFD),
    ("EREMCHG", libc::EREMCHG),
    ("ELIBACC", libc::ELIBACC),
    ("ELIBBAD", libc::ELIBBAD),
    ("ELIBSCN", libc::ELIBSCN),
    ("ELIBMAX", libc::ELIBMAX),
    ("ELIBEXEC", libc::ELIBEXEC),
    ("EILSEQ", libc::EILSEQ),
    ("ERESTART", libc::ERESTART),
    ("ESTRPIPE", libc::ESTRPIPE),
    ("EUSERS", libc::EUSERS),
    ("ENOTSOCK", libc::ENOTSOCK),
    ("EDESTADDRREQ", libc::EDESTADDRREQ),
    ("EMSGSIZE", libc::EMSGSIZE),
    ("EPROTOTYPE", libc::EPROTOTYPE),
    ("ENOPROTOOPT", libc::ENOPROTOOPT),
    ("EPROTONOSUPPORT", libc::EPROTONOSUPPORT),
    ("ESOCKTNOSUPPORT", libc::ESOCKTNOSUPPORT),
    ("EOPNOTSUPP", libc::EOPNOTSUPP),
    ("EPFNOSUPPORT", libc::EPFNOSUPPORT),
    ("EAFNOSUPPORT", libc::EAFNOSUPPORT),
    ("EADDRINUSE", libc::EADDRINUSE),
    ("EADDRNOTAVAIL", libc::EADDRNOTAVAIL),
    ("ENETDOWN", libc::ENETDOWN),
    ("ENETUNREACH", libc::ENETUNREACH),
    ("ENETRESET", libc::ENETRESET),
    ("ECONNABORTED", libc::ECONNABORTED),
    ("ECONNRESET", libc::ECONNRESET),
    ("ENOBUFS", libc::ENOBUFS),
    ("EISCONN", libc::EISCONN),
    ("ENOTCONN", libc::ENOTCONN),
    ("ESHUTDOWN", libc::ESHUTDOWN),
    ("ETOOMANYREFS", libc::ETOOMANYREFS),
    ("ETIMEDOUT", libc::ETIMEDOUT),
    ("ECONNREFUSED", libc::ECONNREFUSED),
    ("EHOSTDOWN", libc::EHOSTDOWN),
    ("EHOSTUNREACH", libc::EHOSTUNREACH),
    ("EALREADY", libc::EALREADY),
    ("EINPROGRESS", libc::EINPROGRESS),
    ("ESTALE", libc::ESTALE),
    ("EUCLEAN", libc::EUCLEAN),
    ("ENOTNAM", libc::ENOTNAM),
    ("ENAVAIL", libc::ENAVAIL),
    ("EISNAM", libc::EISNAM),
    ("EREMOTEIO", libc::EREMOTEIO),
    ("EDQUOT", libc::EDQUOT),
    ("ENOMEDIUM", libc::ENOMEDIUM),
    ("EMEDIUMTYPE", libc::EMEDIUMTYPE),
    ("ECANCELED", libc::ECANCELED),
    ("ENOKEY", libc::ENOKEY),
    ("EKEYEXPIRED", libc::EKEYEXPIRED),
    ("EKEYREVOKED", libc::EKEYREVOKED),
    ("EKEYREJECTED", libc::EKEYREJECTED),
    ("EOWNERDEAD", libc::EOWNERDEAD),
    ("ENOTRECOVERABLE", libc::ENOTRECOVERABLE),
    ("ERFKILL", libc::ERFKILL),
    ("EHWPOISON", libc::EHWPOISON),
];

/// The name of `errno` (the first of fio's names for it), if fio knows one.
pub fn errno_name(errno: i32) -> Option<&'static str> {
    ERRNO_NAMES
        .iter()
        .find(|(_, value)| *value == errno)
        .map(|(name, _)| *name)
}

/// One entry of a list: a name starting with `E`, or a number (decimal, or hexadecimal after
/// `0x`; a negative number counts as its absolute value), as fio reads it.
fn errno(entry: &str) -> Result<i32, OptionError> {
    let value = if entry.starts_with('E') {
        ERRNO_NAMES
            .iter()
            .find(|(name, _)| *name == entry)
            .map(|(_, value)| *value)
    } else {
        let digits = entry.trim_start_matches('-');
        match digits
            .strip_prefix("0x")
            .or_else(|| digits.strip_prefix("0X"))
        {
            Some(hex) => i32::from_str_radix(hex, 16).ok(),
            None => digits.parse::<i32>().ok(),
        }
    };
    match value {
        Some(value) if value > 0 => Ok(value),
        _ => Err(OptionError::BadValue(format!(
            "unknown error '{entry}': give an errno name such as ENOSPC or its number"
        ))),
    }
}

/// `ignore_error`'s value: up to three comma-separated lists (read, write, verify) of
/// `:`-separated errnos; an empty or missing list leaves that kind as it was (`None`).
pub fn ignore_lists(text: &str) -> Result<[Option<Vec<i32>>; 3], OptionError> {
    let parts: Vec<&str> = text.trim().split(',').collect();
    if parts.len() > 3 {
        return Err(OptionError::BadValue(format!(
            "'{text}': at most three lists (read, write, verify)"
        )));
    }
    let mut lists: [Option<Vec<i32>>; 3] = [None, None, None];
    for (kind, part) in parts.iter().enumerate() {
        // fio stops a list at its first empty entry.
        let entries: Vec<&str> = part
            .split(':')
            .map(str::trim)
            .take_while(|e| !e.is_empty())
            .collect();
        if !entries.is_empty() {
            lists[kind] = Some(entries.into_iter().map(errno).collect::<Result<_, _>>()?);
        }
    }
    Ok(lists)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_as_fio_reads_them() {
        assert_eq!(errno("ENOSPC").unwrap(), libc::ENOSPC);
        assert_eq!(errno("EWOULDBLOCK").unwrap(), libc::EAGAIN);
        assert_eq!(errno("0x1c").unwrap(), 28);
        assert_eq!(errno("-5").unwrap(), 5);
        assert!(errno("ENOTANERROR").is_err());
        assert!(errno("0").is_err());
        let lists = ignore_lists("EAGAIN,ENOSPC:122").unwrap();
        assert_eq!(lists[0], Some(vec![libc::EAGAIN]));
        assert_eq!(lists[1], Some(vec![libc::ENOSPC, 122]));
        assert_eq!(lists[2], None);
        assert_eq!(
            ignore_lists(",,EILSEQ").unwrap()[2],
            Some(vec![libc::EILSEQ])
        );
        assert!(ignore_lists("EIO,EIO,EIO,EIO").is_err());
        assert_eq!(errno_name(libc::EIO), Some("EIO"));
    }
}
