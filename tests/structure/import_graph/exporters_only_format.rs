//! The exporters only format. `src/report/model.rs` builds the report model once from the
//! analysed results: it merges each host's clients, computes each test's figures with their
//! confidence intervals and runs the comparison. Every other file under `src/report/` (an
//! exporter, or a part of one) reads that model: its code may take the comparison's types
//! (`compare/comparison.rs`, the output of a comparison) but imports nothing that merges,
//! compares or analyses — not `stats/merge.rs`, no file of `analysis/`, and no other file of
//! `compare/` (`compare()`, matching, significance, cost, labels). Test code may use them as
//! fixtures.

use super::{Graph, build_graph, package, source_dir};

/// The one file of `report/` that builds the model.
const MODEL: &str = "report/model.rs";

/// What an exporter may take from `compare/`: the comparison's plain data.
const COMPARISON_TYPES: &str = "compare/comparison.rs";

/// Whether an exporter may import from `to`.
fn refused(to: &str) -> bool {
    to == "stats/merge.rs"
        || to.starts_with("analysis/")
        || (to.starts_with("compare/") && to != COMPARISON_TYPES)
}

/// Every import of an exporter that the rule refuses, with the paths that make it.
fn exporter_violations(graph: &Graph) -> Vec<String> {
    let mut problems = Vec::new();
    for (from, targets) in &graph.file_edges {
        if !from.starts_with("report/") || from == MODEL {
            continue;
        }
        for to in targets.iter().filter(|to| refused(to)) {
            let reasons = &graph.edge_reasons[&(from.clone(), to.clone())];
            problems.push(format!(
                "{from} → {to} [{}]: exporters only format what {MODEL} built",
                reasons.join(", ")
            ));
        }
    }
    problems
}

#[test]
fn exporters_read_the_model_and_only_format() {
    let graph = build_graph(&source_dir());
    assert!(
        graph.file_modules.contains_key(MODEL),
        "no {MODEL}: the report model moved, and this check with it"
    );
    let problems = exporter_violations(&graph);
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn the_exporter_rule_refuses_a_merge_a_comparison_and_an_analysis() {
    let (_directory, graph) = package(&[
        (
            "lib.rs",
            "pub mod analysis;\npub mod compare;\npub mod report;\npub mod stats;\n",
        ),
        ("analysis.rs", "pub fn analyse() {}\n"),
        ("analysis/verdict.rs", "pub fn analyse_test() {}\n"),
        (
            "compare/mod.rs",
            "pub mod comparison;\npub use comparison::Comparison;\npub fn compare() {}\n",
        ),
        ("compare/comparison.rs", "pub struct Comparison;\n"),
        ("stats/mod.rs", "pub mod merge;\n"),
        ("stats/merge.rs", "pub fn host_test() {}\n"),
        (
            "report/mod.rs",
            "pub mod model;\npub mod text;\npub mod table;\n",
        ),
        (
            "report/model.rs",
            "use crate::stats::merge::host_test;\nuse crate::compare::compare;\n",
        ),
        (
            "report/text.rs",
            "use crate::compare::Comparison;\nfn f() { crate::stats::merge::host_test() }\n\
             #[cfg(test)]\nmod tests {\n    use crate::compare::compare;\n}\n",
        ),
        (
            "report/table.rs",
            "use crate::compare::{compare, Comparison};\n",
        ),
    ]);
    assert_eq!(
        exporter_violations(&graph),
        vec![
            "report/table.rs → compare/mod.rs [crate::compare::compare]: exporters only format \
             what report/model.rs built"
                .to_string(),
            "report/text.rs → stats/merge.rs [crate::stats::merge::host_test]: exporters only \
             format what report/model.rs built"
                .to_string(),
        ]
    );
}
