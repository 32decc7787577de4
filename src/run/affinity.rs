//! Pins the calling thread to CPUs (fio's `cpus_allowed`, `numa_cpu_nodes`): each worker
//! thread sets its own affinity before the test starts.

/// Lets the calling thread run only on `cpus` (nothing to do when empty).
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
    fn a_pinned_thread_runs_where_it_was_pinned() {
        let allowed = crate::workload::fio::host_cpus::allowed_cpus().expect("the affinity reads");
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
