//! The tables of a PTS report, as the specification has them: each element's figures averaged
//! over the measurement window (the five rounds that were steady, or the last five when
//! steady state was not reached), the largest latency taken as the largest of the window.
//! The HTML and CSV exporters format these rows and nothing else.
//!
//! ```
//! use iopath::report::pts_tables::mix_name;
//! assert_eq!(mix_name(65), "65/35");
//! ```

use crate::result::pts::{PtsCell, PtsResult, PtsTestResult};
use crate::units::{format_size, format_time};

/// `65/35`: a read/write mix as the specification writes it.
pub fn mix_name(read_percent: u8) -> String {
    format!("{}/{}", read_percent, 100 - read_percent)
}

/// The rounds a test's table averages: those of its measurement window (all its rounds when
/// it has no window).
pub fn window_rounds(test: &PtsTestResult) -> std::ops::Range<usize> {
    let first = test
        .windows
        .first()
        .map_or(1, |window| window.first_round.max(1) as usize);
    (first - 1).min(test.rounds.len())..test.rounds.len()
}

/// Each element of `test`, its figures averaged over the window (largest latency: the
/// largest). Empty when no round ran.
pub fn window_cells(test: &PtsTestResult) -> Vec<PtsCell> {
    let rounds = &test.rounds[window_rounds(test)];
    let Some(first) = rounds.first() else {
        return Vec::new();
    };
    let count = rounds.len() as f64;
    (0..first.cells.len())
        .map(|index| {
            let cells: Vec<&PtsCell> = rounds
                .iter()
                .filter_map(|round| round.cells.get(index))
                .collect();
            let mean = |figure: fn(&PtsCell) -> f64| {
                cells.iter().map(|cell| figure(cell)).sum::<f64>() / count
            };
            let mean_whole = |figure: fn(&PtsCell) -> u64| {
                (cells.iter().map(|cell| figure(cell) as f64).sum::<f64>() / count).round() as u64
            };
            PtsCell {
                block_size_bytes: first.cells[index].block_size_bytes,
                read_percent: first.cells[index].read_percent,
                random: first.cells[index].random,
                iops: mean(|cell| cell.iops),
                read_bytes_per_second: mean(|cell| cell.read_bytes_per_second),
                write_bytes_per_second: mean(|cell| cell.write_bytes_per_second),
                mean_latency_ns: mean(|cell| cell.mean_latency_ns),
                p99_latency_ns: mean_whole(|cell| cell.p99_latency_ns),
                p9999_latency_ns: mean_whole(|cell| cell.p9999_latency_ns),
                max_latency_ns: cells
                    .iter()
                    .map(|cell| cell.max_latency_ns)
                    .max()
                    .unwrap_or(0),
                bytes: cells.iter().map(|cell| cell.bytes).sum(),
                rate_step: None,
            }
        })
        .collect()
}

/// The distinct block sizes of `cells`, in their order.
pub fn block_sizes(cells: &[PtsCell]) -> Vec<u64> {
    let mut sizes = Vec::new();
    for cell in cells {
        if !sizes.contains(&cell.block_size_bytes) {
            sizes.push(cell.block_size_bytes);
        }
    }
    sizes
}

/// The distinct read shares of `cells`, in their order.
pub fn read_percents(cells: &[PtsCell]) -> Vec<u8> {
    let mut mixes = Vec::new();
    for cell in cells {
        if !mixes.contains(&cell.read_percent) {
            mixes.push(cell.read_percent);
        }
    }
    mixes
}

/// The cell of `block_size` and `read_percent`, if measured.
pub fn cell_at(cells: &[PtsCell], block_size: u64, read_percent: u8) -> Option<&PtsCell> {
    cells
        .iter()
        .find(|cell| cell.block_size_bytes == block_size && cell.read_percent == read_percent)
}

/// The test conditions of `result`, as the report's first table shows them: (name, value)
/// — label, specification, target, capacity, active range, purge, preconditioning,
/// outstanding I/O, rounds, host, start, iopath's version, and one row per fact discovery
/// found about the device (model, firmware, link).
pub fn condition_rows(result: &PtsResult) -> Vec<(&'static str, String)> {
    let c = &result.conditions;
    let mut rows: Vec<(&'static str, String)> = vec![
        (
            "Specification",
            format!(
                "SNIA Solid State Storage Performance Test Specification, {} edition",
                c.edition.name()
            ),
        ),
        (
            "Target",
            format!("{} ({})", c.target.path, c.target.kind.description()),
        ),
        (
            "Capacity",
            format!(
                "{} bytes ({})",
                c.target.size_bytes,
                format_size(c.target.size_bytes)
            ),
        ),
        (
            "Active range",
            format!(
                "{} % = {} bytes from offset 0",
                c.capacity_percent, c.active_range_bytes
            ),
        ),
        ("Purge", c.purge_method.clone()),
        (
            "Preconditioning",
            format!(
                "{} of 128 KiB sequential writes (twice the active range), before each test but write saturation",
                format_size(c.preconditioning_bytes)
            ),
        ),
        (
            "Outstanding I/O",
            format!(
                "IOPS and saturation: QD {} × {} workers; throughput: one sequential stream at QD {}; latency: QD 1 × 1 worker",
                c.queue_depth, c.workers, c.queue_depth
            ),
        ),
        (
            "Rounds",
            format!(
                "each element measured for {} per round; at most {} rounds; window of 5 rounds",
                format_time(c.round_element_ns),
                c.max_rounds
            ),
        ),
        ("Host", c.host.clone()),
        ("Started", result.started_at.clone()),
        ("iopath", result.iopath_version.clone()),
    ];
    if let Some(label) = &result.label {
        rows.insert(0, ("Label", label.clone()));
    }
    for fact in &c.device_facts {
        rows.push(("Device", fact.clone()));
    }
    rows
}

/// `pts-conditions.csv`: the test conditions ([`condition_rows`]), then a `Scaled down` row
/// for each way the run differs from the specification and a `Note` row for each note.
pub fn conditions_csv(result: &PtsResult) -> String {
    let c = &result.conditions;
    let mut csv = String::from("condition,value\n");
    let rows = condition_rows(result)
        .into_iter()
        .chain(
            c.scaled_down
                .iter()
                .map(|line| ("Scaled down", line.clone())),
        )
        .chain(c.notes.iter().map(|line| ("Note", line.clone())));
    for (name, value) in rows {
        csv.push_str(&format!("{},{}\n", csv_field(name), csv_field(&value)));
    }
    csv
}

/// The tables of a PTS result as CSV: `(file stem, text)`: the test conditions, then one per
/// test table — the
/// element table of every test that ran, and its tracking variables round by round — and
/// `pts-rate-steps` when a rate stepped down (a write cliff, a burst bucket).
pub fn csv_tables(result: &PtsResult) -> Vec<(String, String)> {
    use crate::result::pts::block_size_name;
    let mut files = vec![("pts-conditions".to_string(), conditions_csv(result))];
    for test in result.tests.iter().filter(|test| !test.rounds.is_empty()) {
        let name = test.kind.name();
        let mut rounds = String::from("round");
        for variable in &test.tracking {
            rounds.push(',');
            rounds.push_str(&csv_field(variable));
        }
        rounds.push('\n');
        for round in &test.rounds {
            rounds.push_str(&round.number.to_string());
            for value in &round.tracked {
                rounds.push_str(&format!(",{value:.3}"));
            }
            rounds.push('\n');
        }
        files.push((format!("pts-{name}-rounds"), rounds));
        let cells = window_cells(test);
        let mut table = String::from(
            "block_size,read_write_mix,access,iops,read_mb_per_s,write_mb_per_s,mean_latency_us,p99_latency_us,p99_99_latency_us,max_latency_us\n",
        );
        for cell in &cells {
            table.push_str(&format!(
                "{},{},{},{:.1},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2}\n",
                block_size_name(cell.block_size_bytes),
                mix_name(cell.read_percent),
                if cell.random { "random" } else { "sequential" },
                cell.iops,
                cell.read_bytes_per_second / 1e6,
                cell.write_bytes_per_second / 1e6,
                cell.mean_latency_ns / 1000.0,
                cell.p99_latency_ns as f64 / 1000.0,
                cell.p9999_latency_ns as f64 / 1000.0,
                cell.max_latency_ns as f64 / 1000.0,
            ));
        }
        files.push((format!("pts-{name}"), table));
    }
    if let Some(steps) = super::pts_rate_steps::steps_csv(result) {
        files.push(("pts-rate-steps".to_string(), steps));
    }
    files
}

/// A CSV field, quoted when it holds a comma or a quote.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}
