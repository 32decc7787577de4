//! The Wald–Wolfowitz runs test on one sample, as fio's randomness check applies it to the
//! offsets of a random job: each value is marked as at or above the sample's mean or below it,
//! the runs of equal marks are counted, and the count is compared with what independent draws
//! give (a normal approximation; below 50 values the count moves half a run towards its
//! expectation first). The answer is the two-sided p-value.

/// The two-sided p-value of the runs test on `values` around their mean (1 when every value
/// falls on the same side, where the test says nothing).
pub fn runs_test_p_value(values: &[f64]) -> f64 {
    let count = values.len() as f64;
    let mean = values.iter().sum::<f64>() / count;
    let marks: Vec<bool> = values.iter().map(|value| *value >= mean).collect();
    let above = marks.iter().filter(|mark| **mark).count() as f64;
    let below = count - above;
    if above == 0.0 || below == 0.0 {
        return 1.0;
    }
    let mut runs = 1.0 + marks.windows(2).filter(|pair| pair[0] != pair[1]).count() as f64;
    let expected = 2.0 * above * below / count + 1.0;
    let variance =
        2.0 * above * below * (2.0 * above * below - count) / (count * count * (count - 1.0));
    if values.len() < 50 {
        if runs > expected {
            runs -= 0.5;
        } else if runs < expected {
            runs += 0.5;
        }
    }
    let z = (runs - expected) / variance.sqrt();
    complementary_error_function(z.abs() / std::f64::consts::SQRT_2)
}

/// erfc(x) for x ≥ 0, to a relative error below 1.2e-7 (the Chebyshev-fitted exponential of
/// Press et al., Numerical Recipes, §6.2): ample for a p-value compared with 0.05.
fn complementary_error_function(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.5 * x);
    let coefficients = [
        -1.265_512_23,
        1.000_023_68,
        0.374_091_96,
        0.096_784_18,
        -0.186_288_06,
        0.278_868_07,
        -1.135_203_98,
        1.488_515_87,
        -0.822_152_23,
        0.170_872_77,
    ];
    let polynomial = coefficients
        .iter()
        .rev()
        .fold(0.0, |sum, coefficient| sum * t + coefficient);
    t * (-x * x + polynomial).exp()
}

#[test]
fn runs_test_matches_known_values() {
    // Alternating values: the most runs possible, far too many for chance.
    let alternating: Vec<f64> = (0..100).map(|i| (i % 2) as f64).collect();
    assert!(runs_test_p_value(&alternating) < 1e-10);
    // Sorted values: two runs, far too few.
    let sorted: Vec<f64> = (0..256).map(f64::from).collect();
    assert!(runs_test_p_value(&sorted) < 1e-10);
    // 0 1 1 0 0 1 0 1 1 0 (10 values, 5 above): 7 runs against 6 expected, variance 20/9,
    // corrected to 6.5 → z = 0.5 / 1.4907 = 0.3354 → p = 0.7373.
    let small = [0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0];
    assert!((runs_test_p_value(&small) - 0.7373).abs() < 1e-3);
    assert!((complementary_error_function(1.0) - 0.157_299_207).abs() < 1e-7);
}

/// The block order of the first 256 random I/Os of `file` (a job over 1 MiB in 4 KiB blocks)
/// read with `randseed=seed`, as iopath's planner gives it to the worker.
fn block_order(file: &std::path::Path, seed: u64, dir: &std::path::Path) -> Vec<f64> {
    use iopath::input::fio::{expand::Environment, load_with};
    use iopath::input::job_file::JobFileRequest;
    use iopath::workload::planner::IoPlanner;
    let text = std::fs::read_to_string(file).unwrap();
    let job = dir.join(format!("seed-{seed}.fio"));
    std::fs::write(&job, format!("{text}\nrandseed={seed}\n")).unwrap();
    let loaded = load_with(&job, &JobFileRequest::default(), &Environment::fixed(&[])).unwrap();
    let workload = &loaded.plan.tests[0].jobs[0].workload;
    let mut planner = IoPlanner::new(workload, 0, 1 << 20, 0, 1);
    (0..256)
        .map(|_| planner.next_io().offset as f64 / 4096.0)
        .collect()
}

/// The share of 200 seeds whose order of `file`'s 256 blocks fails the runs test (p < 0.05),
/// after checking that each order visits every block once and steps to the next block up
/// about as rarely as a shuffled order does (about once per pass; at most 6 on average).
fn failure_share_over_seeds(name: &str) -> Option<f64> {
    let corpus = super::support::corpus::shared_dir("fio-t-jobs")?;
    let dir = tempfile::tempdir().unwrap();
    let seeds = 200;
    let (mut failed, mut steps_up) = (0, 0);
    for seed in 0..seeds {
        let blocks = block_order(&corpus.join(name), seed, dir.path());
        let mut sorted = blocks.clone();
        sorted.sort_by(f64::total_cmp);
        let every_block: Vec<f64> = (0..256).map(f64::from).collect();
        assert_eq!(sorted, every_block, "{name}, seed {seed}: every block once");
        steps_up += blocks
            .windows(2)
            .filter(|pair| pair[1] == pair[0] + 1.0)
            .count();
        failed += usize::from(runs_test_p_value(&blocks) < 0.05);
    }
    let mean_steps_up = steps_up as f64 / seeds as f64;
    assert!(
        mean_steps_up <= 6.0,
        "{name}: {mean_steps_up} steps to the next block up per pass (a shuffle takes about 1)"
    );
    Some(failed as f64 / seeds as f64)
}

#[test]
fn the_random_map_order_fails_the_runs_test_as_rarely_as_a_shuffle_over_200_seeds() {
    // A shuffled order fails at p < 0.05 one time in twenty; 200 seeds put 10 % about three
    // standard deviations above that.
    if let Some(share) = failure_share_over_seeds("t0020.fio") {
        assert!(share <= 0.10, "t0020: {:.1} % of seeds fail", share * 100.0);
    }
}

#[test]
fn the_lfsr_order_visits_every_block_and_passes_the_runs_test_over_200_seeds() {
    if let Some(share) = failure_share_over_seeds("t0021.fio") {
        assert!(share <= 0.10, "t0021: {:.1} % of seeds fail", share * 100.0);
    }
}
