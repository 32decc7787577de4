//! Whole job files through [`super::load_with`] for the options of [`super::extended`]: shares
//! of the file, offset modifiers, the random map, CPU and NUMA placement, arrivals, start
//! delays, exits, flows, latency targets and distributions.

use super::expand::Environment;
use super::load_with;
use crate::input::job_file::{JobFileError, JobFileRequest, LoadedJob};
use crate::input::options::WorkloadOptions;
use crate::result::OffsetRules;
use crate::result::{EndOthers, Flow, LatencyTarget};
use crate::result::{OffsetDistribution, RunLength, Workload};
use std::path::PathBuf;

const MIB: u64 = 1 << 20;

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Self {
        Dir(tempfile::tempdir().unwrap())
    }

    /// A file of `bytes` in the directory.
    fn file(&self, name: &str, bytes: u64) -> PathBuf {
        let path = self.0.path().join(name);
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(bytes).unwrap();
        path
    }

    fn load_with(&self, text: &str, request: &JobFileRequest) -> Result<LoadedJob, JobFileError> {
        let path = self.0.path().join("job.fio");
        std::fs::write(&path, text).unwrap();
        load_with(&path, request, &Environment::fixed(&[]))
    }

    fn load(&self, text: &str) -> Result<LoadedJob, JobFileError> {
        self.load_with(text, &JobFileRequest::default())
    }
}

fn workloads(loaded: &LoadedJob) -> Vec<&Workload> {
    loaded
        .plan
        .tests
        .iter()
        .flat_map(|test| &test.jobs)
        .map(|job| &job.workload)
        .collect()
}

fn bytes_of(workload: &Workload) -> u64 {
    match workload.length {
        RunLength::Bytes { bytes, .. } => bytes,
        RunLength::Time { .. } => panic!("a timed run"),
    }
}

#[test]
fn shares_of_the_file_are_resolved_against_its_size() {
    let dir = Dir::new();
    let file = dir.file("data", 10 * MIB);
    let name = file.display();
    let loaded = dir
        .load(&format!(
            "[a]\nfilename={name}\nsize=50%\noffset=10%\n[b]\nfilename={name}\nio_size=25%\noffset=1m\n[c]\nfilename={name}\nsize=20%\nnumjobs=3\noffset_increment=30%\n"
        ))
        .unwrap();
    let jobs = workloads(&loaded);
    // 10 % of 10 MiB rounded up to 4k; 50 % of the file.
    assert_eq!(jobs[0].region_offset_bytes, 1_048_576);
    assert_eq!(jobs[0].region_size_bytes, Some(5 * MIB));
    assert_eq!(bytes_of(jobs[0]), 5 * MIB);
    // io_size=25% of the region (the rest of the file past 1 MiB).
    assert_eq!(jobs[1].region_size_bytes, None);
    assert_eq!(bytes_of(jobs[1]), 9 * MIB / 100 * 25);
    // Clone c's region 30 % (rounded up to 4k) further on.
    assert_eq!(jobs[2].offsets.clone_increment_bytes, 3_145_728);
    assert_eq!(jobs[2].region_size_bytes, Some(2_097_152));
    assert_eq!(bytes_of(jobs[2]), 3 * 2_097_152);
    // An offset near the end leaves less than the size: the region is cut, with a note.
    let loaded = dir
        .load(&format!("[a]\nfilename={name}\nsize=8m\noffset=50%\n"))
        .unwrap();
    assert_eq!(workloads(&loaded)[0].region_size_bytes, Some(5 * MIB));
    assert!(
        loaded
            .notes
            .iter()
            .any(|n| n.contains("job.fio:4:") && n.contains("cut"))
    );
    // --size wins over size=N%.
    let request = JobFileRequest {
        overrides: WorkloadOptions {
            size: Some(MIB),
            ..WorkloadOptions::default()
        },
        ..JobFileRequest::default()
    };
    let loaded = dir
        .load_with(&format!("[a]\nfilename={name}\nsize=50%\n"), &request)
        .unwrap();
    assert_eq!(workloads(&loaded)[0].region_size_bytes, Some(MIB));
}

#[test]
fn shares_that_cannot_be_worked_out_are_refused_at_their_line() {
    let dir = Dir::new();
    let small = dir.file("small", MIB);
    let large = dir.file("large", 2 * MIB);
    let missing = dir.0.path().join("missing");
    let cases = [
        (
            format!("[a]\nfilename={}\nsize=50%\n", missing.display()),
            3,
            "does not exist",
        ),
        (
            format!(
                "[a]\nfilename={}:{}\noffset=10%\n",
                small.display(),
                large.display()
            ),
            3,
            "differ in size",
        ),
        (
            "[a]\nnumjobs=2\nsize=1m\noffset_increment=1m\n".to_string(),
            4,
            "files of their own",
        ),
        (
            format!("[a]\nfilename={}\nsize=12.5%\n", small.display()),
            3,
            "whole percentages",
        ),
        (
            "[a]\nioengine=nbd\nuri=nbd://127.0.0.1/x\noffset=10%\n".to_string(),
            4,
            "cannot be worked out",
        ),
    ];
    for (text, line, words) in cases {
        let error = dir.load(&text).unwrap_err();
        assert_eq!(error.line, Some(line), "{text}: {error}");
        assert!(error.message.contains(words), "{text}: {error}");
    }
}

#[test]
fn offset_modifiers_become_offset_rules() {
    let dir = Dir::new();
    let loaded = dir
        .load(
            "[back]\nsize=128m\nrw=read:-8k\n[holes]\nsize=64k\nrw=write:4k\n[every]\nsize=1m\nrw=randread:8\nrw_sequencer=identical\n[reset]\nsize=1m\nrw=randread:8\nrw=randread\n",
        )
        .unwrap();
    let jobs = workloads(&loaded);
    assert_eq!(jobs[0].offsets.sequential_step_bytes, -8192);
    assert_eq!(
        bytes_of(jobs[0]),
        128 * MIB,
        "backwards: the byte count stands"
    );
    assert_eq!(jobs[1].offsets.sequential_step_bytes, 4096);
    assert_eq!(
        bytes_of(jobs[1]),
        8 * 4096,
        "a pass with holes: 8 of the 16 blocks"
    );
    assert_eq!(jobs[2].offsets.random_every_ios, 8);
    assert!(jobs[2].offsets.repeat_offset);
    assert_eq!(
        jobs[3].offsets.random_every_ios, 0,
        "a later rw resets the modifier"
    );
    assert!(dir.load("[a]\nsize=1m\nrw=randread:0\n").is_err());
    assert!(dir.load("[a]\nsize=1m\nrw_sequencer=backwards\n").is_err());
}

#[test]
fn the_random_map_is_fio_s_default_for_uniform_random_io() {
    let dir = Dir::new();
    let loaded = dir
        .load(
            "[global]\nsize=1m\nrw=randread\n[map]\n[nomap]\nnorandommap\n[lfsr]\nnorandommap\nrandom_generator=lfsr\n[zipf]\nrandom_distribution=zipf:1.1\n[aligned]\nbs=8k\nblockalign=4k\n[seq]\nrw=read\n",
        )
        .unwrap();
    let maps: Vec<bool> = workloads(&loaded)
        .iter()
        .map(|w| w.offsets.random_map)
        .collect();
    assert_eq!(maps, [true, false, true, false, false, false]);
    assert!(loaded.notes.iter().any(|n| n.contains("blockalign")));
}

#[test]
fn cpus_and_numa_nodes_place_the_workers() {
    let dir = Dir::new();
    // Environment::fixed: CPUs 0-3 allowed, node 0 = CPUs 0-1, node 1 = CPUs 2-3.
    let loaded = dir
        .load(
            "[global]\nsize=1m\nfilename=f\n[a]\ncpus_allowed=1,3\n[b]\ncpumask=5\n[c]\nnumjobs=2\ncpus_allowed=0-3\ncpus_allowed_policy=split\n[d]\nnuma_cpu_nodes=1\nnuma_mem_policy=bind:1\n[e]\nnuma_cpu_nodes=0-2\ncpus_allowed=3\n",
        )
        .unwrap();
    let jobs = workloads(&loaded);
    assert_eq!(jobs[0].controls.cpus, [1, 3]);
    assert_eq!(jobs[1].controls.cpus, [0, 2]);
    assert_eq!(
        jobs[2].controls.cpu_split_start,
        Some(2),
        "clones of a and b come first"
    );
    assert_eq!(jobs[2].controls.cpus_of_worker(0), [2]);
    assert_eq!(jobs[2].controls.cpus_of_worker(1), [3]);
    assert_eq!(jobs[3].controls.cpus, [2, 3]);
    assert_eq!(jobs[4].controls.cpus, [0, 1, 2, 3]);
    for words in [
        "numa_mem_policy=bind:1 is not applied",
        "node 2 is not on this machine",
        "wins over",
    ] {
        assert!(
            loaded.notes.iter().any(|n| n.contains(words)),
            "{words}: {:?}",
            loaded.notes
        );
    }
    for (text, line) in [
        ("[a]\nsize=1m\ncpus_allowed=7\n", 3),
        ("[a]\nsize=1m\nnuma_cpu_nodes=5\n", 3),
        ("[a]\nsize=1m\ncpus_allowed=1-x\n", 3),
        ("[a]\nsize=1m\ncpus_allowed_policy=spread\n", 3),
    ] {
        let error = dir.load(text).unwrap_err();
        assert_eq!(error.line, Some(line), "{text}: {error}");
    }
}

#[test]
fn arrivals_delays_exits_flows_and_latency_targets() {
    let dir = Dir::new();
    let loaded = dir
        .load(
            "[global]\nsize=1m\n[a]\nrate_iops=100\nrate_process=poisson\nstartdelay=1-3\nexitall\n[b]\nexitall\nexit_what=all\nflow=2\nflow_id=7\nflow_sleep=100\n[c]\nlatency_target=500\nlatency_window=1s\nlatency_percentile=99.9\niodepth=64\nioengine=io_uring\n",
        )
        .unwrap();
    let jobs = workloads(&loaded);
    assert!(jobs[0].controls.poisson_arrivals);
    assert_eq!(jobs[0].start_delay_ns, 1_000_000_000);
    assert_eq!(jobs[0].controls.start_delay_high_ns, Some(3_000_000_000));
    let delays: Vec<u64> = (0..50)
        .map(|worker| {
            jobs[0]
                .controls
                .start_delay_of_worker(1_000_000_000, 1, worker)
        })
        .collect();
    assert!(
        delays
            .iter()
            .all(|d| (1_000_000_000..=3_000_000_000).contains(d))
    );
    assert!(
        delays.iter().any(|&d| d != delays[0]),
        "each clone draws its own"
    );
    assert_eq!(jobs[0].controls.ends_others, EndOthers::Group);
    assert_eq!(jobs[1].controls.ends_others, EndOthers::Run);
    assert_eq!(
        jobs[1].controls.flow,
        Some(Flow {
            id: 7,
            weight: 2,
            sleep_ns: 100_000
        })
    );
    assert_eq!(
        jobs[2].controls.latency_target,
        Some(LatencyTarget {
            target_ns: 500_000,
            window_ns: 1_000_000_000,
            percentile: 99.9,
            keep_running: false
        })
    );
    let error = dir.load("[a]\nsize=1m\nlatency_target=500\n").unwrap_err();
    assert_eq!(error.line, Some(3));
    assert!(error.message.contains("latency_window"));
    let loaded = dir.load("[a]\nsize=1m\nrate_process=poisson\n").unwrap();
    assert!(
        loaded
            .notes
            .iter()
            .any(|n| n.contains("no effect without rate"))
    );
}

#[test]
fn distributions_in_every_form() {
    let dir = Dir::new();
    let loaded = dir
        .load(
            "[global]\nrw=randread\nsize=48k\n[zipf]\nrandom_distribution=zipf:1.2:0.25\n[abs]\nrandom_distribution=zoned_abs:60/16k:40/32k\n[seq]\nrandom_distribution=sequence:2,0,1\n[stride]\nrandom_distribution=sequence:2,0,1\nrandom_sequence_stride=1\n[gen]\nrandom_generator=tausworthe64\n",
        )
        .unwrap();
    let distributions: Vec<String> = workloads(&loaded)
        .iter()
        .map(|w| w.distribution.to_string())
        .collect();
    assert_eq!(
        distributions,
        [
            "zipf:1.2:0.25",
            "zoned_abs:60/16k:40/32k",
            "sequence:2,0,1",
            "sequence_stride:2,0,1",
            "random"
        ]
    );
    assert!(loaded.notes.iter().any(|n| n.contains("tausworthe64")));
    assert!(matches!(
        workloads(&loaded)[2].distribution,
        OffsetDistribution::Sequence { stride: false, .. }
    ));
    let error = dir
        .load("[a]\nsize=1m\nrandom_distribution=zipf:1.2:7\n")
        .unwrap_err();
    assert_eq!(error.line, Some(3));
    assert_eq!(
        workloads(&dir.load("[a]\nsize=1m\n").unwrap())[0].offsets,
        OffsetRules::default()
    );
}
