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
