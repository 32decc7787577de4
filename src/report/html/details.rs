//! Host and workload details (the machine, the command line, every target and every job), and
//! the trust notes: every reason given by the analysis, the run and the comparison to doubt a
//! figure.

use super::escape::escape;
use super::page::Section;
use super::parts::{code, seconds};
use crate::compare::{Comparison, Outcome};
use crate::report::alike::alike_line;
use crate::report::model::RunReport;
use crate::result::target_groups::group;
use crate::result::{RunResult, StopReason, TargetKind, TrustKind};
use crate::text::shorten::{SHOWN_CHARS, shorten};
use crate::units::format_bytes;
use std::fmt::Write;

fn kind_name(kind: TargetKind) -> &'static str {
    kind.description()
}

/// The host and workload section.
pub fn host_section(runs: &[RunReport<'_>]) -> Section {
    let mut html = String::new();
    for run in runs {
        let result = run.result;
        let host = &result.host;
        if runs.len() > 1 {
            let _ = write!(html, "<h3>{}</h3>", escape(&run.label));
        }
        let _ = write!(
            html,
            r#"<dl class="facts"><dt>host</dt><dd>{}</dd><dt>CPU</dt><dd>{} × {}</dd><dt>memory</dt><dd>{}</dd><dt>kernel</dt><dd>Linux {}</dd><dt>run</dt><dd>{} · iopath {}{}{}</dd><dt>command</dt><dd><code>{}</code></dd></dl>"#,
            escape(&host.hostname),
            host.cpu_count,
            escape(&host.cpu_model),
            format_bytes(host.memory_bytes),
            escape(&host.kernel),
            escape(&result.started_at),
            escape(&result.iopath_version),
            result.label.as_ref().map_or(String::new(), |label| format!(
                " · label {}",
                escape(&shorten(label, SHOWN_CHARS))
            )),
            if result.partial { " · partial" } else { "" },
            escape(&result.command_line.join(" "))
        );
        if !result.targets.is_empty() {
            html.push_str(r#"<div class="table-wrap"><table class="targets"><thead><tr><th>target</th><th>kind</th><th class="num">size</th><th>filesystem</th><th>device</th><th>medium</th><th class="num">blocks (logical / physical)</th><th>created by iopath</th></tr></thead><tbody>"#);
            // Targets alike (the files of a job on one filesystem): the first, then a line.
            for entry in group(&result.targets, &[]).0 {
                let target = &*entry.first;
                let _ = write!(
                    html,
                    r#"<tr><td><code>{}</code></td><td>{}</td><td class="num">{}</td><td>{}</td><td>{}</td><td>{}</td><td class="num">{} / {}</td><td>{}</td></tr>"#,
                    escape(&target.path),
                    kind_name(target.kind),
                    format_bytes(target.size_bytes),
                    escape(target.filesystem.as_deref().unwrap_or("")),
                    escape(target.device.as_deref().unwrap_or("")),
                    match target.rotational {
                        Some(true) => "rotational",
                        Some(false) => "non-rotational",
                        None => "",
                    },
                    target.logical_block_size_bytes,
                    target.physical_block_size_bytes,
                    if target.created_by_iopath {
                        "yes"
                    } else {
                        "no"
                    }
                );
                if let Some(alike) = &entry.alike {
                    let _ = write!(
                        html,
                        r#"<tr><td colspan="8" class="muted">{}</td></tr>"#,
                        alike_line(alike, target.size_bytes, &code)
                    );
                }
            }
            html.push_str("</tbody></table></div>");
        }
        html.push_str(r#"<div class="table-wrap"><table class="workloads"><thead><tr><th>test</th><th>job</th><th>workload</th><th>engine</th><th>I/O</th><th class="num">threads × QD</th><th class="num">measured</th><th class="num">ramp</th><th>targets</th></tr></thead><tbody>"#);
        for test in &result.tests {
            for job in &test.jobs {
                let targets = job_targets(result, &job.target_indexes);
                let _ = write!(
                    html,
                    r#"<tr><td>{}</td><td>{}</td><td>{}</td><td>{}{}</td><td>{}</td><td class="num">{} × {}</td><td class="num">{}</td><td class="num">{}</td><td><code>{}</code></td></tr>"#,
                    escape(&test.name),
                    escape(&job.name),
                    escape(&job.workload.summary()),
                    escape(&job.engine.name),
                    if job.engine.capabilities.registered_buffers {
                        " (registered buffers)"
                    } else {
                        ""
                    },
                    if job.direct { "O_DIRECT" } else { "buffered" },
                    job.worker_threads,
                    job.queue_depth_per_worker,
                    seconds(job.measured_ns),
                    seconds(job.ramp_ns),
                    escape(&targets)
                );
            }
        }
        html.push_str("</tbody></table></div>");
    }
    Section {
        id: "host",
        title: "Host and workload",
        body: html,
    }
}

/// The most targets of a job the workload table names; beyond, the first and last few and
/// how many there are.
const NAMED_TARGETS: usize = 6;

/// The paths of the targets at `indexes`, joined; past [`NAMED_TARGETS`], the first three,
/// `…`, the last two and the count.
fn job_targets(result: &RunResult, indexes: &[usize]) -> String {
    let path = |index: &usize| {
        result
            .targets
            .get(*index)
            .map(|target| target.path.as_str())
    };
    if indexes.len() <= NAMED_TARGETS {
        return indexes
            .iter()
            .filter_map(path)
            .collect::<Vec<_>>()
            .join(", ");
    }
    let first: Vec<&str> = indexes[..3].iter().filter_map(path).collect();
    let last: Vec<&str> = indexes[indexes.len() - 2..]
        .iter()
        .filter_map(path)
        .collect();
    format!(
        "{}, …, {} ({} targets)",
        first.join(", "),
        last.join(", "),
        indexes.len()
    )
}

fn kind_label(kind: TrustKind) -> &'static str {
    match kind {
        TrustKind::BufferedIo => "buffered",
        TrustKind::WorkingSetInMemory => "fits in memory",
        TrustKind::AboveCapacity => "above capacity",
        TrustKind::NeverWritten => "never written",
        TrustKind::TooShort => "too short",
        TrustKind::NotSteady => "not steady",
        TrustKind::Errors => "errors",
        TrustKind::Partial => "partial",
        TrustKind::ReducibleData => "reducible data",
        TrustKind::BurstBucket => "burst bucket",
        TrustKind::WriteCliff => "write cliff",
        TrustKind::FirstWrites => "first writes",
    }
}

/// The trust notes section.
pub fn trust_section(runs: &[RunReport<'_>], comparison: Option<&Comparison>) -> Section {
    let mut html = String::new();
    for run in runs {
        let result = run.result;
        let mut notes: Vec<String> = Vec::new();
        if result.partial {
            notes.push(
                r#"<span class="kind">partial</span>The run stopped before every test was done."#
                    .into(),
            );
        }
        for warning in &result.warnings {
            notes.push(format!(
                r#"<span class="kind">warning</span>{}"#,
                escape(warning)
            ));
        }
        let analysed = result.tests.iter().any(|test| test.analysis.is_some());
        for test in &result.tests {
            let name = escape(&test.name);
            if let Some(analysis) = &test.analysis {
                for note in &analysis.trust_notes {
                    notes.push(format!(
                        r#"<span class="kind">{}</span><b>{name}</b>: {}"#,
                        kind_label(note.kind),
                        escape(&note.message)
                    ));
                }
            }
            for warning in &test.warnings {
                notes.push(format!(
                    r#"<span class="kind">warning</span><b>{name}</b>: {}"#,
                    escape(warning)
                ));
            }
            if test.stop_reason != StopReason::Completed {
                notes.push(format!(
                    r#"<span class="kind">partial</span><b>{name}</b>: {}"#,
                    if test.stop_reason == StopReason::Interrupted {
                        "interrupted before its end"
                    } else {
                        "stopped by an I/O error"
                    }
                ));
            }
            if test.errors.count > 0 && test.analysis.is_none() {
                notes.push(format!(
                    r#"<span class="kind">errors</span><b>{name}</b>: {} I/O errors"#,
                    test.errors.count
                ));
            }
            if let Some(steady) = &test.steady_state
                && steady.attained_after_ns.is_none()
            {
                notes.push(format!(
                    r#"<span class="kind">not steady</span><b>{name}</b>: the steady-state criterion {} never held"#,
                    escape(&steady.criterion)
                ));
            }
            let performs_io = test
                .jobs
                .iter()
                .all(|job| job.engine.capabilities.performs_io);
            if !performs_io {
                notes.push(format!(
                    r#"<span class="kind">no I/O</span><b>{name}</b>: the null engine transfers no data; the figures are iopath's own overhead"#
                ));
            }
        }
        if !analysed && !result.tests.is_empty() {
            notes.push(r#"<span class="kind">not analysed</span>This result carries no analysis: nothing here checks it against the path's capacity, the page cache or the variation of its figures."#.into());
        }
        if runs.len() > 1 {
            let _ = write!(html, "<h3>{}</h3>", escape(&run.label));
        }
        if notes.is_empty() {
            html.push_str(r#"<p class="note">No reason to doubt these figures was found.</p>"#);
        } else {
            html.push_str(r#"<ul class="notes trust">"#);
            for note in notes {
                let _ = write!(html, "<li>{note}</li>");
            }
            html.push_str("</ul>");
        }
    }
    if let Some(comparison) = comparison {
        let unknown = comparison
            .tests
            .iter()
            .filter(|test| {
                test.changes.iter().any(|changes| {
                    changes
                        .metrics
                        .iter()
                        .any(|m| m.outcome == Outcome::Unknown)
                })
            })
            .count();
        if unknown > 0 {
            let _ = write!(
                html,
                r#"<p class="note">Comparison: {unknown} test{} lack a confidence interval in some run (fewer than two full one-second intervals); their changes are marked “no CI” and cannot be told from noise.</p>"#,
                if unknown == 1 { "" } else { "s" }
            );
        }
    }
    Section {
        id: "trust",
        title: "Trust notes",
        body: html,
    }
}
