//! The C library calls that ask what this machine and process are, in one place: each wrapper
//! is safe, checks the call's result, and says what it returns when the call fails. Everything
//! above (CPU accounting, host facts, the runner's budget, job-file defaults) uses these instead
//! of calling `libc` itself. (What discovery asks the kernel about a storage path goes through
//! its own seam, `discovery::system`, so that a recorded machine can answer instead.)
//!
//! ```
//! use iopath::host::sys;
//! assert!(sys::online_cpus() >= 1);
//! assert!(sys::page_size() >= 512);
//! let (user_ns, system_ns) = sys::process_cpu_ns();
//! assert!(user_ns + system_ns < u64::MAX);
//! ```

/// A `sysconf` value, `None` when the system does not say.
fn sysconf(name: libc::c_int) -> Option<u64> {
    // SAFETY: sysconf only reads system configuration values; it has no memory-safety
    // preconditions.
    let value = unsafe { libc::sysconf(name) };
    u64::try_from(value).ok().filter(|value| *value > 0)
}

/// Logical CPUs online on the host (not limited by this process's affinity); 1 when unknown.
pub fn online_cpus() -> u32 {
    sysconf(libc::_SC_NPROCESSORS_ONLN)
        .and_then(|cpus| u32::try_from(cpus).ok())
        .unwrap_or(1)
}

/// The size of a memory page, bytes; 4096 when unknown.
pub fn page_size() -> u64 {
    sysconf(libc::_SC_PAGESIZE).unwrap_or(4096)
}

/// Pages of physical memory; 0 when unknown.
pub fn physical_pages() -> u64 {
    sysconf(libc::_SC_PHYS_PAGES).unwrap_or(0)
}

/// Clock ticks per second of /proc/stat's counters; 100 when unknown.
pub fn clock_ticks_per_second() -> u64 {
    sysconf(libc::_SC_CLK_TCK).unwrap_or(100)
}

fn timeval_ns(time: libc::timeval) -> u64 {
    time.tv_sec as u64 * 1_000_000_000 + time.tv_usec as u64 * 1_000
}

/// User and system time of this process so far, ns; zeros when unreadable.
pub fn process_cpu_ns() -> (u64, u64) {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a whole rusage into the pointer we pass, which is valid.
    let usage = unsafe {
        if libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) != 0 {
            return (0, 0);
        }
        usage.assume_init()
    };
    (timeval_ns(usage.ru_utime), timeval_ns(usage.ru_stime))
}

/// CPU time (user + system) of the calling thread so far, ns; 0 when unreadable.
pub fn thread_cpu_ns() -> u64 {
    let mut time = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into a valid pointer.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut time) } != 0 {
        return 0;
    }
    time.tv_sec as u64 * 1_000_000_000 + time.tv_nsec as u64
}

/// Time the calling thread has spent runnable but waiting for a CPU so far, ns (the second
/// field of `/proc/thread-self/schedstat`: the scheduler's run-queue delay); 0 when the
/// kernel does not keep it. Read into a stack buffer: no allocation, so a worker can call it
/// at the edges of its measured window.
pub fn thread_cpu_wait_ns() -> u64 {
    use std::io::Read;
    let mut buffer = [0u8; 96];
    let Ok(mut file) = std::fs::File::open("/proc/thread-self/schedstat") else {
        return 0;
    };
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read(&mut buffer[filled..]) {
            Ok(0) | Err(_) => break,
            Ok(read) => filled += read,
        }
    }
    run_queue_delay_ns(&buffer[..filled]).unwrap_or(0)
}

/// The run-queue delay (second of three numbers) of a `schedstat` line.
fn run_queue_delay_ns(line: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(line).ok()?;
    text.split_ascii_whitespace().nth(1)?.parse().ok()
}

/// A resource limit `getrlimit` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// `RLIMIT_MEMLOCK`: bytes of memory that may be locked (registered io_uring buffers).
    LockedMemory,
    /// `RLIMIT_NPROC`: processes and threads of the user.
    Processes,
}

/// The soft limit `limit`, `None` when unlimited or unreadable.
pub fn soft_limit(limit: Limit) -> Option<u64> {
    let resource = match limit {
        Limit::LockedMemory => libc::RLIMIT_MEMLOCK,
        Limit::Processes => libc::RLIMIT_NPROC,
    };
    let mut value = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit structure through the pointer, which points to
    // `value`.
    if unsafe { libc::getrlimit(resource, &mut value) } != 0
        || value.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    Some(value.rlim_cur)
}

/// Whether this process is in the foreground of the terminal on standard error: only then may
/// it change the terminal's mode (a background process that tries is stopped by SIGTTOU).
/// False when standard error is not a terminal.
pub fn in_terminal_foreground() -> bool {
    // SAFETY: tcgetpgrp and getpgrp only read the process's and the terminal's state; a
    // descriptor that is not a terminal makes tcgetpgrp return -1, which never matches.
    unsafe { libc::tcgetpgrp(libc::STDERR_FILENO) == libc::getpgrp() }
}

/// Whether this process runs as root (effective user 0).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Writes every dirty page of every filesystem back (`sync`).
pub fn sync_filesystems() {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
}

/// The CPUs this process may run on (its affinity mask), in order; `None` when the kernel
/// does not say.
pub fn allowed_cpus() -> Option<Vec<u32>> {
    // SAFETY: cpu_set_t is plain bits, valid when zeroed; sched_getaffinity writes at most
    // size_of::<cpu_set_t>() bytes into it, and CPU_ISSET reads within it for cpu < CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        Some(
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
                .map(|cpu| cpu as u32)
                .collect(),
        )
    }
}

/// Lets the calling thread run only on `cpus` (nothing to do when empty); the error says why
/// the kernel refused.
pub fn pin_current_thread(cpus: &[u32]) -> Result<(), String> {
    if cpus.is_empty() {
        return Ok(());
    }
    let limit = libc::CPU_SETSIZE as u32;
    if let Some(cpu) = cpus.iter().find(|&&cpu| cpu >= limit) {
        return Err(format!(
            "CPU {cpu} is beyond the {limit} CPUs an affinity mask holds"
        ));
    }
    // SAFETY: cpu_set_t is plain bits, valid when zeroed; CPU_SET writes inside it for
    // cpu < CPU_SETSIZE (checked above); sched_setaffinity reads size_of::<cpu_set_t>() bytes
    // of it; pid 0 is the calling thread.
    let result = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus {
            libc::CPU_SET(cpu as usize, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().to_string())
    }
}

/// The CPU the calling thread runs on now, when the kernel says.
pub fn current_cpu() -> Option<u32> {
    // SAFETY: sched_getcpu takes no arguments and only returns a number.
    let cpu = unsafe { libc::sched_getcpu() };
    u32::try_from(cpu).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_time_does_not_go_back() {
        let before = thread_cpu_ns();
        let mut spin = 0u64;
        for index in 0..2_000_000u64 {
            spin = spin.wrapping_add(std::hint::black_box(index));
        }
        std::hint::black_box(spin);
        assert!(thread_cpu_ns() >= before);
    }

    #[test]
    fn the_run_queue_delay_is_the_second_schedstat_number() {
        assert_eq!(
            run_queue_delay_ns(b"588893451 620305393 58851\n"),
            Some(620305393)
        );
        assert_eq!(run_queue_delay_ns(b"588893451"), None);
        assert_eq!(run_queue_delay_ns(b"1 x 3"), None);
        assert_eq!(run_queue_delay_ns(&[0xff, b' ', b'2']), None);
        // This kernel keeps it, and it does not go back.
        let before = thread_cpu_wait_ns();
        std::thread::yield_now();
        assert!(thread_cpu_wait_ns() >= before);
        assert!(std::path::Path::new("/proc/thread-self/schedstat").exists());
    }

    #[test]
    fn a_pinned_thread_runs_where_it_was_pinned() {
        let allowed = allowed_cpus().expect("the affinity reads");
        let last = *allowed.last().expect("a CPU this process may use");
        let cpu = std::thread::spawn(move || {
            pin_current_thread(&[last]).unwrap();
            std::thread::yield_now();
            current_cpu()
        })
        .join()
        .unwrap();
        assert_eq!(cpu, Some(last));
        assert!(pin_current_thread(&[u32::MAX]).is_err());
    }
}
