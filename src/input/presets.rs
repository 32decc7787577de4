//! Named workloads people already quote: Iometer's access specifications, the Fibre Channel
//! review pair, dd, tiobench, and the default suite. `iopath presets` lists them.

use crate::result::{AccessLine, AccessSpec, Workload};
use crate::workload::suite::default_suite;
use crate::workload::{TestPlan, WorkloadError};

/// A preset: a name, what it reproduces, and the tests it makes.
#[derive(Debug)]
pub struct Preset {
    /// Name for `--preset`.
    pub name: &'static str,
    /// What it reproduces, for `iopath presets`.
    pub reproduces: &'static str,
    build: fn(&Workload, &[usize]) -> Vec<TestPlan>,
}

impl Preset {
    /// The tests of this preset, derived from `template` (engine, seed, duration, ramp, I/O
    /// mode and queue depth come from it), against `targets`.
    pub fn tests(&self, template: &Workload, targets: &[usize]) -> Vec<TestPlan> {
        (self.build)(template, targets)
    }
}

/// `(size, share)` pairs with one read and random percentage for all lines.
fn spec(lines: &[(u64, u32)], read_percent: u8, random_percent: u8) -> AccessSpec {
    AccessSpec {
        lines: lines
            .iter()
            .map(|&(size, share)| AccessLine::new(size, share, read_percent, random_percent))
            .collect(),
    }
}

fn one(name: &str, template: &Workload, access: AccessSpec, targets: &[usize]) -> TestPlan {
    TestPlan::single(
        name,
        Workload {
            access,
            ..template.clone()
        },
        targets.to_vec(),
    )
}

const K: u64 = 1024;

fn iometer_default(template: &Workload, targets: &[usize]) -> Vec<TestPlan> {
    vec![one(
        "Iometer default",
        template,
        spec(&[(2 * K, 100)], 67, 100),
        targets,
    )]
}

fn database(template: &Workload, targets: &[usize]) -> Vec<TestPlan> {
    vec![one(
        "Database (OLTP)",
        template,
        spec(&[(8 * K, 100)], 67, 100),
        targets,
    )]
}

fn file_server(template: &Workload, targets: &[usize]) -> Vec<TestPlan> {
    let sizes = [
        (512, 10),
        (K, 5),
        (2 * K, 5),
        (4 * K, 60),
        (8 * K, 2),
        (16 * K, 4),
        (32 * K, 4),
        (64 * K, 10),
    ];
    vec![one("File server", template, spec(&sizes, 80, 100), targets)]
}

fn web_server(template: &Workload, targets: &[usize]) -> Vec<TestPlan> {
    let sizes = [
        (512, 22),
        (K, 15),
        (2 * K, 8),
        (4 * K, 23),
        (8 * K, 15),
        (16 * K, 2),
        (32 * K, 6),
        (64 * K, 7),
        (128 * K, 1),
        (512 * K, 1),
    ];
    vec![one("Web server", template, spec(&sizes, 100, 100), targets)]
}

fn workstation(template: &Workload, targets: &[usize]) -> Vec<TestPlan> {
    vec![one(
        "Workstation",
        template,
        spec(&[(8 * K, 100)], 80, 80),
        targets,
    )]
}

const STREAMING: [(u64, u32); 3] = [(64 * K, 34), (128 * K, 33), (256 * K, 33)];

fn streaming_read(template: &Workload, targets: &[usize]) -> Vec<TestPlan> {
    vec![one(
        "Streaming read",
        template,
        spec(&STREAMING, 100, 0),
        targets,
    )]
}

fn streaming_write(template: &Workload, targets: &[usize]) -> Vec<TestPlan> {
    vec![one(
        "Streaming write",
        template,
        spec(&STREAMING, 0, 0),
        targets,
    )]
}

fn fc_review(template: &Workload, targets: &[usize]) -> Vec<TestPlan> {
    let deep = |queue_depth: u32| Workload {
        queue_depth: template.queue_depth.max(queue_depth),
        ..template.clone()
    };
    vec![
        one(
            "FC 1M seq read",
            &deep(8),
            spec(&[(1 << 20, 100)], 100, 0),
            targets,
        ),
        one(
            "FC 1M seq write",
            &deep(8),
            spec(&[(1 << 20, 100)], 0, 0),
            targets,
        ),
        one(
            "FC 512 seq read",
            &deep(64),
            spec(&[(512, 100)], 100, 0),
            targets,
        ),
        one(
            "FC 512 seq write",
            &deep(64),
            spec(&[(512, 100)], 0, 0),
            targets,
        ),
    ]
}

fn dd(template: &Workload, targets: &[usize]) -> Vec<TestPlan> {
    let buffered = Workload {
        buffered: true,
        ..template.clone()
    };
    let write = one(
        "dd write (fdatasync)",
        &Workload {
            fsync_at_end: true,
            ..buffered.clone()
        },
        spec(&[(4 * K, 100)], 0, 0),
        targets,
    );
    let mut read = one(
        "dd read (cache dropped)",
        &buffered,
        spec(&[(4 * K, 100)], 100, 0),
        targets,
    );
    read.settings.drop_caches_before = true;
    vec![write, read]
}

fn tiobench(template: &Workload, targets: &[usize]) -> Vec<TestPlan> {
    let patterns = [
        ("seq write", 0, 0),
        ("rand write", 0, 100),
        ("seq read", 100, 0),
        ("rand read", 100, 100),
    ];
    let mut tests = Vec::new();
    for (name, read, random) in patterns {
        for threads in [1u32, 2, 4, 8, 16, 32] {
            tests.push(one(
                &format!("tiobench {name} threads={threads}"),
                &Workload {
                    workers: threads,
                    ..template.clone()
                },
                spec(&[(4 * K, 100)], read, random),
                targets,
            ));
        }
    }
    tests
}

fn suite(template: &Workload, targets: &[usize]) -> Vec<TestPlan> {
    default_suite(template, targets)
}

/// Every preset.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "iometer-default",
        reproduces: "Iometer's default access specification: 2 KiB, 67 % read, 100 % random",
        build: iometer_default,
    },
    Preset {
        name: "database",
        reproduces: "Database / OLTP: 8 KiB, 67 % read, 100 % random",
        build: database,
    },
    Preset {
        name: "file-server",
        reproduces: "Iometer File Server: 512 B 10 %, 1 K 5 %, 2 K 5 %, 4 K 60 %, 8 K 2 %, 16 K 4 %, 32 K 4 %, 64 K 10 %; 80 % read; 100 % random",
        build: file_server,
    },
    Preset {
        name: "web-server",
        reproduces: "Iometer Web Server: 512 B 22 %, 1 K 15 %, 2 K 8 %, 4 K 23 %, 8 K 15 %, 16 K 2 %, 32 K 6 %, 64 K 7 %, 128 K 1 %, 512 K 1 %; 100 % read; 100 % random",
        build: web_server,
    },
    Preset {
        name: "workstation",
        reproduces: "Iometer Workstation: 8 KiB, 80 % read, 80 % random",
        build: workstation,
    },
    Preset {
        name: "streaming-read",
        reproduces: "Streaming read: 64 K 34 %, 128 K 33 %, 256 K 33 %; sequential",
        build: streaming_read,
    },
    Preset {
        name: "streaming-write",
        reproduces: "Streaming write: 64 K 34 %, 128 K 33 %, 256 K 33 %; sequential",
        build: streaming_write,
    },
    Preset {
        name: "fc-review",
        reproduces: "Fibre Channel reviews: 1 MiB sequential read then write at QD 8 (throughput), 512 B sequential read then write at QD 64 (IOPS)",
        build: fc_review,
    },
    Preset {
        name: "dd",
        reproduces: "dd: 4 KiB sequential buffered write with fdatasync at the end (conv=fdatasync), then a read after the page cache is dropped",
        build: dd,
    },
    Preset {
        name: "tiobench",
        reproduces: "tiobench: sequential write, random write, sequential read, random read (4 KiB) at 1, 2, 4, 8, 16, 32 threads",
        build: tiobench,
    },
    Preset {
        name: "default-suite",
        reproduces: "iopath's default suite: SEQ 1M Q8 read/write, RND 4K Q32 and Q1 read/write, SEQ 512 Q64 read",
        build: suite,
    },
];

/// The preset called `name`.
pub fn find(name: &str) -> Result<&'static Preset, WorkloadError> {
    PRESETS.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
        WorkloadError::Unknown {
            kind: "preset",
            name: name.to_string(),
            choices: format!(
                "choose one of: {}; `iopath presets` describes them",
                names.join(", ")
            ),
        }
    })
}

/// Iometer's load levels as named queue depths.
pub const LOAD_LEVELS: [(&str, u32); 5] = [
    ("linear", 1),
    ("very-light", 4),
    ("light", 8),
    ("moderate", 64),
    ("heavy", 256),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::suite::base_workload;

    #[test]
    fn every_preset_builds_valid_tests() {
        for preset in PRESETS {
            let tests = preset.tests(&base_workload(), &[0]);
            assert!(!tests.is_empty(), "{}", preset.name);
            for test in &tests {
                for job in &test.jobs {
                    job.workload.access.validate().unwrap();
                }
            }
        }
        assert_eq!(
            find("tiobench")
                .unwrap()
                .tests(&base_workload(), &[0])
                .len(),
            24
        );
        let error = find("nope").unwrap_err();
        assert!(matches!(&error, WorkloadError::Unknown { name, .. } if name == "nope"));
        assert!(error.to_string().contains("file-server"));
    }

    #[test]
    fn file_server_shares_are_iometers() {
        let tests = find("file-server").unwrap().tests(&base_workload(), &[0]);
        let access = &tests[0].jobs[0].workload.access;
        assert_eq!(access.total_weight(), 100);
        assert_eq!(access.lines[3].size_bytes, 4096);
        assert_eq!(access.lines[3].weight, 60);
        assert!((access.read_percent() - 80.0).abs() < 1e-9);
    }
}
