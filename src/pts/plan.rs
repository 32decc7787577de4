//! What each PTS test runs: its elements (block size × read share, random or sequential, at a
//! queue depth and worker count), one round being every element once; its tracking variables;
//! and the workload-independent preconditioning.
//!
//! ```
//! use iopath::pts::plan::{elements, SPEC_BLOCK_SIZES};
//! use iopath::result::pts::{PtsEdition, PtsTestKind};
//! let iops = elements(PtsTestKind::Iops, PtsEdition::Enterprise, &SPEC_BLOCK_SIZES, 32, 4);
//! assert_eq!(iops.len(), 7 * 8);
//! ```

pub use crate::result::pts::block_size_name;
use crate::result::pts::{PtsCell, PtsEdition, PtsTestKind, element_name};
use crate::result::{AccessLine, AccessSpec, RunLength, TestResult, Workload};
use crate::workload::TestPlan;
use crate::workload::suite::base_workload;

/// The block sizes of the IOPS test, bytes, in the specification's order (largest first).
pub const SPEC_BLOCK_SIZES: [u64; 8] = [
    1 << 20,
    128 << 10,
    64 << 10,
    32 << 10,
    16 << 10,
    8 << 10,
    4 << 10,
    512,
];
/// The block sizes of the latency test, bytes.
pub const LATENCY_BLOCK_SIZES: [u64; 3] = [8 << 10, 4 << 10, 512];
/// The read shares of the IOPS test, percent.
pub const IOPS_READ_PERCENTS: [u8; 7] = [100, 95, 65, 50, 35, 5, 0];
/// The read shares of the latency test, percent.
pub const LATENCY_READ_PERCENTS: [u8; 3] = [100, 65, 0];
/// The block sizes of the throughput test, bytes (the Client edition's: 1024 KiB only).
pub const THROUGHPUT_BLOCK_SIZES: [u64; 2] = [128 << 10, 1 << 20];
/// The block size the IOPS and latency tests are tracked on, and saturation writes.
pub const TRACKED_BLOCK_SIZE: u64 = 4096;
/// Transfer size of the workload-independent preconditioning.
pub const PRECONDITIONING_BLOCK_SIZE: u64 = 128 << 10;
/// Preconditioning writes this many times the active range.
pub const PRECONDITIONING_PASSES: u64 = 2;
/// Write saturation ends after this many times the active range written.
pub const SATURATION_PASSES: u64 = 4;
/// Share of the active range the Client edition's rounds use, percent (its test active range).
pub const CLIENT_ACTIVE_PERCENT: u64 = 75;
/// Queue depth of the sequential writes that precondition.
pub const PRECONDITIONING_QUEUE_DEPTH: u32 = 32;

/// One element of a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PtsElement {
    /// Transfer size, bytes.
    pub block_size_bytes: u64,
    /// Share of reads, percent.
    pub read_percent: u8,
    /// Random offsets (else sequential).
    pub random: bool,
    /// I/Os in flight per worker.
    pub queue_depth: u32,
    /// Worker threads.
    pub workers: u32,
}

impl PtsElement {
    /// Its name in tables and test names: `4KiB 65/35 random`.
    pub fn name(&self) -> String {
        element_name(self.block_size_bytes, self.read_percent, self.random)
    }
}

/// The elements of one round of `kind`, in the specification's order. `block_sizes` are the
/// IOPS and latency block sizes in use; `queue_depth` and `workers` those of every test but
/// latency (QD 1, one worker). Sequential elements run one worker at `queue_depth`, so that
/// the device sees one sequential stream.
pub fn elements(
    kind: PtsTestKind,
    edition: PtsEdition,
    block_sizes: &[u64],
    queue_depth: u32,
    workers: u32,
) -> Vec<PtsElement> {
    let random = |block_size_bytes, read_percent| PtsElement {
        block_size_bytes,
        read_percent,
        random: true,
        queue_depth,
        workers,
    };
    match kind {
        PtsTestKind::Iops => IOPS_READ_PERCENTS
            .iter()
            .flat_map(|&read| block_sizes.iter().map(move |&size| random(size, read)))
            .collect(),
        PtsTestKind::Throughput => {
            let sizes: &[u64] = match edition {
                PtsEdition::Enterprise => &THROUGHPUT_BLOCK_SIZES,
                PtsEdition::Client => &THROUGHPUT_BLOCK_SIZES[1..],
            };
            sizes
                .iter()
                .flat_map(|&size| {
                    [0u8, 100].map(|read_percent| PtsElement {
                        block_size_bytes: size,
                        read_percent,
                        random: false,
                        queue_depth,
                        workers: 1,
                    })
                })
                .collect()
        }
        PtsTestKind::Latency => LATENCY_READ_PERCENTS
            .iter()
            .flat_map(|&read| {
                LATENCY_BLOCK_SIZES
                    .iter()
                    .filter(|size| block_sizes.contains(size))
                    .map(move |&size| PtsElement {
                        block_size_bytes: size,
                        read_percent: read,
                        random: true,
                        queue_depth: 1,
                        workers: 1,
                    })
            })
            .collect(),
        PtsTestKind::Saturation => vec![random(TRACKED_BLOCK_SIZE, 0)],
    }
}

/// The names of the tracking variables of `kind` over `elements`.
pub fn tracking_names(kind: PtsTestKind, elements: &[PtsElement]) -> Vec<String> {
    match kind {
        PtsTestKind::Iops | PtsTestKind::Saturation => vec!["4KiB random write IOPS".into()],
        PtsTestKind::Latency => vec!["4KiB random write mean latency (µs)".into()],
        PtsTestKind::Throughput => elements
            .iter()
            .map(|element| {
                format!(
                    "{} sequential {} MB/s",
                    block_size_name(element.block_size_bytes),
                    if element.read_percent == 100 {
                        "read"
                    } else {
                        "write"
                    }
                )
            })
            .collect(),
    }
}

/// The element behind each tracking variable in a round whose cells are `cells` (in the
/// order of [`elements`]): the 4 KiB random write for IOPS, latency and saturation, every
/// element for throughput. `None` where the round lacks it.
pub fn tracked_cells(kind: PtsTestKind, cells: &[PtsCell]) -> Vec<Option<&PtsCell>> {
    match kind {
        PtsTestKind::Throughput => cells.iter().map(Some).collect(),
        _ => vec![cells.iter().find(|cell| {
            cell.block_size_bytes == TRACKED_BLOCK_SIZE && cell.read_percent == 0 && cell.random
        })],
    }
}

/// Each tracking variable's value in a round whose cells are `cells` (in the order of
/// [`elements`]).
pub fn tracked_values(kind: PtsTestKind, cells: &[PtsCell]) -> Vec<f64> {
    let value = |cell: &PtsCell| match kind {
        PtsTestKind::Iops | PtsTestKind::Saturation => cell.iops,
        PtsTestKind::Latency => cell.mean_latency_ns / 1000.0,
        PtsTestKind::Throughput if cell.read_percent == 100 => cell.read_bytes_per_second / 1e6,
        PtsTestKind::Throughput => cell.write_bytes_per_second / 1e6,
    };
    tracked_cells(kind, cells)
        .into_iter()
        .map(|cell| cell.map_or(0.0, value))
        .collect()
}

/// The figures of one element from the test that ran it, with the step down of its own
/// per-interval series where it has one.
pub fn cell_of(element: &PtsElement, test: &TestResult) -> PtsCell {
    let total = &test.total;
    PtsCell {
        block_size_bytes: element.block_size_bytes,
        read_percent: element.read_percent,
        random: element.random,
        iops: total.iops,
        read_bytes_per_second: test.read.bytes_per_second,
        write_bytes_per_second: test.write.bytes_per_second,
        mean_latency_ns: total.latency.mean_ns,
        p99_latency_ns: total.latency.percentile("99"),
        p9999_latency_ns: total.latency.percentile("99.99"),
        max_latency_ns: total.latency.max_ns,
        bytes: total.bytes,
        rate_step: crate::analysis::bucket_or_cliff::rate_step_of(test),
    }
}

/// The tests of one round: each element measured for `element_ns` over the first
/// `range_bytes` of target 0, with no ramp.
pub fn round_tests(elements: &[PtsElement], range_bytes: u64, element_ns: u64) -> Vec<TestPlan> {
    elements
        .iter()
        .map(|element| {
            let workload = Workload {
                access: AccessSpec {
                    lines: vec![AccessLine::new(
                        element.block_size_bytes,
                        100,
                        element.read_percent,
                        if element.random { 100 } else { 0 },
                    )],
                },
                queue_depth: element.queue_depth,
                workers: element.workers,
                region_size_bytes: Some(range_bytes),
                length: RunLength::Time {
                    duration_ns: element_ns,
                },
                ramp_ns: 0,
                ..base_workload()
            };
            TestPlan::single(element.name(), workload, vec![0])
        })
        .collect()
}

/// The workload-independent preconditioning: [`PRECONDITIONING_PASSES`] × `range_bytes` of
/// 128 KiB sequential writes over the first `range_bytes` of target 0.
pub fn preconditioning_test(range_bytes: u64) -> TestPlan {
    let workload = Workload {
        access: AccessSpec {
            lines: vec![AccessLine::new(PRECONDITIONING_BLOCK_SIZE, 100, 0, 0)],
        },
        queue_depth: PRECONDITIONING_QUEUE_DEPTH,
        region_size_bytes: Some(range_bytes),
        length: RunLength::Bytes {
            bytes: range_bytes * PRECONDITIONING_PASSES,
            time_limit_ns: None,
        },
        ramp_ns: 0,
        ..base_workload()
    };
    TestPlan::single("preconditioning 128KiB sequential write", workload, vec![0])
}

/// Bytes a round of `kind` runs over, from the active range: the Client edition's rounds use
/// the first [`CLIENT_ACTIVE_PERCENT`] % (rounded down to 1 MiB, at least 1 MiB).
pub fn round_range(edition: PtsEdition, active_range_bytes: u64) -> u64 {
    match edition {
        PtsEdition::Enterprise => active_range_bytes,
        PtsEdition::Client => {
            let part = active_range_bytes / 100 * CLIENT_ACTIVE_PERCENT
                + active_range_bytes % 100 * CLIENT_ACTIVE_PERCENT / 100;
            (part / (1 << 20) * (1 << 20)).max(1 << 20)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matrices_have_the_specifications_shape() {
        let iops = elements(
            PtsTestKind::Iops,
            PtsEdition::Enterprise,
            &SPEC_BLOCK_SIZES,
            32,
            4,
        );
        assert_eq!(iops.len(), 56);
        assert_eq!(iops[0].name(), "1024KiB 100/0 random");
        assert_eq!(iops[55].name(), "0.5KiB 0/100 random");
        let latency = elements(
            PtsTestKind::Latency,
            PtsEdition::Enterprise,
            &SPEC_BLOCK_SIZES,
            32,
            4,
        );
        assert_eq!(latency.len(), 9);
        assert!(latency.iter().all(|e| e.queue_depth == 1 && e.workers == 1));
        let throughput = elements(
            PtsTestKind::Throughput,
            PtsEdition::Enterprise,
            &SPEC_BLOCK_SIZES,
            32,
            4,
        );
        assert_eq!(throughput.len(), 4);
        assert!(
            throughput
                .iter()
                .all(|e| !e.random && e.workers == 1 && e.queue_depth == 32)
        );
        let client = elements(
            PtsTestKind::Throughput,
            PtsEdition::Client,
            &SPEC_BLOCK_SIZES,
            16,
            2,
        );
        assert_eq!(client.len(), 2);
        assert_eq!(
            tracking_names(PtsTestKind::Throughput, &client)[0],
            "1024KiB sequential write MB/s"
        );
    }

    #[test]
    fn the_client_range_is_three_quarters() {
        assert_eq!(round_range(PtsEdition::Client, 100 << 20), 75 << 20);
        // 75 % of 16 MiB is 12 MiB exactly, not the whole MiB below it.
        assert_eq!(round_range(PtsEdition::Client, 16 << 20), 12 << 20);
        assert_eq!(round_range(PtsEdition::Client, 1 << 40), 3 << 38);
        assert_eq!(round_range(PtsEdition::Enterprise, 100 << 20), 100 << 20);
    }
}
