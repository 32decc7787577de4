//! The supported options nearest to a name iopath does not take: close in spelling (edit
//! distance, as fio's own "did you mean") or sharing a word of the name (`iodepth_batch` →
//! `iodepth`, `write_iops_log` → `write_bw_log`).

use super::table::supported_names;

/// How many names a message lists.
const SHOWN: usize = 4;

/// Longest name that gets suggestions (fio's longest option name has 27 characters; the edit
/// distance costs the product of both lengths).
const LONGEST_NAME: usize = 64;

/// Supported option names near `name`, best first (at most four).
pub fn nearest(name: &str) -> Vec<&'static str> {
    if name.len() > LONGEST_NAME {
        return Vec::new();
    }
    let name = name.to_ascii_lowercase();
    let words: Vec<&str> = name.split('_').filter(|word| word.len() >= 2).collect();
    let mut scored: Vec<(i64, &'static str)> = supported_names()
        .filter_map(|candidate| {
            let distance = edit_distance(&name, candidate) as i64;
            let shared = candidate
                .split('_')
                .filter(|word| words.contains(word))
                .count() as i64;
            let close = distance <= (name.len() as i64 / 3).max(2);
            (close || shared > 0).then_some((distance - 3 * shared, candidate))
        })
        .collect();
    scored.sort();
    let mut names: Vec<&'static str> = Vec::new();
    for (_, candidate) in scored {
        if !names.contains(&candidate) {
            names.push(candidate);
        }
        if names.len() == SHOWN {
            break;
        }
    }
    names
}

/// The parenthesised list for a message, or a pointer to the documentation.
pub fn near_text(name: &str) -> String {
    let names = nearest(name);
    if names.is_empty() {
        "(docs/fio-compatibility.md lists the supported options)".to_string()
    } else {
        format!("(supported options near it: {})", names.join(", "))
    }
}

/// Levenshtein distance between two ASCII-ish strings (counted in chars).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_spellings_and_shared_words_are_suggested() {
        assert_eq!(edit_distance("threads", "thread"), 1);
        assert_eq!(nearest("numjob")[0], "numjobs");
        assert_eq!(nearest("blocksise")[0], "blocksize");
        assert!(nearest("iodepth_btch").contains(&"iodepth_batch"));
        assert!(nearest("write_iops_log").contains(&"write_bw_log"));
        assert!(nearest("rate_process_x").contains(&"rate_process"));
        assert!(nearest("zzzzzzzzzzzz").is_empty());
        assert!(near_text("zzzzzzzzzzzz").contains("docs/fio-compatibility.md"));
        assert!(nearest("x").len() <= SHOWN);
        assert!(nearest(&"blocksize".repeat(100)).is_empty());
    }
}
