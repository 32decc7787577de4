//! One iSCSI session: a libiscsi context, logged in to one target for one LUN, owned by an
//! RAII [`Session`] that logs out and destroys the context when dropped.
//!
//! Everything runs on libiscsi's asynchronous API and one event loop ([`poll_sessions`]:
//! `poll` on the context's socket for the events it asks for, then `iscsi_service`), with a
//! deadline on every wait: a target that stops answering makes a call fail with
//! [`io::ErrorKind::TimedOut`] instead of hanging. Sessions never reconnect by themselves
//! (`iscsi_set_noautoreconnect`): a dropped connection cancels what is in flight, and the
//! caller sees it as an error rather than I/O silently replayed.
//!
//! Single commands (the probe's INQUIRY, READ CAPACITY, MODE SENSE and READ, and SYNCHRONIZE
//! CACHE) go through [`Session::run`], which waits for the command and hands back its
//! [`FinishedTask`]. Queue-depth I/O uses its own callbacks and only borrows the context
//! ([`Session::context`]) and the event loop.

use crate::ffi::{
    CommandCallback, ISCSI_HEADER_DIGEST_NONE_CRC32C, ISCSI_SESSION_NORMAL, IscsiContext,
    SCSI_STATUS_GOOD, ScsiTask,
};
use crate::library::Library;
use crate::status::status_name;
use crate::sys;
use crate::task::FinishedTask;
use libc::{c_char, c_int, c_void};
use std::ffi::{CStr, CString};
use std::io;
use std::ptr::NonNull;
use std::time::{Duration, Instant};
use wire_text::escape_controls;
use wire_text::format_wait;

/// How long logging out may take when a session is dropped.
const LOGOUT_TIMEOUT: Duration = Duration::from_secs(2);

/// Longest single `poll`, ms: the context is serviced at least this often so that libiscsi's
/// timeouts are checked.
const POLL_SLICE_MS: u64 = 1000;

/// Where to log in, and as whom.
#[derive(Clone, Debug)]
pub struct LoginParameters {
    /// `HOST:PORT` (IPv6 in brackets).
    pub portal: String,
    /// Target IQN.
    pub target_iqn: String,
    /// Logical unit number.
    pub lun: u32,
    /// Initiator IQN to present.
    pub initiator_iqn: String,
    /// CHAP user name and secret.
    pub chap: Option<(String, String)>,
}

/// What the callbacks of connect, logout and [`Session::run`] write into. Lives in its own
/// allocation from connect until after the context is destroyed (destroying it may still
/// call a callback for a command that was abandoned).
struct PendingCommand {
    finished: bool,
    status: c_int,
    task: *mut ScsiTask,
    /// libiscsi's error text when a connect or logout step failed, taken in the callback
    /// (later errors of the same context overwrite it).
    error: Option<String>,
    /// For reading the error text in the callback.
    get_error: unsafe extern "C" fn(*mut IscsiContext) -> *const c_char,
}

impl PendingCommand {
    fn new(get_error: unsafe extern "C" fn(*mut IscsiContext) -> *const c_char) -> Self {
        PendingCommand {
            finished: false,
            status: SCSI_STATUS_GOOD,
            task: std::ptr::null_mut(),
            error: None,
            get_error,
        }
    }
}

/// The text of `get_error(context)`, or `None`.
///
/// # Safety
///
/// `context` must be a live context and `get_error` libiscsi's `iscsi_get_error`.
unsafe fn error_text(
    get_error: unsafe extern "C" fn(*mut IscsiContext) -> *const c_char,
    context: *mut IscsiContext,
) -> Option<String> {
    // SAFETY: per the contract; the returned string is owned by the context and copied at
    // once.
    let text = unsafe { get_error(context) };
    if text.is_null() {
        return None;
    }
    // SAFETY: non-null NUL-terminated string owned by the context.
    let text = unsafe { CStr::from_ptr(text) }.to_string_lossy();
    let text = text.trim();
    // It may quote what the target sent: control characters escaped.
    (!text.is_empty()).then(|| escape_controls(text).into_owned())
}

/// A logged-in iSCSI session; see the module documentation.
pub struct Session {
    library: &'static Library,
    context: NonNull<IscsiContext>,
    /// Owned (from `Box::into_raw`); freed in `Drop` after the context.
    pending: NonNull<PendingCommand>,
    lun: c_int,
    /// `IQN (LUN n) at PORTAL`, for messages.
    description: String,
    logged_in: bool,
    /// False once the connection failed or a command was abandoned at its deadline.
    usable: bool,
    /// The socket error that ended a login attempt, read before libiscsi overwrites it.
    socket_failure: Option<io::Error>,
    /// Longest wait for the target: to log in, and for each command.
    timeout: Duration,
}

// SAFETY: a libiscsi context has no affinity to the thread that created it; it only must not
// be used by two threads at once, which `&mut self` on every operation guarantees. The pending
// record is owned by the session and moves with it.
unsafe impl Send for Session {}

/// libiscsi's callback for connect and logout: records the status.
///
/// # Safety
///
/// `private_data` is the session's `PendingCommand`, alive until after the context is
/// destroyed; libiscsi calls this only from inside a call on the session's context.
unsafe extern "C" fn step_finished(
    context: *mut IscsiContext,
    status: c_int,
    _command_data: *mut c_void,
    private_data: *mut c_void,
) {
    let pending = private_data.cast::<PendingCommand>();
    // SAFETY: see the function's contract; no reference to the record is alive meanwhile,
    // and `context` is the live context the callback runs for.
    unsafe {
        if status != SCSI_STATUS_GOOD {
            (*pending).error = error_text((*pending).get_error, context);
        }
        (*pending).status = status;
        (*pending).finished = true;
    }
}

/// libiscsi's callback for [`Session::run`]: records the status and keeps the task.
///
/// # Safety
///
/// As for [`step_finished`]; `command_data` is the command's `scsi_task` (or null).
unsafe extern "C" fn command_finished(
    _context: *mut IscsiContext,
    status: c_int,
    command_data: *mut c_void,
    private_data: *mut c_void,
) {
    let pending = private_data.cast::<PendingCommand>();
    // SAFETY: see the function's contract.
    unsafe {
        (*pending).status = status;
        (*pending).task = command_data.cast();
        (*pending).finished = true;
    }
}

fn c_string(text: &str, what: &str) -> Result<CString, io::Error> {
    CString::new(text).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what} contains a NUL byte"),
        )
    })
}

impl Session {
    /// Connects to `login.portal`, logs in to `login.target_iqn` and checks that its LUN
    /// answers (TEST UNIT READY), all within `timeout`. A login the target refuses is an
    /// [`io::ErrorKind::PermissionDenied`] error quoting libiscsi's reason (for a target that
    /// wants CHAP: "Authentication failure" or "Authorization failure"). Commands on the session time out after
    /// `timeout` too (libiscsi's per-command timeout, whole seconds, rounded up; libiscsi checks
    /// it whenever the context is serviced, at least once a second here).
    pub fn connect(
        library: &'static Library,
        login: &LoginParameters,
        timeout: Duration,
    ) -> Result<Session, io::Error> {
        let deadline = Instant::now() + timeout;
        let description = format!(
            "{} (LUN {}) at {}",
            login.target_iqn, login.lun, login.portal
        );
        let lun = c_int::try_from(login.lun).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("LUN {} is too large", login.lun),
            )
        })?;
        let initiator = c_string(&login.initiator_iqn, "the initiator name")?;
        let target = c_string(&login.target_iqn, "the target IQN")?;
        let portal = c_string(&login.portal, "the portal")?;
        let chap = match &login.chap {
            Some((user, secret)) => Some((
                c_string(user, "the CHAP user")?,
                c_string(secret, "the CHAP secret")?,
            )),
            None => None,
        };

        // SAFETY: the name is NUL-terminated and copied by libiscsi.
        let context = unsafe { (library.create_context)(initiator.as_ptr()) };
        let context = NonNull::new(context)
            .ok_or_else(|| io::Error::other("libiscsi could not create a context"))?;
        let pending = NonNull::from(Box::leak(Box::new(PendingCommand::new(library.get_error))));
        // From here on, dropping `session` destroys the context and frees `pending`.
        let mut session = Session {
            library,
            context,
            pending,
            lun,
            description,
            logged_in: false,
            usable: true,
            socket_failure: None,
            timeout,
        };
        let ctx = session.context.as_ptr();
        // SAFETY: for every call below, `ctx` is a live context used only by this thread, and
        // the strings are NUL-terminated and copied by libiscsi.
        unsafe {
            if (library.set_targetname)(ctx, target.as_ptr()) != 0 {
                return Err(session.failure("cannot prepare a session to"));
            }
            (library.set_session_type)(ctx, ISCSI_SESSION_NORMAL);
            (library.set_header_digest)(ctx, ISCSI_HEADER_DIGEST_NONE_CRC32C);
            if let Some((user, secret)) = &chap
                && (library.set_initiator_username_pwd)(ctx, user.as_ptr(), secret.as_ptr()) != 0
            {
                return Err(session.failure("cannot set CHAP credentials for"));
            }
            (library.set_noautoreconnect)(ctx, 1);
            let seconds = timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0);
            (library.set_timeout)(ctx, c_int::try_from(seconds.max(1)).unwrap_or(c_int::MAX));
        }
        session.reset_pending();
        // SAFETY: `ctx` is live; the portal is copied; `pending` outlives the context, so the
        // callback may run at any later point.
        let started = unsafe {
            (library.full_connect_async)(
                ctx,
                portal.as_ptr(),
                lun,
                step_finished,
                session.pending.as_ptr().cast(),
            )
        };
        if started != 0 {
            return Err(session.failure("cannot connect to"));
        }
        session.wait_for_pending(deadline, timeout, "logging in")?;
        if session.pending_status() != SCSI_STATUS_GOOD {
            return Err(match &session.socket_failure {
                Some(error) => io::Error::new(
                    error.kind(),
                    format!("cannot connect to {}: {error}", session.description),
                ),
                None => io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "cannot log in to {}: {}",
                        session.description,
                        session.step_error()
                    ),
                ),
            });
        }
        session.logged_in = true;
        Ok(session)
    }

    /// Longest wait for the target, given at connect.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// `IQN (LUN n) at PORTAL`.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The LUN, as libiscsi takes it.
    pub fn lun(&self) -> c_int {
        self.lun
    }

    /// The raw context, for issuing commands with the caller's own callbacks.
    pub fn context(&self) -> *mut IscsiContext {
        self.context.as_ptr()
    }

    /// libiscsi's last error on this context.
    pub fn last_error(&self) -> String {
        // SAFETY: the context is live and `get_error` is libiscsi's.
        unsafe { error_text(self.library.get_error, self.context.as_ptr()) }
            .unwrap_or_else(|| "unknown error".to_string())
    }

    /// The error a failed connect or logout step reported (or the context's last error).
    fn step_error(&self) -> String {
        // SAFETY: read between libiscsi calls; nothing else touches the record then.
        let error = unsafe { (*self.pending.as_ptr()).error.clone() };
        error.unwrap_or_else(|| self.last_error())
    }

    /// An error `what: libiscsi's last error`, naming the session.
    pub fn failure(&self, what: &str) -> io::Error {
        io::Error::other(format!(
            "{what} {}: {}",
            self.description,
            self.last_error()
        ))
    }

    /// Whether the session can still carry commands.
    pub fn is_usable(&self) -> bool {
        self.usable
    }

    /// Marks the session as failed (after a lost connection).
    pub fn mark_failed(&mut self) {
        self.usable = false;
    }

    /// The socket, for `poll`.
    pub fn fd(&self) -> c_int {
        // SAFETY: the context is live.
        unsafe { (self.library.get_fd)(self.context.as_ptr()) }
    }

    /// The `poll` events libiscsi waits for.
    pub fn which_events(&self) -> c_int {
        // SAFETY: the context is live.
        unsafe { (self.library.which_events)(self.context.as_ptr()) }
    }

    /// Lets libiscsi act on `revents` (0: only check timeouts); callbacks of finished
    /// commands run inside. A failure means the connection is unusable.
    pub fn service(&mut self, revents: c_int) -> Result<(), io::Error> {
        // While logging in, a socket error is taken here: libiscsi's text for it is
        // overwritten before the failing call returns.
        if !self.logged_in && revents & c_int::from(libc::POLLERR | libc::POLLHUP) != 0 {
            self.socket_failure = self
                .socket_failure
                .take()
                .or_else(|| sys::socket_error(self.fd()));
        }
        // SAFETY: the context is live and used by this thread only; every callback's private
        // data outlives the context (see the callers).
        let outcome = unsafe { (self.library.service)(self.context.as_ptr(), revents) };
        if outcome < 0 {
            self.usable = false;
            return Err(if let Some(error) = &self.socket_failure {
                io::Error::new(
                    error.kind(),
                    format!("cannot connect to {}: {error}", self.description),
                )
            } else if !self.logged_in {
                io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    format!(
                        "cannot log in to {}: the connection failed or the target closed it during login",
                        self.description
                    ),
                )
            } else {
                io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    format!(
                        "connection to {} failed: {}",
                        self.description,
                        self.last_error()
                    ),
                )
            });
        }
        Ok(())
    }

    fn reset_pending(&mut self) {
        // SAFETY: no libiscsi call is running, so nothing else touches the record.
        unsafe {
            let pending = self.pending.as_ptr();
            if !(*pending).task.is_null() {
                (self.library.free_task)((*pending).task);
            }
            *pending = PendingCommand::new(self.library.get_error);
        }
    }

    fn pending_finished(&self) -> bool {
        // SAFETY: read between libiscsi calls; nothing else touches the record then.
        unsafe { (*self.pending.as_ptr()).finished }
    }

    fn pending_status(&self) -> c_int {
        // SAFETY: as in `pending_finished`.
        unsafe { (*self.pending.as_ptr()).status }
    }

    /// Services the context until the pending step or command has finished, or fails at
    /// `deadline`, `timeout` after the step began (the session is then unusable: the step may
    /// still finish later).
    fn wait_for_pending(
        &mut self,
        deadline: Instant,
        timeout: Duration,
        doing: &str,
    ) -> Result<(), io::Error> {
        let mut pollfd = [libc::pollfd {
            fd: -1,
            events: 0,
            revents: 0,
        }];
        while !self.pending_finished() {
            let now = Instant::now();
            if now >= deadline {
                self.usable = false;
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "no reply within {} from {} while {doing}",
                        format_wait(timeout),
                        self.description
                    ),
                ));
            }
            let slice_ms = (deadline - now).as_millis().clamp(1, POLL_SLICE_MS as u128) as c_int;
            if let Err(error) = poll_sessions(std::slice::from_mut(self), &mut pollfd, slice_ms) {
                // A failed step also fails the service call that reported it; the step's own
                // outcome is the better answer.
                if !self.pending_finished() {
                    return Err(error);
                }
            }
        }
        Ok(())
    }

    /// Issues one SCSI command with `issue` (given the library, the context, the LUN, the
    /// callback and its private data; it returns the task or null) and waits at most
    /// `timeout` for it. `what` names the command in errors.
    pub fn run(
        &mut self,
        what: &str,
        timeout: Duration,
        issue: impl FnOnce(
            &Library,
            *mut IscsiContext,
            c_int,
            CommandCallback,
            *mut c_void,
        ) -> *mut ScsiTask,
    ) -> Result<FinishedTask, io::Error> {
        if !self.usable {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                format!("{what}: the session to {} has failed", self.description),
            ));
        }
        let deadline = Instant::now() + timeout;
        self.reset_pending();
        let task = issue(
            self.library,
            self.context.as_ptr(),
            self.lun,
            command_finished,
            self.pending.as_ptr().cast(),
        );
        if task.is_null() {
            return Err(self.failure(&format!("cannot send {what} to")));
        }
        self.wait_for_pending(deadline, timeout, what)?;
        // SAFETY: the command finished; nothing else touches the record between calls.
        let finished =
            unsafe { std::mem::replace(&mut (*self.pending.as_ptr()).task, std::ptr::null_mut()) };
        match NonNull::new(finished) {
            // SAFETY: the task came from this library, its callback ran, and the pending
            // record no longer refers to it.
            Some(task) => Ok(unsafe { FinishedTask::new(self.library, task) }),
            None => Err(io::Error::other(format!(
                "{what} failed on {}: {} ({})",
                self.description,
                status_name(self.pending_status()),
                self.last_error()
            ))),
        }
    }

    /// Logs out (waiting at most `timeout`); the session is unusable afterwards.
    pub fn logout(&mut self, timeout: Duration) -> Result<(), io::Error> {
        if !self.logged_in || !self.usable {
            return Ok(());
        }
        self.logged_in = false;
        self.reset_pending();
        // SAFETY: the context is live; `pending` outlives it.
        let started = unsafe {
            (self.library.logout_async)(
                self.context.as_ptr(),
                step_finished,
                self.pending.as_ptr().cast(),
            )
        };
        if started != 0 {
            self.usable = false;
            return Err(self.failure("cannot log out of"));
        }
        let outcome = self.wait_for_pending(Instant::now() + timeout, timeout, "logging out");
        self.usable = false;
        outcome
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.logout(LOGOUT_TIMEOUT);
        // SAFETY: the context is live and destroyed once. Destroying it may call callbacks of
        // commands still in flight: the pending record is freed only below, and the caller
        // keeps its slot records alive until every session is dropped.
        unsafe { (self.library.destroy_context)(self.context.as_ptr()) };
        // SAFETY: allocated with `Box` in `connect`, freed once, after the context.
        let pending = unsafe { Box::from_raw(self.pending.as_ptr()) };
        if !pending.task.is_null() {
            // SAFETY: a task handed to a callback after its command was abandoned; libiscsi is
            // done with it.
            unsafe { (self.library.free_task)(pending.task) };
        }
    }
}

/// Waits at most `timeout_ms` for any of `sessions` to be ready and services the ready ones
/// (all of them, with no events, when the wait times out, so libiscsi checks its timeouts).
/// `pollfds` has one entry per session. An interrupted wait returns `Ok` (callers loop).
pub fn poll_sessions(
    sessions: &mut [Session],
    pollfds: &mut [libc::pollfd],
    timeout_ms: c_int,
) -> Result<(), io::Error> {
    debug_assert_eq!(sessions.len(), pollfds.len());
    let mut watched = 0;
    for (session, pollfd) in sessions.iter().zip(pollfds.iter_mut()) {
        let fd = session.fd();
        watched += usize::from(fd >= 0);
        *pollfd = libc::pollfd {
            fd,
            events: session.which_events() as libc::c_short,
            revents: 0,
        };
    }
    if watched == 0 {
        return Err(io::Error::new(
            io::ErrorKind::NotConnected,
            format!(
                "{}: not connected",
                sessions.first().map_or("", |s| s.description())
            ),
        ));
    }
    let ready = match sys::poll_once(pollfds, timeout_ms) {
        Ok(ready) => ready,
        Err(error) if error.kind() == io::ErrorKind::Interrupted => return Ok(()),
        Err(error) => return Err(error),
    };
    for (session, pollfd) in sessions.iter_mut().zip(pollfds.iter()) {
        if ready == 0 || pollfd.revents != 0 {
            session.service(c_int::from(pollfd.revents))?;
        }
    }
    Ok(())
}
