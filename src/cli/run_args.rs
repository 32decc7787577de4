//! Flags of `iopath run`, and their translation into a validated plan (stage two of parsing:
//! every value is checked here, before any target is touched).

use super::failure::Usage;
use super::limit_args::LimitArgs;
use clap::Args;
use iopath::engine::null::InjectedDelay;
use iopath::input::job_file::{JobFileError, JobFileRequest};
use iopath::input::load_job_file;
use iopath::input::option_values;
use iopath::input::options::WorkloadOptions;
use iopath::input::presets;
use iopath::result::RunLength;
use iopath::run::RunOptions;
use iopath::run::confirm::{ConfirmMode, DEFAULT_SUITE_PERCENT};
use iopath::targets::TargetSpec;
use iopath::targets::network_target::UrlError;
use iopath::targets::safety::WritePolicy;
use iopath::workload::WorkloadError;
use iopath::workload::steady::SteadyCriterion;
use iopath::workload::suite::{base_workload, default_suite};
use iopath::workload::sweep::{Sweep, expand};
use iopath::workload::{Plan, TestPlan};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Longest `--net-timeout` accepted.
const MAX_NET_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// Reads `--net-timeout`: a time from 1 ms to 24 h.
fn net_timeout_arg(text: &str) -> Result<Duration, WorkloadError> {
    let timeout = Duration::from_nanos(option_values::positive_time(text)?);
    if timeout < Duration::from_millis(1) || timeout > MAX_NET_TIMEOUT {
        return Err(WorkloadError::value(text, "must be between 1ms and 24h"));
    }
    Ok(timeout)
}

/// Reads `1ms` (every I/O) or `200us,2ms,10` (10 % of I/Os take the second delay).
fn null_delay_arg(text: &str) -> Result<InjectedDelay, WorkloadError> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    match parts.as_slice() {
        [fixed] => Ok(InjectedDelay::Fixed {
            delay_ns: option_values::time(fixed)?,
        }),
        [first, second, percent] => {
            let percent: f64 = percent
                .parse()
                .ok()
                .filter(|p: &f64| (0.0..=100.0).contains(p))
                .ok_or_else(|| WorkloadError::value(percent, "is not a percentage"))?;
            Ok(InjectedDelay::TwoValued {
                first_ns: option_values::time(first)?,
                second_ns: option_values::time(second)?,
                second_per_million: (percent * 10_000.0).round() as u32,
            })
        }
        _ => Err(WorkloadError::part(
            text,
            "expected DELAY or FIRST,SECOND,PERCENT_SECOND",
        )),
    }
}

/// Why the flags of `iopath run` make no plan; every one is bad input.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// A value or a workload the library refuses.
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    /// A job file that cannot be used.
    #[error(transparent)]
    JobFile(#[from] JobFileError),
    /// A target URL that cannot be used.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// Flags that do not go together.
    #[error(transparent)]
    Usage(#[from] Usage),
}

fn usage(message: impl Into<String>) -> RequestError {
    Usage(message.into()).into()
}

/// fio's `--output-format` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// The table (iopath's own output).
    Normal,
    /// fio 3.x JSON.
    Json,
    /// fio 3.x JSON with latency histogram bins.
    #[value(name = "json+")]
    JsonPlus,
}

/// Flags of `iopath run`.
#[derive(Clone, Debug, Args)]
#[command(after_help = "\
Without workload flags, runs the default suite: SEQ 1 MiB read and write at QD 8, RND 4 KiB read
and write at QD 32 and QD 1, SEQ 512 B read at QD 64; 5 s each after a 1 s ramp. Without a target,
on a temporary file in the current directory (1 GiB, at most a quarter of the free space), filled
with incompressible data first and removed afterwards.

Sizes take k, m, g, t in powers of 1024 (4k = 4096; 4KiB and 4kb too). Times are seconds when bare
and accept ms, s, m, h.

Output files (--json, --csv, --report, --write-logs) are written only once there is a result,
through a temporary file renamed into place: a failed run leaves an existing file as it was. A
directory, device node, FIFO or socket given as output is refused before any I/O ('-' means
stdout where a flag says so); so is a history (IOPATH_HISTORY) or a verify state file that is
not a regular file. Test files left by killed runs (.iopath-test-PID.tmp) in the test file's
directory are named; --remove-stale removes them (docs/safety.md).

--verify writes a header into every block and checks every block read; a bad block (flipped
bits, a torn, lost or misdirected write, stale data) fails the run with exit status 1, naming its
offset, what was expected and found, and the run that wrote it (docs/verify.md).

Examples:
  iopath run
  iopath run /dev/nvme0n1 --rw randread --bs 4k --qd 32 --duration 30
  iopath run data.bin --size 2g --rw randrw --read-pct 70 --random-pct 80 --bs 512/10,4k/60,64k/30
  iopath run data.bin --rw write --bs 4k --bytes 1g --fsync-at-end
  iopath run data.bin --size 1g --rw randwrite --bs 4k --verify crc32c   (write, read back, check)
  iopath run /dev/sdb --rw write --allow-destructive     (only a device without a filesystem)
  iopath run --json - > result.json
  iopath run data.bin --rw randread --duration 10m --live --metrics 9464   (dashboard, Prometheus)
  iopath run nfs://nas/srv/test.bin --size 4g --rw read --bs 1m --qd 8   (NFSv3, no mount; removed after)
  iopath run 'nfs://nas/srv/test.bin?version=4.1' --rw randread --bs 4k --qd 32   (NFSv4.1 sessions)
  IOPATH_SMB_PASSWORD=… iopath run smb://alice@nas/share/test.bin --size 4g --rw randread --qd 32   (SMB2/3)")]
pub struct RunArgs {
    /// Files, block devices or URLs (nbd://, iscsi://,
    /// nfs://HOST/EXPORT/PATH/FILE, with ?version=4.1 for NFSv4.1, smb://[USER@]HOST/SHARE/PATH/FILE). A missing file is created with --size (on an NFS
    /// export or an SMB share: removed after the run); none: a temporary file (neither is
    /// created for the null engine, which does no I/O). With --job, directories stand for
    /// fio's --directory: each job's files are made in them.
    #[arg(value_name = "TARGET")]
    pub targets: Vec<PathBuf>,
    /// N files for each target: TARGET.0 … TARGET.N-1 (one worker moves over them unless
    /// --files-per-worker says otherwise). With a file-operation engine (--engine filecreate,
    /// filestat, filedelete, dircreate, dirstat, dirdelete) each I/O is one operation on one of
    /// them, and without --duration the run is one pass: N operations (filestat and filedelete
    /// find missing files laid out first, of --size or 4 KiB).
    #[arg(long, value_name = "N", value_parser = parse_file_count, help_heading = "Workload")]
    pub files: Option<u32>,

    /// The targets of each host, from FILE: lines `HOST TARGET…` (`*` for any other host),
    /// instead of TARGET arguments. Targets may name the client with {rank}, {host},
    /// {local_rank} and {size} (multi-client runs: docs/multi-host.md).
    #[arg(long, value_name = "FILE", conflicts_with = "targets")]
    pub target_map: Option<PathBuf>,

    /// In a multi-client run, keep each rank's whole tests in the result (its histograms,
    /// per-second series and jobs) instead of its summary (a few figures per test: IOPS,
    /// MB/s, latency, errors, CPU), which is the default: a result then grows by a few KB per
    /// rank, whatever the run's length (docs/multi-host.md).
    #[arg(long)]
    pub per_rank_series: bool,

    /// The workload.
    #[command(flatten)]
    pub workload: WorkloadOptions,

    /// Run a named workload (`iopath presets` lists them); workload flags given too apply on
    /// top of each of its tests.
    #[arg(
        long,
        value_name = "NAME",
        help_heading = "Tests",
        conflicts_with = "job"
    )]
    pub preset: Option<String>,
    /// Run each test at every point of an axis: qd=1,2,4..256 (A..B doubles), bs=512..1m,
    /// workers=1..32/+4 (linear step); repeat the flag to combine axes.
    #[arg(long, value_name = "AXIS=VALUES", value_parser = Sweep::parse, help_heading = "Tests")]
    pub sweep: Vec<Sweep>,
    /// End each test once it is steady: iops:5%:30s (every second of the last 30 s within 5 %
    /// of their mean), bw:…, lat:…, or *_slope:… (trend across the window); the duration is
    /// then the longest a test may run. A steady state reached after a burst bucket ran dry is
    /// said to be its baseline (docs/steady-state.md).
    #[arg(long, value_name = "METRIC:LIMIT:WINDOW", value_parser = SteadyCriterion::parse, help_heading = "Tests")]
    pub steady: Option<SteadyCriterion>,
    /// Drop the page cache before each test (needs root; says so when it cannot).
    #[arg(long, help_heading = "Tests")]
    pub drop_caches: bool,

    /// The link this storage is reached over, when it cannot be seen from here: a catalog name
    /// (`iopath links`): 4gfc, 10gbe, 40gbe-mtu9000, ib-hdr4 … (repeatable, comma-separated).
    /// Targets that leave this host by different interfaces or ports get one such link each:
    /// four targets behind four NICs with --link 1gbe are judged against 4 × 1GbE.
    #[arg(
        long,
        value_name = "LINK",
        value_delimiter = ',',
        help_heading = "Path"
    )]
    pub link: Vec<String>,
    /// Hops beyond this host, in order: pcie3x8,40gbe,array:3.8GB/s (a catalog name or
    /// NAME:RATE[:IOPS]).
    #[arg(long, value_name = "HOPS", help_heading = "Path")]
    pub path: Vec<String>,
    /// Hops every target passes whatever its route, counted once with the sum of all flows:
    /// one switch uplink, one array port, one array (--shared 10gbe,array:3.8GB/s).
    #[arg(long, value_name = "HOPS", help_heading = "Path")]
    pub shared: Vec<String>,
    /// After the tests, run each one again briefly (a third of its length, 3 s at most, after
    /// a ramp of 1 s at most) with the limit its verdict names moved: twice the queue depth,
    /// twice the workers, 4x larger blocks, or O_DIRECT at the same depth for a buffered test
    /// read-ahead- or write-back-bound. The change confirms or refutes the verdict
    /// (docs/verdict.md). The default suite does this unasked for the experiments that fit in
    /// the time its tests took, and every other run for the latency-bound verdicts (a full
    /// queue, nothing seen to limit: does a deeper queue give more?); --confirm runs them all.
    #[arg(long, help_heading = "Path")]
    pub confirm: bool,
    /// Run no confirming experiment, not even those run unasked (the default suite's, and
    /// the deeper queue that tests a latency-bound verdict).
    #[arg(long, conflicts_with = "confirm", help_heading = "Path")]
    pub no_confirm: bool,

    /// Run a job file: fio's format (.fio, .job, .ini …) or iopath's TOML (.toml). Workload
    /// flags given too apply on top of every job; targets given replace the jobs' files.
    #[arg(long, value_name = "FILE", help_heading = "Job files")]
    pub job: Option<PathBuf>,
    /// Replay a fio I/O log (versions 2 and 3, as fio's write_iolog writes them) or a blktrace
    /// capture (its queued events): its reads, writes and trims in order, with its timing, on
    /// the files or devices it names (or on the targets given, by name, else in turn).
    /// Workload flags apply on top (--engine, --queue-depth).
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "job",
        help_heading = "Job files"
    )]
    pub replay: Option<PathBuf>,
    /// Run a job file even when some of its options are not supported, and list them.
    #[arg(long, requires = "job", help_heading = "Job files")]
    pub ignore_unsupported: bool,

    /// Write the RunResult as JSON to FILE ('-': stdout, every message on stderr).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub json: Option<PathBuf>,
    /// Print fio's JSON layout on stdout instead of the table (fio's flag and values, so
    /// scripts written for fio keep working): normal, json or json+ (with histogram bins).
    #[arg(long, value_name = "FORMAT", value_enum, help_heading = "Output")]
    pub output_format: Option<OutputFormat>,
    /// Write fio-style per-second logs PREFIX_bw.N.log, PREFIX_iops.N.log, PREFIX_lat.N.log
    /// (for fio2gnuplot and fio-plot). Job files' own write_bw_log, write_lat_log,
    /// write_iops_log and write_hist_log are written whether or not this is given.
    #[arg(long, value_name = "PREFIX", help_heading = "Output")]
    pub write_logs: Option<PathBuf>,
    /// Write fio's aggregate bandwidth logs agg-read_bw.log, agg-write_bw.log and
    /// agg-trim_bw.log (KiB/s per interval, every job together) into the working directory.
    #[arg(long, help_heading = "Output")]
    pub bandwidth_log: bool,
    /// Write an Iometer-style CSV: one row per test and job.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub csv: Option<PathBuf>,
    /// Write a self-contained HTML report of this run to FILE (charts, verdicts, path).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub report: Option<PathBuf>,
    /// Print the summary as Markdown (for tickets) instead of the table.
    #[arg(long, help_heading = "Output")]
    pub md: bool,
    /// Label of this run in comparisons.
    #[arg(long, value_name = "TEXT", help_heading = "Output")]
    pub label: Option<String>,
    /// Do not keep this run in the local history (`iopath history`).
    #[arg(long, help_heading = "Output")]
    pub no_history: bool,
    /// Show the run on a full-screen dashboard: per job and target MB/s, IOPS, p50/p99 latency
    /// and their charts over the last minutes, the suite's progress and time left, the use
    /// of each hop with a live counter (block device, NIC) against its capacity, CPU per
    /// core; with --server-metrics or --switch-snmp each server's cores (the busiest
    /// highlighted), busiest disks (busy %, MB/s) and interfaces (MB/s against their speed), a
    /// switch's busiest ports, and their chart on the client's clock. Keys: q stops the run and keeps the result so far (as Ctrl-C), p pauses the
    /// display (not the I/O). The default on a terminal for runs planned to take 10 s or more;
    /// without a terminal the plain progress is kept.
    #[arg(long, help_heading = "Output", conflicts_with = "no_live")]
    pub live: bool,
    /// Never show the dashboard: the one progress line on a terminal.
    #[arg(long, help_heading = "Output")]
    pub no_live: bool,
    /// Serve live metrics (OpenMetrics text, for Prometheus) on GET /metrics at ADDR while the
    /// run goes on: PORT or :PORT (on 127.0.0.1), or HOST:PORT. Counters of I/Os and bytes
    /// per direction, latency histograms, the current test and sweep point, each test's
    /// verdict. An address beyond loopback needs --metrics-token-file.
    #[arg(long, value_name = "ADDR", help_heading = "Output")]
    pub metrics: Option<String>,
    /// With --metrics: answer only requests with `Authorization: Bearer TOKEN`, TOKEN being
    /// FILE's content (16 to 4096 bytes, owner-only permissions; Prometheus sends it with
    /// `authorization: credentials_file: FILE`). Needed to listen beyond loopback.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Output",
        requires = "metrics"
    )]
    pub metrics_token_file: Option<PathBuf>,
    /// Read a server's own counters during the run: the URL of a Prometheus node exporter
    /// (`http://HOST[:PORT][/PATH]`, port 9100 and /metrics by default) on the NAS, the
    /// target server, a second server or another client. Repeatable. Scraped once a second
    /// from before the first I/O to after the last (each answer at most 16 MiB and 2 s); its
    /// cores, disks, md arrays and interfaces become server hops, and the verdict can end
    /// there: server-disk-bound, server-CPU-bound, server-link-bound. A URL that cannot be
    /// scraped at the start stops the run before any I/O.
    #[arg(long, value_name = "URL", help_heading = "Server metrics")]
    pub server_metrics: Vec<String>,
    /// With --server-metrics: send `Authorization: Bearer TOKEN`, TOKEN being FILE's content
    /// (owner-only permissions, at most 4 KiB).
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Server metrics",
        requires = "server_metrics",
        conflicts_with = "server_metrics_basic_auth_file"
    )]
    pub server_metrics_bearer_file: Option<PathBuf>,
    /// With --server-metrics: HTTP basic authentication with `USER:PASSWORD`, FILE's one line
    /// (owner-only permissions, at most 4 KiB).
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Server metrics",
        requires = "server_metrics"
    )]
    pub server_metrics_basic_auth_file: Option<PathBuf>,
    /// Read a switch's port counters during the run over SNMPv2c: the agent's `HOST[:PORT]`
    /// (UDP port 161 by default; IPv6 in brackets). Repeatable. Every port's IF-MIB
    /// ifHCInOctets, ifHCOutOctets and speed (ifSpeed, or ifHighSpeed beyond 4.29 Gbit/s) are
    /// read once a second beside --server-metrics (each reading at most 2 s, 3 tries of
    /// 600 ms per request); the ports become switch-port hops, and a port at its speed ends
    /// the verdict there: switch-link-bound. An agent that does not answer at the start stops
    /// the run before any I/O.
    #[arg(long, value_name = "HOST[:PORT]", help_heading = "Server metrics")]
    pub switch_snmp: Vec<String>,
    /// With --switch-snmp: the SNMP community, FILE's one word (owner-only permissions, at
    /// most 255 bytes); `public` without it.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Server metrics",
        requires = "switch_snmp"
    )]
    pub switch_snmp_community_file: Option<PathBuf>,
    /// Name of the test (single-workload runs).
    #[arg(long, value_name = "TEXT", help_heading = "Output")]
    pub name: Option<String>,

    /// Allow writes to block devices and to files iopath did not create.
    #[arg(long, help_heading = "Safety")]
    pub allow_destructive: bool,
    /// With --allow-destructive: write even over a filesystem or partition-table signature.
    #[arg(long, help_heading = "Safety", requires = "allow_destructive")]
    pub force_overwrite_signature: bool,
    /// Remove test files left by killed runs (.iopath-test-PID.tmp whose process is gone) in
    /// the directories where this run creates its test file. Without it they are only named.
    #[arg(long, help_heading = "Safety")]
    pub remove_stale: bool,

    /// How many jobs and worker threads a test may have.
    #[command(flatten)]
    pub limits: LimitArgs,

    /// Longest wait on an nbd://, iscsi://, nfs:// or smb:// server (default 30s): to connect and finish the
    /// handshake (one deadline for all of it), and for each reply; a server that takes longer
    /// ends the run with an error naming it.
    #[arg(long, value_name = "TIME", value_parser = net_timeout_arg, help_heading = "Network targets")]
    pub net_timeout: Option<Duration>,

    /// smb:// targets: read the user, password and domain from FILE, in smbclient's -A format
    /// (`username = …`, `password = …`, `domain = …`), instead of IOPATH_SMB_USER,
    /// IOPATH_SMB_PASSWORD and IOPATH_SMB_DOMAIN. FILE must be readable by its owner only
    /// (chmod 600), or it is refused. Credentials are never taken from the command line and
    /// never written to results or reports.
    #[arg(long, value_name = "FILE", help_heading = "Network targets")]
    pub smb_credentials: Option<PathBuf>,

    /// smb:// targets: sign every message even when the server does not require it (SMB 3.1.1
    /// sessions are always signed).
    #[arg(long, help_heading = "Network targets")]
    pub smb_sign: bool,

    /// smb:// targets: encrypt every message even when the server does not require it
    /// (SMB 3.0 and later, with the cipher negotiated: AES-128-CCM on 3.0 and 3.0.2, AES-128-GCM
    /// or what the server allows on 3.1.1; refused on SMB 2.1, which has no encryption).
    #[arg(long, help_heading = "Network targets")]
    pub smb_encrypt: bool,

    /// Write every issued I/O (test, worker, direction, offset, length, target, the worker's
    /// I/Os in flight once it was issued) as CSV to FILE (room reserved per worker before the
    /// start; I/Os past it are counted in the test's `trace_overflow_ios` and warned about).
    #[arg(long, value_name = "FILE", hide = true)]
    pub trace_io: Option<PathBuf>,
    /// Stamp every written block with its offset and a marker (first 16 bytes).
    #[arg(long, hide = true)]
    pub stamp_writes: bool,
    /// Null engine: delay every I/O (DELAY) or FIRST,SECOND,PERCENT_SECOND.
    #[arg(long, value_name = "SPEC", value_parser = null_delay_arg, hide = true)]
    pub null_delay: Option<InjectedDelay>,
    /// Length of a series interval (default 1 s; 250 ms when every test measures less than
    /// 10 s, so that a short run's confidence interval has samples to rest on).
    #[arg(long, value_name = "TIME", value_parser = option_values::positive_time, hide = true)]
    pub interval: Option<u64>,
}

/// A run as the flags describe it.
pub struct RunRequest {
    /// The tests.
    pub plan: Plan,
    /// Options for the runner.
    pub options: RunOptions,
    /// Notes to show before the run (ignored options, mappings).
    pub messages: Vec<String>,
    /// The default suite: tests that may not write a target are skipped, not refused.
    pub is_default_suite: bool,
    /// Merges of blktrace captures a job file asks for, to write before the run.
    pub merged_captures: Vec<iopath::input::merged_capture::MergedCapture>,
}

impl RunArgs {
    /// `targets` with the SMB options of the command line on every `smb://` target, whose
    /// credentials are looked up now (a missing password is a usage error, before any I/O).
    fn with_smb_options(&self, targets: Vec<TargetSpec>) -> Result<Vec<TargetSpec>, RequestError> {
        let security = iopath::targets::network_target::SmbSecurity {
            sign: self.smb_sign,
            encrypt: self.smb_encrypt,
        };
        let file = self.smb_credentials.as_deref();
        let mut smb_targets = 0;
        let targets = targets
            .into_iter()
            .map(|spec| match spec {
                TargetSpec::Network(network) => {
                    let network = network.with_smb_options(security, file);
                    if let iopath::targets::network_target::NetworkTarget::Smb { url, .. } =
                        &network
                    {
                        smb_targets += 1;
                        iopath::engine::smb::target_credentials(url, file)
                            .map_err(|error| usage(error.to_string()))?;
                    }
                    Ok(TargetSpec::Network(network))
                }
                other => Ok(other),
            })
            .collect::<Result<Vec<_>, RequestError>>()?;
        if smb_targets == 0 && (self.smb_sign || self.smb_encrypt || file.is_some()) {
            return Err(usage(
                "--smb-sign, --smb-encrypt and --smb-credentials apply to smb:// targets only",
            ));
        }
        Ok(targets)
    }

    /// Checks every flag together and builds the plan. Errors name the flag.
    pub fn to_request(&self, command_line: Vec<String>) -> Result<RunRequest, RequestError> {
        if let Some(job) = &self.job {
            return self.job_request(job, command_line);
        }
        if let Some(log) = &self.replay {
            return self.job_request(log, command_line);
        }
        let options = &self.workload;
        let mut template = base_workload();
        options.apply_common(&mut template);
        if let Some(conflict) = template.write_data.conflict() {
            return Err(WorkloadError::from(conflict).into());
        }
        let is_default_suite = !options.describes_a_workload();
        let mut create_size = options.size.map(|size| size + options.offset.unwrap_or(0));
        if template.engine.is_file_operation() && create_size.is_none() {
            // filestat and filedelete find missing files laid out, as fio's filesize does.
            create_size = Some(FILE_OPERATION_FILE_BYTES);
        }
        let named = numbered_files(&self.targets, self.files)?;
        if let Some(count) = self.files
            && options.files_per_worker.is_none()
        {
            template.worker_files.per_worker = count;
        }
        if template.engine.is_file_operation() {
            if options.duration.is_none() {
                // One pass over the files (the runner gives each file one operation per pass).
                template.length = RunLength::Bytes {
                    bytes: 1,
                    time_limit_ns: None,
                };
            }
            if options.ramp.is_none() {
                // A pass's operations all count.
                template.ramp_ns = 0;
            }
        }
        let targets: Vec<TargetSpec> = if named.is_empty() {
            vec![TargetSpec::TempFile {
                directory: PathBuf::from("."),
                size: create_size,
            }]
        } else {
            named
                .iter()
                .map(|path| TargetSpec::from_argument(path, create_size))
                .collect::<Result<_, _>>()?
        };
        let targets = self.with_smb_options(targets)?;
        let target_indexes: Vec<usize> = (0..targets.len()).collect();
        let mut notes = Vec::new();
        let tests = if let Some(preset) = &self.preset {
            let preset = presets::find(preset)?;
            if self.name.is_some() {
                return Err(usage("--name cannot rename the tests of a preset"));
            }
            if let Some(flag) = options.access_flags_given().first() {
                return Err(usage(format!(
                    "{flag} would change the I/O of preset '{}'; presets take tuning flags only (--qd, --workers, --size, --offset, --rate, --distribution …)",
                    preset.name
                )));
            }
            let mut template = template.clone();
            options.apply_tuning(&mut template);
            preset.tests(&template, &target_indexes)
        } else if is_default_suite {
            if self.name.is_some() {
                return Err(usage(
                    "--name names a single-workload test; give workload flags too",
                ));
            }
            default_suite(&template, &target_indexes)
        } else {
            let workload = options.apply(&template)?;
            notes = options.notes(&workload);
            let name = self.name.clone().unwrap_or_else(|| workload.summary());
            vec![TestPlan::single(name, workload, target_indexes)]
        };
        let tests = self.with_test_settings(tests)?;
        Ok(RunRequest {
            plan: Plan { targets, tests },
            options: self.run_options(command_line, is_default_suite),
            is_default_suite,
            messages: notes
                .into_iter()
                .map(|note| format!("note: {note}"))
                .collect(),
            merged_captures: Vec::new(),
        })
    }

    /// Sweeps, steady state and cache dropping, for every test.
    fn with_test_settings(&self, tests: Vec<TestPlan>) -> Result<Vec<TestPlan>, WorkloadError> {
        let mut tests = expand(tests, &self.sweep)?;
        for test in &mut tests {
            if self.drop_caches {
                test.settings.drop_caches_before = true;
            }
            if let Some(steady) = &self.steady {
                test.settings.steady = Some(steady.clone());
            }
        }
        Ok(tests)
    }

    /// Options for the runner; the default suite confirms its verdicts within its own time,
    /// and any other run the verdicts that rest on the fallback (latency-bound), unless
    /// --confirm or --no-confirm says otherwise.
    fn run_options(&self, command_line: Vec<String>, is_default_suite: bool) -> RunOptions {
        let confirm = if self.no_confirm {
            ConfirmMode::Off
        } else if self.confirm {
            ConfirmMode::Every
        } else if is_default_suite {
            ConfirmMode::WithinTestTime {
                percent: DEFAULT_SUITE_PERCENT,
            }
        } else {
            ConfirmMode::FallbackWithinTestTime {
                percent: DEFAULT_SUITE_PERCENT,
            }
        };
        RunOptions {
            write_policy: WritePolicy {
                allow_destructive: self.allow_destructive,
                force_overwrite_signature: self.force_overwrite_signature,
            },
            label: self.label.clone(),
            command_line,
            null_delay: self.null_delay,
            trace: self.trace_io.is_some(),
            stamp_writes: self.stamp_writes,
            interval_ns: self.interval.unwrap_or(0),
            limits: self.limits.limits(),
            net_timeout: self.net_timeout,
            confirm,
        }
    }

    fn job_request(
        &self,
        job: &Path,
        command_line: Vec<String>,
    ) -> Result<RunRequest, RequestError> {
        if self.name.is_some() {
            return Err(usage("--name cannot rename the tests of a job file"));
        }
        let request = JobFileRequest {
            overrides: self.workload.clone(),
            targets: self.targets.clone(),
            ignore_unsupported: self.ignore_unsupported,
            limits: self.limits.limits(),
        };
        let mut loaded = if self.replay.is_some() {
            iopath::input::fio::load_replay(job, &request)?
        } else {
            load_job_file(job, &request)?
        };
        loaded.plan.tests = self.with_test_settings(loaded.plan.tests)?;
        let mut messages: Vec<String> = loaded
            .ignored
            .iter()
            .map(|ignored| format!("ignored (--ignore-unsupported): {ignored}"))
            .collect();
        messages.extend(loaded.notes.iter().map(|note| format!("note: {note}")));
        Ok(RunRequest {
            plan: loaded.plan,
            options: self.run_options(command_line, false),
            is_default_suite: false,
            messages,
            merged_captures: loaded.merged_captures,
        })
    }
}

/// Size of each missing file laid out for `--engine filestat` or `filedelete` without
/// `--size`.
const FILE_OPERATION_FILE_BYTES: u64 = 4096;

/// Most files `--files` names per target.
const MAX_FILES_PER_TARGET: u32 = 1 << 24;

/// Reads `--files`: a whole number from 1 to [`MAX_FILES_PER_TARGET`].
fn parse_file_count(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(count @ 1..=MAX_FILES_PER_TARGET) => Ok(count),
        _ => Err(format!(
            "'{text}' is not a whole number of files from 1 to {MAX_FILES_PER_TARGET}"
        )),
    }
}

/// The targets with `--files N` applied: each becomes TARGET.0 … TARGET.N-1.
fn numbered_files(targets: &[PathBuf], files: Option<u32>) -> Result<Vec<PathBuf>, RequestError> {
    let Some(count) = files else {
        return Ok(targets.to_vec());
    };
    if targets.is_empty() {
        return Err(usage(
            "--files N names its files after the targets (TARGET.0 … TARGET.N-1): give a path such as dir/file",
        ));
    }
    let mut named = Vec::with_capacity(targets.len() * count as usize);
    for target in targets {
        if target.to_string_lossy().contains("://") {
            return Err(usage(format!(
                "--files names local files; {} is a URL",
                iopath::text::shown(&target.to_string_lossy())
            )));
        }
        for index in 0..count {
            let mut name = target.as_os_str().to_os_string();
            name.push(format!(".{index}"));
            named.push(PathBuf::from(name));
        }
    }
    Ok(named)
}
