//! The workspace's own crates (`crates/*`): protocol clients and the small text crate they
//! share, usable without iopath. Two rules keep the edges one way:
//!
//! - no crate under `crates/` depends on the `iopath` package (they hold no iopath types; the
//!   engine adapters in `src/engine/<protocol>/` convert);
//! - inside `src/`, a workspace crate is named only by the top-level modules [`CRATE_USERS`]
//!   lists for it (the protocol clients by `engine`, whose adapters are their one door).
//!
//! A crate added to `crates/` is refused until it is listed there.

use super::rust_source::{Token, tokenize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each workspace crate (as Rust code names it) and the top-level modules of `src/` that may
/// name it.
pub const CRATE_USERS: &[(&str, &[&str])] = &[
    ("iscsi_client", &["engine"]),
    ("nbd_client", &["engine"]),
    ("nfs_client", &["engine"]),
    ("smb_client", &["engine"]),
    ("wire_text", &["text", "units"]),
];

/// Each workspace crate (as Rust code names it) and the workspace crates (as Rust code names
/// them) it may depend on.
pub const CRATE_DEPENDENCIES: &[(&str, &[&str])] = &[
    ("iscsi_client", &["wire_text"]),
    ("nbd_client", &["wire_text"]),
    ("nfs_client", &["wire_text"]),
    ("smb_client", &["wire_text"]),
    ("wire_text", &[]),
];

/// A crate of `crates/`: its folder, its name as Rust code writes it, and the packages its
/// `[dependencies]` name.
#[derive(Debug)]
pub struct WorkspaceCrate {
    pub folder: String,
    pub rust_name: String,
    pub dependencies: BTreeSet<String>,
}

/// The package names of a manifest's `[dependencies]` table (`name = …`,
/// `name.workspace = true`).
pub fn dependencies(manifest: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut in_dependencies = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
        } else if in_dependencies && !line.is_empty() && !line.starts_with('#') {
            let key = line.split(['=', '.']).next().unwrap_or("").trim();
            if !key.is_empty() {
                names.insert(key.to_string());
            }
        }
    }
    names
}

/// Every crate below `crates/`.
pub fn workspace_crates(workspace: &Path) -> Vec<WorkspaceCrate> {
    let mut crates = Vec::new();
    let Ok(entries) = std::fs::read_dir(workspace.join("crates")) else {
        return crates;
    };
    for entry in entries.flatten() {
        let manifest = entry.path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        let folder = entry.file_name().to_string_lossy().into_owned();
        let package = text
            .lines()
            .find_map(|line| line.trim().strip_prefix("name = "))
            .map(|name| name.trim_matches('"').to_string())
            .unwrap_or_else(|| folder.clone());
        crates.push(WorkspaceCrate {
            folder,
            rust_name: package.replace('-', "_"),
            dependencies: dependencies(&text),
        });
    }
    crates.sort_by(|a, b| a.folder.cmp(&b.folder));
    crates
}

/// Where in `files` (path below `src/`, text) each crate of `names` is named: crate →
/// top-level module → files.
pub fn crate_users(
    files: &[(String, String)],
    names: &BTreeSet<String>,
) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let mut users: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (file, text) in files {
        let top = match file.split('/').next().unwrap_or(file) {
            "main.rs" => "cli".to_string(),
            first => first.trim_end_matches(".rs").to_string(),
        };
        let tokens = tokenize(text);
        for pair in tokens.windows(2) {
            if let [Token::Ident(name), Token::PathSeparator] = pair
                && names.contains(name)
            {
                users
                    .entry(name.clone())
                    .or_default()
                    .entry(top.clone())
                    .or_default()
                    .insert(file.clone());
            }
        }
    }
    users
}

/// The breaches of the three rules, one line each.
pub fn problems(crates: &[WorkspaceCrate], files: &[(String, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    let names: BTreeSet<String> = crates.iter().map(|c| c.rust_name.clone()).collect();
    for workspace_crate in crates {
        if workspace_crate.dependencies.contains("iopath") {
            problems.push(format!(
                "crates/{} depends on iopath: a client crate holds no iopath types",
                workspace_crate.folder
            ));
        }
        let allowed = CRATE_DEPENDENCIES
            .iter()
            .find(|(name, _)| *name == workspace_crate.rust_name)
            .map_or(&[][..], |(_, dependencies)| *dependencies);
        for dependency in &workspace_crate.dependencies {
            let dependency = dependency.replace('-', "_");
            if names.contains(&dependency) && !allowed.contains(&dependency.as_str()) {
                problems.push(format!(
                    "crates/{} depends on {dependency}; only {allowed:?} may be its workspace \
                     dependencies (CRATE_DEPENDENCIES)",
                    workspace_crate.folder
                ));
            }
        }
        if !CRATE_USERS
            .iter()
            .any(|(name, _)| *name == workspace_crate.rust_name)
        {
            problems.push(format!(
                "crates/{} is not in CRATE_USERS (tests/structure/import_graph/workspace_crates.rs): \
                 list the modules of src/ that may use it",
                workspace_crate.folder
            ));
        }
    }
    for (name, modules) in crate_users(files, &names) {
        let allowed = CRATE_USERS
            .iter()
            .find(|(listed, _)| *listed == name)
            .map_or(&[][..], |(_, users)| *users);
        for (module, files) in modules {
            if !allowed.contains(&module.as_str()) {
                let files: Vec<&str> = files.iter().map(String::as_str).collect();
                problems.push(format!(
                    "{module} names {name} ({}); only {allowed:?} may",
                    files.join(", ")
                ));
            }
        }
    }
    problems
}

/// Every `.rs` file below `root`, as (path below `root`, text).
pub fn source_files(root: &Path, below: &Path, files: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(below) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            source_files(root, &path, files);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            let relative = path.strip_prefix(root).unwrap().to_string_lossy();
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            files.push((relative.replace('\\', "/"), text));
        }
    }
}
