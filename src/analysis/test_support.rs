//! Test helpers for the analysis: host facts that need no measurement; loop and device-mapper
//! devices come from the tests' shared support (tests/support/devices.rs).

use super::HostFacts;

/// Host facts with a fixed memory copy bandwidth (10 GB/s) and 8 GiB available.
pub fn facts() -> HostFacts {
    HostFacts {
        memory_copy_bytes_per_second: Some(10_000_000_000),
        memory_available_bytes: Some(8 << 30),
        dirty_limits: None,
    }
}

/// Asserts that `analysis` is latency-bound and that its evidence starts with `start` and
/// holds every one of `parts`.
#[track_caller]
pub fn assert_latency_bound(analysis: &crate::result::TestAnalysis, start: &str, parts: &[&str]) {
    assert_eq!(
        analysis.verdict,
        crate::result::Verdict::LatencyBound,
        "{}",
        analysis.evidence
    );
    assert!(
        analysis.evidence.starts_with(start)
            && parts.iter().all(|part| analysis.evidence.contains(part)),
        "{}",
        analysis.evidence
    );
}
