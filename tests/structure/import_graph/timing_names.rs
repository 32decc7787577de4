//! The naming rule of timing-sensitive tests: a test whose result depends on how fast the
//! machine is has a name that starts with `timing_`, and .config/nextest.toml runs those tests
//! alone (`test(/(^|::)timing_/)`), so that other tests do not take their cores.
//!
//! What the check below finds by reading the sources: a `#[test]` function that asserts an
//! upper bound under [`HANG_GUARD`] on a duration it measured (`.elapsed()`, or a variable
//! bound to one), or compares two durations it measured. A longer bound is a guard against a
//! hang, not a measurement. What it cannot see, the rule still covers (README.md, "Development"): a
//! bound inside a helper, a rate or a latency that the run under test measured.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Bounds on a measured duration at least this long guard against a hang; shorter ones
/// measure.
const HANG_GUARD: Duration = Duration::from_secs(10);

/// The prefix of a timing-sensitive test's name.
const PREFIX: &str = "timing_";

/// One test function: where it is, its name and its body.
struct TestFunction {
    file: String,
    name: String,
    body: String,
}

/// Every `.rs` file below `dir`.
fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path);
        }
    }
}

/// The index after the block that opens at `open` (a `{`), skipping strings, characters and
/// comments; `None` when it does not close.
fn block_end(text: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut at = open;
    while at < text.len() {
        match text[at] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(at + 1);
                }
            }
            b'/' if text.get(at + 1) == Some(&b'/') => {
                while at < text.len() && text[at] != b'\n' {
                    at += 1;
                }
            }
            b'/' if text.get(at + 1) == Some(&b'*') => {
                at += 2;
                while at + 1 < text.len() && &text[at..at + 2] != b"*/" {
                    at += 1;
                }
                at += 1;
            }
            b'r' if matches!(text.get(at + 1), Some(b'"' | b'#'))
                && !text[at.saturating_sub(1)].is_ascii_alphanumeric() =>
            {
                let hashes = text[at + 1..].iter().take_while(|&&c| c == b'#').count();
                if text.get(at + 1 + hashes) == Some(&b'"') {
                    let mut closing = vec![b'"'];
                    closing.extend(std::iter::repeat_n(b'#', hashes));
                    at += 2 + hashes;
                    while at < text.len() && !text[at..].starts_with(&closing) {
                        at += 1;
                    }
                    at += closing.len() - 1;
                }
            }
            b'"' => {
                at += 1;
                while at < text.len() && text[at] != b'"' {
                    at += if text[at] == b'\\' { 2 } else { 1 };
                }
            }
            // A character literal ('{', '\'', '\u{7b}'); a lifetime has no closing quote.
            b'\'' => {
                if text.get(at + 1) == Some(&b'\\') {
                    if let Some(close) = text[at + 2..].iter().position(|&c| c == b'\'') {
                        at += 2 + close;
                    }
                } else if text.get(at + 2) == Some(&b'\'') {
                    at += 2;
                }
            }
            _ => {}
        }
        at += 1;
    }
    None
}

/// The `#[test]` functions of `text` (from `file`).
fn test_functions(file: &str, text: &str) -> Vec<TestFunction> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("#[test]") {
        let start = from + at + "#[test]".len();
        let Some(fn_at) = text[start..].find("fn ") else {
            break;
        };
        let name_start = start + fn_at + 3;
        let name: String = text[name_start..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let Some(open) = text[name_start..].find('{').map(|open| name_start + open) else {
            break;
        };
        let Some(end) = block_end(bytes, open) else {
            break;
        };
        found.push(TestFunction {
            file: file.to_string(),
            name,
            body: text[open..end].to_string(),
        });
        from = end;
    }
    found
}

/// The assertions of `body` (`assert!(…)` and its kin), each as one string.
fn assertions(body: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = body[from..].find("assert") {
        let start = from + at;
        from = start + 1;
        let Some(bang) = body[start..].find('!').map(|bang| start + bang) else {
            break;
        };
        let word = &body[start..bang];
        if !word.chars().all(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if body.as_bytes().get(bang + 1) != Some(&b'(') {
            continue;
        }
        let mut depth = 0;
        for (offset, c) in body[bang + 1..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        found.push(body[start..bang + 2 + offset].to_string());
                        from = bang + 2 + offset;
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    found
}

/// Whether a binding's name says it holds a measured duration (`elapsed`, `took`, `waited`,
/// `plain_took`…), as the result of a helper that timed something.
fn names_a_measured_time(name: &str) -> bool {
    ["elapsed", "took", "waited"]
        .iter()
        .any(|word| name == *word || name.ends_with(&format!("_{word}")))
}

/// The names `body` binds to a measured duration: `let took = started.elapsed();`, or a
/// name of [`names_a_measured_time`], also in a tuple (`let (error, elapsed) = …`).
fn measured_names(body: &str) -> Vec<String> {
    let mut names = Vec::new();
    for statement in body.split(';') {
        // Comment lines and the braces of blocks before the statement are not part of it.
        let code: Vec<&str> = statement
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect();
        let code = code.join("\n");
        let statement =
            code.trim_start_matches(|c: char| c.is_whitespace() || c == '{' || c == '}');
        let Some(rest) = statement.strip_prefix("let ") else {
            continue;
        };
        let Some((pattern, value)) = rest.split_once('=') else {
            continue;
        };
        let timed_here = value.contains(".elapsed()");
        for name in pattern.split(',') {
            let name = name
                .trim_matches(|c: char| c.is_whitespace() || c == '(' || c == ')')
                .trim_start_matches("mut ")
                .trim();
            let single = !pattern.contains(',');
            if name.chars().all(|c| c.is_alphanumeric() || c == '_')
                && ((single && timed_here) || names_a_measured_time(name))
            {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// Whether `word` occurs in `text` as a whole identifier.
fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        // `started.elapsed()` is a method, not the variable `elapsed`.
        !part(before) && before != Some('.') && !part(after)
    })
}

/// The durations written as literals in `text` (`Duration::from_secs(3)`, `from_millis(500)`).
fn duration_literals(text: &str) -> Vec<Duration> {
    let mut found = Vec::new();
    for (call, unit) in [
        ("from_secs(", 1_000_000_000u64),
        ("from_millis(", 1_000_000),
        ("from_micros(", 1_000),
    ] {
        for (at, _) in text.match_indices(call) {
            let digits: String = text[at + call.len()..]
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '_')
                .filter(|c| *c != '_')
                .collect();
            if let Ok(value) = digits.parse::<u64>() {
                found.push(Duration::from_nanos(value.saturating_mul(unit)));
            }
        }
    }
    found
}

/// The condition of an assertion: its first argument (the message after it is not read).
fn condition(assertion: &str) -> &str {
    let Some(open) = assertion.find('(') else {
        return assertion;
    };
    let inner = &assertion[open + 1..];
    let mut depth = 0i32;
    for (at, c) in inner.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => return &inner[..at],
            _ => {}
        }
    }
    inner
}

/// The measured durations `text` reads: the names bound to one, and each `x.elapsed()`.
fn measured_in(text: &str, names: &[String]) -> Vec<String> {
    let mut measured: Vec<String> = names
        .iter()
        .filter(|name| has_word(text, name))
        .cloned()
        .collect();
    for (at, _) in text.match_indices(".elapsed()") {
        let receiver: String = text[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        measured.push(receiver.chars().rev().collect::<String>() + ".elapsed()");
    }
    measured.sort();
    measured.dedup();
    measured
}

/// Why `test` is timing-sensitive, when its own assertions show it.
fn timing_reason(test: &TestFunction) -> Option<String> {
    let names = measured_names(&test.body);
    for assertion in assertions(&test.body) {
        let condition = condition(&assertion);
        let measured = measured_in(condition, &names);
        if measured.is_empty() {
            continue;
        }
        // Each comparison on its own: a short upper bound measures, a lower bound does not.
        let short_upper_bound =
            condition
                .split("&&")
                .flat_map(|part| part.split("||"))
                .any(|part| {
                    !measured_in(part, &names).is_empty()
                        && part.replace("<<", "").contains('<')
                        && duration_literals(part)
                            .into_iter()
                            .any(|bound| bound < HANG_GUARD)
                });
        if measured.len() >= 2 || short_upper_bound {
            return Some(assertion.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    None
}

/// The tests below `roots` that show they are timing-sensitive but lack the prefix, as
/// `file: name: the assertion`.
fn unmarked_timing_tests(roots: &[PathBuf]) -> Vec<String> {
    let mut files = Vec::new();
    for root in roots {
        rust_files(root, &mut files);
    }
    files.sort();
    let mut unmarked = Vec::new();
    for file in files {
        // This file's own examples are not tests of the suite.
        if file.ends_with("import_graph/timing_names.rs") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for test in test_functions(&file.display().to_string(), &text) {
            if test.name.starts_with(PREFIX) {
                continue;
            }
            if let Some(reason) = timing_reason(&test) {
                unmarked.push(format!("{}: {}: {reason}", test.file, test.name));
            }
        }
    }
    unmarked
}

#[test]
fn timing_sensitive_tests_carry_the_prefix_the_runner_keys_on() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let unmarked = unmarked_timing_tests(&[root.join("src"), root.join("tests")]);
    assert!(
        unmarked.is_empty(),
        "these tests assert on a short measured time but their names do not start with \
         `{PREFIX}` (README.md, Development):\n{}",
        unmarked.join("\n")
    );
    let config = std::fs::read_to_string(root.join(".config/nextest.toml")).unwrap();
    assert!(
        config.contains("test(/(^|::)timing_/)"),
        ".config/nextest.toml must run the `{PREFIX}` tests alone:\n{config}"
    );
}

/// The check itself: what it takes for timing-sensitive, and what it leaves alone.
#[test]
fn the_timing_check_finds_short_bounds_and_relations_of_measured_times() {
    let source = r#"
        #[test]
        fn a_deadline_holds() {
            let started = Instant::now();
            let elapsed = started.elapsed();
            assert!(elapsed < Duration::from_millis(2500), "{elapsed:?} '{'");
        }
        #[test]
        fn twice_as_long() {
            let took = a.elapsed();
            let plain = b.elapsed();
            assert!(took < 2 * plain);
        }
        #[test]
        fn a_hang_guard() {
            assert!(started.elapsed() < Duration::from_secs(60), "hung");
        }
        #[test]
        fn a_lower_bound() {
            assert!(started.elapsed() >= Duration::from_millis(600));
        }
        #[test]
        fn timing_marked() {
            assert!(started.elapsed() < Duration::from_secs(1));
        }
    "#;
    let flagged: Vec<String> = test_functions("example.rs", source)
        .iter()
        .filter(|test| !test.name.starts_with(PREFIX) && timing_reason(test).is_some())
        .map(|test| test.name.clone())
        .collect();
    assert_eq!(flagged, ["a_deadline_holds", "twice_as_long"]);
}
