//! `dlopen` and `dlsym`: libiscsi is loaded at run time, never linked.

use libc::c_void;
use std::ffi::CStr;

/// A shared library opened with `dlopen` and never closed (so that what was looked up in it
/// stays valid for the life of the process).
#[derive(Clone, Copy, Debug)]
pub struct DynamicLibrary {
    handle: *mut c_void,
}

// SAFETY: a dlopen handle may be used from any thread (the loader locks internally), and it is
// never closed.
unsafe impl Send for DynamicLibrary {}
// SAFETY: as above; lookups through a shared handle are thread-safe.
unsafe impl Sync for DynamicLibrary {}

impl DynamicLibrary {
    /// Opens `file` (resolving every symbol now, keeping them local); the loader's message
    /// when it cannot.
    pub fn open(file: &CStr) -> Result<Self, String> {
        // SAFETY: `file` is NUL-terminated; dlopen runs the library's initialisers, which is
        // what opening a library means.
        let handle = unsafe { libc::dlopen(file.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(last_loader_error());
        }
        Ok(DynamicLibrary { handle })
    }

    /// The address of `name` as a value of type `T` (a function pointer), `None` when the
    /// library lacks it.
    ///
    /// # Safety
    ///
    /// `T` must be a function pointer type matching the C declaration of `name`.
    pub unsafe fn symbol<T: Copy>(&self, name: &CStr) -> Option<T> {
        const { assert!(size_of::<T>() == size_of::<*mut c_void>()) };
        // SAFETY: the handle is live (never closed) and `name` is NUL-terminated.
        let address = unsafe { libc::dlsym(self.handle, name.as_ptr()) };
        if address.is_null() {
            return None;
        }
        // SAFETY: the address is non-null and, per the caller, of a function with type `T`;
        // both are pointer-sized.
        Some(unsafe { std::mem::transmute_copy::<*mut c_void, T>(&address) })
    }
}

/// The text of the last `dlopen`/`dlsym` failure of this thread.
fn last_loader_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated string valid until the next dl call on
    // this thread; it is copied at once.
    let message = unsafe { libc::dlerror() };
    if message.is_null() {
        "unknown error".to_string()
    } else {
        // SAFETY: non-null, NUL-terminated (see above).
        unsafe { CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_named_by_the_loader() {
        let error = DynamicLibrary::open(c"libiscsi-client-not-here.so.0").unwrap_err();
        assert!(error.contains("libiscsi-client-not-here.so.0"), "{error}");
    }
}
