//! The module graph of `src/`: no import circle between files or between top-level modules,
//! and the layers hold (top uses bottom, nothing points up):
//!
//! - `result` (the RunResult schema) imports nothing of ours;
//! - `stats` imports nothing of ours but `result`;
//! - `engine` knows nothing of `workload`, `report`, `analysis`, `compare` or `run`;
//! - `analysis` and `report` never import `run`;
//! - the readers of outside input (`input`) sit above the generators: neither `workload` nor
//!   any module below it (`analysis`, `targets`, `verify`, `engine`, `host`, `discovery`,
//!   `stats`, `gate`, `text`, `units`, `result`) imports `input`;
//! - nothing below `cli` imports `cli`;
//! - the exporters under `report/` only format the report model `report/model.rs` built: no
//!   merge, comparison or analysis of their own (`import_graph/exporters_only_format.rs`).
//!
//! A small reader follows the `mod` declarations from `lib.rs` and `main.rs` to map every file
//! to its module path, then resolves every `use` and every path in the code (`crate::`,
//! `super::`, `self::`, `iopath::`, or a name a `use` brought in; comments and string literals
//! skipped) to the file that defines it, following `pub use` re-exports. A module naming one
//! of its own submodules is containment, not an import, and makes no edge. The binary
//! (`main.rs` and `src/cli/`) counts as the top-level module `cli`. Test code (`#[cfg(test)]`)
//! may use the whole crate as a fixture: what it adds is printed, not refused.
//!
//! The same reader keeps every string literal: outside `src/discovery/` none may name a path of
//! `/sys` or `/proc` (discovery reads the machine through its `HostView`, so that a recorded
//! machine stands in for this one), but those listed in [`MACHINE_PATHS_ALLOWED`] with their
//! reason. Test code may name them (it is printed, not refused).
//!
//! The workspace's crates (`crates/*`, tests/structure/import_graph/workspace_crates.rs) depend on no
//! iopath package, among themselves only on the crates listed for each (the protocol clients
//! on `wire-text`, never on each other), and inside `src/` each is named only by the modules
//! listed for it (the protocol clients by `engine`).
//!
//! `cargo test --test structure import_graph -- --nocapture` prints the edges between
//! top-level modules; with `IMPORT_GRAPH_DETAIL=1` also every file edge behind them and the
//! paths that make it;
//! `IMPORT_GRAPH_SOURCE=DIR` reads another source tree.

#[path = "import_graph/exporters_only_format.rs"]
mod exporters_only_format;
#[path = "import_graph/timing_names.rs"]
mod timing_names;
#[path = "import_graph/workspace_crates.rs"]
mod workspace_crates;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::rust_source;

use rust_source::{Token, is_cfg_test, tokenize};

/// Which crate of the package a file belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum CrateKind {
    /// The library, rooted at `lib.rs`.
    Lib,
    /// The binary, rooted at `main.rs`.
    Bin,
}

/// A module: its crate and its path below the crate root.
type ModuleId = (CrateKind, Vec<String>);

/// A path found in a file: its segments, the module it was written in (an inline module
/// counts), the name a `use` gives it, and whether it is test code or re-exported (`pub use`).
#[derive(Clone, Debug)]
struct FoundPath {
    segments: Vec<String>,
    context: Vec<String>,
    local_name: Option<String>,
    exported: bool,
    test: bool,
}

/// What one file says: the paths it names, the `mod NAME;` files it declares (with whether
/// the declaration is `#[cfg(test)]`) and its string literals (line, text, whether in test
/// code).
#[derive(Debug, Default)]
struct FileScan {
    paths: Vec<FoundPath>,
    declared_modules: Vec<(String, bool)>,
    literals: Vec<(usize, String, bool)>,
}

/// Expands a use tree starting at `tokens[*i]` into full paths with their local names;
/// stops after the tree (at `;`, `,` or `}` of an enclosing group).
fn use_tree(
    tokens: &[Token],
    i: &mut usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    let mut path = prefix.to_vec();
    let mut names_itself = false;
    while *i < tokens.len() {
        match &tokens[*i] {
            Token::Ident(name) if name == "as" => {
                *i += 1;
                let alias = match tokens.get(*i) {
                    Some(Token::Ident(alias)) => alias.clone(),
                    _ => String::new(),
                };
                *i += 1;
                out.push((path.clone(), Some(alias)));
                return;
            }
            Token::Ident(name) => {
                if name == "self" && !path.is_empty() {
                    // `a::{self}` names `a` itself.
                    names_itself = true;
                } else {
                    path.push(name.clone());
                }
                *i += 1;
            }
            Token::PathSeparator => *i += 1,
            Token::Punct('*') => {
                path.push("*".into());
                *i += 1;
                out.push((path, None));
                return;
            }
            Token::Punct('{') => {
                *i += 1;
                loop {
                    match tokens.get(*i) {
                        None => return,
                        Some(Token::Punct('}')) => {
                            *i += 1;
                            return;
                        }
                        Some(Token::Punct(',')) => *i += 1,
                        Some(_) => use_tree(tokens, i, &path, out),
                    }
                }
            }
            _ => {
                if path.len() > prefix.len() || names_itself {
                    let name = path.last().cloned();
                    out.push((path, name));
                }
                return;
            }
        }
    }
}

/// Reads one file's tokens: every path it names, in which module and whether in test code,
/// and its `mod` declarations.
fn scan_file(text: &str) -> FileScan {
    let tokens = tokenize(text);
    let mut scan = FileScan::default();
    // Inline modules: (name, brace depth inside them).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut brackets = 0usize;
    // The item under `#[cfg(test)]`: (brace depth and bracket depth where it starts, whether
    // its body `{` has opened).
    let mut test_item: Option<(usize, usize, bool)> = None;
    let mut i = 0;
    let context = |inline: &[(String, usize)]| -> Vec<String> {
        inline.iter().map(|m| m.0.clone()).collect()
    };
    while i < tokens.len() {
        let test = test_item.is_some();
        if !test && is_cfg_test(&tokens, i) {
            test_item = Some((depth, brackets, false));
            i += 7;
            continue;
        }
        match &tokens[i] {
            Token::Punct('{') => {
                depth += 1;
                if let Some((start, _, opened @ false)) = &mut test_item
                    && depth == *start + 1
                {
                    *opened = true;
                }
                i += 1;
            }
            Token::Punct('}') => {
                if inline.last().is_some_and(|m| m.1 == depth) {
                    inline.pop();
                }
                if let Some((start, _, true)) = test_item
                    && depth == start + 1
                {
                    test_item = None;
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Token::Punct('(' | '[') => {
                brackets += 1;
                i += 1;
            }
            Token::Punct(')' | ']') => {
                brackets = brackets.saturating_sub(1);
                i += 1;
            }
            Token::Punct(';') => {
                if let Some((start, start_brackets, false)) = test_item
                    && depth == start
                    && brackets == start_brackets
                {
                    test_item = None;
                }
                i += 1;
            }
            Token::Ident(word) if word == "mod" => {
                let name = match tokens.get(i + 1) {
                    Some(Token::Ident(name)) => name.clone(),
                    _ => {
                        i += 1;
                        continue;
                    }
                };
                match tokens.get(i + 2) {
                    Some(Token::Punct(';')) if inline.is_empty() => {
                        scan.declared_modules.push((name, test));
                        i += 2;
                    }
                    Some(Token::Punct('{')) => {
                        inline.push((name, depth + 1));
                        i += 2;
                    }
                    _ => i += 2,
                }
            }
            Token::Ident(word) if word == "use" => {
                let exported = i >= 1
                    && (matches!(&tokens[i - 1], Token::Ident(w) if w == "pub")
                        || matches!(&tokens[i - 1], Token::Punct(')')));
                i += 1;
                let mut trees = Vec::new();
                use_tree(&tokens, &mut i, &[], &mut trees);
                for (segments, local_name) in trees {
                    scan.paths.push(FoundPath {
                        segments,
                        context: context(&inline),
                        local_name,
                        exported,
                        test,
                    });
                }
            }
            Token::Ident(word)
                if tokens.get(i + 1) == Some(&Token::PathSeparator)
                    && !(i >= 1 && tokens[i - 1] == Token::PathSeparator) =>
            {
                let mut segments = vec![word.clone()];
                let mut j = i + 1;
                while tokens.get(j) == Some(&Token::PathSeparator) {
                    match tokens.get(j + 1) {
                        Some(Token::Ident(name)) => {
                            segments.push(name.clone());
                            j += 2;
                        }
                        _ => break,
                    }
                }
                scan.paths.push(FoundPath {
                    segments,
                    context: context(&inline),
                    local_name: None,
                    exported: false,
                    test,
                });
                i = j;
            }
            Token::Literal { text, line } => {
                scan.literals.push((*line, text.clone(), test));
                i += 1;
            }
            _ => i += 1,
        }
    }
    scan
}

/// Every module of the package, the file that holds it, and the edges between files.
#[derive(Debug, Default)]
struct Graph {
    /// Module → file (relative to the source directory).
    modules: BTreeMap<ModuleId, String>,
    /// File → the module it defines (not counting inline modules).
    file_modules: BTreeMap<String, ModuleId>,
    /// File → files its code imports from (test code left out).
    file_edges: BTreeMap<String, BTreeSet<String>>,
    /// File → files only its test code (`#[cfg(test)]`) imports from.
    test_edges: BTreeMap<String, BTreeSet<String>>,
    /// (file, file it imports from) → the paths that make the edge.
    edge_reasons: BTreeMap<(String, String), Vec<String>>,
    /// Paths that start at the crate root but name no module: a sign the reader is wrong.
    unresolved: Vec<String>,
    /// File → its string literals: (line, text, whether in test code).
    literals: BTreeMap<String, Vec<(usize, String, bool)>>,
}

impl Graph {
    /// The top-level module of a file (`cli` for the binary, `lib` for lib.rs).
    fn top_level(&self, file: &str) -> String {
        let (kind, path) = &self.file_modules[file];
        match kind {
            CrateKind::Bin => "cli".into(),
            CrateKind::Lib => path.first().cloned().unwrap_or_else(|| "lib".into()),
        }
    }

    /// The test edges whose files' top-level modules the code does not already connect.
    fn test_only_top_level(&self) -> BTreeMap<String, BTreeSet<String>> {
        let code = self.top_level_edges(&self.file_edges);
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, targets) in &self.test_edges {
            for to in targets {
                let key = (self.top_level(from), self.top_level(to));
                if key.0 != key.1 && !code.contains_key(&key) {
                    edges.entry(from.clone()).or_default().insert(to.clone());
                }
            }
        }
        edges
    }

    /// Edges between top-level modules, with the file edges behind each.
    fn top_level_edges(
        &self,
        file_edges: &BTreeMap<String, BTreeSet<String>>,
    ) -> BTreeMap<(String, String), Vec<(String, String)>> {
        let mut edges: BTreeMap<(String, String), Vec<(String, String)>> = BTreeMap::new();
        for (from, targets) in file_edges {
            for to in targets {
                let (a, b) = (self.top_level(from), self.top_level(to));
                if a != b {
                    edges
                        .entry((a, b))
                        .or_default()
                        .push((from.clone(), to.clone()));
                }
            }
        }
        edges
    }
}

/// Reads the package below `source_dir` (holding `lib.rs` and/or `main.rs`).
fn build_graph(source_dir: &Path) -> Graph {
    let mut graph = Graph::default();
    let mut scans: BTreeMap<String, FileScan> = BTreeMap::new();
    // Re-exports: module → name → the path it re-exports.
    let mut exports: BTreeMap<ModuleId, BTreeMap<String, ModuleIdPath>> = BTreeMap::new();

    let mut test_files: BTreeSet<String> = BTreeSet::new();
    let mut queue: VecDeque<(CrateKind, Vec<String>, PathBuf, bool)> = VecDeque::new();
    for (kind, root) in [(CrateKind::Lib, "lib.rs"), (CrateKind::Bin, "main.rs")] {
        if source_dir.join(root).exists() {
            queue.push_back((kind, Vec::new(), source_dir.join(root), false));
        }
    }
    while let Some((kind, module, file, test_file)) = queue.pop_front() {
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|error| panic!("reading {}: {error}", file.display()));
        let relative = file
            .strip_prefix(source_dir)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let scan = scan_file(&text);
        let name = file.file_name().unwrap().to_string_lossy();
        let child_dir = if matches!(name.as_ref(), "lib.rs" | "main.rs" | "mod.rs") {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        for (child, test_declaration) in &scan.declared_modules {
            let flat = child_dir.join(format!("{child}.rs"));
            let nested = child_dir.join(child).join("mod.rs");
            let child_file = if flat.exists() {
                flat
            } else if nested.exists() {
                nested
            } else if *test_declaration {
                // A test-only module kept outside src/ (`#[path = "../tests/support/mod.rs"]`):
                // test code is not held to the layers.
                continue;
            } else {
                panic!("{relative} declares `mod {child};` but neither file exists");
            };
            let mut child_module = module.clone();
            child_module.push(child.clone());
            queue.push_back((
                kind,
                child_module,
                child_file,
                test_file || *test_declaration,
            ));
        }
        for found in &scan.paths {
            if found.context.is_empty() {
                continue;
            }
            for depth in 1..=found.context.len() {
                let mut inline = module.clone();
                inline.extend(found.context[..depth].iter().cloned());
                graph
                    .modules
                    .entry((kind, inline))
                    .or_insert(relative.clone());
            }
        }
        graph
            .modules
            .insert((kind, module.clone()), relative.clone());
        graph
            .file_modules
            .insert(relative.clone(), (kind, module.clone()));
        if test_file {
            test_files.insert(relative.clone());
        }
        graph.literals.insert(
            relative.clone(),
            scan.literals
                .iter()
                .map(|(line, text, test)| (*line, text.clone(), *test || test_file))
                .collect(),
        );
        scans.insert(relative, scan);
    }

    // Names each module brings in with `use`, in absolute form (two rounds, so that a `use`
    // relative to an earlier one resolves too); the `pub` ones are its re-exports.
    let mut aliases: Aliases = BTreeMap::new();
    for _round in 0..2 {
        for (file, scan) in &scans {
            let (kind, module) = graph.file_modules[file].clone();
            for found in &scan.paths {
                let Some(name) = &found.local_name else {
                    continue;
                };
                let mut context = module.clone();
                context.extend(found.context.iter().cloned());
                if let Some(absolute) =
                    absolute_path(&graph, &aliases, kind, &context, &found.segments)
                {
                    if found.exported {
                        exports
                            .entry((kind, context.clone()))
                            .or_default()
                            .insert(name.clone(), absolute.clone());
                    }
                    aliases
                        .entry((kind, context))
                        .or_default()
                        .insert(name.clone(), absolute);
                }
            }
        }
    }

    for (file, scan) in &scans {
        let (kind, module) = graph.file_modules[file].clone();
        for found in &scan.paths {
            let mut context = module.clone();
            context.extend(found.context.iter().cloned());
            let Some(absolute) = absolute_path(&graph, &aliases, kind, &context, &found.segments)
            else {
                continue;
            };
            let Some(target) = resolve(&graph, &exports, &absolute, 0) else {
                // The test-only support module lives outside src/ (see the `mod` scan above).
                if absolute
                    .1
                    .first()
                    .is_some_and(|segment| segment == TEST_SUPPORT_MODULE)
                {
                    continue;
                }
                graph
                    .unresolved
                    .push(format!("{file}: {}", found.segments.join("::")));
                continue;
            };
            let target_file = graph.modules[&target].clone();
            if &target_file == file {
                continue;
            }
            // A module naming its own submodules is containment, not an import.
            if target.0 == kind && target.1.starts_with(&module) && target.1.len() > module.len() {
                continue;
            }
            let test = found.test || test_files.contains(file);
            let edges = if test {
                &mut graph.test_edges
            } else {
                &mut graph.file_edges
            };
            edges
                .entry(file.clone())
                .or_default()
                .insert(target_file.clone());
            let reasons = graph
                .edge_reasons
                .entry((file.clone(), target_file))
                .or_default();
            let mut reason = found.segments.join("::");
            if test {
                reason.push_str(" (test)");
            }
            if !reasons.contains(&reason) {
                reasons.push(reason);
            }
        }
    }
    // A test edge the code makes anyway is no test edge.
    for (from, targets) in &graph.file_edges {
        if let Some(test_targets) = graph.test_edges.get_mut(from) {
            test_targets.retain(|to| !targets.contains(to));
        }
    }
    graph.test_edges.retain(|_, targets| !targets.is_empty());
    graph
}

/// Per module: the names its `use` declarations bring in, as paths from a crate root.
type Aliases = BTreeMap<ModuleId, BTreeMap<String, ModuleIdPath>>;

/// A path from a crate root: crate and segments.
type ModuleIdPath = (CrateKind, Vec<String>);

/// Turns a path written in module `context` into a path from a crate root, or `None` for a
/// path outside the package (std, serde, a local name).
fn absolute_path(
    graph: &Graph,
    aliases: &Aliases,
    kind: CrateKind,
    context: &[String],
    segments: &[String],
) -> Option<ModuleIdPath> {
    let first = segments.first()?;
    let (crate_kind, mut base, rest) = match first.as_str() {
        "crate" => (kind, Vec::new(), &segments[1..]),
        "iopath" if kind == CrateKind::Bin => (CrateKind::Lib, Vec::new(), &segments[1..]),
        "self" => (kind, context.to_vec(), &segments[1..]),
        "super" => {
            let ups = segments.iter().take_while(|s| *s == "super").count();
            let mut base = context.to_vec();
            for _ in 0..ups {
                base.pop()?;
            }
            (kind, base, &segments[ups..])
        }
        name => {
            let mut child = context.to_vec();
            child.push(name.to_string());
            if graph.modules.contains_key(&(kind, child)) {
                (kind, context.to_vec(), segments)
            } else if let Some((alias_kind, alias)) = aliases
                .get(&(kind, context.to_vec()))
                .and_then(|names| names.get(name))
            {
                (*alias_kind, alias.clone(), &segments[1..])
            } else {
                return None;
            }
        }
    };
    base.extend(rest.iter().cloned());
    Some((crate_kind, base))
}

/// The module that defines what an absolute path names: the deepest module on the path, or,
/// when the next segment is re-exported there, the module it comes from.
fn resolve(
    graph: &Graph,
    exports: &BTreeMap<ModuleId, BTreeMap<String, ModuleIdPath>>,
    path: &ModuleIdPath,
    depth: usize,
) -> Option<ModuleId> {
    let (kind, segments) = path;
    let mut module: Vec<String> = Vec::new();
    let mut rest = segments.as_slice();
    while let Some(next) = rest.first() {
        let mut child = module.clone();
        child.push(next.clone());
        if graph.modules.contains_key(&(*kind, child.clone())) {
            module = child;
            rest = &rest[1..];
        } else {
            break;
        }
    }
    if let Some(name) = rest.first()
        && depth < 8
        && let Some(target) = exports
            .get(&(*kind, module.clone()))
            .and_then(|e| e.get(name))
    {
        return resolve(graph, exports, target, depth + 1);
    }
    if module.is_empty() && *kind == CrateKind::Lib && !rest.is_empty() {
        // lib.rs declares modules only: a path ending there names something the reader missed.
        return None;
    }
    Some((*kind, module))
}

/// Every node's shortest circle back to itself, once per circle (a circle is named from its
/// smallest node).
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = edges
        .iter()
        .flat_map(|(from, to)| std::iter::once(from).chain(to.iter()))
        .collect();
    let mut found: BTreeSet<Vec<String>> = BTreeSet::new();
    for node in nodes {
        let mut circle = shortest_circle(edges, node);
        if circle.len() < 2 {
            continue;
        }
        circle.pop();
        let smallest = (0..circle.len()).min_by_key(|&i| &circle[i]).unwrap();
        circle.rotate_left(smallest);
        circle.push(circle[0].clone());
        found.insert(circle);
    }
    found.into_iter().collect()
}

/// The shortest circle from `start` back to itself.
fn shortest_circle(edges: &BTreeMap<String, BTreeSet<String>>, start: &String) -> Vec<String> {
    let mut previous: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = VecDeque::from([start.clone()]);
    while let Some(node) = queue.pop_front() {
        for next in edges.get(&node).into_iter().flatten() {
            if next == start {
                let mut circle = vec![node.clone()];
                let mut at = node.clone();
                while let Some(before) = previous.get(&at) {
                    circle.push(before.clone());
                    at = before.clone();
                }
                circle.reverse();
                if circle.first() != Some(start) {
                    circle.insert(0, start.clone());
                }
                circle.push(start.clone());
                return circle;
            }
            if !previous.contains_key(next) && next != start {
                previous.insert(next.clone(), node.clone());
                queue.push_back(next.clone());
            }
        }
    }
    vec![start.clone()]
}

/// The top-level modules that the readers of outside input (`input`) sit above: the
/// generators (`workload`) and everything they stand on.
const READERS_ABOVE: &[&str] = &[
    "workload",
    "analysis",
    "targets",
    "verify",
    "engine",
    "host",
    "discovery",
    "stats",
    "gate",
    "text",
    "units",
    "result",
];

/// Every edge between top-level modules that breaks a layering rule, with its files.
fn layering_violations(
    graph: &Graph,
    file_edges: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<String> {
    let top = graph.top_level_edges(file_edges);
    let mut problems = Vec::new();
    for ((from, to), files) in &top {
        let example = files
            .iter()
            .map(|(a, b)| format!("{a} → {b}"))
            .collect::<Vec<_>>()
            .join(", ");
        let rule = match from.as_str() {
            "result" => Some("result imports nothing of ours"),
            "stats" if to != "result" => Some("stats imports nothing of ours but result"),
            "engine"
                if matches!(
                    to.as_str(),
                    "workload" | "report" | "analysis" | "compare" | "run"
                ) =>
            {
                Some("engine knows nothing of workload, report, analysis, compare or run")
            }
            "analysis" | "report" if to == "run" => Some("analysis and report never import run"),
            _ if to == "input" && READERS_ABOVE.contains(&from.as_str()) => {
                Some("nothing at or below workload imports input")
            }
            _ if to == "cli" => Some("nothing below cli imports cli"),
            _ => None,
        };
        if let Some(rule) = rule {
            problems.push(format!("{from} → {to} breaks \"{rule}\": {example}"));
        }
    }
    problems
}

/// The edges between top-level modules, one line per importing module.
fn edge_list(graph: &Graph, file_edges: &BTreeMap<String, BTreeSet<String>>) -> String {
    let mut by_source: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for ((from, to), files) in graph.top_level_edges(file_edges) {
        by_source
            .entry(from)
            .or_default()
            .push(format!("{to} ({})", files.len()));
    }
    let mut text = String::new();
    for (from, targets) in by_source {
        let _ = writeln!(text, "{from} -> {}", targets.join(", "));
    }
    text
}

/// Circles among files and among top-level modules, described with the paths behind them.
fn circle_report(graph: &Graph, file_edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut problems = Vec::new();
    for circle in circles(file_edges) {
        let steps: Vec<String> = circle
            .windows(2)
            .map(|pair| {
                let reasons = &graph.edge_reasons[&(pair[0].clone(), pair[1].clone())];
                let shown: Vec<&str> = reasons.iter().take(3).map(String::as_str).collect();
                let more = if reasons.len() > 3 { ", …" } else { "" };
                format!("{} → {} [{}{more}]", pair[0], pair[1], shown.join(", "))
            })
            .collect();
        problems.push(format!("file circle: {}", steps.join("; ")));
    }
    let top_edges = graph.top_level_edges(file_edges);
    let mut top: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in top_edges.keys() {
        top.entry(from.clone()).or_default().insert(to.clone());
    }
    for circle in circles(&top) {
        let steps: Vec<String> = circle
            .windows(2)
            .map(|pair| {
                let files = &top_edges[&(pair[0].clone(), pair[1].clone())];
                let shown: Vec<String> = files
                    .iter()
                    .take(3)
                    .map(|(a, b)| format!("{a} → {b}"))
                    .collect();
                let more = if files.len() > 3 {
                    format!(" and {} more", files.len() - 3)
                } else {
                    String::new()
                };
                format!("{} → {} [{}{more}]", pair[0], pair[1], shown.join(", "))
            })
            .collect();
        problems.push(format!("module circle: {}", steps.join("; ")));
    }
    problems
}

fn source_dir() -> PathBuf {
    match std::env::var_os("IMPORT_GRAPH_SOURCE") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
    }
}

/// The test-only module that src/lib.rs takes from tests/support (not part of the layers).
const TEST_SUPPORT_MODULE: &str = "support";

#[test]
fn no_circles_and_layers_hold() {
    let graph = build_graph(&source_dir());
    println!(
        "{} files, {} file-level edges (and {} more from test code only).\n\
         Edges between top-level modules (file edges behind each):\n{}\n\
         Added by test code only:\n{}",
        graph.file_modules.len(),
        graph.file_edges.values().map(BTreeSet::len).sum::<usize>(),
        graph.test_edges.values().map(BTreeSet::len).sum::<usize>(),
        edge_list(&graph, &graph.file_edges),
        edge_list(&graph, &graph.test_only_top_level()),
    );
    if std::env::var_os("IMPORT_GRAPH_DETAIL").is_some() {
        for (edges, what) in [(&graph.file_edges, "code"), (&graph.test_edges, "test")] {
            for ((from, to), files) in graph.top_level_edges(edges) {
                for (a, b) in files {
                    let reasons = &graph.edge_reasons[&(a.clone(), b.clone())];
                    println!("{what} {from} -> {to}: {a} → {b} [{}]", reasons.join(", "));
                }
            }
        }
    }
    assert!(
        graph.file_modules.len() > 50,
        "the reader found only {} files",
        graph.file_modules.len()
    );
    assert!(
        graph.unresolved.is_empty(),
        "paths from the crate root that name no module:\n{}",
        graph.unresolved.join("\n")
    );
    let mut problems = circle_report(&graph, &graph.file_edges);
    problems.extend(layering_violations(&graph, &graph.file_edges));
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
    // Tests may use the whole crate as a fixture (a real run inside an exporter's tests):
    // what that adds is shown, not refused.
    let mut with_tests = graph.file_edges.clone();
    for (from, targets) in &graph.test_edges {
        with_tests
            .entry(from.clone())
            .or_default()
            .extend(targets.iter().cloned());
    }
    let test_notes: Vec<String> = circle_report(&graph, &with_tests)
        .into_iter()
        .chain(layering_violations(&graph, &with_tests))
        .collect();
    if !test_notes.is_empty() {
        println!("With test code (not refused):\n{}", test_notes.join("\n"));
    }
}

/// The one reader of the machine: everything that reads `/sys` or `/proc` is under
/// `src/discovery/`, behind its `HostView`, so that a recorded machine can stand in for this
/// one. Elsewhere a string literal naming such a path is refused unless it is listed here,
/// with why it is not a reading of the machine.
const MACHINE_READER: &str = "discovery/";

/// (file under `src/`, the literal as written, why it may stay). Each names this process's own
/// kernel interface, or says where discovery looked; none reads a fact about the machine.
const MACHINE_PATHS_ALLOWED: &[(&str, &str, &str)] = &[
    (
        "host/sys.rs",
        "/proc/thread-self/schedstat",
        "the calling worker thread's own run-queue delay at the edges of its measured window \
         (like its CPU clock): a figure of this run, never of a recorded machine",
    ),
    (
        "targets/open.rs",
        "/proc/self/fd/{}",
        "reopens a descriptor this process holds (other open flags on the same file, never a \
         new lookup of its path)",
    ),
    (
        "targets/open.rs",
        "/proc/self/fd",
        "tells a reopen that failed because /proc is not mounted from one the file refused",
    ),
    (
        "run/caches.rs",
        "/proc/sys/vm/drop_caches",
        "a write asked for by --drop-caches (empties the page cache), not a read",
    ),
    (
        "run/caches.rs",
        "cannot write /proc/sys/vm/drop_caches: {0}",
        "the message of that write",
    ),
    (
        "analysis/block.rs",
        "{name}: not found in /sys/class/block",
        "a note saying where discovery looked for a device it did not find",
    ),
];

/// Whether a string literal names a path of `/sys` or `/proc` (absolute, or relative to a
/// machine's root as `root.join("sys/…")`).
fn names_machine_path(text: &str) -> bool {
    ["/sys/", "/proc/"].iter().any(|dir| text.contains(dir))
        || ["/sys", "/proc"].contains(&text)
        || ["sys/", "proc/"].iter().any(|dir| text.starts_with(dir))
}

/// Literals naming a machine path outside [`MACHINE_READER`]: (refused, in test code), each as
/// `file:line: "literal"`. Allowed ones are left out.
fn machine_path_literals(graph: &Graph) -> (Vec<String>, Vec<String>) {
    let (mut refused, mut in_tests) = (Vec::new(), Vec::new());
    for (file, literals) in &graph.literals {
        if file.starts_with(MACHINE_READER) {
            continue;
        }
        for (line, text, test) in literals {
            let allowed = MACHINE_PATHS_ALLOWED
                .iter()
                .any(|(allowed_file, literal, _)| allowed_file == file && literal == text);
            if !names_machine_path(text) || allowed {
                continue;
            }
            let place = format!("{file}:{line}: \"{text}\"");
            if *test {
                in_tests.push(place);
            } else {
                refused.push(place);
            }
        }
    }
    (refused, in_tests)
}

#[test]
fn only_discovery_reads_sys_and_proc() {
    let graph = build_graph(&source_dir());
    let (refused, in_tests) = machine_path_literals(&graph);
    if !in_tests.is_empty() {
        println!(
            "Machine paths in test code (not refused):\n{}",
            in_tests.join("\n")
        );
    }
    assert!(
        refused.is_empty(),
        "/sys and /proc are read by src/{MACHINE_READER} only (through its HostView, so that a \
         recorded machine stands in for this one); move these readers there, or list them in \
         MACHINE_PATHS_ALLOWED with the reason:\n{}",
        refused.join("\n")
    );
    // Every allowed literal is still there: the list does not outlive what it allows.
    for (file, literal, why) in MACHINE_PATHS_ALLOWED {
        assert!(
            graph
                .literals
                .get(*file)
                .is_some_and(|literals| literals.iter().any(|(_, text, _)| text == literal)),
            "MACHINE_PATHS_ALLOWED lists \"{literal}\" in {file} ({why}), which is no longer there"
        );
    }
}

/// A package written into a temporary directory, for testing the reader itself.
fn package(files: &[(&str, &str)]) -> (tempfile::TempDir, Graph) {
    let directory = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = directory.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let graph = build_graph(directory.path());
    (directory, graph)
}

#[test]
fn reader_finds_a_circle_through_super_and_groups() {
    let (_directory, graph) = package(&[
        ("lib.rs", "pub mod report;\npub mod stats;\n"),
        (
            "report/mod.rs",
            "pub mod a;\npub mod b;\npub use a::Thing;\n",
        ),
        (
            "report/a.rs",
            "use super::{b::{self, Other}, Thing as _};\n",
        ),
        ("report/b.rs", "fn f() -> super::Thing { todo!() }\n"),
        (
            "stats.rs",
            "// crate::report::b\nconst X: &str = \"crate::report::a\";\n",
        ),
    ]);
    let problems = circle_report(&graph, &graph.file_edges);
    assert_eq!(
        problems,
        vec![
            "file circle: report/a.rs → report/b.rs [super::b, super::b::Other]; \
             report/b.rs → report/a.rs [super::Thing]"
                .to_string()
        ]
    );
    assert!(!graph.file_edges.contains_key("stats.rs"));
    assert!(!graph.file_edges.contains_key("report/mod.rs"));
}

#[test]
fn reader_checks_layers_and_module_circles() {
    let (_directory, graph) = package(&[
        (
            "lib.rs",
            "pub mod result;\npub mod stats;\npub mod run;\npub mod input;\npub mod workload;\n",
        ),
        ("result.rs", "pub struct R;\n"),
        ("stats.rs", "use crate::run::Worker;\n"),
        ("input.rs", "pub struct Options;\n"),
        (
            "workload.rs",
            "pub struct Plan;\nfn f(_: crate::input::Options) {}\n",
        ),
        (
            "run.rs",
            "pub struct Worker;\nfn f(_: crate::stats::S) {}\n",
        ),
        ("main.rs", "mod cli;\n"),
        ("cli.rs", "use iopath::run::Worker;\nuse crate::cli;\n"),
    ]);
    assert_eq!(
        circle_report(&graph, &graph.file_edges),
        vec![
            "file circle: run.rs → stats.rs [crate::stats::S]; stats.rs → run.rs [crate::run::Worker]"
                .to_string(),
            "module circle: run → stats [run.rs → stats.rs]; stats → run [stats.rs → run.rs]"
                .to_string()
        ]
    );
    assert_eq!(
        layering_violations(&graph, &graph.file_edges),
        vec![
            "stats → run breaks \"stats imports nothing of ours but result\": stats.rs → run.rs"
                .to_string(),
            "workload → input breaks \"nothing at or below workload imports input\": \
             workload.rs → input.rs"
                .to_string()
        ]
    );
    assert_eq!(
        edge_list(&graph, &graph.file_edges),
        "cli -> run (1)\nrun -> stats (1)\nstats -> run (1)\nworkload -> input (1)\n"
    );
}

#[test]
fn reader_follows_names_brought_in_and_sets_test_code_apart() {
    let (_directory, graph) = package(&[
        ("lib.rs", "pub mod engine;\npub mod run;\n"),
        ("engine/mod.rs", "pub mod nbd;\npub mod network;\n"),
        (
            "engine/network.rs",
            "use super::nbd;\npub struct Info;\npub fn probe() { nbd::probe() }\n",
        ),
        ("engine/nbd/mod.rs", "mod probe;\npub use probe::probe;\n"),
        (
            "engine/nbd/probe.rs",
            "use crate::engine::network::Info;\npub fn probe() {}\n\
             #[cfg(test)]\nmod tests {\n    use crate::run::Runner;\n}\n",
        ),
        (
            "run.rs",
            "pub struct Runner;\n#[cfg(test)]\nuse crate::engine::network;\n",
        ),
    ]);
    assert_eq!(
        circle_report(&graph, &graph.file_edges),
        vec![
            "file circle: engine/nbd/probe.rs → engine/network.rs [crate::engine::network::Info]; \
             engine/network.rs → engine/nbd/probe.rs [nbd::probe]"
                .to_string()
        ]
    );
    assert_eq!(
        graph.test_edges["engine/nbd/probe.rs"],
        BTreeSet::from(["run.rs".to_string()])
    );
    assert!(!graph.file_edges.contains_key("run.rs"));
    assert!(layering_violations(&graph, &graph.file_edges).is_empty());
    assert_eq!(layering_violations(&graph, &graph.test_edges).len(), 1);
}

#[test]
fn reader_skips_literals_and_lifetimes() {
    let tokens = tokenize("fn f<'a>(x: &'a str) -> char { let _ = r#\"crate::x\"#; 'y' } b'\\''");
    assert!(!tokens.contains(&Token::Ident("crate".into())));
    assert!(tokens.contains(&Token::Ident("str".into())));
    assert!(!tokens.contains(&Token::Ident("y".into())));
}

#[test]
fn reader_finds_machine_paths_outside_discovery() {
    let (_dir, graph) = package(&[
        (
            "lib.rs",
            "pub mod discovery;\npub mod run;\n#[cfg(test)]\nmod checks;\n",
        ),
        (
            "discovery/mod.rs",
            "pub fn online() -> String { std::fs::read_to_string(\"/sys/devices/system/cpu/online\").unwrap() }\n",
        ),
        (
            "run.rs",
            "// \"/proc/stat\" in a comment is no reader\n\
             pub fn load() -> String {\n\
                 std::fs::read_to_string(r#\"/proc/loadavg\"#).unwrap()\n\
             }\n\
             pub fn net(root: &std::path::Path) -> std::path::PathBuf { root.join(\"sys/class/net\") }\n\
             pub fn note() -> &'static str { \"see docs/verdict.md\" }\n\
             #[cfg(test)]\nmod tests { fn f() { let _ = \"/proc/self/status\"; } }\n",
        ),
        ("checks.rs", "fn f() { let _ = \"/sys\"; }\n"),
    ]);
    let (refused, in_tests) = machine_path_literals(&graph);
    assert_eq!(
        refused,
        ["run.rs:3: \"/proc/loadavg\"", "run.rs:5: \"sys/class/net\""]
    );
    assert_eq!(
        in_tests,
        ["checks.rs:1: \"/sys\"", "run.rs:8: \"/proc/self/status\""]
    );
}

#[test]
fn workspace_crates_point_one_way() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crates = workspace_crates::workspace_crates(workspace);
    assert!(!crates.is_empty(), "found no crate in crates/");
    for workspace_crate in &crates {
        println!(
            "crates/{} → {:?}",
            workspace_crate.folder, workspace_crate.dependencies
        );
    }
    let mut files = Vec::new();
    let source = source_dir();
    workspace_crates::source_files(&source, &source, &mut files);
    let problems = workspace_crates::problems(&crates, &files);
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn reader_refuses_a_client_crate_used_above_engine_or_depending_on_iopath() {
    let manifest = "[package]\nname = \"iscsi-client\"\n\n[dependencies]\nlibc.workspace = true\n\
                    iopath = { path = \"../..\" }\nnbd-client.workspace = true\n\
                    wire-text.workspace = true\n\n[dev-dependencies]\ntempfile = \"3\"\n";
    let dependencies = workspace_crates::dependencies(manifest);
    assert_eq!(
        dependencies.into_iter().collect::<Vec<_>>(),
        ["iopath", "libc", "nbd-client", "wire-text"]
    );
    let crate_named = |folder: &str, manifest: &str| workspace_crates::WorkspaceCrate {
        folder: folder.into(),
        rust_name: folder.replace('-', "_"),
        dependencies: workspace_crates::dependencies(manifest),
    };
    let crates = [
        crate_named("iscsi-client", manifest),
        crate_named("nbd-client", "[dependencies]\nwire-text.workspace = true\n"),
        crate_named("wire-text", ""),
    ];
    let files = [
        (
            "engine/iscsi/mod.rs".to_string(),
            "use iscsi_client::session::Session;\n".to_string(),
        ),
        (
            "run/worker/mod.rs".to_string(),
            "fn f() { let _ = iscsi_client::library::library(); }\n".to_string(),
        ),
        (
            "report/text.rs".to_string(),
            "// iscsi_client::x in a comment\nfn g() { let _ = \"iscsi_client::y\"; }\n"
                .to_string(),
        ),
    ];
    assert_eq!(
        workspace_crates::problems(&crates, &files),
        [
            "crates/iscsi-client depends on iopath: a client crate holds no iopath types",
            "crates/iscsi-client depends on nbd_client; only [\"wire_text\"] may be its \
             workspace dependencies (CRATE_DEPENDENCIES)",
            "run names iscsi_client (run/worker/mod.rs); only [\"engine\"] may",
        ]
    );
}
