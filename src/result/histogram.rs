//! The stored form of a latency histogram: only its non-empty buckets, with the exact count,
//! sum, sum of squares and extremes, so that the recorder's histogram can be rebuilt exactly
//! and merged (see `crate::stats::histogram` for the layout and its error bound).

use serde::{Deserialize, Serialize};

/// The stored form of a latency histogram: only non-empty buckets, with the exact moments.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SparseHistogram {
    /// Sub-bucket bits of the layout (6: 64 buckets per power of two).
    pub sub_bucket_bits: u32,
    /// Number of samples.
    pub count: u64,
    /// Exact sum of the samples, ns.
    pub sum_ns: u128,
    /// Exact sum of the squared samples, ns².
    pub sum_of_squares_ns2: u128,
    /// Smallest sample, ns.
    pub min_ns: u64,
    /// Largest sample, ns.
    pub max_ns: u64,
    /// `[bucket index, count]` of every non-empty bucket.
    pub buckets: Vec<[u64; 2]>,
}

impl SparseHistogram {
    /// A histogram without samples, in the layout of 64 sub-buckets per power of two.
    pub fn empty() -> Self {
        SparseHistogram {
            sub_bucket_bits: 6,
            count: 0,
            sum_ns: 0,
            sum_of_squares_ns2: 0,
            min_ns: 0,
            max_ns: 0,
            buckets: Vec::new(),
        }
    }
}
