//! Data verification (docs/verify.md): for each test that verified, what was checked and every
//! kept bad block with its target, offset, kind, what was expected and found, and the run that
//! wrote it.

use super::escape::escape;
use super::page::Section;
use super::parts::num;
use crate::report::model::RunReport;
use crate::result::VerificationResult;
use crate::units::format_size;
use std::fmt::Write;

/// One test's verification: a summary line, then the kept bad blocks in a table.
fn verification_html(html: &mut String, test: &str, found: &VerificationResult) {
    let _ = write!(
        html,
        "<h3>{}</h3><p>verify {}: {} blocks checked ({}), <b>{} bad</b>, {} never written, {}{} \
         not checked; run {}</p>",
        escape(test),
        found.kind.name(),
        found.blocks_checked,
        format_size(found.bytes_checked),
        found.mismatch_count,
        found.never_written_blocks,
        if found.trimmed_blocks_checked > 0 {
            format!("{} trimmed (zeroes), ", found.trimmed_blocks_checked)
        } else {
            String::new()
        },
        found.skipped_blocks,
        escape(&found.run_id)
    );
    if found.mismatches.is_empty() {
        return;
    }
    html.push_str(r#"<div class="table-wrap"><table><thead><tr><th>target</th><th class="num">offset</th><th class="num">bytes</th><th>kind</th><th>expected</th><th>found</th><th>written by run</th></tr></thead><tbody>"#);
    for bad in &found.mismatches {
        let _ = write!(
            html,
            "<tr><td>{}</td>{}{}<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&match bad.rank {
                Some(rank) => format!("{} (rank {rank})", bad.target),
                None => bad.target.clone(),
            }),
            num(&bad.offset.to_string()),
            num(&bad.length.to_string()),
            bad.kind.name(),
            escape(&bad.expected),
            escape(&bad.found),
            escape(bad.written_by_run.as_deref().unwrap_or(""))
        );
    }
    html.push_str("</tbody></table></div>");
    let more = found
        .mismatch_count
        .saturating_sub(found.mismatches.len() as u64);
    if more > 0 {
        let _ = write!(html, "<p>… and {more} more bad blocks.</p>");
    }
}

/// The verification section, when any test of any run verified its data.
pub fn section(runs: &[RunReport<'_>]) -> Option<Section> {
    let mut html = String::new();
    for run in runs {
        let verified: Vec<_> = run
            .result
            .tests
            .iter()
            .filter_map(|test| Some((&test.name, test.verification.as_ref()?)))
            .collect();
        if verified.is_empty() {
            continue;
        }
        if runs.len() > 1 {
            let _ = write!(html, "<h3>{}</h3>", escape(&run.label));
        }
        for (name, found) in verified {
            verification_html(&mut html, name, found);
        }
    }
    (!html.is_empty()).then_some(Section {
        id: "verification",
        title: "Data verification",
        body: html,
    })
}

#[cfg(test)]
mod tests {
    use crate::report::html::write_html;
    use crate::report::model::Report;
    use crate::result::{MismatchKind, VerificationResult, VerifyMismatch};
    use crate::support::fixtures::mixed;

    #[test]
    fn a_verifying_run_lists_its_bad_blocks_escaped() {
        let mut run = mixed().clone();
        run.tests[0].verification = Some(VerificationResult {
            run_id: "00000000000000aa".into(),
            blocks_checked: 256,
            bytes_checked: 1 << 20,
            mismatch_count: 20,
            mismatches: vec![VerifyMismatch {
                target: "disk<1>.bin".into(),
                offset: 8192,
                length: 4096,
                kind: MismatchKind::WrongOffset,
                expected: "offset 8192".into(),
                found: "offset 12288".into(),
                written_by_run: Some("00000000000000aa".into()),
                rank: None,
            }],
            ..VerificationResult::default()
        });
        let mut out = Vec::new();
        write_html(&Report::of_run(&run), &mut out).unwrap();
        let html = String::from_utf8(out).unwrap();
        assert!(html.contains(r#"id="verification""#));
        assert!(html.contains("<b>20 bad</b>"), "{html}");
        assert!(html.contains("disk&lt;1&gt;.bin"));
        assert!(html.contains("wrong_offset"));
        assert!(html.contains("and 19 more bad blocks"));
        let mut out = Vec::new();
        write_html(&Report::of_run(mixed()), &mut out).unwrap();
        assert!(
            !String::from_utf8(out)
                .unwrap()
                .contains(r#"id="verification""#)
        );
    }
}
