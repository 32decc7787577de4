//! The I/O of a worker that moves over several files with one queue, as fio's one thread per
//! job clone does with `nrfiles` or `filename=a:b:c`: each file has its own [`IoPlanner`] (its
//! region, sequential position and random map), and [`FileSetPlanner`] picks the file of every
//! I/O as the job's [`FileService`] says.
//!
//! A worker does I/O to at most [`WorkerFiles::open_at_once`] files at a time (fio's
//! `openfiles`), the first ones in order. A file is done for the pass when its sequential I/O
//! reaches the end of its region, or — in a job that runs to a byte count — when its random map
//! is full (in a timed job fio clears the map and stays on the file, and so does iopath). A done
//! file leaves the set and the next file not yet used takes its place; once every file is done,
//! all start over from the first. The I/O that found a file's pass over is kept for that file's next pass, so
//! no I/O is lost or repeated. With `Skewed` service files are never done (as in fio).
//!
//! ```
//! use iopath::result::{FileService, WorkerFiles};
//! use iopath::workload::file_set::FileSetPlanner;
//! use iopath::workload::planner::IoPlanner;
//! use iopath::workload::suite::base_workload;
//! let workload = base_workload(); // sequential 4 KiB reads
//! let planners = (0..3)
//!     .map(|file| IoPlanner::new(&workload, 0, 1 << 20, 0, 1).for_file(file))
//!     .collect();
//! let files = WorkerFiles { per_worker: 3, ..WorkerFiles::default() };
//! let mut set = FileSetPlanner::new(planners, &files, 7, true);
//! let order: Vec<u32> = (0..6).map(|_| set.next_io().file).collect();
//! assert_eq!(order, [0, 1, 2, 0, 1, 2]);
//! ```

use super::WorkloadError;
use super::distribution::SlotSampler;
use super::planner::{IoPlanner, PassStart, PlannedIo};
use super::replay::{ReplayCursor, ReplayTrace};
use crate::result::{FileService, OffsetDistribution, WorkerFiles};

/// Picks the file of each I/O of one worker and plans the I/O on it (see the module
/// documentation).
#[derive(Clone, Debug)]
pub struct FileSetPlanner {
    planners: Vec<IoPlanner>,
    service: FileService,
    /// Files in use now, in file order (at most `open_at_once`).
    open: Vec<u32>,
    /// Per file: in `open` (so that the choice of each I/O costs no scan of the open files).
    in_use: Vec<bool>,
    /// The next file not used yet in this round.
    next_unused: u32,
    /// How many files are used at a time.
    open_at_once: u32,
    /// Per file: done for this round.
    done: Vec<bool>,
    /// Per file: the I/O that found its pass over, kept for its next pass.
    kept: Vec<Option<PlannedIo>>,
    /// The file of the previous I/O, and how many more I/Os it gets before the next choice.
    current: u32,
    left: u32,
    /// Whether the first choice was made.
    chosen: bool,
    /// A full random map ends a file's pass (jobs that run to a byte count).
    map_ends_pass: bool,
    rng: fastrand::Rng,
    sampler: Option<SlotSampler>,
    /// The file whose new pass the last I/O began, if it began one.
    pass_began: Option<u32>,
    /// A trace replayed instead of the planners' offsets (fio's `read_iolog`).
    replay: Option<ReplayCursor>,
}

impl FileSetPlanner {
    /// A planner over `planners` (one per file, in file order; at least one) that picks files
    /// as `files` says, drawing from `seed`; `timed`: the job runs for a time, not to a byte
    /// count.
    pub fn new(planners: Vec<IoPlanner>, files: &WorkerFiles, seed: u64, timed: bool) -> Self {
        let count = planners.len().max(1) as u32;
        let open_at_once = files.open_at_once().min(count);
        let sampler = match &files.service {
            FileService::Skewed { distribution } => {
                Some(SlotSampler::new(distribution, u64::from(open_at_once), 1))
            }
            _ => None,
        };
        let mut in_use = vec![false; planners.len()];
        in_use
            .iter_mut()
            .take(open_at_once as usize)
            .for_each(|used| *used = true);
        FileSetPlanner {
            open: (0..open_at_once).collect(),
            in_use,
            next_unused: open_at_once,
            open_at_once,
            done: vec![false; planners.len()],
            kept: vec![None; planners.len()],
            planners,
            service: files.service.clone(),
            current: 0,
            left: 0,
            chosen: false,
            map_ends_pass: !timed,
            rng: fastrand::Rng::with_seed(seed ^ 0x4649_4c45_5345_5256),
            sampler,
            pass_began: None,
            replay: None,
        }
    }

    /// The same set replaying `trace` in order instead of planning offsets: every I/O, its
    /// file, its timing come from the trace (see [`super::replay`]).
    pub fn replaying(mut self, trace: std::sync::Arc<ReplayTrace>) -> Self {
        self.replay = Some(ReplayCursor::new(trace));
        self
    }

    /// A planner for a worker on one target.
    pub fn single(planner: IoPlanner) -> Self {
        Self::new(vec![planner], &WorkerFiles::default(), 0, true)
    }

    /// Files this worker moves over.
    pub fn files(&self) -> usize {
        self.planners.len()
    }

    /// Length of the smallest I/O of any of its files, bytes.
    pub fn smallest_io_bytes(&self) -> u64 {
        if let Some(replay) = &self.replay {
            return replay
                .trace()
                .ios
                .iter()
                .map(|io| u64::from(io.length))
                .min()
                .unwrap_or(1)
                .max(1);
        }
        self.planners
            .iter()
            .map(IoPlanner::smallest_io_bytes)
            .min()
            .unwrap_or(1)
    }

    /// Starts sequential I/O of every file at its region's start (see
    /// [`IoPlanner::starting_at_region_start`]).
    pub fn starting_at_region_start(mut self) -> Self {
        self.planners = self
            .planners
            .into_iter()
            .map(IoPlanner::starting_at_region_start)
            .collect();
        self
    }

    /// The file whose new pass over its region the last I/O of [`FileSetPlanner::next_io`]
    /// began (its random map filled up, or sequential I/O wrapped), if it began one: where fio
    /// drops the file's cached pages in a timed buffered job (`invalidate=1`).
    pub fn pass_began(&self) -> Option<u32> {
        self.pass_began
    }

    /// The next I/O, its `file` set.
    #[inline]
    pub fn next_io(&mut self) -> PlannedIo {
        if let Some(replay) = &mut self.replay {
            return replay.next_io();
        }
        if self.planners.len() == 1 {
            let io = self.planners[0].next_io();
            self.pass_began = (self.planners[0].pass_start() != PassStart::No).then_some(0);
            return io;
        }
        self.pass_began = None;
        loop {
            let file = self.choose();
            let planner = &mut self.planners[file as usize];
            let io = match self.kept[file as usize].take() {
                Some(kept) => kept,
                None => {
                    let io = planner.next_io();
                    if planner.pass_start() != PassStart::No {
                        self.pass_began = Some(file);
                    }
                    let pass_over = match planner.pass_start() {
                        PassStart::No => false,
                        PassStart::Sequential => true,
                        PassStart::RandomMap => self.map_ends_pass,
                    };
                    if pass_over && !matches!(self.service, FileService::Skewed { .. }) {
                        self.kept[file as usize] = Some(io);
                        self.finish(file);
                        continue;
                    }
                    io
                }
            };
            return PlannedIo { file, ..io };
        }
    }

    /// The file of the next I/O.
    fn choose(&mut self) -> u32 {
        let usable = |planner: &Self, file: u32| {
            planner.in_use[file as usize] && !planner.done[file as usize]
        };
        if self.chosen && usable(self, self.current) {
            match self.service {
                FileService::Sequential => return self.current,
                FileService::RoundRobin { .. } | FileService::Random { .. } if self.left > 0 => {
                    self.left -= 1;
                    return self.current;
                }
                _ => {}
            }
        }
        let file = match &self.service {
            FileService::RoundRobin { .. } | FileService::Sequential => {
                if self.chosen {
                    // The first open file after the current one, in file order (`open`
                    // is sorted).
                    let after = self.open.partition_point(|&file| file <= self.current);
                    self.open.get(after).copied().unwrap_or(self.open[0])
                } else {
                    self.open[0]
                }
            }
            FileService::Random { .. } => self.open[self.rng.usize(0..self.open.len())],
            FileService::Skewed { .. } => {
                let sampler = self.sampler.as_mut().expect("a sampler for skewed service");
                let index = sampler.sample(&mut self.rng) as usize;
                self.open[index.min(self.open.len() - 1)]
            }
        };
        self.left = match self.service {
            FileService::RoundRobin { ios_per_file } | FileService::Random { ios_per_file } => {
                ios_per_file.max(1) - 1
            }
            _ => 0,
        };
        self.current = file;
        self.chosen = true;
        file
    }

    /// Marks `file` done for this round: the next unused file takes its place, and when every
    /// file is done all start over.
    fn finish(&mut self, file: u32) {
        self.done[file as usize] = true;
        if let Ok(at) = self.open.binary_search(&file) {
            self.open.remove(at);
        }
        self.in_use[file as usize] = false;
        if (self.next_unused as usize) < self.planners.len() {
            let next = self.next_unused;
            self.next_unused += 1;
            let at = self.open.partition_point(|&open| open < next);
            self.open.insert(at, next);
            self.in_use[next as usize] = true;
        }
        if self.open.is_empty() {
            self.done.iter_mut().for_each(|done| *done = false);
            // Refilled in place: a round's end allocates nothing in the worker's loop.
            self.open.extend(0..self.open_at_once);
            for &file in &self.open {
                self.in_use[file as usize] = true;
            }
            self.next_unused = self.open_at_once;
            // A new round starts at the first file.
            self.chosen = false;
        }
    }
}

/// fio's default zipf exponent and pareto share when `file_service_type` gives none.
const DEFAULT_ZIPF_THETA: f64 = 1.1;
const DEFAULT_PARETO_H: f64 = 0.2;

impl FileService {
    /// Reads fio's spelling: `roundrobin[:N]`, `sequential`, `random[:N]` (N I/Os to a file
    /// before the next choice), `zipf[:θ]`, `pareto[:h]`, `normal:σ%` or `gauss:σ%` (each with
    /// an optional `:centre` from 0 to 1).
    pub fn parse(text: &str) -> Result<Self, WorkloadError> {
        let text = text.trim();
        let (kind, parameter) = match text.split_once(':') {
            Some((kind, parameter)) => (kind, Some(parameter)),
            None => (text, None),
        };
        let ios = |parameter: Option<&str>| -> Result<u32, WorkloadError> {
            match parameter {
                None => Ok(1),
                Some(count) => count
                    .trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|count| *count > 0)
                    .ok_or_else(|| {
                        WorkloadError::part(
                            text,
                            format!("'{count}' is not a count of I/Os above 0"),
                        )
                    }),
            }
        };
        let skewed = |default: Option<f64>| -> Result<Self, WorkloadError> {
            let spelled = match (parameter, default) {
                (Some(parameter), _) => format!("{kind}:{parameter}"),
                (None, Some(value)) => format!("{kind}:{value}"),
                (None, None) => {
                    return Err(WorkloadError::part(
                        text,
                        format!("give the deviation in percent of the files ({kind}:10)"),
                    ));
                }
            };
            let distribution = OffsetDistribution::parse(&spelled)?;
            distribution.validate()?;
            Ok(FileService::Skewed { distribution })
        };
        match kind {
            "roundrobin" => Ok(FileService::RoundRobin {
                ios_per_file: ios(parameter)?,
            }),
            "sequential" if parameter.is_none() => Ok(FileService::Sequential),
            "sequential" => Err(WorkloadError::part(
                text,
                "sequential service stays on a file until its pass is done; it takes no count",
            )),
            "random" => Ok(FileService::Random {
                ios_per_file: ios(parameter)?,
            }),
            "zipf" => skewed(Some(DEFAULT_ZIPF_THETA)),
            "pareto" => skewed(Some(DEFAULT_PARETO_H)),
            "normal" | "gauss" => skewed(None),
            other => Err(WorkloadError::Unknown {
                kind: "file service",
                name: other.to_string(),
                choices: "choose roundrobin[:N], sequential, random[:N], zipf[:θ], pareto[:h] or normal:σ%".to_string(),
            }),
        }
    }
}

impl std::fmt::Display for FileService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileService::RoundRobin { ios_per_file: 1 } => write!(f, "roundrobin"),
            FileService::RoundRobin { ios_per_file } => write!(f, "roundrobin:{ios_per_file}"),
            FileService::Sequential => write!(f, "sequential"),
            FileService::Random { ios_per_file: 1 } => write!(f, "random"),
            FileService::Random { ios_per_file } => write!(f, "random:{ios_per_file}"),
            FileService::Skewed { distribution } => write!(f, "{distribution}"),
        }
    }
}

/// Checks `files` for a job of `target_count` targets: whole groups of files, at least one file
/// at a time, at least one I/O per file, and a zipf, pareto or normal distribution for skewed
/// service.
pub fn check_worker_files(files: &WorkerFiles, target_count: usize) -> Result<(), WorkloadError> {
    let per_worker = files.per_worker as usize;
    if per_worker == 0 {
        return Err(WorkloadError::parameter(
            "--files-per-worker 0",
            "a worker needs at least one file",
        ));
    }
    if !target_count.is_multiple_of(per_worker) {
        return Err(WorkloadError::parameter(
            format!("--files-per-worker {per_worker}"),
            format!(
                "{target_count} targets do not make whole groups of {per_worker} files per worker"
            ),
        ));
    }
    if files.open_files == Some(0) {
        return Err(WorkloadError::parameter(
            "--open-files 0",
            "a worker needs at least one open file",
        ));
    }
    match &files.service {
        FileService::RoundRobin { ios_per_file: 0 } | FileService::Random { ios_per_file: 0 } => {
            Err(WorkloadError::parameter(
                format!("--file-service {}", files.service),
                "a file gets at least one I/O before the next",
            ))
        }
        FileService::Skewed { distribution } => match distribution {
            OffsetDistribution::Zipf { .. }
            | OffsetDistribution::Pareto { .. }
            | OffsetDistribution::Normal { .. } => distribution.validate(),
            other => Err(WorkloadError::parameter(
                format!("--file-service {other}"),
                "files are drawn from zipf, pareto or normal distributions",
            )),
        },
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{OffsetDistribution, RunLength, Workload};
    use crate::workload::BlockSizeMix;
    use crate::workload::suite::base_workload;

    const FILE_BYTES: u64 = 64 << 10;

    fn workload(random: u8, map: bool) -> Workload {
        let mut workload = base_workload();
        workload.set_simple(&BlockSizeMix::single(4096), 100, random, 4096);
        workload.offsets.random_map = map;
        workload
    }

    fn set(workload: &Workload, count: u32, files: WorkerFiles, timed: bool) -> FileSetPlanner {
        let planners = (0..count)
            .map(|file| IoPlanner::new(workload, 0, FILE_BYTES, 0, 1).for_file(file))
            .collect();
        let files = WorkerFiles {
            per_worker: count,
            ..files
        };
        FileSetPlanner::new(planners, &files, 11, timed)
    }

    fn files_of(set: &mut FileSetPlanner, ios: usize) -> Vec<u32> {
        (0..ios).map(|_| set.next_io().file).collect()
    }

    #[test]
    fn round_robin_moves_on_after_n_ios() {
        let mut one = set(&workload(0, false), 3, WorkerFiles::default(), true);
        assert_eq!(files_of(&mut one, 7), [0, 1, 2, 0, 1, 2, 0]);
        let service = FileService::RoundRobin { ios_per_file: 2 };
        let mut two = set(
            &workload(0, false),
            3,
            WorkerFiles {
                service,
                ..WorkerFiles::default()
            },
            true,
        );
        assert_eq!(files_of(&mut two, 7), [0, 0, 1, 1, 2, 2, 0]);
    }

    #[test]
    fn sequential_service_finishes_each_file_first() {
        // 16 blocks a file: 16 I/Os to file 0, then 16 to file 1, then file 0 again.
        let files = WorkerFiles {
            service: FileService::Sequential,
            ..WorkerFiles::default()
        };
        let mut sequential = set(&workload(0, false), 2, files, true);
        let mut ios = Vec::new();
        for _ in 0..33 {
            let io = sequential.next_io();
            ios.push((io.file, io.offset));
        }
        assert!(ios[..16].iter().all(|&(file, _)| file == 0), "{ios:?}");
        assert!(ios[16..32].iter().all(|&(file, _)| file == 1), "{ios:?}");
        assert_eq!(
            ios[32],
            (0, 0),
            "file 0 starts over where it had found its end"
        );
        let offsets: Vec<u64> = ios[16..32].iter().map(|&(_, offset)| offset).collect();
        assert_eq!(
            offsets,
            (0..16).map(|block| block * 4096).collect::<Vec<_>>()
        );
    }

    #[test]
    fn the_io_that_begins_a_new_pass_names_its_file() {
        // 16 blocks a file: with the random map, every 16th I/O of one file begins a pass
        // (the first pass begins with nothing to drop); without it, none does.
        let mut one = set(&workload(100, true), 1, WorkerFiles::default(), true);
        let began: Vec<usize> = (0..48)
            .filter(|_| {
                one.next_io();
                one.pass_began().is_some()
            })
            .collect();
        assert_eq!(began, [16, 32], "{began:?}");
        let mut sequential = set(&workload(0, false), 1, WorkerFiles::default(), true);
        let began: Vec<usize> = (0..40)
            .filter(|_| {
                sequential.next_io();
                sequential.pass_began() == Some(0)
            })
            .collect();
        assert_eq!(began, [16, 32]);
        let mut unmapped = set(&workload(100, false), 1, WorkerFiles::default(), true);
        assert!((0..64).all(|_| {
            unmapped.next_io();
            unmapped.pass_began().is_none()
        }));
        let mut two = set(&workload(100, true), 2, WorkerFiles::default(), true);
        let files: Vec<u32> = (0..64)
            .filter_map(|_| {
                two.next_io();
                two.pass_began()
            })
            .collect();
        assert!(files.contains(&0) && files.contains(&1), "{files:?}");
    }

    #[test]
    fn a_full_random_map_ends_a_pass_only_in_byte_count_jobs() {
        let files = WorkerFiles {
            service: FileService::Sequential,
            ..WorkerFiles::default()
        };
        let mut counted = set(&workload(100, true), 2, files.clone(), false);
        let first = files_of(&mut counted, 32);
        assert!(first[..16].iter().all(|&file| file == 0), "{first:?}");
        assert!(first[16..].iter().all(|&file| file == 1), "{first:?}");
        let mut timed = set(&workload(100, true), 2, files, true);
        assert!(files_of(&mut timed, 64).iter().all(|&file| file == 0));
    }

    #[test]
    fn random_service_spreads_over_the_files() {
        let files = WorkerFiles {
            service: FileService::Random { ios_per_file: 1 },
            ..WorkerFiles::default()
        };
        let mut random = set(&workload(100, false), 4, files, true);
        let mut counts = [0u32; 4];
        for file in files_of(&mut random, 4000) {
            counts[file as usize] += 1;
        }
        assert!(
            counts.iter().all(|&count| (800..1200).contains(&count)),
            "{counts:?}"
        );
    }

    #[test]
    fn open_files_bound_the_files_in_use_and_move_on_as_files_are_done() {
        let files = WorkerFiles {
            open_files: Some(2),
            ..WorkerFiles::default()
        };
        // Sequential reads of 16 blocks: files 0 and 1 alternate for 32 I/Os, then 2 and 3.
        let mut window = set(&workload(0, false), 4, files.clone(), true);
        let seen = files_of(&mut window, 64);
        assert!(seen[..32].iter().all(|&file| file < 2), "{seen:?}");
        assert!(seen[32..].iter().all(|&file| file >= 2), "{seen:?}");
        // Random reads in a timed job never finish a file: only the first two are used.
        let mut stuck = set(&workload(100, true), 4, files, true);
        assert!(files_of(&mut stuck, 200).iter().all(|&file| file < 2));
    }

    #[test]
    fn skewed_service_prefers_its_hot_files() {
        let files = WorkerFiles {
            service: FileService::Skewed {
                distribution: OffsetDistribution::Zipf {
                    theta: 1.2,
                    center: None,
                },
            },
            ..WorkerFiles::default()
        };
        let mut skewed = set(&workload(0, false), 8, files, false);
        let mut counts = [0u32; 8];
        for file in files_of(&mut skewed, 8000) {
            counts[file as usize] += 1;
        }
        counts.sort_unstable();
        assert!(counts[7] > 3 * counts[3], "{counts:?}");
    }

    #[test]
    fn file_services_read_as_fio_writes_them() {
        for text in [
            "roundrobin",
            "roundrobin:4",
            "sequential",
            "random",
            "random:8",
        ] {
            assert_eq!(FileService::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(
            FileService::parse("zipf").unwrap(),
            FileService::Skewed {
                distribution: OffsetDistribution::Zipf {
                    theta: 1.1,
                    center: None
                }
            }
        );
        assert!(FileService::parse("gauss:10:0.3").is_ok());
        assert!(FileService::parse("gauss").is_err());
        assert!(FileService::parse("random:0").is_err());
        assert!(FileService::parse("sequential:4").is_err());
        assert!(FileService::parse("zoned").is_err());
    }

    #[test]
    fn worker_files_are_checked() {
        let files = |per_worker, service| WorkerFiles {
            per_worker,
            service,
            open_files: None,
        };
        let round_robin = FileService::default();
        assert!(check_worker_files(&files(4, round_robin.clone()), 8).is_ok());
        assert!(check_worker_files(&files(3, round_robin.clone()), 8).is_err());
        assert!(check_worker_files(&files(0, round_robin), 8).is_err());
        let none = FileService::Random { ios_per_file: 0 };
        assert!(check_worker_files(&files(2, none), 2).is_err());
        let zoned = FileService::Skewed {
            distribution: OffsetDistribution::parse("zoned:50/50:50/50").unwrap(),
        };
        assert!(check_worker_files(&files(2, zoned), 2).is_err());
    }

    #[test]
    fn one_file_is_the_planner_itself() {
        let workload = Workload {
            length: RunLength::Time {
                duration_ns: 1_000_000_000,
            },
            ..workload(50, false)
        };
        let mut plain = IoPlanner::new(&workload, 0, FILE_BYTES, 0, 1);
        let mut single = FileSetPlanner::single(IoPlanner::new(&workload, 0, FILE_BYTES, 0, 1));
        for _ in 0..100 {
            assert_eq!(plain.next_io(), single.next_io());
        }
    }
}
