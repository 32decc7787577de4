//! Expansion of option values, as fio does before parsing them:
//!
//! - `$pagesize`, `$mb_memory` and `$ncpus` become this machine's page size in bytes, total
//!   memory in MiB and online CPU count; a value where one was replaced and that holds an
//!   operator is then evaluated as arithmetic (`size=8*$mb_memory` reads as `(8*…)`);
//! - `${VAR}` becomes the environment variable `VAR`, or nothing when it is not set.
//!
//! The machine's values come from an [`Environment`], so tests can fix them.

use crate::discovery::HostView;
use crate::host::sys;
use std::collections::HashMap;

/// Where expansion takes its values from.
#[derive(Clone, Debug)]
pub struct Environment {
    /// Environment variables; `None`: read the process environment.
    variables: Option<HashMap<String, String>>,
    /// Page size, bytes.
    pub page_size: u64,
    /// Total memory, MiB.
    pub memory_mib: u64,
    /// Online CPUs.
    pub cpus: u64,
    /// CPUs this process may run on (its affinity).
    pub allowed_cpus: Vec<u32>,
    /// NUMA nodes and their CPUs (one node 0 with every online CPU when the kernel shows none).
    pub numa_nodes: Vec<(u32, Vec<u32>)>,
}

impl Environment {
    /// This process's environment and this machine's values.
    pub fn system() -> Self {
        let page_size = sys::page_size();
        let cpus = u64::from(sys::online_cpus()).max(1);
        let all: Vec<u32> = (0..cpus as u32).collect();
        let numa_nodes = crate::discovery::resources::numa_nodes(&HostView::live());
        Environment {
            variables: None,
            page_size,
            memory_mib: sys::physical_pages().saturating_mul(page_size) >> 20,
            cpus,
            allowed_cpus: sys::allowed_cpus().unwrap_or_else(|| all.clone()),
            numa_nodes: if numa_nodes.is_empty() {
                vec![(0, all)]
            } else {
                numa_nodes
            },
        }
    }

    /// Fixed variables and machine values (4 KiB pages, 8 GiB, 4 CPUs on two NUMA nodes of
    /// two), for tests.
    pub fn fixed(variables: &[(&str, &str)]) -> Self {
        Environment {
            variables: Some(
                variables
                    .iter()
                    .map(|(name, value)| (name.to_string(), value.to_string()))
                    .collect(),
            ),
            page_size: 4096,
            memory_mib: 8192,
            cpus: 4,
            allowed_cpus: vec![0, 1, 2, 3],
            numa_nodes: vec![(0, vec![0, 1]), (1, vec![2, 3])],
        }
    }

    fn variable(&self, name: &str) -> Option<String> {
        match &self.variables {
            Some(variables) => variables.get(name).cloned(),
            None => std::env::var(name).ok(),
        }
    }
}

/// An expanded value and the variables that were not set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expanded {
    /// The value after expansion.
    pub text: String,
    /// Names of `${VAR}`s that expanded to nothing.
    pub unset: Vec<String>,
}

/// Longest value after expansion, in bytes (the longest line a job file may hold).
pub const MAX_EXPANDED_BYTES: usize = 64 * 1024;

/// Expands the keywords and `${VAR}`s of `value`; refuses a value that grows past
/// [`MAX_EXPANDED_BYTES`] (a variable repeated many times).
pub fn expand(value: &str, environment: &Environment) -> Result<Expanded, String> {
    let keywords = [
        ("$pagesize", environment.page_size),
        ("$mb_memory", environment.memory_mib),
        ("$ncpus", environment.cpus),
    ];
    let mut text = value.to_string();
    let mut replaced = false;
    for (keyword, number) in keywords {
        if text.contains(keyword) {
            text = text.replace(keyword, &number.to_string());
            replaced = true;
        }
    }
    if replaced && !text.starts_with('(') && text.contains(['+', '-', '*', '/', '%', '^']) {
        text = format!("({text})");
    }
    let mut out = String::with_capacity(text.len());
    let mut unset = Vec::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find('}') {
            Some(end) if end > 0 => {
                let name = &after[..end];
                match environment.variable(name) {
                    Some(found) => out.push_str(&found),
                    None => unset.push(name.to_string()),
                }
                if out.len() > MAX_EXPANDED_BYTES {
                    return Err(format!(
                        "the value is longer than {} KiB once its variables are expanded",
                        MAX_EXPANDED_BYTES >> 10
                    ));
                }
                rest = &after[end + 1..];
            }
            _ => {
                out.push_str("${");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Ok(Expanded { text: out, unset })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_and_keywords_expand() {
        let environment = Environment::fixed(&[("SIZE", "64m"), ("N", "4")]);
        let expanded = expand("${SIZE}", &environment).unwrap();
        assert_eq!(expanded.text, "64m");
        assert_eq!(expand("a${N}b${N}", &environment).unwrap().text, "a4b4");
        let missing = expand("${NOPE}x", &environment).unwrap();
        assert_eq!(missing.text, "x");
        assert_eq!(missing.unset, ["NOPE"]);
        assert_eq!(expand("${}", &environment).unwrap().text, "${}");
        assert_eq!(expand("${open", &environment).unwrap().text, "${open");
        assert_eq!(expand("$ncpus", &environment).unwrap().text, "4");
        assert_eq!(
            expand("8*$mb_memory", &environment).unwrap().text,
            "(8*8192)"
        );
        assert_eq!(
            expand("($pagesize*2)", &environment).unwrap().text,
            "(4096*2)"
        );
        assert_eq!(expand("$pagesize", &environment).unwrap().text, "4096");
    }

    #[test]
    fn expansion_is_bounded() {
        let environment = Environment::fixed(&[("BIG", &"x".repeat(1024))]);
        let error = expand(&"${BIG}".repeat(100), &environment).unwrap_err();
        assert!(error.contains("64 KiB"), "{error}");
    }

    #[test]
    fn the_system_has_sane_values() {
        let environment = Environment::system();
        assert!(environment.page_size >= 4096);
        assert!(environment.cpus >= 1);
        assert!(environment.memory_mib > 0);
    }
}
