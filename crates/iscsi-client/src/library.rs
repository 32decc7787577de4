//! Loading libiscsi at run time.
//!
//! This crate does not link libiscsi: a machine without it builds and runs a program using
//! the crate, and only an
//! `iscsi://` target needs it. The first use opens `libiscsi.so.7` (the soname of libiscsi
//! 1.x, Debian's `libiscsi7`) with `dlopen`, resolves every function below once, and keeps the
//! library loaded for the life of the process (it is never closed, so the function pointers
//! stay valid). A missing library or symbol is an error naming what to install.

use crate::dynamic_library::DynamicLibrary;
use crate::ffi::{CommandCallback, IscsiContext, ScsiIovec, ScsiTask, UnmapList};
use libc::{c_char, c_int, c_uchar, c_void};
use std::ffi::CStr;
use std::sync::OnceLock;

/// The file opened with `dlopen`.
pub const LIBRARY_FILE: &CStr = c"libiscsi.so.7";

/// What to tell someone whose machine lacks the library.
pub const INSTALL_HINT: &str = "iscsi:// targets need libiscsi: apt-get install libiscsi7";

/// Declares [`Library`], one field per C function, and the code that resolves all of them.
macro_rules! libiscsi_functions {
    ($( $(#[$doc:meta])* $field:ident = $symbol:literal: fn($($argument:ty),* $(,)?) $(-> $result:ty)?; )*) => {
        /// The libiscsi functions this crate calls, resolved once from the loaded library.
        ///
        /// Every pointer was taken from `libiscsi.so.7` with the signature of libiscsi 1.19's
        /// headers; calling one is `unsafe` with that function's own C contract.
        pub struct Library {
            $( $(#[$doc])* pub $field: unsafe extern "C" fn($($argument),*) $(-> $result)?, )*
        }

        impl Library {
            /// Resolves every function from `library`.
            ///
            /// # Safety
            ///
            /// `library` must be libiscsi 1.x.
            unsafe fn resolve(library: DynamicLibrary) -> Result<Library, String> {
                Ok(Library {
                    // SAFETY: per this function's contract; each symbol is given the type of
                    // its C declaration.
                    $( $field: unsafe { symbol(library, $symbol)? }, )*
                })
            }
        }
    };
}

libiscsi_functions! {
    /// `iscsi_create_context(initiator_name)`.
    create_context = c"iscsi_create_context": fn(*const c_char) -> *mut IscsiContext;
    /// `iscsi_destroy_context(iscsi)`: closes the connection and cancels what is in flight.
    destroy_context = c"iscsi_destroy_context": fn(*mut IscsiContext) -> c_int;
    /// `iscsi_get_error(iscsi)`: the last error as text, owned by the context.
    get_error = c"iscsi_get_error": fn(*mut IscsiContext) -> *const c_char;
    /// `iscsi_set_targetname(iscsi, name)`.
    set_targetname = c"iscsi_set_targetname": fn(*mut IscsiContext, *const c_char) -> c_int;
    /// `iscsi_set_session_type(iscsi, type)`.
    set_session_type = c"iscsi_set_session_type": fn(*mut IscsiContext, c_int) -> c_int;
    /// `iscsi_set_header_digest(iscsi, digest)`.
    set_header_digest = c"iscsi_set_header_digest": fn(*mut IscsiContext, c_int) -> c_int;
    /// `iscsi_set_initiator_username_pwd(iscsi, user, password)`: CHAP.
    set_initiator_username_pwd = c"iscsi_set_initiator_username_pwd":
        fn(*mut IscsiContext, *const c_char, *const c_char) -> c_int;
    /// `iscsi_set_noautoreconnect(iscsi, state)`: 1 = fail commands instead of reconnecting.
    set_noautoreconnect = c"iscsi_set_noautoreconnect": fn(*mut IscsiContext, c_int);
    /// `iscsi_set_timeout(iscsi, seconds)`: per-PDU timeout, checked in `iscsi_service`.
    set_timeout = c"iscsi_set_timeout": fn(*mut IscsiContext, c_int) -> c_int;
    /// `iscsi_full_connect_async(iscsi, portal, lun, cb, private_data)`: connect, log in and
    /// check the LUN with TEST UNIT READY.
    full_connect_async = c"iscsi_full_connect_async":
        fn(*mut IscsiContext, *const c_char, c_int, CommandCallback, *mut c_void) -> c_int;
    /// `iscsi_logout_async(iscsi, cb, private_data)`.
    logout_async = c"iscsi_logout_async":
        fn(*mut IscsiContext, CommandCallback, *mut c_void) -> c_int;
    /// `iscsi_get_fd(iscsi)`.
    get_fd = c"iscsi_get_fd": fn(*mut IscsiContext) -> c_int;
    /// `iscsi_which_events(iscsi)`: the `poll` events to wait for.
    which_events = c"iscsi_which_events": fn(*mut IscsiContext) -> c_int;
    /// `iscsi_service(iscsi, revents)`: moves data and runs callbacks.
    service = c"iscsi_service": fn(*mut IscsiContext, c_int) -> c_int;
    /// `iscsi_inquiry_task(iscsi, lun, evpd, page_code, maxsize, cb, private_data)`.
    inquiry_task = c"iscsi_inquiry_task":
        fn(*mut IscsiContext, c_int, c_int, c_int, c_int, CommandCallback, *mut c_void)
            -> *mut ScsiTask;
    /// `iscsi_readcapacity10_task(iscsi, lun, lba, pmi, cb, private_data)`.
    readcapacity10_task = c"iscsi_readcapacity10_task":
        fn(*mut IscsiContext, c_int, c_int, c_int, CommandCallback, *mut c_void) -> *mut ScsiTask;
    /// `iscsi_readcapacity16_task(iscsi, lun, cb, private_data)`.
    readcapacity16_task = c"iscsi_readcapacity16_task":
        fn(*mut IscsiContext, c_int, CommandCallback, *mut c_void) -> *mut ScsiTask;
    /// `iscsi_modesense6_task(iscsi, lun, dbd, pc, page_code, sub_page_code, alloc_len, cb,
    /// private_data)`.
    modesense6_task = c"iscsi_modesense6_task":
        fn(*mut IscsiContext, c_int, c_int, c_int, c_int, c_int, c_uchar, CommandCallback,
            *mut c_void) -> *mut ScsiTask;
    /// `iscsi_read16_task(iscsi, lun, lba, datalen, blocksize, rdprotect, dpo, fua, fua_nv,
    /// group_number, cb, private_data)`: data lands in a buffer owned by the task.
    read16_task = c"iscsi_read16_task":
        fn(*mut IscsiContext, c_int, u64, u32, c_int, c_int, c_int, c_int, c_int, c_int,
            CommandCallback, *mut c_void) -> *mut ScsiTask;
    /// `iscsi_read16_iov_task(…, cb, private_data, iov, niov)`: data lands in the caller's
    /// iovecs, which must stay valid until the callback.
    read16_iov_task = c"iscsi_read16_iov_task":
        fn(*mut IscsiContext, c_int, u64, u32, c_int, c_int, c_int, c_int, c_int, c_int,
            CommandCallback, *mut c_void, *mut ScsiIovec, c_int) -> *mut ScsiTask;
    /// `iscsi_write16_iov_task(iscsi, lun, lba, data, datalen, blocksize, wrprotect, dpo, fua,
    /// fua_nv, group_number, cb, private_data, iov, niov)`: with `data` null the payload is
    /// sent from the caller's iovecs, which must stay valid until the callback.
    write16_iov_task = c"iscsi_write16_iov_task":
        fn(*mut IscsiContext, c_int, u64, *mut c_uchar, u32, c_int, c_int, c_int, c_int, c_int,
            c_int, CommandCallback, *mut c_void, *mut ScsiIovec, c_int) -> *mut ScsiTask;
    /// `iscsi_synchronizecache16_task(iscsi, lun, lba, num_blocks, syncnv, immed, cb,
    /// private_data)`.
    synchronizecache16_task = c"iscsi_synchronizecache16_task":
        fn(*mut IscsiContext, c_int, u64, u32, c_int, c_int, CommandCallback, *mut c_void)
            -> *mut ScsiTask;
    /// `iscsi_unmap_task(iscsi, lun, anchor, group, list, list_len, cb, private_data)`: UNMAP
    /// of the ranges in `list` (copied into the command at once).
    unmap_task = c"iscsi_unmap_task":
        fn(*mut IscsiContext, c_int, c_int, c_int, *mut UnmapList, c_int, CommandCallback,
            *mut c_void) -> *mut ScsiTask;
    /// `scsi_free_scsi_task(task)`.
    free_task = c"scsi_free_scsi_task": fn(*mut ScsiTask);
    /// `scsi_sense_ascq_str(ascq)`: a static description of an additional sense code.
    sense_ascq_str = c"scsi_sense_ascq_str": fn(c_int) -> *const c_char;
}

/// Looks `name` up in `library` as a value of type `T` (a function pointer).
///
/// # Safety
///
/// `T` must be a function pointer type matching the C declaration of `name`.
unsafe fn symbol<T: Copy>(library: DynamicLibrary, name: &CStr) -> Result<T, String> {
    // SAFETY: per this function's contract.
    unsafe { library.symbol(name) }.ok_or_else(|| {
        format!(
            "{} lacks {} (libiscsi 1.19 or later is needed)",
            LIBRARY_FILE.to_string_lossy(),
            name.to_string_lossy()
        )
    })
}

/// Opens `file` and resolves every function; the library is never closed.
fn open(file: &CStr) -> Result<Library, String> {
    let library = DynamicLibrary::open(file)
        .map_err(|reason| format!("{INSTALL_HINT} ({}: {reason})", file.to_string_lossy()))?;
    // SAFETY: `file` is libiscsi's soname (or, in tests, a library that is missing).
    unsafe { Library::resolve(library) }
}

/// The loaded library, opened on first use; the same error on every call when it is missing.
pub fn library() -> Result<&'static Library, String> {
    static LIBRARY: OnceLock<Result<Library, String>> = OnceLock::new();
    LIBRARY
        .get_or_init(|| open(LIBRARY_FILE))
        .as_ref()
        .map_err(Clone::clone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_says_what_to_install() {
        let error = open(c"libiscsi-not-here.so.0").err().unwrap();
        assert!(error.starts_with(INSTALL_HINT), "{error}");
        assert!(error.contains("libiscsi-not-here.so.0"), "{error}");
    }

    #[test]
    fn the_installed_library_has_every_function() {
        // Machines without libiscsi7 have nothing to check.
        match library() {
            Ok(library) => {
                // SAFETY: a null-terminated static string comes back for any code.
                let text = unsafe { CStr::from_ptr((library.sense_ascq_str)(0x2100)) };
                assert!(!text.to_bytes().is_empty());
            }
            Err(error) => assert!(error.starts_with(INSTALL_HINT), "{error}"),
        }
    }
}
