//! A host kept busy by other processes (a CPU hog on each core, other tests, builds): told
//! from a RunResult's own CPU figures, so that a test of a verdict can expect the busy host's
//! verdict when the host really was busy, and its own verdict otherwise.

use iopath::analysis::verdict::HOST_BOUND_PERCENT;
use serde_json::Value;

/// Whether other processes kept the host busy while the first test of `json` measured, from
/// its CPU figures alone: all cores together at least [`HOST_BOUND_PERCENT`] busy, and the
/// others' share (everything but iopath) at least 30 % of the host and twice iopath's own. Then
/// the host's CPU is the limit, whatever the path would do on a quiet host (a CPU hog on each
/// core, other tests or builds), and the verdict must say so and name the others.
pub fn busy_with_others(json: &Value) -> bool {
    let cpu = &json["tests"][0]["cpu"];
    let shares = core_busy_percents(json);
    let capacity_ns =
        cpu["wall_ns"].as_f64().unwrap_or(0.0) * cpu["cpu_count"].as_f64().unwrap_or(0.0);
    if shares.is_empty() || capacity_ns <= 0.0 {
        return false;
    }
    let host = shares.iter().sum::<f64>() / shares.len() as f64;
    let own_ns = cpu["user_ns"].as_f64().unwrap_or(0.0) + cpu["system_ns"].as_f64().unwrap_or(0.0);
    let own = own_ns / capacity_ns * 100.0;
    let others = host - own;
    host >= HOST_BOUND_PERCENT && others >= 30.0 && others >= 2.0 * own
}

/// Whether the verdict of the first test of `json` is the busy host's: host-CPU-bound, led by
/// the other processes that took the CPU.
pub fn names_the_busy_host(json: &Value) -> bool {
    let analysis = &json["tests"][0]["analysis"];
    analysis["verdict"] == "host_cpu_bound"
        && analysis["evidence"].as_str().is_some_and(|evidence| {
            evidence.starts_with("the host's CPU, taken by other processes")
        })
}

/// How busy each core of the host was (every process counted) while the first test of `json`
/// measured, percent.
pub fn core_busy_percents(json: &Value) -> Vec<f64> {
    json["tests"][0]["cpu"]["cores"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|core| {
            let total = core["total_ns"].as_f64().filter(|total| *total > 0.0)?;
            Some(core["busy_ns"].as_f64()? / total * 100.0)
        })
        .collect()
}
