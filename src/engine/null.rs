//! The null engine: completes every request without I/O, optionally after an injected delay.
//!
//! Without a delay it measures iopath's own cost per I/O (planning, timing, recording). With a
//! delay it is a latency source of known shape, which is how the histogram and the runner are
//! tested end to end.

use super::buffer::BufferPool;
use super::{Completion, Engine, EngineError, IoRequest};
use crate::host::clock::{Clock, Ticks};
use crate::result::Capabilities;

/// A latency to inject into every null I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InjectedDelay {
    /// Every I/O takes this many nanoseconds.
    Fixed {
        /// Delay in ns.
        delay_ns: u64,
    },
    /// Each I/O takes `first_ns`, or `second_ns` with probability `second_per_million` / 10^6.
    TwoValued {
        /// The common delay, ns.
        first_ns: u64,
        /// The rare delay, ns.
        second_ns: u64,
        /// How often the rare delay is drawn, per million I/Os.
        second_per_million: u32,
    },
}

/// A pending null I/O: when it was submitted and after how many ticks it is due.
#[derive(Clone, Copy, Debug, Default)]
struct Pending {
    slot: u32,
    length: u32,
    submitted: Ticks,
    delay_ticks: u64,
}

/// See the module documentation.
pub struct NullEngine {
    buffers: BufferPool,
    capabilities: Capabilities,
    delay: Option<InjectedDelay>,
    clock: Clock,
    rng: fastrand::Rng,
    pending: Vec<Pending>,
    first_ticks: u64,
    second_ticks: u64,
    sleep_threshold_ticks: u64,
    sleep_margin_ticks: u64,
}

impl NullEngine {
    /// A null engine with `queue_depth` slots of `buffer_size` bytes.
    pub fn new(
        queue_depth: u32,
        buffer_size: usize,
        delay: Option<InjectedDelay>,
        clock: Clock,
    ) -> Self {
        let (first_ticks, second_ticks) = match delay {
            None => (0, 0),
            Some(InjectedDelay::Fixed { delay_ns }) => {
                let ticks = clock.ticks_for_nanos(delay_ns);
                (ticks, ticks)
            }
            Some(InjectedDelay::TwoValued {
                first_ns,
                second_ns,
                ..
            }) => (
                clock.ticks_for_nanos(first_ns),
                clock.ticks_for_nanos(second_ns),
            ),
        };
        let sleep_threshold_ticks = clock.ticks_for_nanos(2_000_000);
        let sleep_margin_ticks = clock.ticks_for_nanos(500_000);
        NullEngine {
            buffers: BufferPool::new(queue_depth as usize, buffer_size),
            capabilities: Capabilities {
                max_queue_depth: queue_depth,
                registered_buffers: false,
                registered_files: false,
                performs_io: false,
                separates_submission: true,
            },
            delay,
            clock,
            rng: fastrand::Rng::with_seed(0x6e75_6c6c),
            pending: Vec::with_capacity(queue_depth as usize),
            first_ticks,
            second_ticks,
            sleep_threshold_ticks,
            sleep_margin_ticks,
        }
    }

    fn draw_delay_ticks(&mut self) -> u64 {
        match self.delay {
            None => 0,
            Some(InjectedDelay::Fixed { .. }) => self.first_ticks,
            Some(InjectedDelay::TwoValued {
                second_per_million, ..
            }) => {
                if self.rng.u32(0..1_000_000) < second_per_million {
                    self.second_ticks
                } else {
                    self.first_ticks
                }
            }
        }
    }
}

impl Engine for NullEngine {
    fn name(&self) -> &'static str {
        "null"
    }

    fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    fn buffer_mut(&mut self, slot: usize) -> &mut [u8] {
        self.buffers.slot_mut(slot)
    }

    #[inline]
    fn submit(&mut self, request: IoRequest) -> Result<(), EngineError> {
        let delay_ticks = self.draw_delay_ticks();
        let submitted = if self.delay.is_some() {
            self.clock.now()
        } else {
            0
        };
        self.pending.push(Pending {
            slot: request.slot,
            length: request.length,
            submitted,
            delay_ticks,
        });
        Ok(())
    }

    fn flush(&mut self) -> Result<(), EngineError> {
        Ok(())
    }

    #[inline]
    fn reap(
        &mut self,
        min_completions: usize,
        completions: &mut [Completion],
    ) -> Result<usize, EngineError> {
        let wanted = min_completions.min(self.pending.len());
        let mut reaped = 0;
        loop {
            let now = if self.delay.is_some() {
                self.clock.now()
            } else {
                0
            };
            let mut index = 0;
            let mut earliest_wait = u64::MAX;
            while index < self.pending.len() && reaped < completions.len() {
                let pending = self.pending[index];
                let waited = now.wrapping_sub(pending.submitted);
                if waited >= pending.delay_ticks || self.delay.is_none() {
                    completions[reaped] = Completion {
                        slot: pending.slot,
                        result: pending.length as i64,
                    };
                    reaped += 1;
                    self.pending.swap_remove(index);
                } else {
                    earliest_wait = earliest_wait.min(pending.delay_ticks - waited);
                    index += 1;
                }
            }
            if reaped >= wanted {
                return Ok(reaped);
            }
            // Sleep through most of a long wait and spin only the last stretch: a sleeping
            // thread is woken promptly on a busy machine, where a spinning one is preempted.
            if earliest_wait != u64::MAX && earliest_wait > self.sleep_threshold_ticks {
                let sleep_ticks = earliest_wait - self.sleep_margin_ticks;
                let sleep_ns = self.clock.nanos_between(0, sleep_ticks);
                std::thread::sleep(std::time::Duration::from_nanos(sleep_ns));
                continue;
            }
            std::hint::spin_loop();
        }
    }

    fn sync_data(&mut self) -> Result<(), EngineError> {
        Ok(())
    }
}
