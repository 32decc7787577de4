//! Every fio option iopath knows, declared once: its name and aliases, what iopath makes of it
//! (the text `docs/fio-compatibility.md` repeats), and how it is read:
//!
//! - [`Support::Mapped`]: read into [`JobSettings`] by its handler, which may refuse some
//!   values (`rw=trim`, `ioengine=libiscsi`) as unsupported;
//! - [`Support::Accepted`]: changes nothing iopath measures (logs, report formatting); accepted
//!   with a note saying so;
//! - [`Support::Refused`]: a fio option whose effect iopath does not have; refused at its line
//!   with the reason (skipped with `--ignore-unsupported`).
//!
//! A name in none of these is refused the same way, with the supported names nearest to it.

use super::data_options;
use super::extended::Share;
use super::extended_values::{cpu_list, cpu_mask, numa_mem_policy, share};
pub use super::input::Input;
use super::parsers::{self, OptionError};
use super::settings::JobSettings;
use super::values::{colon_list, integer, per_direction, percent, size, time_ns};
use super::verify_options;
use crate::result::{AccessHint, EndOthers, FileService, Preallocation};
use crate::workload::limits::MAX_FILES;

/// What iopath does with an option.
#[derive(Clone, Copy)]
pub enum Support {
    /// Read into the job's settings.
    Mapped(Handler),
    /// Accepted; it changes nothing iopath measures, and the note says why.
    Accepted(&'static str),
    /// Refused, for this reason.
    Refused(&'static str),
}

/// Reads an option's value into the settings.
pub type Handler = fn(&mut JobSettings, &mut Input<'_>) -> Result<(), OptionError>;

/// One option.
pub struct OptionSpec {
    /// fio's name.
    pub name: &'static str,
    /// Other names fio accepts for it.
    pub aliases: &'static [&'static str],
    /// How iopath maps it (for the compatibility document and messages).
    pub mapping: &'static str,
    /// What iopath does with it.
    pub support: Support,
}

const SECOND_NS: u64 = 1_000_000_000;
const MICROSECOND_NS: u64 = 1_000;

/// Finds an option by name or alias.
pub fn find(name: &str) -> Option<&'static OptionSpec> {
    OPTIONS
        .iter()
        .find(|spec| spec.name == name || spec.aliases.contains(&name))
}

/// Names of the options iopath maps or accepts.
pub fn supported_names() -> impl Iterator<Item = &'static str> {
    OPTIONS
        .iter()
        .filter(|spec| !matches!(spec.support, Support::Refused(_)))
        .flat_map(|spec| std::iter::once(spec.name).chain(spec.aliases.iter().copied()))
}

/// The option tables of `docs/fio-compatibility.md`, rendered from [`OPTIONS`] (a test checks
/// that the document carries exactly this text).
pub fn markdown_tables() -> String {
    let names = |spec: &OptionSpec| {
        std::iter::once(spec.name)
            .chain(spec.aliases.iter().copied())
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut mapped = String::from("| option | iopath |\n|---|---|\n");
    let mut accepted = String::from("| option | why it changes nothing measured |\n|---|---|\n");
    let mut refused = String::from("| option | why it is refused |\n|---|---|\n");
    for spec in OPTIONS {
        let (table, text) = match spec.support {
            Support::Mapped(_) => (&mut mapped, spec.mapping),
            Support::Accepted(note) => (&mut accepted, note),
            Support::Refused(reason) => (&mut refused, reason),
        };
        table.push_str(&format!(
            "| {} | {} |\n",
            names(spec),
            text.replace('|', "\\|")
        ));
    }
    format!(
        "### Mapped\n\n{mapped}\n### Accepted with a note\n\n{accepted}\n### Refused\n\n{refused}"
    )
}

fn size_or_none(input: &Input<'_>, kb_base: u64) -> Result<Option<u64>, OptionError> {
    let bytes = match parsers::offset(input.text()?, kb_base) {
        Ok(bytes) => bytes,
        Err(OptionError::Unsupported(_)) => {
            return Err(OptionError::Unsupported(
                "a percentage of the target is not supported; give a size".into(),
            ));
        }
        Err(error) => return Err(error),
    };
    Ok((bytes > 0).then_some(bytes))
}

fn seconds(input: &Input<'_>) -> Result<u64, OptionError> {
    Ok(time_ns(input.text()?, SECOND_NS)?)
}

fn one_of(input: &Input<'_>, accepted: &[&str], refused: &str) -> Result<(), OptionError> {
    let text = input.text()?;
    if accepted.contains(&text) {
        Ok(())
    } else {
        Err(OptionError::Unsupported(refused.to_string()))
    }
}

const LOGS: &str = "log memory is reserved before the run; log times count from the start of the measurement, or from the Unix epoch with `log_unix_epoch`";
const PERCENTILES: &str = "iopath reports its own fixed set of latency percentiles";
const VERIFY: &str = "iopath verifies from the header of each block and its own ledger of writes, not by replaying the workload";
const PLACEMENT: &str = "iopath places workers on CPUs (cpus_allowed, numa_cpu_nodes) but does not change their priority, cgroup or user";
const BATCHING: &str = "iopath submits each request as it is queued (NBD and iSCSI send a whole refill at once) and reaps completions as they arrive; it neither batches submissions nor lets the queue drain to a low mark";

/// The table.
pub static OPTIONS: &[OptionSpec] = &[
    // Job description and units.
    OptionSpec {
        name: "name",
        aliases: &[],
        mapping: "the job's name in results; a `[global]` name is replaced by each section's name, as in fio",
        support: Support::Mapped(|s, input| {
            s.name = Some(input.text()?.to_string());
            Ok(())
        }),
    },
    OptionSpec {
        name: "description",
        aliases: &[],
        mapping: "kept in the job file only; no effect",
        support: Support::Mapped(|_, _| Ok(())),
    },
    OptionSpec {
        name: "kb_base",
        aliases: &[],
        mapping: "1024 (default) or 1000: the base of k/m/g in sizes of the section (read before its other options, as fio does); KiB/MiB use the other base",
        support: Support::Mapped(|s, input| {
            s.kb_base = match input.text()? {
                "1024" => 1024,
                "1000" => 1000,
                other => {
                    return Err(OptionError::BadValue(format!(
                        "'{other}' is not 1024 or 1000"
                    )));
                }
            };
            Ok(())
        }),
    },
    OptionSpec {
        name: "unit_base",
        aliases: &[],
        mapping: "report units only",
        support: Support::Accepted("iopath reports bytes and shows MB/s and MiB/s side by side"),
    },
    // Files.
    OptionSpec {
        name: "filename",
        aliases: &[],
        mapping: "the job's files (`:`-separated, `\\:` for a colon in a name), shared by its clones; relative names are relative to `directory` or the current directory; one target per file; as in fio, every `filename=` adds to the files named before it, the `[global]` section's included (a name given twice is two files of the job on the same path)",
        support: Support::Mapped(|s, input| {
            let names = colon_list(input.text()?);
            if names.is_empty() {
                return Err(OptionError::BadValue("names no file".into()));
            }
            // fio's filename= adds files (add_file) to those the job has: a job section's
            // filename= goes after the [global] section's, it does not replace them.
            let added = match s.filenames.take() {
                Some(before) => {
                    let count = before.value.len() + names.len();
                    input.note(format!(
                        "filename= adds to the {} file{} named before it (as in fio, a job's filename= does not replace the [global] section's): the job works on {count} files",
                        before.value.len(),
                        if before.value.len() == 1 { "" } else { "s" },
                    ));
                    before.value.into_iter().chain(names).collect()
                }
                None => names,
            };
            s.filenames = Some(input.set(added));
            Ok(())
        }),
    },
    OptionSpec {
        name: "directory",
        aliases: &[],
        mapping: "where the job's files are (`:`-separated directories go round robin to the clones of generated names)",
        support: Support::Mapped(|s, input| {
            s.directories = colon_list(input.text()?);
            Ok(())
        }),
    },
    OptionSpec {
        name: "filename_format",
        aliases: &[],
        mapping: "generated file names: `$jobname`, `$jobnum` (clone), `$filenum` (default `$jobname.$jobnum.$filenum`); `$clientuid` is empty, as in fio outside its client/server mode",
        support: Support::Mapped(|s, input| {
            s.filename_format = Some(input.text()?.to_string());
            Ok(())
        }),
    },
    OptionSpec {
        name: "nrfiles",
        aliases: &["nr_files"],
        mapping: "files per clone when names are generated: each clone is one worker moving over its files with the job's `iodepth`, as `file_service_type` says",
        support: Support::Mapped(|s, input| {
            s.nrfiles = integer(input.text()?, 1, u64::from(MAX_FILES))? as u32;
            Ok(())
        }),
    },
    OptionSpec {
        name: "size",
        aliases: &[],
        mapping: "I/O per clone, divided over its files (region and created size of each); without `time_based` the run length in bytes (× loops × clones); `N%`: that share of each existing file or device (rounded down to the smallest block), which must exist",
        support: Support::Mapped(|s, input| {
            match share(input.text()?, s.kb_base)? {
                Share::Percent(percent) => {
                    s.size = None;
                    s.extended.size_percent = Some(input.set(percent));
                }
                Share::Bytes(bytes) => {
                    s.size = (bytes > 0).then(|| input.set(bytes));
                    s.extended.size_percent = None;
                }
            }
            Ok(())
        }),
    },
    OptionSpec {
        name: "filesize",
        aliases: &[],
        mapping: "size of each file (region and created size); `size` then only sets the amount of I/O",
        support: Support::Mapped(|s, input| {
            let text = input.text()?;
            if text.contains(['-', ':']) && !text.starts_with('(') {
                return Err(OptionError::Unsupported(
                    "files of random sizes in a range are not supported; give one size".into(),
                ));
            }
            s.filesize = size_or_none(input, s.kb_base)?.map(|bytes| input.set(bytes));
            Ok(())
        }),
    },
    OptionSpec {
        name: "io_size",
        aliases: &["io_limit"],
        mapping: "I/O per clone instead of `size`, within the region `size` sets (run length in bytes without `time_based`); `N%`: that share of the region",
        support: Support::Mapped(|s, input| {
            match share(input.text()?, s.kb_base)? {
                Share::Percent(percent) => {
                    s.io_size = None;
                    s.extended.io_size_percent = Some(input.set(percent));
                }
                Share::Bytes(bytes) => {
                    s.io_size = (bytes > 0).then(|| input.set(bytes));
                    s.extended.io_size_percent = None;
                }
            }
            Ok(())
        }),
    },
    OptionSpec {
        name: "offset",
        aliases: &["fileoffset"],
        mapping: "start of the region in each file; `N%`: that share of each existing file or device, rounded up to `offset_align` (default: the smallest block)",
        support: Support::Mapped(|s, input| {
            match share(input.text()?, s.kb_base)? {
                Share::Percent(percent) => {
                    s.offset = 0;
                    s.extended.offset_percent = Some(input.set(percent));
                }
                Share::Bytes(bytes) => {
                    s.offset = bytes;
                    s.extended.offset_percent = None;
                }
            }
            Ok(())
        }),
    },
    OptionSpec {
        name: "offset_align",
        aliases: &[],
        mapping: "the alignment of offsets given as percentages (`offset=N%`, `offset_increment=N%`; 0: the smallest block)",
        support: Support::Mapped(|s, input| {
            s.extended.offset_align = size(input.text()?, s.kb_base)?;
            Ok(())
        }),
    },
    OptionSpec {
        name: "offset_increment",
        aliases: &[],
        mapping: "clone N's region starts N × this further (bytes or `N%` of the file, rounded up to the alignment of percentages); for clones sharing their files (`filename`, or targets on the command line)",
        support: Support::Mapped(|s, input| {
            let value = share(input.text()?, s.kb_base)?;
            s.extended.offset_increment = (value != Share::Bytes(0)).then(|| input.set(value));
            Ok(())
        }),
    },
    OptionSpec {
        name: "allow_file_create",
        aliases: &[],
        mapping: "0: missing files are an error instead of being created",
        support: Support::Mapped(|s, input| {
            s.allow_file_create = input.flag()?;
            Ok(())
        }),
    },
    OptionSpec {
        name: "allow_mounted_write",
        aliases: &[],
        mapping: "accepted; changes nothing",
        support: Support::Accepted(
            "iopath never writes to a mounted device or one that holds a filesystem, whatever this says",
        ),
    },
    OptionSpec {
        name: "unlink",
        aliases: &["unlink_each_loop"],
        mapping: "accepted with a note: files iopath creates are kept",
        support: Support::Mapped(|s, input| {
            s.unlink = input.flag()?;
            if s.unlink {
                input.note("unlink: the files iopath creates are kept after the run (remove them yourself)");
            }
            Ok(())
        }),
    },
    OptionSpec {
        name: "create_serialize",
        aliases: &["create_fsync"],
        mapping: "accepted; iopath creates every missing file before the first test",
        support: Support::Accepted(
            "iopath creates every missing file before the first test, one after the other, and syncs each one it fills",
        ),
    },
    OptionSpec {
        name: "fallocate",
        aliases: &[],
        mapping: "how a file iopath creates but does not fill (no job reads it) gets its size: `native` (default, as fio's on Linux) `fallocate(2)`, blocks reserved and no data written; `posix` `posix_fallocate(3)`; `keep` `fallocate` keeping the size at 0; `truncate` `ftruncate(2)`, a sparse file; `none` (`0`) an empty file; `1` is `posix`; the jobs' writes extend a file left short (`--fallocate`)",
        support: Support::Mapped(|s, input| {
            let text = input.text()?;
            s.fallocate = Preallocation::from_name(text).ok_or_else(|| {
                OptionError::BadValue(format!(
                    "'{text}' is not none, native, posix, keep, truncate, 0 or 1"
                ))
            })?;
            Ok(())
        }),
    },
    OptionSpec {
        name: "overwrite",
        aliases: &[],
        mapping: "1: a file iopath creates for a job that writes it is filled with data before the run, so that the writes overwrite data; 0 (default): only a file some job reads is filled, as fio lays out files (`--overwrite`)",
        support: Support::Mapped(|s, input| {
            s.overwrite = input.flag()?;
            Ok(())
        }),
    },
    OptionSpec {
        name: "invalidate",
        aliases: &[],
        mapping: "1 (default): the page cache is dropped before each test that has buffered jobs; 0: kept",
        support: Support::Mapped(|s, input| {
            s.invalidate = input.flag()?;
            Ok(())
        }),
    },
    OptionSpec {
        name: "lockfile",
        aliases: &[],
        mapping: "`none` only",
        support: Support::Mapped(|_, input| one_of(input, &["none"], "iopath does not lock files")),
    },
    OptionSpec {
        name: "file_service_type",
        aliases: &[],
        mapping: "how a clone picks the file of its next I/O: `roundrobin` (default), `sequential` (one file until its pass is done), `random`, each with `:N` I/Os before the next choice; `zipf`, `pareto`, `gauss`/`normal` draw files with the distribution's parameter (and centre)",
        support: Support::Mapped(|s, input| {
            let text = input.text()?;
            let text = match text.split_once(':') {
                Some(("sequential", count)) => {
                    input.note(format!(
                        "file_service_type={text}: sequential service stays on a file until its pass is done, so :{count} has no effect (as in fio)"
                    ));
                    "sequential"
                }
                _ => text,
            };
            let service = FileService::parse(text)
                .map_err(|error| OptionError::BadValue(error.to_string()))?;
            s.file_service = Some(input.set(service));
            Ok(())
        }),
    },
    OptionSpec {
        name: "openfiles",
        aliases: &[],
        mapping: "files a clone does I/O to, and holds open, at a time, the first ones in order; a file whose pass is done makes room for the next (psync, mmap, splice and io_uring: each file opened — and with mmap mapped — when its turn comes, the least recently used with no I/O in flight closed beyond the bound; other engines open all files before the run)",
        support: Support::Mapped(|s, input| {
            let open = integer(input.text()?, 1, u64::from(MAX_FILES))? as u32;
            s.open_files = Some(input.set(open));
            Ok(())
        }),
    },
    OptionSpec {
        name: "zonemode",
        aliases: &[],
        mapping: "`none` only",
        support: Support::Mapped(|_, input| {
            one_of(input, &["none"], "zoned I/O modes are not supported")
        }),
    },
    OptionSpec {
        name: "unique_filename",
        aliases: &[],
        mapping: "accepted; no client/server mode",
        support: Support::Accepted("iopath has no client/server mode; names are never prefixed"),
    },
    // I/O type.
    OptionSpec {
        name: "direct",
        aliases: &[],
        mapping: "1: O_DIRECT; 0 (fio's default): buffered (`workload.buffered`)",
        support: Support::Mapped(|s, input| {
            s.buffered = !input.flag()?;
            Ok(())
        }),
    },
    OptionSpec {
        name: "buffered",
        aliases: &[],
        mapping: "the opposite of `direct`",
        support: Support::Mapped(|s, input| {
            s.buffered = input.flag()?;
            Ok(())
        }),
    },
    OptionSpec {
        name: "rw",
        aliases: &["readwrite"],
        mapping: "read, write, randread, randwrite, rw/readwrite, randrw: direction shares and random % of the access lines; trim, randtrim: trims (discard, punched hole, NBD TRIM, SCSI UNMAP) of the trim block size (`bs`'s third value); trimwrite, randtrimwrite: each trim followed by a write of the same range; offset modifiers as in fio: `write:4k` leaves a 4k hole after each I/O, `read:-8k` steps back (backwards reads), `randread:8` draws a new random offset every 8 I/Os (the ones between follow `rw_sequencer`)",
        support: Support::Mapped(|s, input| {
            let (pattern, modifier) = parsers::pattern(input.text()?, s.kb_base)?;
            s.pattern = pattern;
            s.extended.modifier = Some(input.set(modifier));
            Ok(())
        }),
    },
    OptionSpec {
        name: "rw_sequencer",
        aliases: &[],
        mapping: "with `rw=randread:N`: `sequential` (default) continues after each I/O until the next random offset, `identical` repeats the offset",
        support: Support::Mapped(|s, input| {
            s.extended.repeat_offset = match input.text()? {
                "sequential" => false,
                "identical" => true,
                other => {
                    return Err(OptionError::BadValue(format!(
                        "'{other}' is not sequential or identical"
                    )));
                }
            };
            Ok(())
        }),
    },
    OptionSpec {
        name: "rwmixread",
        aliases: &[],
        mapping: "share of reads in a mix (default 50); no effect on a single direction (as in fio)",
        support: Support::Mapped(|s, input| {
            s.read_mix_percent = percent(input.text()?)?;
            s.read_mix_at = Some(input.at.clone());
            Ok(())
        }),
    },
    OptionSpec {
        name: "rwmixwrite",
        aliases: &[],
        mapping: "share of writes in a mix; the later of rwmixread/rwmixwrite wins",
        support: Support::Mapped(|s, input| {
            s.read_mix_percent = 100 - percent(input.text()?)?;
            s.read_mix_at = Some(input.at.clone());
            Ok(())
        }),
    },
    OptionSpec {
        name: "percentage_random",
        aliases: &[],
        mapping: "random % of each direction's lines for rand* patterns (per direction: `read,write,trim`)",
        support: Support::Mapped(|s, input| {
            for (direction, part) in per_direction(input.text()?).into_iter().take(3).enumerate() {
                if let Some(part) = part {
                    s.random_percent[direction] = percent(part)?;
                }
            }
            s.random_percent_at = Some(input.at.clone());
            Ok(())
        }),
    },
    OptionSpec {
        name: "random_distribution",
        aliases: &[],
        mapping: "random, zipf:θ[:centre], pareto:h[:centre], normal:σ[:centre], zoned:A/S:… (the last zone's size may be blank), zoned_abs:A/SIZE:…, sequence:B,B,… (blocks, with `random_sequence_stride`); the same for every direction",
        support: Support::Mapped(|s, input| {
            let text = input.text()?;
            if text.starts_with("sequence:") {
                s.distribution = Some(input.set(parsers::distribution(text, s.kb_base)?));
                return Ok(());
            }
            let parts: Vec<&str> = text.split(',').map(str::trim).collect();
            let first = parsers::distribution(parts[0], s.kb_base)?;
            for part in &parts[1..] {
                if !part.is_empty() && parsers::distribution(part, s.kb_base)? != first {
                    return Err(OptionError::Unsupported(
                        "a different distribution per direction is not supported".into(),
                    ));
                }
            }
            s.distribution = Some(input.set(first));
            Ok(())
        }),
    },
    OptionSpec {
        name: "randrepeat",
        aliases: &[],
        mapping: "1 (default): a fixed seed; 0: a seed drawn at load time (and shown)",
        support: Support::Mapped(|s, input| {
            s.randrepeat = input.flag()?;
            Ok(())
        }),
    },
    OptionSpec {
        name: "randseed",
        aliases: &[],
        mapping: "the workload seed",
        support: Support::Mapped(|s, input| {
            s.randseed = Some(integer(input.text()?, 0, u64::MAX)?);
            Ok(())
        }),
    },
    OptionSpec {
        name: "allrandrepeat",
        aliases: &[],
        mapping: "accepted; every random choice comes from the one seed",
        support: Support::Accepted("iopath draws every random choice from the workload seed"),
    },
    OptionSpec {
        name: "norandommap",
        aliases: &[],
        mapping: "random offsets are drawn independently and blocks may repeat; without it (fio's default) each block is visited once per pass over the region, the I/O cut short where it reaches a visited block (iopath's `--random-map`)",
        support: Support::Mapped(|s, input| {
            s.norandommap = input.flag()?;
            Ok(())
        }),
    },
    OptionSpec {
        name: "softrandommap",
        aliases: &[],
        mapping: "accepted; iopath always has its random map (memory permitting, checked before the run)",
        support: Support::Accepted(
            "iopath allocates the random map before the run, or refuses the job when it would not fit",
        ),
    },
    OptionSpec {
        name: "random_generator",
        aliases: &[],
        mapping: "accepted: iopath draws with its own generator; `lfsr` visits the blocks in a maximal-length LFSR's order (fio's taps, each block once per pass, the same order each pass) under the random map, even with `norandommap`",
        support: Support::Mapped(|s, input| {
            let text = input.text()?;
            match text {
                "tausworthe" | "tausworthe64" => {
                    s.extended.lfsr = None;
                    input.note(format!(
                        "random_generator={text}: iopath draws offsets with its own generator (the same distribution, other numbers)"
                    ));
                    Ok(())
                }
                "lfsr" => {
                    s.extended.lfsr = Some(input.set(()));
                    Ok(())
                }
                other => Err(OptionError::BadValue(format!(
                    "unknown generator '{other}' (tausworthe, tausworthe64, lfsr)"
                ))),
            }
        }),
    },
    OptionSpec {
        name: "fadvise_hint",
        aliases: &[],
        mapping: "the access-pattern hint (`posix_fadvise`) on each buffered file a worker opens: `1` (fio's default) random or sequential by the job's pattern, `0` none, or `sequential`, `random`, `normal`",
        support: Support::Mapped(|s, input| {
            s.fadvise_hint = match input.text()? {
                "1" | "true" | "yes" | "on" => AccessHint::ByPattern,
                "0" | "false" | "no" | "off" => AccessHint::None,
                "sequential" => AccessHint::Sequential,
                "random" => AccessHint::Random,
                "normal" => AccessHint::Normal,
                other => {
                    return Err(OptionError::BadValue(format!(
                        "'{other}' is not 0, 1, sequential, random or normal"
                    )));
                }
            };
            Ok(())
        }),
    },
    // Block sizes.
    OptionSpec {
        name: "bs",
        aliases: &["blocksize"],
        mapping: "block size per direction (`read,write[,trim]`; default 4k)",
        support: Support::Mapped(|s, input| {
            for (direction, part) in per_direction(input.text()?).into_iter().take(3).enumerate() {
                if let Some(part) = part {
                    s.blocks[direction] = parsers::fixed_block(part, s.kb_base)?;
                }
            }
            Ok(())
        }),
    },
    OptionSpec {
        name: "bsrange",
        aliases: &["blocksize_range"],
        mapping: "every multiple of the smallest size up to the largest (250 evenly spaced ones for a wider range), equal shares, and the largest with the rest where it is not a multiple (fio's draw), per direction",
        support: Support::Mapped(|s, input| {
            for (direction, part) in per_direction(input.text()?).into_iter().take(3).enumerate() {
                if let Some(part) = part {
                    s.blocks[direction] = parsers::block_range(part, s.kb_base)?;
                }
            }
            Ok(())
        }),
    },
    OptionSpec {
        name: "bssplit",
        aliases: &[],
        mapping: "size/percent mix per direction (`2k/50:4k/50,4k/90:8k/10`); lines weighted direction share × size share",
        support: Support::Mapped(|s, input| {
            for (direction, part) in per_direction(input.text()?).into_iter().take(3).enumerate() {
                if let Some(part) = part {
                    s.splits[direction] = Some(parsers::split(part, s.kb_base)?);
                }
            }
            Ok(())
        }),
    },
    OptionSpec {
        name: "blockalign",
        aliases: &["ba"],
        mapping: "alignment of random offsets per direction (default: the direction's smallest block)",
        support: Support::Mapped(|s, input| {
            for (direction, part) in per_direction(input.text()?).into_iter().take(3).enumerate() {
                if let Some(part) = part {
                    let bytes = size(part, s.kb_base)?;
                    if bytes == 0 {
                        return Err(OptionError::BadValue("must be above 0".into()));
                    }
                    s.alignments[direction] = Some(bytes);
                }
            }
            Ok(())
        }),
    },
    OptionSpec {
        name: "bs_unaligned",
        aliases: &["blocksize_unaligned"],
        mapping: "refused",
        support: Support::Refused("block sizes are always multiples of the smallest size"),
    },
    OptionSpec {
        name: "bs_is_seq_rand",
        aliases: &[],
        mapping: "refused",
        support: Support::Refused("block sizes per sequential/random are not supported"),
    },
    // Buffers and sync.
    OptionSpec {
        name: "zero_buffers",
        aliases: &[],
        mapping: "writes zeros (`--zero-buffers`), not scrambled unless `scramble_buffers=1` comes later",
        support: Support::Mapped(data_options::zero_buffers),
    },
    OptionSpec {
        name: "refill_buffers",
        aliases: &[],
        mapping: "fills every write again before it is issued, which costs CPU time (`--refill-buffers`); on by default with `buffer_compress_percentage` below 100 or `dedupe_percentage`, as in fio; `refill_buffers=0` turns it off",
        support: Support::Mapped(data_options::refill_buffers),
    },
    OptionSpec {
        name: "scramble_buffers",
        aliases: &[],
        mapping: "1 (default): every 512-byte sector of a write gets 24 bytes drawn from its offset and the write, so repeated buffers are not identical blocks; not with refill, compression or dedupe, nor after `zero_buffers` or `buffer_pattern` unless set again, as in fio (`--scramble-buffers`)",
        support: Support::Mapped(data_options::scramble_buffers),
    },
    OptionSpec {
        name: "buffer_compress_percentage",
        aliases: &[],
        mapping: "each chunk of a write is random bytes then zeros (or the pattern), so writes compress by this share (`--compress-pct`); 100 writes zeros; refilled per write unless `refill_buffers=0`",
        support: Support::Mapped(data_options::compress_percentage),
    },
    OptionSpec {
        name: "buffer_compress_chunk",
        aliases: &[],
        mapping: "the chunk `buffer_compress_percentage` shapes (default 512; 0: the block; never longer than the smallest write block) (`--compress-chunk`)",
        support: Support::Mapped(data_options::compress_chunk),
    },
    OptionSpec {
        name: "buffer_pattern",
        aliases: &[],
        mapping: "fills buffers with the pattern: `0x` hex, `\"text\"`, `'file'` (read at load time) and decimal numbers, one after the other, at most 64 KiB; the fixed part of compressible chunks (`--buffer-pattern`); `%o` formats refused",
        support: Support::Mapped(data_options::pattern),
    },
    OptionSpec {
        name: "dedupe_percentage",
        aliases: &[],
        mapping: "share of written buffers that repeat an earlier one (`--dedupe-pct`); refilled per write",
        support: Support::Mapped(data_options::dedupe_percentage),
    },
    OptionSpec {
        name: "dedupe_mode",
        aliases: &[],
        mapping: "`repeat` (the previous new buffer) or `working_set` (one of the worker's first new buffers) (`--dedupe-mode`)",
        support: Support::Mapped(data_options::dedupe_mode),
    },
    OptionSpec {
        name: "dedupe_working_set_percentage",
        aliases: &[],
        mapping: "working set of `dedupe_mode=working_set`, percent of each worker's region (default 5; with `dedupe_percentage` at most 100) (`--dedupe-working-set-pct`)",
        support: Support::Mapped(data_options::dedupe_working_set),
    },
    OptionSpec {
        name: "dedupe_global",
        aliases: &[],
        mapping: "0 only (each worker keeps its own working set)",
        support: Support::Mapped(data_options::dedupe_global),
    },
    OptionSpec {
        name: "iomem",
        aliases: &["mem"],
        mapping: "`malloc` only (iopath's own aligned buffers)",
        support: Support::Mapped(|_, input| {
            one_of(
                input,
                &["malloc"],
                "iopath uses its own page-aligned buffers; shared memory and huge pages are not supported",
            )
        }),
    },
    OptionSpec {
        name: "sync",
        aliases: &[],
        mapping: "dsync → O_DSYNC writes; 1/sync → O_DSYNC too (a note says so); 0/none: off",
        support: Support::Mapped(|s, input| {
            s.sync_writes = match input.value.map(str::trim).unwrap_or("1") {
                "0" | "none" => false,
                "dsync" => true,
                "1" | "sync" => {
                    input.note("sync: iopath opens with O_DSYNC where fio uses O_SYNC (the same on a block device; on a file O_SYNC also writes inode timestamps)");
                    true
                }
                other => {
                    return Err(OptionError::BadValue(format!(
                        "'{other}' is not none, sync or dsync"
                    )));
                }
            };
            Ok(())
        }),
    },
    OptionSpec {
        name: "fsync",
        aliases: &[],
        mapping: "fdatasync after every N writes (a note says fsync becomes fdatasync)",
        support: Support::Mapped(|s, input| {
            let every = integer(input.text()?, 0, u32::MAX as u64)? as u32;
            if every > 0 {
                input.note("fsync: iopath issues fdatasync (the data, not the inode timestamps)");
            }
            s.fsync_every_writes = (every > 0).then_some(every);
            Ok(())
        }),
    },
    OptionSpec {
        name: "fdatasync",
        aliases: &[],
        mapping: "fdatasync after every N writes",
        support: Support::Mapped(|s, input| {
            let every = integer(input.text()?, 0, u32::MAX as u64)? as u32;
            s.fsync_every_writes = (every > 0).then_some(every);
            Ok(())
        }),
    },
    OptionSpec {
        name: "end_fsync",
        aliases: &["fsync_on_close"],
        mapping: "fdatasync at the end, its time included (`fsync_at_end`)",
        support: Support::Mapped(|s, input| {
            s.end_fsync = input.flag()?.then(|| input.at.clone());
            Ok(())
        }),
    },
    OptionSpec {
        name: "write_barrier",
        aliases: &["sync_file_range"],
        mapping: "refused",
        support: Support::Refused("barrier writes and sync_file_range are not supported"),
    },
    // Engine and depth.
    OptionSpec {
        name: "ioengine",
        aliases: &[],
        mapping: "io_uring, libaio (direct=1) → io_uring; libaio with buffered I/O (direct=0) → sync, one I/O in flight, as Linux AIO performs it inside io_submit; psync (default), sync, pvsync, pvsync2, vsync → sync; null → null; nbd → NBD client on `uri`; libiscsi → iSCSI initiator on `filename`; nfs → NFS client on the files named in `nfs_url`; filecreate, filestat, filedelete, dircreate, dirstat, dirdelete → the same file operations, one per I/O; others refused",
        support: Support::Mapped(|s, input| {
            let text = input.text()?;
            let (kind, note) = parsers::engine(text)?;
            if let Some(note) = note {
                input.note(format!("ioengine={text}: {note}"));
            }
            s.engine = input.set((text.to_string(), kind));
            Ok(())
        }),
    },
    OptionSpec {
        name: "iodepth",
        aliases: &[],
        mapping: "queue depth per worker; with a sync engine fio keeps one I/O in flight whatever iodepth says, and so does iopath; a job replaying a blktrace capture without it takes the capture's depth (as fio does)",
        support: Support::Mapped(|s, input| {
            s.iodepth = integer(
                input.text()?,
                1,
                crate::workload::limits::MAX_QUEUE_DEPTH.into(),
            )? as u32;
            s.iodepth_set = true;
            Ok(())
        }),
    },
    OptionSpec {
        name: "iodepth_batch_submit",
        aliases: &[
            "iodepth_batch",
            "iodepth_batch_complete_min",
            "iodepth_batch_complete",
            "iodepth_batch_complete_max",
            "iodepth_low",
        ],
        mapping: "accepted with a note",
        support: Support::Accepted(BATCHING),
    },
    OptionSpec {
        name: "io_submit_mode",
        aliases: &[],
        mapping: "inline; offload accepted with a note (iopath paces rated I/O on a fixed schedule, which is what offload gives fio)",
        support: Support::Mapped(|_, input| match input.text()? {
            "inline" => Ok(()),
            "offload" => {
                input.note("io_submit_mode=offload: iopath issues rated I/O on a fixed schedule (I/O n is due at n/rate) whatever the completions do, from the worker itself");
                Ok(())
            }
            other => Err(OptionError::BadValue(format!(
                "'{other}' is not inline or offload"
            ))),
        }),
    },
    OptionSpec {
        name: "fixedbufs",
        aliases: &["registerfiles"],
        mapping: "accepted; iopath registers buffers and files with io_uring where it can",
        support: Support::Accepted(
            "iopath registers its buffers and files with io_uring where the kernel allows it",
        ),
    },
    OptionSpec {
        name: "hipri",
        aliases: &["sqthread_poll", "sqthread_poll_cpu", "nowait"],
        mapping: "refused",
        support: Support::Refused("io_uring polling and submission modes are not configurable"),
    },
    OptionSpec {
        name: "force_async",
        aliases: &[],
        mapping: "io_uring: every Nth submission carries `IOSQE_ASYNC` (the kernel performs it from a worker thread), as fio does; `0` none",
        support: Support::Mapped(|s, input| {
            let every = integer(input.text()?, 0, u64::from(u32::MAX))? as u32;
            s.force_async = Some(input.set(every));
            Ok(())
        }),
    },
    OptionSpec {
        name: "numjobs",
        aliases: &[],
        mapping: "clones: with `filename`, workers on the shared files; without, one generated file (`$jobname.$clone.$filenum`) and one worker per clone",
        support: Support::Mapped(|s, input| {
            s.numjobs = integer(input.text()?, 1, 4096)? as u32;
            Ok(())
        }),
    },
    OptionSpec {
        name: "thread",
        aliases: &[],
        mapping: "accepted; iopath always runs threads (fio without `thread` runs each clone as a process, which can change buffered results)",
        support: Support::Accepted(
            "iopath always runs its workers as threads, as fio does with `thread`",
        ),
    },
    OptionSpec {
        name: "threads",
        aliases: &[],
        mapping: "0/1 accepted as `thread`; a count (fio's tiobench profile) refused: use numjobs",
        support: Support::Mapped(|_, input| match input.value.map(str::trim) {
            None | Some("" | "0" | "1") => {
                input.note(
                    "threads: iopath always runs its workers as threads, as fio does with `thread`",
                );
                Ok(())
            }
            Some(other) => Err(OptionError::Unsupported(format!(
                "threads={other} is a thread count of fio's tiobench profile; give numjobs={other} for that many workers"
            ))),
        }),
    },
    // Time.
    OptionSpec {
        name: "runtime",
        aliases: &["timeout"],
        mapping: "with `time_based`: the measured time (after `ramp_time`); without: a time limit on the byte count (also counted after `ramp_time`)",
        support: Support::Mapped(|s, input| {
            let nanos = seconds(input)?;
            s.runtime = (nanos > 0).then(|| input.set(nanos));
            Ok(())
        }),
    },
    OptionSpec {
        name: "time_based",
        aliases: &[],
        mapping: "run for `runtime` (RunLength::Time); without `runtime`, fio drops `time_based` with a complaint and runs the byte count, and so does iopath (with a note)",
        support: Support::Mapped(|s, input| {
            s.time_based = input.flag()?.then(|| input.at.clone());
            Ok(())
        }),
    },
    OptionSpec {
        name: "ramp_time",
        aliases: &[],
        mapping: "unmeasured I/O before the measured time; in a job that runs to a byte count, the ramp's I/O counts towards the bytes but not in the results (as in fio)",
        support: Support::Mapped(|s, input| {
            let nanos = seconds(input)?;
            s.ramp = (nanos > 0).then(|| input.set(nanos));
            Ok(())
        }),
    },
    OptionSpec {
        name: "startdelay",
        aliases: &[],
        mapping: "delay before the job starts; `A-B`: each clone's delay drawn evenly between A and B (from the job's seed)",
        support: Support::Mapped(|s, input| {
            let text = input.text()?;
            let range = if text.starts_with('(') {
                None
            } else {
                text.split_once(['-', ':'])
            };
            match range {
                Some((low, high)) => {
                    let (low, high) = (time_ns(low, SECOND_NS)?, time_ns(high, SECOND_NS)?);
                    s.start_delay_ns = low.min(high);
                    s.extended.start_delay_high_ns = Some(low.max(high));
                }
                None => {
                    s.start_delay_ns = seconds(input)?;
                    s.extended.start_delay_high_ns = None;
                }
            }
            Ok(())
        }),
    },
    OptionSpec {
        name: "loops",
        aliases: &[],
        mapping: "multiplies the byte count",
        support: Support::Mapped(|s, input| {
            s.loops = integer(input.text()?, 1, u32::MAX as u64)? as u32;
            Ok(())
        }),
    },
    OptionSpec {
        name: "number_ios",
        aliases: &[],
        mapping: "most I/Os per clone (`io_limit`)",
        support: Support::Mapped(|s, input| {
            let count = integer(input.text()?, 0, u64::MAX)?;
            s.number_ios = (count > 0).then(|| input.set(count));
            Ok(())
        }),
    },
    OptionSpec {
        name: "gtod_reduce",
        aliases: &[
            "disable_lat",
            "disable_clat",
            "disable_slat",
            "disable_bw_measurement",
            "disable_bw",
        ],
        mapping: "accepted; iopath always timestamps every I/O",
        support: Support::Accepted(
            "iopath timestamps every I/O with the CPU clock; there is nothing to reduce or disable",
        ),
    },
    OptionSpec {
        name: "clocksource",
        aliases: &[],
        mapping: "accepted; iopath reads the CPU clock itself",
        support: Support::Accepted("iopath reads the CPU clock (TSC) itself"),
    },
    OptionSpec {
        name: "gtod_cpu",
        aliases: &[],
        mapping: "refused",
        support: Support::Refused(PLACEMENT),
    },
    // Rates and think time.
    OptionSpec {
        name: "rate",
        aliases: &[],
        mapping: "bytes/s per clone and direction; iopath caps the job's total at the rate that holds each capped direction to its cap (clones × min(cap ÷ byte share))",
        support: Support::Mapped(|s, input| {
            for (direction, part) in per_direction(input.text()?).into_iter().take(2).enumerate() {
                s.rate[direction] = match part {
                    Some(part) => Some(size(part, s.kb_base)?).filter(|rate| *rate > 0),
                    None => None,
                };
            }
            s.rate_at = Some(input.at.clone());
            Ok(())
        }),
    },
    OptionSpec {
        name: "rate_iops",
        aliases: &[],
        mapping: "IOPS per clone and direction, mapped like `rate`",
        support: Support::Mapped(|s, input| {
            for (direction, part) in per_direction(input.text()?).into_iter().take(2).enumerate() {
                s.rate_iops[direction] = match part {
                    Some(part) => Some(integer(part, 0, u64::MAX)?).filter(|rate| *rate > 0),
                    None => None,
                };
            }
            s.rate_at = Some(input.at.clone());
            Ok(())
        }),
    },
    OptionSpec {
        name: "rate_min",
        aliases: &["ratemin", "rate_iops_min"],
        mapping: "accepted with a note: not enforced",
        support: Support::Accepted(
            "not enforced: iopath does not stop a job that falls below it; compare the rate it reports",
        ),
    },
    OptionSpec {
        name: "rate_cycle",
        aliases: &["ratecycle"],
        mapping: "accepted; iopath paces every I/O on a fixed schedule",
        support: Support::Accepted(
            "iopath paces every I/O on a fixed schedule (I/O n is due at n/rate); there is no averaging window",
        ),
    },
    OptionSpec {
        name: "rate_process",
        aliases: &[],
        mapping: "`linear` (default): rated I/Os evenly spaced; `poisson`: exponentially distributed gaps with the rate's mean (a Poisson arrival process, over the job's clones together)",
        support: Support::Mapped(|s, input| {
            s.extended.poisson = match input.text()? {
                "linear" => None,
                "poisson" => Some(input.set(())),
                other => {
                    return Err(OptionError::BadValue(format!(
                        "'{other}' is not linear or poisson"
                    )));
                }
            };
            Ok(())
        }),
    },
    OptionSpec {
        name: "rate_ignore_thinktime",
        aliases: &[],
        mapping: "0 only (iopath catches up after think time, as fio does by default)",
        support: Support::Mapped(|_, input| {
            if input.flag()? {
                return Err(OptionError::Unsupported(
                    "iopath's rate schedule catches up after think time".into(),
                ));
            }
            Ok(())
        }),
    },
    OptionSpec {
        name: "thinktime",
        aliases: &[],
        mapping: "pause after every `thinktime_blocks` I/Os (bare numbers are microseconds)",
        support: Support::Mapped(|s, input| {
            s.think_time_ns = time_ns(input.text()?, MICROSECOND_NS)?;
            Ok(())
        }),
    },
    OptionSpec {
        name: "thinktime_blocks",
        aliases: &[],
        mapping: "I/Os between pauses (iopath counts issued I/Os, fio's thinktime_blocks_type=issue)",
        support: Support::Mapped(|s, input| {
            s.think_time_blocks = integer(input.text()?, 1, 1_000_000_000)? as u32;
            Ok(())
        }),
    },
    OptionSpec {
        name: "thinktime_blocks_type",
        aliases: &[],
        mapping: "accepted; iopath counts issued I/Os (`issue`)",
        support: Support::Mapped(|_, input| match input.text()? {
            "issue" => Ok(()),
            "complete" => {
                input.note("thinktime_blocks_type=complete: iopath counts issued I/Os (the same at iodepth=1)");
                Ok(())
            }
            other => Err(OptionError::BadValue(format!(
                "'{other}' is not complete or issue"
            ))),
        }),
    },
    OptionSpec {
        name: "thinktime_spin",
        aliases: &[],
        mapping: "accepted; iopath sleeps through the think time",
        support: Support::Accepted(
            "iopath sleeps through the think time (spinning only its last 100 µs)",
        ),
    },
    OptionSpec {
        name: "thinktime_iotime",
        aliases: &[],
        mapping: "refused",
        support: Support::Refused("think time after a period of I/O is not supported"),
    },
    // Latency targets.
    OptionSpec {
        name: "latency_target",
        aliases: &[],
        mapping: "each clone searches for the deepest queue (up to `iodepth`) whose latency meets this target (bare numbers are microseconds): window after window it doubles its depth while the target holds and bisects when it fails; the result reports the depth found and its IOPS",
        support: Support::Mapped(|s, input| {
            let nanos = time_ns(input.text()?, MICROSECOND_NS)?;
            s.extended.latency_target = (nanos > 0).then(|| input.set(nanos));
            Ok(())
        }),
    },
    OptionSpec {
        name: "latency_window",
        aliases: &[],
        mapping: "the window each depth is judged over (bare numbers are microseconds; needed with `latency_target`)",
        support: Support::Mapped(|s, input| {
            let nanos = time_ns(input.text()?, MICROSECOND_NS)?;
            s.extended.latency_window_ns = (nanos > 0).then_some(nanos);
            Ok(())
        }),
    },
    OptionSpec {
        name: "latency_percentile",
        aliases: &[],
        mapping: "share of a window's I/Os that must meet the target (default 100: every I/O, and one that misses lowers the depth at once)",
        support: Support::Mapped(|s, input| {
            let text = input.text()?;
            s.extended.latency_percentile = text
                .trim_end_matches('%')
                .parse::<f64>()
                .ok()
                .filter(|value| *value > 0.0 && *value <= 100.0)
                .ok_or_else(|| {
                    OptionError::BadValue(format!("'{text}' is not a percentage above 0"))
                })?;
            Ok(())
        }),
    },
    OptionSpec {
        name: "latency_run",
        aliases: &[],
        mapping: "0 (default): the job ends after one more window at the depth found, which is what it reports; 1: keep adjusting the depth until the job ends",
        support: Support::Mapped(|s, input| {
            s.extended.latency_run = input.flag()?;
            Ok(())
        }),
    },
    OptionSpec {
        name: "max_latency",
        aliases: &[],
        mapping: "refused",
        support: Support::Refused("iopath does not stop a job on a latency limit"),
    },
    // Jobs, groups and order.
    OptionSpec {
        name: "stonewall",
        aliases: &["wait_for_previous"],
        mapping: "starts a new test (the jobs before it have ended) and a new reporting group",
        support: Support::Mapped(|s, input| {
            s.stonewall = input.flag()?;
            Ok(())
        }),
    },
    OptionSpec {
        name: "new_group",
        aliases: &[],
        mapping: "starts a new reporting group (`group` of the job)",
        support: Support::Mapped(|s, input| {
            s.new_group = input.flag()?;
            Ok(())
        }),
    },
    OptionSpec {
        name: "group_reporting",
        aliases: &[],
        mapping: "accepted: iopath reports each job with its clones merged and tags it with its group",
        support: Support::Mapped(|s, input| {
            s.group_reporting = input.flag()?;
            Ok(())
        }),
    },
    OptionSpec {
        name: "exitall",
        aliases: &[],
        mapping: "when this job ends, the other jobs of its reporting group end too (their measured time ends there); see `exit_what`",
        support: Support::Mapped(|s, input| {
            s.extended.exitall = input.flag()?.then(|| input.set(()));
            Ok(())
        }),
    },
    OptionSpec {
        name: "exit_what",
        aliases: &[],
        mapping: "with `exitall`: `group` (default), `stonewall` (every job running; the next test still runs) or `all` (every job, and no later test runs)",
        support: Support::Mapped(|s, input| {
            s.extended.exit_what = match input.text()? {
                "group" => EndOthers::Group,
                "stonewall" => EndOthers::Test,
                "all" => EndOthers::Run,
                other => {
                    return Err(OptionError::BadValue(format!(
                        "'{other}' is not group, stonewall or all"
                    )));
                }
            };
            Ok(())
        }),
    },
    OptionSpec {
        name: "exitall_on_error",
        aliases: &[],
        mapping: "when the job ends on an error, every running job ends too and no later test runs (without it only the failing job ends, as in fio)",
        support: Support::Mapped(|s, input| {
            s.extended.exitall_on_error = input.flag()?.then(|| input.set(()));
            Ok(())
        }),
    },
    OptionSpec {
        name: "wait_for",
        aliases: &[],
        mapping: "starts the job once the named earlier job has ended: a new test when that job runs alone in the current one (the same reporting group), nothing when it ran in an earlier test; refused when other jobs run beside it (iopath's tests wait for all their jobs)",
        support: Support::Mapped(|s, input| {
            let name = input.text()?.trim();
            if name.is_empty() {
                return Err(OptionError::BadValue("needs a job's name".into()));
            }
            s.wait_for = Some(input.set(name.to_string()));
            Ok(())
        }),
    },
    OptionSpec {
        name: "flow",
        aliases: &[],
        mapping: "weight in a flow: the jobs with the same `flow_id` keep their I/O counts in the ratio of their weights (each clone weighs this much); a worker ahead of its share waits",
        support: Support::Mapped(|s, input| {
            let weight = integer(input.text()?, 0, u64::from(u32::MAX))? as u32;
            s.extended.flow = (weight > 0).then(|| input.set(weight));
            Ok(())
        }),
    },
    OptionSpec {
        name: "flow_id",
        aliases: &[],
        mapping: "the flow a job's `flow` weight belongs to (default 0)",
        support: Support::Mapped(|s, input| {
            s.extended.flow_id = integer(input.text()?, 0, u64::from(u32::MAX))? as u32;
            Ok(())
        }),
    },
    OptionSpec {
        name: "flow_sleep",
        aliases: &[],
        mapping: "how long a worker ahead of its share waits before it looks again (microseconds; default: 10 µs slices)",
        support: Support::Mapped(|s, input| {
            s.extended.flow_sleep_ns = time_ns(input.text()?, MICROSECOND_NS)?;
            Ok(())
        }),
    },
    OptionSpec {
        name: "flow_watermark",
        aliases: &[],
        mapping: "refused",
        support: Support::Refused("flow watermarks are not supported (fio ignores them too)"),
    },
    OptionSpec {
        name: "cpus_allowed",
        aliases: &[],
        mapping: "the CPUs the job's workers run on (`0,5,8-15`), set on each worker thread (sched_setaffinity); CPUs must be ones this process may use",
        support: Support::Mapped(|s, input| {
            s.extended.cpus = Some(input.set(cpu_list(input.text()?, None)?));
            Ok(())
        }),
    },
    OptionSpec {
        name: "cpumask",
        aliases: &[],
        mapping: "the CPUs as a bit mask (`34` = CPUs 1 and 5), like `cpus_allowed`",
        support: Support::Mapped(|s, input| {
            s.extended.cpus = Some(input.set(cpu_mask(input.text()?)?));
            Ok(())
        }),
    },
    OptionSpec {
        name: "cpus_allowed_policy",
        aliases: &[],
        mapping: "`shared` (default): every worker may use all the CPUs; `split`: each clone gets one CPU of the set in turn, counting clones over the job file",
        support: Support::Mapped(|s, input| {
            s.extended.cpus_split = match input.text()? {
                "shared" => false,
                "split" => true,
                other => {
                    return Err(OptionError::BadValue(format!(
                        "'{other}' is not shared or split"
                    )));
                }
            };
            Ok(())
        }),
    },
    OptionSpec {
        name: "numa_cpu_nodes",
        aliases: &[],
        mapping: "the workers run on the CPUs of these NUMA nodes (`0`, `0-1`, `all`; nodes this machine lacks are left out, with a note); wins over `cpus_allowed`, as in fio",
        support: Support::Mapped(|s, input| {
            s.extended.numa_nodes = Some(input.set(cpu_list(input.text()?, Some(4095))?));
            Ok(())
        }),
    },
    OptionSpec {
        name: "numa_mem_policy",
        aliases: &[],
        mapping: "accepted with a note: iopath allocates its buffers on the node the worker first touches them from (the kernel's default); the policy is not applied",
        support: Support::Mapped(|s, input| {
            let text = input.text()?;
            numa_mem_policy(text)?;
            s.extended.numa_mem_policy = Some(input.set(text.to_string()));
            Ok(())
        }),
    },
    OptionSpec {
        name: "nice",
        aliases: &[
            "prio",
            "prioclass",
            "cmdprio_percentage",
            "cgroup",
            "cgroup_weight",
            "cgroup_nodelete",
            "uid",
            "gid",
        ],
        mapping: "refused",
        support: Support::Refused(PLACEMENT),
    },
    // Verification.
    OptionSpec {
        name: "verify",
        aliases: &[],
        mapping: "`crc32c` (`crc32c-intel`), `crc32`, `md5`, `sha256`, `xxhash` (XXH3), `meta`, `pattern`; `0`/`none` off; other kinds refused (`--verify`; docs/verify.md)",
        support: Support::Mapped(verify_options::kind),
    },
    OptionSpec {
        name: "do_verify",
        aliases: &[],
        mapping: "read back and check every written block after the workload (default 1; `--verify-read-back`); in a time-based job (`time_based`), as in fio, each pass's writes are read back when the next pass begins, the reads counted as the job's reads; what the pass the time cuts short wrote is read back after the workload, outside the measured time (fio leaves it unchecked; docs/verify.md). fio 3.33 ends a pass only on an engine that queues (io_uring, libaio): with a synchronous one (`sync`, `psync`) its time-based verifying job never reads back (\"verification read phase will never start\"), where iopath reads back each pass on every engine",
        support: Support::Mapped(verify_options::after_writes),
    },
    OptionSpec {
        name: "verify_only",
        aliases: &[],
        mapping: "no workload: only read and check the region, or the blocks a loaded state names (`--verify-only`)",
        support: Support::Mapped(verify_options::only),
    },
    OptionSpec {
        name: "verify_fatal",
        aliases: &[],
        mapping: "stop the job at the first bad block (default: check every block, then fail) (`--verify-fatal`)",
        support: Support::Mapped(verify_options::fatal),
    },
    OptionSpec {
        name: "verify_interval",
        aliases: &[],
        mapping: "bytes each header covers (default: the smallest block size) (`--verify-interval`); as in fio, an interval larger than the smallest block is that block's size, and one that does not divide the smallest and largest block is their greatest common divisor",
        support: Support::Mapped(verify_options::interval),
    },
    OptionSpec {
        name: "verify_offset",
        aliases: &[],
        mapping: "where the header sits in each interval (`--verify-offset`)",
        support: Support::Mapped(verify_options::header_offset),
    },
    OptionSpec {
        name: "verify_pattern",
        aliases: &[],
        mapping: "the bytes after each header are this pattern and are checked (`buffer_pattern` syntax; `%o` refused) (`--verify-pattern`)",
        support: Support::Mapped(verify_options::pattern),
    },
    OptionSpec {
        name: "verify_state_save",
        aliases: &[],
        mapping: "when set to 1, save each worker's written blocks to `JOB-N-verify.state` in the current directory (fio saves by default; iopath only when asked) (`--verify-state-save`)",
        support: Support::Mapped(verify_options::state_save),
    },
    OptionSpec {
        name: "verify_state_load",
        aliases: &[],
        mapping: "check exactly the blocks a saved state names, with `verify_only` (`--verify-state-load`)",
        support: Support::Mapped(verify_options::state_load),
    },
    OptionSpec {
        name: "verify_async",
        aliases: &["verify_async_cpus"],
        mapping: "accepted with a note",
        support: Support::Accepted(
            "iopath checks each block in the worker that read it, as it completes",
        ),
    },
    OptionSpec {
        name: "verify_dump",
        aliases: &[],
        mapping: "accepted with a note",
        support: Support::Accepted(
            "bad blocks are described in the result (offset, expected, found, the run that wrote them), not dumped to files",
        ),
    },
    OptionSpec {
        name: "verify_backlog",
        aliases: &[],
        mapping: "after every N writes (size suffixes multiply, as in fio: `1m` is 1048576), read those blocks back and check them while the workload runs (the reads count as reads; not towards `size`) (`--verify-backlog`)",
        support: Support::Mapped(verify_options::backlog),
    },
    OptionSpec {
        name: "verify_backlog_batch",
        aliases: &[],
        mapping: "accepted with a note",
        support: Support::Accepted("iopath reads the whole backlog back at once"),
    },
    OptionSpec {
        name: "experimental_verify",
        aliases: &[],
        mapping: "`1`: the written blocks are read back and checked as with `verify` alone: iopath's read-back already stores no list of writes (its ledger is one 4-byte generation per interval, sized before the run) and finds each written block again from it, where fio replays the job's offsets",
        support: Support::Mapped(|_, input| {
            if input.flag()? {
                input.note("experimental_verify=1: iopath reads the written blocks back from its ledger of intervals (a fixed 4 bytes each), which already keeps no list of writes; the same blocks are checked, in region order rather than in the order they were written");
            }
            Ok(())
        }),
    },
    OptionSpec {
        name: "verify_bytchk",
        aliases: &[
            "verify_header_seed",
            "verify_mode",
            "verify_pattern_interval",
            "verify_policy",
            "verify_write_sequence",
        ],
        mapping: "refused",
        support: Support::Refused(VERIFY),
    },
    OptionSpec {
        name: "trim_percentage",
        aliases: &[],
        mapping: "with `verify` and `trim_backlog`: this share of the completed writes is picked to be trimmed (a discard, a punched hole) while the workload runs, and checked as trimmed when read back (docs/verify.md); without `trim_backlog` nothing is trimmed, as in fio",
        support: Support::Mapped(verify_options::trim_percent),
    },
    OptionSpec {
        name: "trim_backlog",
        aliases: &[],
        mapping: "after every N completed writes, trim a batch of the picked blocks before going on (the trims count as trims; not towards `size`)",
        support: Support::Mapped(verify_options::trim_backlog),
    },
    OptionSpec {
        name: "trim_backlog_batch",
        aliases: &[],
        mapping: "trims in each batch (default: `trim_backlog`)",
        support: Support::Mapped(verify_options::trim_batch),
    },
    OptionSpec {
        name: "trim_verify_zero",
        aliases: &[],
        mapping: "`1` (the default): a trimmed block must read back as zeroes (`not_zero_after_trim` otherwise), and a target that does not document zeroes after a trim is refused (exit 2); `0`: a trimmed block reads as never written, or is not checked",
        support: Support::Mapped(verify_options::trim_verify_zero),
    },
    // Steady state.
    OptionSpec {
        name: "steadystate",
        aliases: &["ss"],
        mapping: "the test ends once steady (iopath's steady-state criterion; slope limits are scaled to iopath's change-across-the-window definition)",
        support: Support::Mapped(|s, input| {
            s.steady = Some(input.set(parsers::steady(input.text()?)?));
            Ok(())
        }),
    },
    OptionSpec {
        name: "steadystate_duration",
        aliases: &["ss_dur"],
        mapping: "the steady-state window (whole seconds)",
        support: Support::Mapped(|s, input| {
            s.steady_duration = Some(input.set(seconds(input)?));
            Ok(())
        }),
    },
    OptionSpec {
        name: "steadystate_ramp_time",
        aliases: &["ss_ramp"],
        mapping: "time from the job's start before steady-state samples are taken (and never during `ramp_time`)",
        support: Support::Mapped(|s, input| {
            let nanos = seconds(input)?;
            s.steady_ramp = (nanos > 0).then(|| input.set(nanos));
            Ok(())
        }),
    },
    OptionSpec {
        name: "steadystate_check_interval",
        aliases: &["ss_interval"],
        mapping: "how often a steady-state sample is taken (whole seconds dividing `ss_dur`; default 1s): each sample is the mean over its interval",
        support: Support::Mapped(|s, input| {
            let nanos = seconds(input)?;
            if nanos == 0 || !nanos.is_multiple_of(SECOND_NS) {
                return Err(OptionError::BadValue(
                    "the interval must be a whole number of seconds".into(),
                ));
            }
            s.extended.steady_interval = Some(input.set(nanos));
            Ok(())
        }),
    },
    // Errors.
    OptionSpec {
        name: "continue_on_error",
        aliases: &[],
        mapping: "which kinds of error the job keeps going after, as fio: `none`/`0`, `read`, `write`, `io` (read and write), `verify`, `all`/`1`; only errors whose errno is in the kind's `ignore_error` list (`EIO` and `EILSEQ` unless given) — any other error ends the job",
        support: Support::Mapped(|s, input| {
            s.error_policy.continue_on = match input.text()? {
                "none" | "0" => [false, false, false],
                "read" => [true, false, false],
                "write" => [false, true, false],
                "io" => [true, true, false],
                "verify" => [false, false, true],
                "all" | "1" => [true, true, true],
                other => {
                    return Err(OptionError::BadValue(format!(
                        "'{other}' is not none, read, write, io, verify, all, 0 or 1"
                    )));
                }
            };
            Ok(())
        }),
    },
    OptionSpec {
        name: "ignore_error",
        aliases: &[],
        mapping: "errnos the job keeps going after, per kind: `READ,WRITE,VERIFY` lists of names (`ENOSPC`) or numbers joined by `:` (`ignore_error=,ENOSPC:EDQUOT`); a kind's list replaces its default (`EIO`, `EILSEQ`) and turns continuing on for it, as in fio",
        support: Support::Mapped(|s, input| {
            for (kind, list) in super::error_values::ignore_lists(input.text()?)?
                .into_iter()
                .enumerate()
            {
                if let Some(list) = list {
                    s.error_policy.continue_on[kind] = true;
                    s.error_policy.ignore[kind] = Some(list);
                }
            }
            Ok(())
        }),
    },
    OptionSpec {
        name: "error_dump",
        aliases: &[],
        mapping: "accepted; the result keeps the first errors of each worker",
        support: Support::Accepted("iopath keeps the first errors of each worker in its result"),
    },
    // Logs and reports.
    OptionSpec {
        name: "write_bw_log",
        aliases: &[],
        mapping: "`PREFIX_bw.N.log`, bandwidth in KiB/s per I/O or per `log_avg_msec` window, columns as fio's HOWTO",
        support: Support::Mapped(super::log_options::bandwidth),
    },
    OptionSpec {
        name: "write_lat_log",
        aliases: &[],
        mapping: "`PREFIX_lat.N.log`, `PREFIX_clat.N.log`, `PREFIX_slat.N.log`: latencies in ns per I/O or window means",
        support: Support::Mapped(super::log_options::latency),
    },
    OptionSpec {
        name: "write_iops_log",
        aliases: &[],
        mapping: "`PREFIX_iops.N.log`: 1 per I/O, or the IOPS of each `log_avg_msec` window",
        support: Support::Mapped(super::log_options::iops),
    },
    OptionSpec {
        name: "write_hist_log",
        aliases: &[],
        mapping: "`PREFIX_clat_hist.N.log`, empty as fio's is without `log_hist_msec`",
        support: Support::Mapped(super::log_options::histogram),
    },
    OptionSpec {
        name: "log_avg_msec",
        aliases: &[],
        mapping: "one line per direction per window of this many ms (0: one per I/O)",
        support: Support::Mapped(super::log_options::average),
    },
    OptionSpec {
        name: "log_hist_msec",
        aliases: &[],
        mapping: "0 accepted; histogram lines are refused",
        support: Support::Mapped(super::log_options::histogram_window),
    },
    OptionSpec {
        name: "log_hist_coarseness",
        aliases: &[],
        mapping: "each step halves the histogram log's columns",
        support: Support::Mapped(super::log_options::coarseness),
    },
    OptionSpec {
        name: "log_window_value",
        aliases: &["log_max_value"],
        mapping: "avg, max or both (one more column) in windowed latency logs",
        support: Support::Mapped(super::log_options::window_value),
    },
    OptionSpec {
        name: "log_offset",
        aliases: &[],
        mapping: "an offset column",
        support: Support::Mapped(super::log_options::offset),
    },
    OptionSpec {
        name: "log_prio",
        aliases: &[],
        mapping: "the priority column as 0x and four hex digits (iopath sets no priority: 0x0000)",
        support: Support::Mapped(super::log_options::priority),
    },
    OptionSpec {
        name: "log_issue_time",
        aliases: &[],
        mapping: "an issue-time column (ns) in clat and slat logs",
        support: Support::Mapped(super::log_options::issue_time),
    },
    OptionSpec {
        name: "per_job_logs",
        aliases: &[],
        mapping: "0: one file per log kind for every job, without `.N`",
        support: Support::Mapped(super::log_options::per_job),
    },
    OptionSpec {
        name: "log_compression",
        aliases: &["log_store_compressed"],
        mapping: "0 accepted; anything else refused",
        support: Support::Mapped(super::log_options::compression),
    },
    OptionSpec {
        name: "log_unix_epoch",
        aliases: &["log_alternate_epoch"],
        mapping: "log times in ms since the Unix epoch (the wall clock at the start of the measurement plus the time since), not since the start of the measurement; `log_alternate_epoch` does the same (its clock, `log_alternate_epoch_clock_id`, is the wall clock by default)",
        support: Support::Mapped(super::log_options::unix_epoch),
    },
    OptionSpec {
        name: "log_alternate_epoch_clock_id",
        aliases: &[],
        mapping: "0 (`CLOCK_REALTIME`, the default) accepted; any other clock refused",
        support: Support::Mapped(|_, input| match input.text()? {
            "0" => Ok(()),
            other => Err(OptionError::Unsupported(format!(
                "log_alternate_epoch_clock_id={other}: iopath's log epoch is the wall clock (0, CLOCK_REALTIME)"
            ))),
        }),
    },
    OptionSpec {
        name: "log_entries",
        aliases: &["bwavgtime", "iopsavgtime"],
        mapping: "accepted; no effect",
        support: Support::Accepted(LOGS),
    },
    OptionSpec {
        name: "disk_util",
        aliases: &[],
        mapping: "accepted with a note",
        support: Support::Accepted(
            "iopath prints no disk utilisation block; its analysis reports how busy each hop of the storage path was",
        ),
    },
    OptionSpec {
        name: "percentile_list",
        aliases: &[
            "clat_percentiles",
            "lat_percentiles",
            "slat_percentiles",
            "significant_figures",
            "unified_rw_reporting",
            "stats",
        ],
        mapping: "accepted; report formatting only",
        support: Support::Accepted(PERCENTILES),
    },
    // Everything else fio has that iopath refuses.
    OptionSpec {
        name: "fill_device",
        aliases: &["fill_fs"],
        mapping: "accepted with a note",
        support: Support::Accepted(
            "iopath writes the job's region once: the whole device or file when no size is given; a file is not grown until its file system is full",
        ),
    },
    OptionSpec {
        name: "file_append",
        aliases: &[],
        mapping: "refused",
        support: Support::Refused("appending past the end of files is not supported"),
    },
    OptionSpec {
        name: "create_on_open",
        aliases: &[],
        mapping: "`1`: a file the job would create is not laid out and filled first; it is created empty when opened and the job's writes extend it, as in fio (an existing file is used as it is); a read past what the writes laid out gets no data: on io_uring (and `libaio`) it completes as a read of 0 bytes, on the sync engines it fails as a short read (`EIO`), as in fio",
        support: Support::Mapped(|s, input| {
            s.create_on_open = Some(input.set(input.flag()?));
            Ok(())
        }),
    },
    OptionSpec {
        name: "create_only",
        aliases: &["pre_read", "opendir"],
        mapping: "refused",
        support: Support::Refused(
            "iopath creates and fills missing files before the run and keeps them open",
        ),
    },
    OptionSpec {
        name: "read_iolog",
        aliases: &[],
        mapping: "replays a fio I/O log (versions 2 and 3) or a blktrace capture instead of generating I/O (a `:` list: clone i replays the i-th log, modulo the list's length, as in fio; see \"I/O logs\"): its files (a capture's devices, named as this machine names them) become the job's targets (or go to the targets `filename` names, by name, else in turn), its reads, writes and trims (a capture's queued events) are issued in order with its timing, once; read and checked before any I/O (at most 256 MiB, errors name the line or the capture's event)",
        support: Support::Mapped(super::replay_options::read_log),
    },
    OptionSpec {
        name: "write_iolog",
        aliases: &[],
        mapping: "records the job's I/Os, as issued, as a fio version 3 I/O log (which fio and iopath replay); the file is written only where no file exists (not even over a log an earlier run wrote: a replay may be reading it); fio replaces the file",
        support: Support::Mapped(super::replay_options::write_log),
    },
    OptionSpec {
        name: "read_iolog_chunked",
        aliases: &[],
        mapping: "accepted; no effect",
        support: Support::Accepted(
            "iopath reads the whole I/O log (at most 256 MiB) before the run",
        ),
    },
    OptionSpec {
        name: "replay_no_stall",
        aliases: &[],
        mapping: "the log's I/Os are issued without its waits",
        support: Support::Mapped(super::replay_options::no_stall),
    },
    OptionSpec {
        name: "replay_time_scale",
        aliases: &[],
        mapping: "the log's waits scaled: percent of its pace (200: twice as fast)",
        support: Support::Mapped(super::replay_options::time_scale),
    },
    OptionSpec {
        name: "replay_redirect",
        aliases: &[],
        mapping: "every I/O of the log goes to this one file or device",
        support: Support::Mapped(super::replay_options::redirect),
    },
    OptionSpec {
        name: "replay_align",
        aliases: &[],
        mapping: "the log's offsets rounded down to this power of 2",
        support: Support::Mapped(super::replay_options::align),
    },
    OptionSpec {
        name: "replay_scale",
        aliases: &[],
        mapping: "the log's offsets divided by this",
        support: Support::Mapped(super::replay_options::scale),
    },
    OptionSpec {
        name: "replay_skip",
        aliases: &[],
        mapping: "the log's actions of these kinds (`read`, `write`, `trim`, `sync`) are left out",
        support: Support::Mapped(super::replay_options::skip),
    },
    OptionSpec {
        name: "merge_blktrace_file",
        aliases: &[],
        mapping: "the blktrace captures `read_iolog` lists (`a:b:c`) are merged into one, in time order, written to this file and replayed; written only where no file is (a file that already holds this very merge is replayed as it is; any other is refused)",
        support: Support::Mapped(super::replay_options::merge_file),
    },
    OptionSpec {
        name: "merge_blktrace_scalars",
        aliases: &[],
        mapping: "with `merge_blktrace_file`: each capture's times scaled by its percentage (`50:100`: the first at twice its pace), one per capture",
        support: Support::Mapped(super::replay_options::merge_scalars),
    },
    OptionSpec {
        name: "merge_blktrace_iters",
        aliases: &[],
        mapping: "with `merge_blktrace_file`: passes over each capture, one whole number per capture",
        support: Support::Mapped(super::replay_options::merge_iterations),
    },
    OptionSpec {
        name: "exec_prerun",
        aliases: &["exec_postrun"],
        mapping: "refused",
        support: Support::Refused("iopath runs no commands from a job file"),
    },
    OptionSpec {
        name: "ioscheduler",
        aliases: &[],
        mapping: "refused",
        support: Support::Refused("iopath does not change the I/O scheduler"),
    },
    OptionSpec {
        name: "lockmem",
        aliases: &["hugepage-size", "iomem_align", "mem_align"],
        mapping: "refused",
        support: Support::Refused("memory placement of buffers is not configurable"),
    },
    OptionSpec {
        name: "uri",
        aliases: &[],
        mapping: "the NBD export of `ioengine=nbd` (`nbd://HOST[:PORT]/EXPORT`, `nbd+unix:///EXPORT?socket=PATH`)",
        support: Support::Mapped(|s, input| {
            let text = input.value.map(str::trim).unwrap_or("");
            if text.is_empty() {
                return Err(OptionError::BadValue(
                    "needs an NBD URI such as nbd://host/export (an unset ${VAR} expands to nothing)"
                        .into(),
                ));
            }
            s.uri = Some(input.set(text.to_string()));
            Ok(())
        }),
    },
    OptionSpec {
        name: "random_sequence_stride",
        aliases: &[],
        mapping: "with `random_distribution=sequence:…`: 1 moves each repetition of the sequence on by its length (2,0,1,5,3,4 …), starting over at the end of the region",
        support: Support::Mapped(|s, input| {
            s.extended.sequence_stride = input.flag()?;
            Ok(())
        }),
    },
    // Options of fio's other engines and features iopath does not have.
    OptionSpec {
        name: "http_host",
        aliases: &[
            "http_mode",
            "http_object_mode",
            "http_pass",
            "http_user",
            "http_verbose",
            "https",
            "http_s3_key",
            "http_s3_keyid",
            "http_s3_region",
            "http_s3_security_token",
            "http_s3_sse_customer_algorithm",
            "http_s3_sse_customer_key",
            "http_s3_storage_class",
            "http_swift_auth_token",
        ],
        mapping: "refused",
        support: Support::Refused(
            "an option of fio's http (S3, Swift, WebDAV) engine, which iopath does not have",
        ),
    },
    OptionSpec {
        name: "xnvme_async",
        aliases: &[
            "xnvme_sync",
            "xnvme_admin",
            "xnvme_dev_nsid",
            "xnvme_dev_subnqn",
            "xnvme_mem",
            "xnvme_iovec",
        ],
        mapping: "refused",
        support: Support::Refused("an option of fio's xnvme engine, which iopath does not have"),
    },
    OptionSpec {
        name: "libblkio_driver",
        aliases: &[
            "libblkio_path",
            "libblkio_pre_connect_props",
            "libblkio_pre_start_props",
            "libblkio_num_entries",
            "libblkio_queue_size",
            "libblkio_vectored",
            "libblkio_wait_mode",
            "libblkio_write_zeroes_on_trim",
            "libblkio_force_enable_completion_eventfd",
        ],
        mapping: "refused",
        support: Support::Refused("an option of fio's libblkio engine, which iopath does not have"),
    },
    OptionSpec {
        name: "rbdname",
        aliases: &[
            "clustername",
            "clientname",
            "pool",
            "conf",
            "busy_poll",
            "touch_objects",
            "rbd_encryption_format",
            "rbd_encryption_passphrase",
        ],
        mapping: "refused",
        support: Support::Refused(
            "an option of fio's Ceph (rbd, rados) engine, which iopath does not have",
        ),
    },
    OptionSpec {
        name: "cont",
        aliases: &["chunk_size", "object_class"],
        mapping: "refused",
        support: Support::Refused("an option of fio's DAOS dfs engine, which iopath does not have"),
    },
    OptionSpec {
        name: "namenode",
        aliases: &["hdfsdirectory"],
        mapping: "refused",
        support: Support::Refused("an option of fio's libhdfs engine, which iopath does not have"),
    },
    OptionSpec {
        name: "nfs_url",
        aliases: &[],
        mapping: "the export (and directory) of `ioengine=nfs` (`nfs://HOST[:PORT]/EXPORT[/DIR][?version=3]`): the job's files are named in it, as fio's libnfs engine names them",
        support: Support::Mapped(|s, input| {
            let text = input.value.map(str::trim).unwrap_or("");
            if !text.starts_with("nfs://") {
                return Err(OptionError::BadValue(
                    "needs an NFS URL such as nfs://host/export (an unset ${VAR} expands to nothing)"
                        .into(),
                ));
            }
            s.nfs_url = Some(input.set(text.to_string()));
            Ok(())
        }),
    },
    OptionSpec {
        name: "hostname",
        aliases: &[
            "port",
            "interface",
            "ttl",
            "listen",
            "pingpong",
            "window_size",
            "mss",
            "nodelay",
            "protocol",
        ],
        mapping: "refused",
        support: Support::Refused(
            "an option of fio's net / netsplice engine, which iopath does not have",
        ),
    },
    OptionSpec {
        name: "verb",
        aliases: &["bindname"],
        mapping: "refused",
        support: Support::Refused("an option of fio's rdma engine, which iopath does not have"),
    },
    OptionSpec {
        name: "cmd_type",
        aliases: &[
            "cdb_len",
            "read_mode",
            "write_mode",
            "readfua",
            "writefua",
            "sg_write_mode",
            "stream_id",
            "pi_act",
            "pi_chk",
            "apptag",
            "apptag_mask",
            "md_per_io_size",
            "fdp",
            "dataplacement",
            "plids",
            "plid_select",
            "dp_scheme",
            "num_range",
        ],
        mapping: "refused",
        support: Support::Refused(
            "an option of fio's passthrough engines (io_uring_cmd, sg, xnvme), which iopath does not have",
        ),
    },
    OptionSpec {
        name: "donorname",
        aliases: &["inplace"],
        mapping: "refused",
        support: Support::Refused("an option of fio's e4defrag engine, which iopath does not have"),
    },
    OptionSpec {
        name: "skip_bad",
        aliases: &[],
        mapping: "refused",
        support: Support::Refused("an option of fio's mtd engine, which iopath does not have"),
    },
    OptionSpec {
        name: "stat_type",
        aliases: &[],
        mapping: "the look-up of `ioengine=filestat` and `dirstat`: `stat` (default), `lstat` or `statx`",
        support: Support::Mapped(|s, input| {
            s.stat_type = match input.text()?.trim() {
                "stat" => crate::result::StatCall::Stat,
                "lstat" => crate::result::StatCall::Lstat,
                "statx" => crate::result::StatCall::Statx,
                other => {
                    return Err(OptionError::BadValue(format!(
                        "'{other}': stat_type is stat, lstat or statx"
                    )));
                }
            };
            Ok(())
        }),
    },
    OptionSpec {
        name: "program",
        aliases: &["arguments", "grace_time", "std_redirect"],
        mapping: "refused",
        support: Support::Refused("an option of fio's exec engine, which iopath does not have"),
    },
    OptionSpec {
        name: "cpuload",
        aliases: &["cpumode", "cpuchunks", "exit_on_io_done"],
        mapping: "refused",
        support: Support::Refused("an option of fio's cpuio engine, which iopath does not have"),
    },
    OptionSpec {
        name: "cuda_io",
        aliases: &["gpu_dev_ids", "rocm_io"],
        mapping: "refused",
        support: Support::Refused("GPU memory (cuda_io, rocm_io) is not supported"),
    },
    OptionSpec {
        name: "no_completion_thread",
        aliases: &[],
        mapping: "refused",
        support: Support::Refused(
            "an option of fio's windowsaio engine, which iopath does not have",
        ),
    },
    OptionSpec {
        name: "cmdprio",
        aliases: &[
            "cmdprio_bssplit",
            "cmdprio_class",
            "cmdprio_hint",
            "priohint",
        ],
        mapping: "refused",
        support: Support::Refused(PLACEMENT),
    },
    OptionSpec {
        name: "zonerange",
        aliases: &[
            "zonesize",
            "zonecapacity",
            "zoneskip",
            "max_open_zones",
            "job_max_open_zones",
            "ignore_zone_limits",
            "zone_reset_frequency",
            "zone_reset_threshold",
            "read_beyond_wp",
            "write_zone_remainders",
            "recover_zbd_write_error",
        ],
        mapping: "refused",
        support: Support::Refused("zoned block devices are not supported (zonemode=none only)"),
    },
    OptionSpec {
        name: "sprandom",
        aliases: &["spr_cs", "spr_num_regions", "spr_op"],
        mapping: "refused",
        support: Support::Refused("fio's SSD preconditioning pattern (sprandom) is not supported"),
    },
    OptionSpec {
        name: "profile",
        aliases: &["load", "block", "numruns", "dir", "prep"],
        mapping: "refused",
        support: Support::Refused(
            "fio's built-in profiles (act, tiobench) are not supported; iopath has its own presets (iopath presets)",
        ),
    },
    OptionSpec {
        name: "ramp_size",
        aliases: &[],
        mapping: "refused",
        support: Support::Refused("a ramp by bytes is not supported; use ramp_time"),
    },
    OptionSpec {
        name: "write_hint",
        aliases: &[],
        mapping: "refused",
        support: Support::Refused("write lifetime hints (F_SET_RW_HINT) are not given"),
    },
    OptionSpec {
        name: "end_syncfs",
        aliases: &[],
        mapping: "refused",
        support: Support::Refused("syncfs at the end is not supported; use end_fsync"),
    },
    OptionSpec {
        name: "uncached",
        aliases: &[],
        mapping: "refused",
        support: Support::Refused("uncached buffered I/O (RWF_DONTCACHE) is not supported"),
    },
    OptionSpec {
        name: "atomic",
        aliases: &[],
        mapping: "refused",
        support: Support::Refused("torn-write-protected (RWF_ATOMIC) writes are not supported"),
    },
    OptionSpec {
        name: "hipri_percentage",
        aliases: &[],
        mapping: "refused",
        support: Support::Refused("io_uring polling and submission modes are not configurable"),
    },
    OptionSpec {
        name: "serialize_overlap",
        aliases: &[],
        mapping: "an I/O that overlaps one of the job's worker's I/Os in flight (any directions) waits until that one has completed; with `io_submit_mode=offload` fio also serializes across jobs, iopath within each worker only",
        support: Support::Mapped(|s, input| {
            s.serialize_overlap = input.flag()?;
            Ok(())
        }),
    },
    OptionSpec {
        name: "thinkcycles",
        aliases: &[],
        mapping: "refused",
        support: Support::Refused("a think time in CPU cycles is not supported; use thinktime"),
    },
    OptionSpec {
        name: "block_error_percentiles",
        aliases: &[],
        mapping: "refused",
        support: Support::Refused(
            "the histogram of failed trim blocks is not kept (errors are counted by kind and errno)",
        ),
    },
    OptionSpec {
        name: "nonvectored",
        aliases: &["libaio_vectored"],
        mapping: "accepted with a note",
        support: Support::Accepted(
            "iopath's io_uring (and libaio, which runs as io_uring) issues non-vectored READ and WRITE",
        ),
    },
    OptionSpec {
        name: "userspace_reap",
        aliases: &[],
        mapping: "accepted with a note",
        support: Support::Accepted(
            "libaio runs as io_uring, whose completions are reaped from the shared ring without a system call",
        ),
    },
    OptionSpec {
        name: "filetype",
        aliases: &[],
        mapping: "accepted with a note",
        support: Support::Accepted(
            "iopath examines every target through its open descriptor; the assumed type changes nothing measured",
        ),
    },
    OptionSpec {
        name: "comm",
        aliases: &[],
        mapping: "accepted with a note",
        support: Support::Accepted("the process name changes nothing measured"),
    },
    OptionSpec {
        name: "job_start_clock_id",
        aliases: &["log_compression_cpus"],
        mapping: "accepted with a note",
        support: Support::Accepted(LOGS),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_declared_once() {
        let mut names: Vec<&str> = OPTIONS
            .iter()
            .flat_map(|spec| std::iter::once(spec.name).chain(spec.aliases.iter().copied()))
            .collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "a name is declared twice");
        assert!(find("readwrite").is_some_and(|spec| spec.name == "rw"));
        assert!(find("verify_pattern").is_some());
        assert!(find("threads").is_some_and(|spec| spec.name == "threads"));
    }

    #[test]
    fn every_option_of_fios_howto_has_a_status() {
        let missing: Vec<&str> = super::super::howto_names::FIO_HOWTO_OPTIONS
            .iter()
            .copied()
            .filter(|name| find(name).is_none())
            .collect();
        assert!(
            missing.is_empty(),
            "fio options without a status: {missing:?}"
        );
    }

    #[test]
    fn the_compatibility_document_carries_the_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/fio-compatibility.md");
        let document = std::fs::read_to_string(path).expect("docs/fio-compatibility.md");
        let tables = markdown_tables();
        assert!(
            document.contains(&tables),
            "docs/fio-compatibility.md is out of date; its option tables are:\n{tables}"
        );
    }

    #[test]
    fn supported_names_leave_refused_ones_out() {
        assert!(supported_names().any(|name| name == "bssplit"));
        assert!(supported_names().any(|name| name == "ratemin"));
        assert!(supported_names().any(|name| name == "exitall"));
        assert!(supported_names().any(|name| name == "verify_pattern"));
        assert!(!supported_names().any(|name| name == "verify_header_seed"));
    }
}
