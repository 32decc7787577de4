//! What the data a test wrote means for its figures: data that compresses or repeats lets a
//! device that compresses or deduplicates store fewer bytes than were counted, so such a test
//! gets a trust note, and only then — or when it read data iopath did not choose — is
//! compression a reason for a rate above a hop's capacity.

use crate::fill::Content;
use crate::result::TestResult;
use crate::result::Workload;

/// Whether `workload` writes data that a device could store in fewer bytes: compressible
/// chunks, duplicates, zeros, a pattern, or random buffers written again unchanged (neither
/// refilled nor scrambled).
pub fn writes_reducible_data(workload: &Workload) -> bool {
    if !workload.writes() {
        return false;
    }
    let plan = workload.write_data.fill_plan(4096, 0);
    !(plan.content == Content::Random && (plan.refill || plan.scramble))
}

/// A note for each job of `test` that wrote reducible data, saying what it wrote.
pub fn reducible_data_notes(test: &TestResult) -> Vec<String> {
    test.jobs
        .iter()
        .filter(|job| job.write.io_count > 0 && writes_reducible_data(&job.workload))
        .map(|job| {
            let what = job
                .workload
                .write_data
                .describe()
                .unwrap_or_else(|| "random data".into());
            let prefix = if test.jobs.len() > 1 {
                format!("job {}: ", job.name)
            } else {
                String::new()
            };
            format!(
                "{prefix}the writes carried data that compresses or repeats ({what}): a device or array that compresses or deduplicates stores fewer bytes than were counted"
            )
        })
        .collect()
}

/// Why a hop could carry more than its capacity, as far as the data goes: compression of the
/// data written when it was reducible, compression of what was read (iopath did not choose
/// those bytes), or nothing when the test only wrote data that neither compresses nor repeats.
pub fn compression_reason(test: &TestResult) -> Option<&'static str> {
    let reducible_writes = test
        .jobs
        .iter()
        .any(|job| job.write.io_count > 0 && writes_reducible_data(&job.workload));
    if reducible_writes {
        Some("compression or deduplication of the data written")
    } else if test.read.io_count > 0 {
        Some("compression")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::WriteData;
    use crate::result::{AccessLine, AccessSpec};
    use crate::workload::suite::base_workload;

    fn writer(data: WriteData) -> Workload {
        Workload {
            access: AccessSpec {
                lines: vec![AccessLine::new(4096, 1, 0, 100)],
            },
            write_data: data,
            ..base_workload()
        }
    }

    #[test]
    fn only_data_that_compresses_or_repeats_is_reducible() {
        assert!(!writes_reducible_data(&writer(WriteData::default())));
        assert!(!writes_reducible_data(&writer(WriteData {
            refill: Some(true),
            ..WriteData::default()
        })));
        for reducible in [
            WriteData {
                compress_percent: Some(30),
                ..WriteData::default()
            },
            WriteData {
                dedupe_percent: Some(10),
                ..WriteData::default()
            },
            WriteData {
                zero: true,
                ..WriteData::default()
            },
            WriteData {
                scramble: Some(false),
                ..WriteData::default()
            },
        ] {
            assert!(
                writes_reducible_data(&writer(reducible.clone())),
                "{reducible:?}"
            );
        }
        let reader = Workload {
            write_data: WriteData {
                zero: true,
                ..WriteData::default()
            },
            ..base_workload()
        };
        assert!(!writes_reducible_data(&reader), "reads only");
    }
}
