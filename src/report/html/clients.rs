//! The clients of a multi-client run (docs/multi-host.md): for each test, the verdict across
//! the clients, then each host's figures (its clients merged) and each rank's own, with its
//! clock offset; lost ranks are named.

use super::escape::escape;
use super::page::Section;
use super::parts::num;
use crate::report::model::RunReport;
use crate::result::{ClusterResult, TestResult};
use std::fmt::Write;

/// One row: who, and their figures in a test.
fn row(html: &mut String, who: &str, ranks: &str, test: &TestResult, extra: &str) {
    let _ = write!(
        html,
        "<tr><td>{}</td><td>{}</td>{}{}{}{}{}<td>{}</td></tr>",
        escape(who),
        escape(ranks),
        num(&format!("{:.0}", test.total.iops)),
        num(&format!("{:.1}", test.total.bytes_per_second / 1e6)),
        num(&format!("{:.1}", test.total.latency.mean_ns / 1e3)),
        num(&format!(
            "{:.1}",
            test.total.latency.percentile("99") as f64 / 1e3
        )),
        num(&format!("{:.0}", test.cpu.busiest_core_percent())),
        escape(extra)
    );
}

fn cluster_html(html: &mut String, run: &RunReport<'_>, cluster: &ClusterResult) {
    let _ = write!(
        html,
        "<p>{} ranks on {} hosts ({}).</p>",
        cluster.size,
        run.hosts.len(),
        escape(&cluster.launcher)
    );
    for (index, test) in run.result.tests.iter().enumerate() {
        let _ = write!(html, "<h3>{}</h3>", escape(&test.name));
        if let Some(verdict) = cluster.verdicts.get(index) {
            let _ = write!(
                html,
                "<p><b>{}</b>: {}</p>",
                verdict.limit.name(),
                escape(&verdict.evidence)
            );
        }
        html.push_str(r#"<div class="table-wrap"><table><thead><tr><th>host / rank</th><th>ranks</th><th class="num">IOPS</th><th class="num">MB/s</th><th class="num">mean µs</th><th class="num">p99 µs</th><th class="num">busiest core %</th><th>clock offset</th></tr></thead><tbody>"#);
        for host in &run.hosts {
            if let Some(merged) = host.test(index) {
                row(html, host.name, &host.rank_list(), merged, "");
            }
            for rank in cluster.ranks.iter().filter(|rank| rank.host == host.name) {
                let who = format!("  rank {}", rank.rank);
                match (&rank.lost, rank.tests.get(index)) {
                    (None, Some(own)) => row(
                        html,
                        &who,
                        "",
                        own,
                        &format!(
                            "{:+.0} µs ± {:.0}",
                            rank.clock_offset_ns as f64 / 1e3,
                            rank.clock_uncertainty_ns as f64 / 1e3
                        ),
                    ),
                    (lost, _) => {
                        let _ = write!(
                            html,
                            r#"<tr><td>{}</td><td colspan="7">lost: {}</td></tr>"#,
                            escape(&who),
                            escape(lost.as_deref().unwrap_or("no figures"))
                        );
                    }
                }
            }
        }
        html.push_str("</tbody></table></div>");
    }
}

/// The clients section, when any run came from several clients.
pub fn section(runs: &[RunReport<'_>]) -> Option<Section> {
    let mut html = String::new();
    for run in runs {
        let Some(cluster) = &run.result.cluster else {
            continue;
        };
        if runs.len() > 1 {
            let _ = write!(html, "<h3>{}</h3>", escape(&run.label));
        }
        cluster_html(&mut html, run, cluster);
    }
    (!html.is_empty()).then_some(Section {
        id: "clients",
        title: "Clients",
        body: html,
    })
}

#[cfg(test)]
mod tests {
    use crate::report::html::write_html;
    use crate::report::model::Report;
    use crate::support::fixtures::{clustered, mixed};

    #[test]
    fn a_multi_client_run_has_a_clients_section_with_each_host_and_rank() {
        let mut out = Vec::new();
        write_html(&Report::of_run(&clustered()), &mut out).unwrap();
        let html = String::from_utf8(out).unwrap();
        assert!(html.contains(r#"id="clients""#));
        assert!(html.contains("3 ranks on 2 hosts"));
        for who in ["node1", "node2", "rank 0", "rank 1", "rank 2"] {
            assert!(html.contains(who), "{who}");
        }
        let mut out = Vec::new();
        write_html(&Report::of_run(mixed()), &mut out).unwrap();
        assert!(!String::from_utf8(out).unwrap().contains(r#"id="clients""#));
    }
}
