//! The storage path of every target: its hops from the file down to the medium and out to
//! the server, what each can carry, and how busy each was (the busiest test through it).

use super::escape::escape;
use super::page::Section;
use super::parts::{code, utilisation_bar};
use crate::report::alike::alike_line;
use crate::report::model::RunReport;
use crate::result::target_groups::group;
use crate::result::{Duplex, HopOrigin, RunResult, StoragePath};
use crate::units::{format_iops, format_rate};
use std::fmt::Write;

/// The busiest test through hop `key`: (its name, the utilisation in percent).
fn busiest(result: &RunResult, key: &str) -> Option<(String, f64)> {
    result
        .tests
        .iter()
        .filter_map(|test| {
            let analysis = test.analysis.as_ref()?;
            let hop = analysis.hops.iter().find(|hop| hop.hop_key == key)?;
            Some((test.name.clone(), hop.utilisation_percent))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

fn path_table(result: &RunResult, path: &StoragePath) -> String {
    let busiest_tests: Vec<Option<(String, f64)>> = path
        .hops
        .iter()
        .map(|hop| busiest(result, &hop.key))
        .collect();
    let measured = busiest_tests.iter().any(Option::is_some);
    let mut html = format!(
        r#"<div class="table-wrap"><table class="path" data-hops="{}"><thead><tr><th>hop</th><th>kind</th><th>description</th><th>carries</th>{}</tr></thead><tbody>"#,
        path.hops.len(),
        if measured {
            "<th>busiest test</th><th>utilisation</th>"
        } else {
            ""
        }
    );
    for (hop, busiest_test) in path.hops.iter().zip(busiest_tests) {
        let indent = hop.depth as usize * 14;
        let _ = write!(
            html,
            r#"<tr class="hop"><td style="padding-left:{}px"><b>{}</b>{}</td><td>{}</td><td>{}</td>"#,
            8 + indent,
            escape(&hop.name),
            if hop.origin == HopOrigin::Declared {
                r#" <span class="muted">(declared)</span>"#
            } else {
                ""
            },
            hop.kind.label(),
            escape(&hop.description)
        );
        match &hop.capacity {
            Some(capacity) => {
                let mut text = format_rate(capacity.payload_bytes_per_second as f64);
                text.push_str(match capacity.duplex {
                    Duplex::Full => " each way",
                    Duplex::Half => " shared",
                });
                if let Some(iops) = capacity.iops {
                    text.push_str(&format!(", {}", format_iops(iops as f64)));
                }
                let _ = write!(
                    html,
                    r#"<td title="{}">{}</td>"#,
                    escape(&capacity.derivation),
                    escape(&text)
                );
            }
            None => html.push_str(r#"<td class="muted">unknown</td>"#),
        }
        match busiest_test {
            _ if !measured => {}
            Some((test, percent)) => {
                let _ = write!(
                    html,
                    r#"<td>{}</td><td class="bar-cell">{}</td>"#,
                    escape(&test),
                    utilisation_bar(percent)
                );
            }
            None => html.push_str("<td></td><td></td>"),
        }
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table></div>");
    let mut notes: Vec<String> = path.notes.iter().map(|note| escape(note)).collect();
    if path.first_blocks_all_zero == Some(true) {
        notes.push(
            "The first 64 KiB read back as zeros: the volume may never have been written, and reads of it may not touch the medium."
                .into(),
        );
    }
    if !notes.is_empty() {
        html.push_str(r#"<ul class="notes">"#);
        for note in notes {
            let _ = write!(html, "<li>{note}</li>");
        }
        html.push_str("</ul>");
    }
    html
}

/// The storage path section.
pub fn section(runs: &[RunReport<'_>]) -> Section {
    let mut html = String::new();
    for run in runs {
        let result = run.result;
        if runs.len() > 1 {
            let _ = write!(html, "<h3>{}</h3>", escape(&run.label));
        }
        if result.paths.is_empty() {
            html.push_str(r#"<p class="note">No storage path in this result: it was saved without the analysis. Declare what cannot be seen with <code>--link</code> or <code>--path</code> when running.</p>"#);
            continue;
        }
        // Targets alike (the files of a job on one filesystem) share one path: it is shown
        // once, with a line for the others.
        let (entries, paths) = group(&result.targets, &result.paths);
        let alike = (paths.len() == entries.len()).then_some(&entries);
        for (index, path) in paths.iter().enumerate() {
            let _ = write!(
                html,
                r#"<p><b><code>{}</code></b></p>"#,
                escape(&path.target)
            );
            if let Some(entry) = alike.map(|entries| &entries[index])
                && let Some(others) = &entry.alike
            {
                let _ = write!(
                    html,
                    r#"<p class="note">{}; their paths differ from this one only in the file hop</p>"#,
                    alike_line(others, entry.first.size_bytes, &code)
                );
            }
            html.push_str(&path_table(result, path));
        }
    }
    html.push_str(r#"<p class="meta">Capacities are payload rates (after line encoding and framing); hover a capacity for its derivation. Utilisation is the busier of bytes and I/Os against capacity, protocol headers included.</p>"#);
    Section {
        id: "path",
        title: "Storage path",
        body: html,
    }
}
