//! The Prometheus text exposition format, read within bounds: only the metric families asked
//! for are kept, a line longer than [`MAX_LINE_BYTES`] or with more than [`MAX_LABELS`] labels
//! is refused, and at most [`MAX_SAMPLES`] samples are kept.
//!
//! ```
//! use iopath::observe::exposition::parse;
//! let text = "# HELP x\nnode_disk_read_bytes_total{device=\"sda\"} 1.5e3\nother 1\n";
//! let samples = parse(text, &["node_disk_"]).unwrap();
//! assert_eq!(samples.len(), 1);
//! assert_eq!(samples[0].label("device"), Some("sda"));
//! assert_eq!(samples[0].value, 1500.0);
//! ```

/// The longest line read.
pub const MAX_LINE_BYTES: usize = 64 << 10;
/// The most labels of one sample.
pub const MAX_LABELS: usize = 64;
/// The most samples kept from one answer.
pub const MAX_SAMPLES: usize = 200_000;

/// One sample: a metric name, its labels and its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The metric's name (`node_cpu_seconds_total`).
    pub name: String,
    /// Its labels, in the order written.
    pub labels: Vec<(String, String)>,
    /// Its value.
    pub value: f64,
}

impl Sample {
    /// The value of label `name`, if the sample has it.
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// Parses `text`, keeping the samples whose name starts with one of `prefixes`. The error
/// names the line number and what is wrong with it.
pub fn parse(text: &str, prefixes: &[&str]) -> Result<Vec<Sample>, String> {
    let mut samples = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.len() > MAX_LINE_BYTES {
            return Err(format!(
                "line {} is longer than {MAX_LINE_BYTES} bytes",
                index + 1
            ));
        }
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if !prefixes.iter().any(|prefix| line.starts_with(prefix)) {
            continue;
        }
        let sample = parse_line(line).map_err(|reason| format!("line {}: {reason}", index + 1))?;
        if samples.len() == MAX_SAMPLES {
            return Err(format!("more than {MAX_SAMPLES} samples"));
        }
        samples.push(sample);
    }
    Ok(samples)
}

fn parse_line(line: &str) -> Result<Sample, String> {
    let name_end = line
        .find(|c: char| c == '{' || c.is_whitespace())
        .ok_or("no value")?;
    let name = &line[..name_end];
    let mut rest = &line[name_end..];
    let mut labels = Vec::new();
    if let Some(after) = rest.strip_prefix('{') {
        let (parsed, remaining) = parse_labels(after)?;
        labels = parsed;
        rest = remaining;
    }
    let value_text = rest.split_whitespace().next().ok_or("no value")?;
    let value = match value_text {
        "+Inf" | "Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        "NaN" => f64::NAN,
        other => other
            .parse::<f64>()
            .map_err(|_| "a value that is not a number")?,
    };
    Ok(Sample {
        name: name.to_string(),
        labels,
        value,
    })
}

/// A sample's labels: name and value, in the order written.
type Labels = Vec<(String, String)>;

/// Labels up to the closing brace, and what follows it.
fn parse_labels(mut rest: &str) -> Result<(Labels, &str), String> {
    let mut labels = Vec::new();
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        if let Some(after) = rest.strip_prefix('}') {
            return Ok((labels, after));
        }
        if labels.len() == MAX_LABELS {
            return Err(format!("more than {MAX_LABELS} labels"));
        }
        let (key, after) = rest.split_once('=').ok_or("a label without =")?;
        let after = after
            .strip_prefix('"')
            .ok_or("a label value without quotes")?;
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next() {
                Some((at, '"')) => break at,
                Some((_, '\\')) => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, other)) => value.push(other),
                    None => return Err("an unfinished label value".into()),
                },
                Some((_, other)) => value.push(other),
                None => return Err("an unfinished label value".into()),
            }
        };
        labels.push((key.trim().to_string(), value));
        rest = &after[end + 1..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_escapes_and_special_values() {
        let text = "node_x{a=\"q\\\"uote\",b=\"new\\nline\",} +Inf 1700000000000\nnode_y NaN\n";
        let samples = parse(text, &["node_"]).unwrap();
        assert_eq!(samples[0].label("a"), Some("q\"uote"));
        assert_eq!(samples[0].label("b"), Some("new\nline"));
        assert!(samples[0].value.is_infinite());
        assert!(samples[1].value.is_nan());
    }

    #[test]
    fn bad_lines_name_their_number() {
        let error = parse("node_ok 1\nnode_bad{a=\"x} 1\n", &["node_"]).unwrap_err();
        assert!(error.starts_with("line 2"), "{error}");
        assert!(parse("node_v abc\n", &["node_"]).is_err());
        let many: String = (0..=MAX_LABELS).map(|i| format!("l{i}=\"v\",")).collect();
        assert!(parse(&format!("node_v{{{many}}} 1\n"), &["node_"]).is_err());
        assert!(
            parse(
                &format!("node_{} 1\n", "x".repeat(MAX_LINE_BYTES)),
                &["node_"]
            )
            .is_err()
        );
    }
}
