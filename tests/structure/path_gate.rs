//! Every path iopath creates, writes, replaces or removes goes through one gate, `src/gate/`
//! (regular files only, atomic replace, removal of its own files only): this test reads every
//! file of `src/` and refuses, anywhere else, a call that opens a path for writing, creates,
//! renames or removes one —
//!
//! - `File::create`, `File::create_new`;
//! - `std::fs::` `write`, `remove_file`, `remove_dir`, `remove_dir_all`, `rename`, `copy`,
//!   `create_dir`, `create_dir_all`, `hard_link`, `soft_link`, `symlink`, `set_permissions`
//!   (called by path or brought in by `use`);
//! - an `OpenOptions` chain that asks for `write`, `append`, `create`, `create_new` or
//!   `truncate`, and any `.create_new(…)` or `.write(true)`-style call on its own;
//! - `rusqlite::Connection::open*` (SQLite creates the file and journals beside it);
//! - `libc::` `open` flags `O_CREAT`, `O_WRONLY`, `O_RDWR`, `O_TRUNC`, `O_APPEND`,
//!   `O_TMPFILE`, and `unlink`, `unlinkat`, `rename`, `renameat`, `renameat2`, `rmdir`,
//!   `mkdir`, `mkdirat`, `mknod`, `mkfifo`, `symlink`, `link`, `creat`, `truncate`
//!
//! — but for the short list of [`EXCEPTIONS`], each with its reason. Test code (`#[cfg(test)]`
//! items, and files declared as `#[cfg(test)] mod NAME;`) may write its own scratch files and
//! is not looked at. An exception that no longer matches anything fails the test too, so the
//! list stays short and true.
//!
//! The protocol clients of the workspace (`crates/*/src/`) are read too, under their own
//! paths (`../crates/NAME/src/…`): a client library writes no path at all, so none of them
//! may hold such a call.
//!
//! `PATH_GATE_SOURCE=DIR` reads another source tree (and no crates).

use crate::rust_source;

use rust_source::{Token, is_cfg_test, tokenize_with_lines};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Calls allowed outside the gate: (file below `src/`, call as reported, reason).
const EXCEPTIONS: &[(&str, &str, &str)] = &[
    (
        "targets/open.rs",
        "OpenOptions.write",
        "the target itself: a block device or a file the run writes, opened once after the \
         safety checks of targets/safety.rs (no filesystem, partition table or mount; a file \
         iopath did not create only with --allow-destructive), O_NOFOLLOW for files",
    ),
    (
        "run/caches.rs",
        "fs::write",
        "the kernel's /proc/sys/vm/drop_caches control (--drop-caches, root only): a fixed \
         kernel path, never a user's file",
    ),
    (
        "engine/file_operations.rs",
        "libc::O_CREAT",
        FILE_OPERATIONS,
    ),
    ("engine/file_operations.rs", "libc::O_RDWR", FILE_OPERATIONS),
    ("engine/file_operations.rs", "libc::unlink", FILE_OPERATIONS),
    ("engine/file_operations.rs", "libc::mkdir", FILE_OPERATIONS),
    ("engine/file_operations.rs", "libc::rmdir", FILE_OPERATIONS),
];

/// Why the file-operation engines call outside the gate.
const FILE_OPERATIONS: &str = "the file-operation engines (filecreate, filedelete, dircreate, dirdelete): creating or \
         removing the path is the I/O measured, one call each; which paths they may touch was \
         settled before any I/O by run/operated_targets.rs (filedelete only files carrying \
         iopath's ownership mark, dirdelete only directories this run made, dircreate never an \
         existing path, filecreate never truncates)";

/// `std::fs` functions that create, change or remove a path.
const FS_CALLS: &[&str] = &[
    "write",
    "remove_file",
    "remove_dir",
    "remove_dir_all",
    "rename",
    "copy",
    "create_dir",
    "create_dir_all",
    "hard_link",
    "soft_link",
    "symlink",
    "set_permissions",
];

/// `OpenOptions` settings that make an open write, create or cut a file.
const WRITE_OPTIONS: &[&str] = &["write", "append", "create", "create_new", "truncate"];

/// `libc` open flags and calls that create, change or remove a path.
const LIBC_CALLS: &[&str] = &[
    "O_CREAT",
    "O_WRONLY",
    "O_RDWR",
    "O_TRUNC",
    "O_APPEND",
    "O_TMPFILE",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "rmdir",
    "mkdir",
    "mkdirat",
    "mknod",
    "mkfifo",
    "symlink",
    "link",
    "creat",
    "truncate",
];

/// One refused call: where, and which.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Finding {
    /// The file below `src/`.
    file: String,
    line: usize,
    call: String,
}

/// What one file holds outside its test code: the refused calls (line, call), and the
/// modules it declares as test-only (`#[cfg(test)] mod NAME;`).
#[derive(Debug, Default, PartialEq)]
struct FileScan {
    calls: Vec<(usize, String)>,
    test_modules: Vec<String>,
}

fn ident(token: Option<&(Token, usize)>) -> Option<&str> {
    match token {
        Some((Token::Ident(name), _)) => Some(name),
        _ => None,
    }
}

fn is_punct(token: Option<&(Token, usize)>, expected: char) -> bool {
    matches!(token, Some((Token::Punct(c), _)) if *c == expected)
}

fn is_separator(token: Option<&(Token, usize)>) -> bool {
    matches!(token, Some((Token::PathSeparator, _)))
}

/// The index just past the item starting at `start` (after its attributes): at its `;`
/// before any body, or at the `}` closing its body.
fn item_end(tokens: &[(Token, usize)], start: usize) -> usize {
    let mut depth = 0usize;
    let mut i = start;
    while i < tokens.len() {
        match &tokens[i].0 {
            Token::Punct('{' | '(' | '[') => depth += 1,
            Token::Punct('}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            Token::Punct(')' | ']') => depth = depth.saturating_sub(1),
            Token::Punct(';') if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    tokens.len()
}

/// The name of `mod NAME;` at `start` (with `pub` or `pub(…)` before it), if that is the item.
fn declared_module(tokens: &[(Token, usize)], start: usize) -> Option<String> {
    let mut i = start;
    if ident(tokens.get(i)) == Some("pub") {
        i += 1;
        if is_punct(tokens.get(i), '(') {
            i = group_end(tokens, i);
        }
    }
    (ident(tokens.get(i)) == Some("mod") && is_punct(tokens.get(i + 2), ';'))
        .then(|| ident(tokens.get(i + 1)).map(str::to_string))
        .flatten()
}

/// The index just past the group (`(…)`, `[…]` or `{…}`) opening at `open`.
fn group_end(tokens: &[(Token, usize)], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, (token, _)) in tokens.iter().enumerate().skip(open) {
        match token {
            Token::Punct('(' | '[' | '{') => depth += 1,
            Token::Punct(')' | ']' | '}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

/// The refused calls of `text` outside its test code, and its test-only module declarations.
fn scan_file(text: &str) -> FileScan {
    let all = tokenize_with_lines(text);
    let mut scan = FileScan::default();
    // The tokens outside `#[cfg(test)]` items.
    let mut tokens = Vec::with_capacity(all.len());
    let bare: Vec<Token> = all.iter().map(|(token, _)| token.clone()).collect();
    let mut i = 0;
    while i < all.len() {
        if is_cfg_test(&bare, i) {
            let mut start = i + 7;
            // Further attributes of the same item.
            while is_punct(all.get(start), '#') && is_punct(all.get(start + 1), '[') {
                start = group_end(&all, start + 1);
            }
            if let Some(name) = declared_module(&all, start) {
                scan.test_modules.push(name);
            }
            i = item_end(&all, start);
            continue;
        }
        tokens.push(all[i].clone());
        i += 1;
    }
    let mut calls = BTreeSet::new();
    for i in 0..tokens.len() {
        let line = tokens[i].1;
        let name = ident(tokens.get(i));
        let next = ident(tokens.get(i + 2));
        let path_call = is_separator(tokens.get(i + 1));
        match (name, next) {
            (Some("File"), Some(call @ ("create" | "create_new"))) if path_call => {
                calls.insert((line, format!("File::{call}")));
            }
            (Some("fs"), Some(call)) if path_call && FS_CALLS.contains(&call) => {
                calls.insert((line, format!("fs::{call}")));
            }
            (Some("Connection"), Some(call))
                if path_call && call.starts_with("open") && call != "open_in_memory" =>
            {
                calls.insert((line, format!("Connection::{call}")));
            }
            (Some("libc"), Some(call)) if path_call && LIBC_CALLS.contains(&call) => {
                calls.insert((line, format!("libc::{call}")));
            }
            _ => {}
        }
        // `use std::fs::{…, write, …}`.
        if name == Some("fs") && path_call && is_punct(tokens.get(i + 2), '{') {
            let end = item_end(&tokens, i + 2);
            for (token, line) in &tokens[i + 2..end] {
                if let Token::Ident(call) = token
                    && FS_CALLS.contains(&call.as_str())
                {
                    calls.insert((*line, format!("fs::{call}")));
                }
            }
        }
        // `.create_new(…)`, `.write(true)`, and the settings of an `OpenOptions` chain.
        if is_punct(tokens.get(i), '.')
            && let Some(setting) = ident(tokens.get(i + 1))
            && WRITE_OPTIONS.contains(&setting)
            && is_punct(tokens.get(i + 2), '(')
        {
            let literal_true = ident(tokens.get(i + 3)) == Some("true");
            if setting == "create_new" || literal_true {
                calls.insert((line, format!("OpenOptions.{setting}")));
            }
        }
        if name == Some("OpenOptions")
            && path_call
            && ident(tokens.get(i + 2)) == Some("new")
            && is_punct(tokens.get(i + 3), '(')
        {
            let mut at = group_end(&tokens, i + 3);
            while is_punct(tokens.get(at), '.')
                && let Some(setting) = ident(tokens.get(at + 1))
                && is_punct(tokens.get(at + 2), '(')
            {
                if WRITE_OPTIONS.contains(&setting) {
                    calls.insert((tokens[at].1, format!("OpenOptions.{setting}")));
                }
                at = group_end(&tokens, at + 2);
            }
        }
    }
    scan.calls = calls.into_iter().collect();
    scan
}

/// The source tree read: `PATH_GATE_SOURCE`, else this package's `src/`.
fn source_root() -> PathBuf {
    std::env::var_os("PATH_GATE_SOURCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

/// Every `.rs` file of the workspace's crates (`crates/*/src/`), as (path relative to `src/`,
/// text), sorted; none when another source tree is read.
fn crate_source_files() -> Vec<(String, String)> {
    if std::env::var_os("PATH_GATE_SOURCE").is_some() {
        return Vec::new();
    }
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    source_files(&crates)
        .into_iter()
        .filter(|(file, _)| file.split('/').nth(1) == Some("src"))
        .map(|(file, text)| (format!("../crates/{file}"), text))
        .collect()
}

/// Every `.rs` file below `root`, as (path below `root`, text), sorted.
fn source_files(root: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).expect("a source directory") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                files.push((
                    relative,
                    std::fs::read_to_string(&path).expect("source text"),
                ));
            }
        }
    }
    files.sort();
    files
}

/// The directory a file's `mod NAME;` declarations live in: beside `mod.rs`, `lib.rs` and
/// `main.rs`, else in the folder named after the file.
fn module_directory(file: &str) -> String {
    let path = Path::new(file);
    let name = path.file_stem().unwrap().to_string_lossy();
    let parent = path.parent().unwrap_or(Path::new(""));
    let directory = if matches!(name.as_ref(), "mod" | "lib" | "main") {
        parent.to_path_buf()
    } else {
        parent.join(name.as_ref())
    };
    directory.to_string_lossy().into_owned()
}

/// The refused calls in `files` (path below `src/`, text) outside the gate, test code and
/// [`EXCEPTIONS`]; and the exceptions that matched nothing.
fn check(files: &[(String, String)]) -> (Vec<Finding>, Vec<(&'static str, &'static str)>) {
    let scans: Vec<(&String, FileScan)> = files
        .iter()
        .map(|(file, text)| (file, scan_file(text)))
        .collect();
    // Test-only modules: files `DIR/NAME.rs` and whole folders `DIR/NAME/`.
    let mut test_only: Vec<String> = Vec::new();
    for (file, scan) in &scans {
        let directory = module_directory(file);
        for name in &scan.test_modules {
            let base = Path::new(&directory).join(name);
            test_only.push(base.with_extension("rs").to_string_lossy().into_owned());
            test_only.push(format!("{}/", base.to_string_lossy()));
        }
    }
    let is_test_only = |file: &str| {
        test_only
            .iter()
            .any(|test| file == test || (test.ends_with('/') && file.starts_with(test.as_str())))
    };
    let mut used = BTreeSet::new();
    let mut findings = Vec::new();
    for (file, scan) in &scans {
        if file.starts_with("gate/") || is_test_only(file) {
            continue;
        }
        for (line, call) in &scan.calls {
            match EXCEPTIONS
                .iter()
                .position(|(allowed, allowed_call, _)| allowed == file && allowed_call == call)
            {
                Some(index) => {
                    used.insert(index);
                }
                None => findings.push(Finding {
                    file: file.to_string(),
                    line: *line,
                    call: call.clone(),
                }),
            }
        }
    }
    let unused = EXCEPTIONS
        .iter()
        .enumerate()
        .filter(|(index, _)| !used.contains(index))
        .map(|(_, (file, call, _))| (*file, *call))
        .collect();
    (findings, unused)
}

#[test]
fn every_write_and_removal_goes_through_the_gate() {
    let mut files = source_files(&source_root());
    assert!(files.len() > 100, "read {} files of src/", files.len());
    let crate_files = crate_source_files();
    assert!(
        std::env::var_os("PATH_GATE_SOURCE").is_some() || !crate_files.is_empty(),
        "read no file of crates/"
    );
    files.extend(crate_files);
    let (findings, unused) = check(&files);
    let listed: Vec<String> = findings
        .iter()
        .map(|f| format!("  src/{}:{}: {}", f.file, f.line, f.call))
        .collect();
    assert!(
        findings.is_empty(),
        "calls that write, create, rename or remove a path outside src/gate/ (use the gate, \
         or add a reasoned exception; a client crate writes no path):\n{}",
        listed.join("\n")
    );
    assert!(
        unused.is_empty(),
        "exceptions that match nothing any more (remove them): {unused:?}"
    );
}

#[test]
fn a_call_added_to_a_client_crate_is_refused() {
    let mut files = crate_source_files();
    assert!(!files.is_empty(), "read no file of crates/");
    files.push((
        "../crates/wire-text/src/log.rs".into(),
        "pub fn log(path: &std::path::Path) {\n    let _ = std::fs::OpenOptions::new().append(true).open(path);\n}\n".into(),
    ));
    let (findings, _) = check(&files);
    assert_eq!(
        findings,
        [Finding {
            file: "../crates/wire-text/src/log.rs".into(),
            line: 2,
            call: "OpenOptions.append".into(),
        }]
    );
}

#[test]
fn a_call_added_outside_the_gate_is_refused() {
    let mut files = source_files(&source_root());
    files.push((
        "report/new_exporter.rs".into(),
        "pub fn save(path: &std::path::Path) {\n    let _ = std::fs::write(path, b\"x\");\n}\n"
            .into(),
    ));
    let (findings, _) = check(&files);
    assert_eq!(
        findings,
        [Finding {
            file: "report/new_exporter.rs".into(),
            line: 2,
            call: "fs::write".into(),
        }]
    );
    // The same call in the gate, or in test code, is not refused.
    let last = files.len() - 1;
    files[last].0 = "gate/new_exporter.rs".into();
    assert!(check(&files).0.is_empty());
}

#[test]
fn the_scanner_finds_each_kind_of_call() {
    let cases: &[(&str, &[&str])] = &[
        ("let f = File::create(p)?;", &["File::create"]),
        ("std::fs::File::create_new(p)?;", &["File::create_new"]),
        ("fs::remove_file(p)?;", &["fs::remove_file"]),
        ("std::fs::rename(a, b)?;", &["fs::rename"]),
        ("std::fs::copy(a, b)?;", &["fs::copy"]),
        ("std::fs::remove_dir_all(d)?;", &["fs::remove_dir_all"]),
        ("std::os::unix::fs::symlink(a, b)?;", &["fs::symlink"]),
        (
            "use std::fs::{read, write, remove_file};",
            &["fs::remove_file", "fs::write"],
        ),
        (
            "OpenOptions::new()\n  .read(true)\n  .append(true)\n  .open(p)?;",
            &["OpenOptions.append"],
        ),
        (
            "OpenOptions::new().write(writable).open(p)?;",
            &["OpenOptions.write"],
        ),
        (
            "let mut o = OpenOptions::new(); o.create(true);",
            &["OpenOptions.create"],
        ),
        ("o.create_new(flag);", &["OpenOptions.create_new"]),
        (
            "Connection::open_with_flags(p, flags)?;",
            &["Connection::open_with_flags"],
        ),
        ("rusqlite::Connection::open(p)?;", &["Connection::open"]),
        (
            "libc::open(p, libc::O_CREAT | libc::O_WRONLY, 0o644);",
            &["libc::O_CREAT", "libc::O_WRONLY"],
        ),
        ("unsafe { libc::unlink(p.as_ptr()) };", &["libc::unlink"]),
    ];
    for (text, expected) in cases {
        let mut found: Vec<String> = scan_file(text).calls.into_iter().map(|c| c.1).collect();
        found.sort();
        assert_eq!(found, *expected, "{text}");
    }
    // Reads, comments, strings, in-memory databases and test code are not refused.
    let harmless = "// std::fs::write(p, b)\n\
        /* fs::remove_file(p) */\n\
        let s = \"fs::rename(a, b)\";\n\
        let t = std::fs::read_to_string(p)?;\n\
        let f = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(p)?;\n\
        out.write(&buffer)?;\n\
        let c = Connection::open_in_memory()?;\n\
        #[cfg(test)]\nmod tests {\n    fn f() { std::fs::write(p, b).unwrap(); }\n}\n\
        #[cfg(test)]\n#[allow(dead_code)]\nfn scratch() { std::fs::remove_file(p).unwrap(); }\n\
        #[cfg(test)]\npub(crate) mod machines;\n";
    let scan = scan_file(harmless);
    assert_eq!(scan.calls, [], "{harmless}");
    assert_eq!(scan.test_modules, ["machines"]);
    // Lines are counted across comments and strings.
    let later = "// one\n/* two\nthree */\nlet s = \"four\nfive\";\nstd::fs::write(p, b)?;\n";
    assert_eq!(scan_file(later).calls, [(6, "fs::write".to_string())]);
}

#[test]
fn test_only_modules_are_found_by_their_declaration() {
    let files: Vec<(String, String)> = vec![
        (
            "engine/mod.rs".into(),
            "#[cfg(test)]\nmod conformance_tests;\npub mod trim;\n".into(),
        ),
        (
            "engine/conformance_tests.rs".into(),
            "fn f() { std::fs::write(p, b).unwrap(); }".into(),
        ),
        (
            "engine/trim.rs".into(),
            "fn g() { std::fs::remove_file(p).unwrap(); }".into(),
        ),
        (
            "discovery/mod.rs".into(),
            "#[cfg(test)]\npub(crate) mod machines;\n".into(),
        ),
        (
            "discovery/machines/builder.rs".into(),
            "fn h() { std::fs::create_dir_all(p).unwrap(); }".into(),
        ),
    ];
    let findings: Vec<String> = check(&files)
        .0
        .into_iter()
        .map(|f| format!("{}:{}", f.file, f.call))
        .collect();
    assert_eq!(findings, ["engine/trim.rs:fs::remove_file"]);
}
