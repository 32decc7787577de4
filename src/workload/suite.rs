//! The default suite `iopath run` runs when no workload is given: the figures storage reviews
//! quote, in one minute.
//!
//! | test | pattern | block | QD |
//! |---|---|---|---|
//! | SEQ1M Q8 read / write | sequential | 1 MiB | 8 |
//! | RND4K Q32 read / write | random | 4 KiB | 32 |
//! | RND4K Q1 read / write | random | 4 KiB | 1 |
//! | SEQ512 Q64 read | sequential | 512 B | 64 (the small-block IOPS test of Fibre Channel reviews) |

use super::{BlockSizeMix, RunLength, TestPlan, Workload};
use crate::engine::EngineKind;

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
        read_percent: 100,
        random_percent: 0,
        block_sizes: BlockSizeMix::single(4096),
        alignment_bytes: 4096,
        queue_depth: 1,
        workers: 1,
        region_offset_bytes: 0,
        region_size_bytes: None,
        length: RunLength::Time {
            duration_ns: DEFAULT_DURATION_NS,
        },
        ramp_ns: DEFAULT_RAMP_NS,
        rate_bytes_per_second: None,
        rate_iops: None,
        buffered: false,
        sync_writes: false,
        fsync_at_end: false,
        seed: DEFAULT_SEED,
        engine: EngineKind::IoUring,
        register_buffers: true,
        continue_on_error: false,
    }
}

/// The default suite, every test derived from `template` (which carries duration, ramp,
/// engine, seed and I/O mode) with its own pattern, block size and queue depth.
pub fn default_suite(template: &Workload) -> Vec<TestPlan> {
    let test = |name: &str, read: bool, random: bool, block: u64, queue_depth: u32| TestPlan {
        name: name.to_string(),
        workload: Workload {
            read_percent: if read { 100 } else { 0 },
            random_percent: if random { 100 } else { 0 },
            block_sizes: BlockSizeMix::single(block),
            alignment_bytes: block,
            queue_depth,
            ..template.clone()
        },
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
