//! The one clock every latency is read from: raw CPU time-stamp counter ticks where the CPU has
//! an invariant TSC (about 25 ns a read here), the monotonic clock elsewhere, converted to
//! nanoseconds only when a latency is recorded.

/// A cheap, monotonic clock shared by the runner and the engines that need time.
#[derive(Clone, Debug)]
pub struct Clock {
    inner: quanta::Clock,
}

/// A raw reading of the [`Clock`]; only differences of two readings mean anything.
pub type Ticks = u64;

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock {
    /// Calibrates the clock (a few milliseconds, once per run).
    pub fn new() -> Self {
        Clock {
            inner: quanta::Clock::new(),
        }
    }

    /// The current reading.
    #[inline]
    pub fn now(&self) -> Ticks {
        self.inner.raw()
    }

    /// Nanoseconds from `start` to `end` (0 when `end` is earlier).
    #[inline]
    pub fn nanos_between(&self, start: Ticks, end: Ticks) -> u64 {
        if end <= start {
            0
        } else {
            self.inner.delta_as_nanos(start, end)
        }
    }

    /// Ticks that make up `nanos` nanoseconds, measured against this clock's calibration.
    pub fn ticks_for_nanos(&self, nanos: u64) -> u64 {
        let probe_ticks: u64 = 1 << 32;
        let probe_nanos = self.inner.delta_as_nanos(0, probe_ticks).max(1);
        ((nanos as u128 * probe_ticks as u128) / probe_nanos as u128) as u64
    }
}
