//! fio's buffer options and the harmless options accepted with a note, through whole job files.

use super::expand::Environment;
use super::load_with;
use crate::fill::Content;
use crate::input::job_file::{JobFileError, JobFileRequest, LoadedJob};
use crate::input::options::WorkloadOptions;
use crate::result::BufferPattern;
use crate::result::{DedupeMode, WriteData};

fn load_request(text: &str, request: &JobFileRequest) -> Result<LoadedJob, JobFileError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.fio");
    std::fs::write(&path, text).unwrap();
    load_with(&path, request, &Environment::fixed(&[("UNUSED", "")]))
}

fn load(text: &str) -> Result<LoadedJob, JobFileError> {
    load_request(text, &JobFileRequest::default())
}

/// The write data of the first job of `options` on a write job.
fn data_of(options: &str) -> WriteData {
    let text = format!("[w]\nrw=write\nsize=1m\n{options}\n");
    let loaded = load(&text).unwrap_or_else(|e| panic!("{options}: {e}"));
    loaded.plan.tests[0].jobs[0].workload.write_data.clone()
}

#[test]
fn buffer_options_map_to_write_data() {
    let data = data_of(
        "buffer_compress_percentage=60\nbuffer_compress_chunk=4k\ndedupe_percentage=25\ndedupe_mode=working_set\ndedupe_working_set_percentage=10",
    );
    assert_eq!(
        data,
        WriteData {
            compress_percent: Some(60),
            compress_chunk_bytes: Some(4096),
            dedupe_percent: Some(25),
            dedupe_mode: DedupeMode::WorkingSet,
            dedupe_working_set_percent: Some(10),
            refill: Some(true),
            ..WriteData::default()
        }
    );
    let plan = data.fill_plan(8192, 1 << 20);
    assert!(plan.refill && !plan.scramble);
    assert_eq!(
        data_of("zero_buffers").fill_plan(4096, 0).content,
        Content::Zeros
    );
    assert_eq!(
        data_of("buffer_pattern=0xdeadface\"ab\"").pattern,
        Some(BufferPattern::parse("0xdeadface\"ab\"").unwrap())
    );
    assert_eq!(data_of("scramble_buffers=0").scramble, Some(false));
    assert_eq!(data_of("refill_buffers").refill, Some(true));
    assert_eq!(data_of("dedupe_global=0"), WriteData::default());
}

#[test]
fn order_counts_as_in_fio() {
    // buffer_pattern turns scrambling and zeros off; set again later, they count.
    let plan = data_of("scramble_buffers=1\nzero_buffers\nbuffer_pattern=0x01").fill_plan(4096, 0);
    assert_eq!(plan.content, Content::Pattern(vec![1]));
    assert!(!plan.scramble);
    let data = data_of("buffer_pattern=0x01\nscramble_buffers=1");
    assert!(data.fill_plan(4096, 0).scramble);
    // dedupe_percentage turns refill on; a later refill_buffers=0 turns it off.
    assert!(data_of("refill_buffers=0\ndedupe_percentage=10").refills());
    assert!(!data_of("dedupe_percentage=10\nrefill_buffers=0").refills());
    // Compression refills unless refill_buffers is given, before or after.
    assert!(data_of("buffer_compress_percentage=50").refills());
    assert!(!data_of("refill_buffers=0\nbuffer_compress_percentage=50").refills());
}

#[test]
fn bad_or_contradictory_buffer_options_are_refused_at_their_line() {
    for (options, line, expected) in [
        ("buffer_compress_percentage=101", 4, "percentage"),
        ("buffer_pattern=%o", 4, "verify_pattern"),
        ("buffer_pattern=\"abc", 4, "no closing"),
        ("dedupe_mode=sometimes", 4, "repeat or working_set"),
        (
            "buffer_compress_percentage=100\ndedupe_percentage=5",
            5,
            "incompressible",
        ),
        (
            "dedupe_percentage=90\ndedupe_mode=working_set\ndedupe_working_set_percentage=20",
            6,
            "more than 100%",
        ),
        ("dedupe_global=1", 4, "shared by all jobs"),
    ] {
        let error = load(&format!("[w]\nrw=write\nsize=1m\n{options}\n")).unwrap_err();
        assert_eq!(error.line, Some(line), "{options}: {error}");
        assert!(error.message.contains(expected), "{options}: {error}");
    }
}

#[test]
fn buffer_options_of_a_reading_job_are_noted_and_dropped() {
    let loaded = load("[r]\nrw=randread\nsize=1m\nbuffer_compress_percentage=50\n").unwrap();
    assert!(
        loaded.plan.tests[0].jobs[0]
            .workload
            .write_data
            .is_default()
    );
    assert!(
        loaded
            .notes
            .iter()
            .any(|note| note.contains("job.fio:4") && note.contains("the job only reads")),
        "{:?}",
        loaded.notes
    );
    let loaded = load("[w]\nrw=write\nsize=1m\nbuffer_compress_percentage=0\n").unwrap();
    assert!(
        loaded
            .notes
            .iter()
            .any(|note| note.contains("identical blocks")),
        "{:?}",
        loaded.notes
    );
}

#[test]
fn command_line_data_flags_apply_on_top_of_a_job() {
    let request = JobFileRequest {
        overrides: WorkloadOptions {
            compress_pct: Some(30),
            ..WorkloadOptions::default()
        },
        ..JobFileRequest::default()
    };
    let loaded = load_request("[w]\nrw=write\nsize=1m\ndedupe_percentage=20\n", &request).unwrap();
    let data = &loaded.plan.tests[0].jobs[0].workload.write_data;
    assert_eq!(
        (data.compress_percent, data.dedupe_percent),
        (Some(30), Some(20))
    );
}

#[test]
fn harmless_options_are_accepted_with_one_note_each() {
    let options = [
        (
            "verify_async=2",
            "verify_async: iopath checks each block in the worker that read it",
        ),
        (
            "disk_util=1",
            "disk_util: iopath prints no disk utilisation",
        ),
        (
            "thread",
            "thread: iopath always runs its workers as threads, as fio does with `thread`",
        ),
        (
            "threads=1",
            "threads: iopath always runs its workers as threads, as fio does with `thread`",
        ),
        (
            "iodepth_batch=8",
            "iodepth_batch: iopath submits each request as it is queued",
        ),
        (
            "iodepth_batch_submit=8",
            "iodepth_batch_submit: iopath submits each request",
        ),
        (
            "iodepth_batch_complete=4",
            "iodepth_batch_complete: iopath submits",
        ),
        (
            "iodepth_batch_complete_min=1",
            "iodepth_batch_complete_min: iopath",
        ),
        (
            "iodepth_batch_complete_max=16",
            "iodepth_batch_complete_max: iopath",
        ),
        (
            "iodepth_low=4",
            "iodepth_low: iopath submits each request as it is queued",
        ),
        ("gtod_reduce=1", "gtod_reduce: iopath timestamps every I/O"),
        ("clocksource=cpu", "clocksource: iopath reads the CPU clock"),
    ];
    let mut text = String::from("[global]\nrw=randread\nsize=1m\niodepth=16\n");
    for (option, _) in options {
        text.push_str(option);
        text.push('\n');
    }
    // Two jobs, so every note would be made twice if it were not kept once per file.
    text.push_str("[a]\n[b]\n");
    let loaded = load(&text).unwrap();
    assert_eq!(loaded.plan.tests[0].jobs.len(), 2);
    for (option, expected) in options {
        let matching: Vec<&String> = loaded
            .notes
            .iter()
            .filter(|note| note.contains(expected))
            .collect();
        assert_eq!(matching.len(), 1, "{option}: {:?}", loaded.notes);
    }
    let error = load("[a]\nrw=read\nsize=1m\nthreads=4\n").unwrap_err();
    assert!(error.message.contains("numjobs=4"), "{error}");
}
