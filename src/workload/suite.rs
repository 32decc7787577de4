//! The default suite `iopath run` runs when no workload is given: the figures storage reviews
//! quote, in under a minute, then each verdict confirmed by experiment within as long again
//! ([`crate::run::confirm::ConfirmMode::WithinTestTime`]).
//!
//! | test | pattern | block | QD |
//! |---|---|---|---|
//! | SEQ1M Q8 read / write | sequential | 1 MiB | 8 |
//! | RND4K Q32 read / write | random | 4 KiB | 32 |
//! | RND4K Q1 read / write | random | 4 KiB | 1 |
//! | SEQ512 Q64 read | sequential | 512 B | 64 (the small-block IOPS test of Fibre Channel reviews) |

use super::TestPlan;
use crate::result::{AccessLine, AccessSpec, EngineKind, OffsetDistribution, RunLength, Workload};

/// Default measured time of a test, ns.
pub const DEFAULT_DURATION_NS: u64 = 5_000_000_000;
/// Default ramp before measuring, ns.
pub const DEFAULT_RAMP_NS: u64 = 1_000_000_000;
/// Default seed.
pub const DEFAULT_SEED: u64 = 0x1dea_5eed;

/// The workload every flag starts from: sequential 4 KiB reads at QD 1, one worker, 5 s after a
/// 1 s ramp, O_DIRECT, io_uring.
pub fn base_workload() -> Workload {
    Workload {
        access: AccessSpec {
            lines: vec![AccessLine::new(4096, 100, 100, 0)],
        },
        distribution: OffsetDistribution::Uniform,
        queue_depth: 1,
        workers: 1,
        region_offset_bytes: 0,
        region_size_bytes: None,
        length: RunLength::Time {
            duration_ns: DEFAULT_DURATION_NS,
        },
        io_limit: None,
        ramp_ns: DEFAULT_RAMP_NS,
        start_delay_ns: 0,
        rate_bytes_per_second: None,
        rate_iops: None,
        think_time_ns: 0,
        think_time_blocks: 1,
        buffered: false,
        sync_writes: false,
        fsync_every_writes: None,
        fsync_at_end: false,
        seed: DEFAULT_SEED,
        engine: EngineKind::IoUring,
        register_buffers: true,
        continue_on_error: false,
        connections: 1,
        offsets: Default::default(),
        controls: Default::default(),
        worker_files: Default::default(),
        write_data: Default::default(),
        error_policy: Default::default(),
        handling: Default::default(),
        file_setup: Default::default(),
        verify: None,
    }
}

/// The default suite, every test derived from `template` (which carries duration, ramp,
/// engine, seed and I/O mode) with its own pattern, block size and queue depth, against
/// `targets`.
pub fn default_suite(template: &Workload, targets: &[usize]) -> Vec<TestPlan> {
    let test = |name: &str, read: bool, random: bool, block: u64, queue_depth: u32| {
        let read_percent = if read { 100 } else { 0 };
        let random_percent = if random { 100 } else { 0 };
        let workload = Workload {
            access: AccessSpec {
                lines: vec![AccessLine::new(block, 100, read_percent, random_percent)],
            },
            queue_depth,
            ..template.clone()
        };
        TestPlan::single(name, workload, targets.to_vec())
    };
    vec![
        test("SEQ1M Q8 read", true, false, 1 << 20, 8),
        test("SEQ1M Q8 write", false, false, 1 << 20, 8),
        test("RND4K Q32 read", true, true, 4096, 32),
        test("RND4K Q32 write", false, true, 4096, 32),
        test("RND4K Q1 read", true, true, 4096, 1),
        test("RND4K Q1 write", false, true, 4096, 1),
        test("SEQ512 Q64 read", true, false, 512, 64),
    ]
}
