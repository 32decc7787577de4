//! Flows between jobs (fio's `flow`, `flow_id`): the workers of the jobs that share a flow id
//! keep their I/O counts in the ratio of their weights.
//!
//! Before each I/O a worker asks its flow: when its own count's share of the flow's count is
//! above its weight's share of the flow's weight, it waits (fio's `flow_sleep`, or a short
//! slice) and asks again; otherwise the I/O is counted for it and for the flow. One atomic add
//! per I/O, no lock. A worker that ends leaves the flow (its weight no longer counts), so the
//! others are never held back by a job that has finished; and as the shares of all the
//! workers add up to one, some worker may always go on.
//!
//! ```
//! use iopath::run::flow::FlowGroup;
//! let flow = FlowGroup::new(2 + 1);
//! let (mut heavy, mut light) = (0u64, 0u64);
//! for _ in 0..300 {
//!     if flow.admit(&mut heavy, 2) {}
//!     if flow.admit(&mut light, 1) {}
//! }
//! assert!(heavy.abs_diff(2 * light) <= 2);
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

/// How long a worker ahead of its share waits when the job gives no `flow_sleep`, ns.
pub const DEFAULT_FLOW_WAIT_NS: u64 = 10_000;

/// One flow: the I/Os counted and the weight of the workers still in it.
#[derive(Debug)]
pub struct FlowGroup {
    ios: AtomicU64,
    weight: AtomicU64,
}

impl FlowGroup {
    /// A flow whose workers weigh `total_weight` together.
    pub fn new(total_weight: u64) -> Self {
        FlowGroup {
            ios: AtomicU64::new(0),
            weight: AtomicU64::new(total_weight),
        }
    }

    /// Whether a worker of `weight` that has issued `own` I/Os may issue one more; when it
    /// may, the I/O is counted (in `own` and in the flow).
    pub fn admit(&self, own: &mut u64, weight: u64) -> bool {
        let ios = self.ios.load(Ordering::Relaxed);
        let total_weight = self.weight.load(Ordering::Relaxed).max(1);
        // own / ios > weight / total_weight, without dividing.
        if u128::from(*own) * u128::from(total_weight) > u128::from(weight) * u128::from(ios) {
            return false;
        }
        self.ios.fetch_add(1, Ordering::Relaxed);
        *own += 1;
        true
    }

    /// A worker of `weight` has ended: the others' shares no longer count it.
    pub fn leave(&self, weight: u64) {
        let _ = self
            .weight
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |total| {
                Some(total.saturating_sub(weight))
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_hold_across_threads_and_a_finished_worker_holds_nobody_back() {
        let flow = FlowGroup::new(3 + 1);
        let counts: Vec<u64> = std::thread::scope(|scope| {
            let workers: Vec<_> = [3u64, 1]
                .into_iter()
                .map(|weight| {
                    let flow = &flow;
                    scope.spawn(move || {
                        let mut own = 0;
                        let mut attempts = 0u64;
                        while own < 3000 * weight && attempts < 100_000_000 {
                            attempts += 1;
                            if !flow.admit(&mut own, weight) {
                                std::thread::yield_now();
                            }
                        }
                        flow.leave(weight);
                        own
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        assert_eq!(counts, [9000, 3000]);
        // Alone in the flow now: a new worker of any weight is never held back.
        let mut own = 0;
        assert!((0..100).all(|_| flow.admit(&mut own, 1)));
    }
}
