//! The storage path of a target as lines of text, one per hop (`iopath path`, and the path
//! section of the text exporters).
//!
//! ```
//! use iopath::result::StoragePath;
//! use iopath::report::path::path_lines;
//! assert!(path_lines(&StoragePath::default()).is_empty());
//! ```

use crate::result::{Duplex, HopOrigin, StoragePath};
use crate::units::{format_bytes, format_iops, format_rate};

/// One line per hop of `path`, indented by depth, for the terminal (`iopath path`).
pub fn path_lines(path: &StoragePath) -> Vec<String> {
    let mut lines = Vec::with_capacity(path.hops.len());
    for hop in &path.hops {
        let indent = "  ".repeat(hop.depth as usize);
        let mut line = format!("{indent}{} [{}]", hop.name, hop.kind.label());
        if !hop.description.is_empty() {
            line.push_str(": ");
            line.push_str(&hop.description);
        }
        if let Some(capacity) = &hop.capacity {
            line.push_str(&format!(
                " — carries {}{}",
                format_rate(capacity.payload_bytes_per_second as f64),
                if capacity.duplex == Duplex::Full {
                    " each way"
                } else {
                    " shared by both directions"
                }
            ));
            if let Some(iops) = capacity.iops {
                line.push_str(&format!(", {}", format_iops(iops as f64)));
            }
        }
        if let Some(queue) = &hop.queue {
            let mut parts = Vec::new();
            if let Some(scheduler) = &queue.scheduler {
                parts.push(format!("scheduler {scheduler}"));
            }
            if let Some(limit) = queue.outstanding_limit() {
                parts.push(format!("queue limit {limit}"));
            }
            if let Some(requests) = queue.nr_requests {
                parts.push(format!("nr_requests {requests}"));
            }
            if let Some(window) = queue.read_ahead_bytes {
                parts.push(format!("read-ahead {}", format_bytes(window)));
            }
            if let Some(latency) = queue.writeback_throttle_latency_us.filter(|us| *us > 0) {
                parts.push(format!("write-back throttling at {latency} µs"));
            }
            if let Some(rotational) = queue.rotational {
                parts.push(
                    if rotational {
                        "rotational"
                    } else {
                        "non-rotational"
                    }
                    .into(),
                );
            }
            if let Some(cache) = &queue.write_cache {
                parts.push(format!("write cache: {cache}"));
            }
            if !parts.is_empty() {
                line.push_str(&format!(" ({})", parts.join(", ")));
            }
        }
        if hop.origin == HopOrigin::Declared {
            line.push_str(" (declared)");
        }
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Hop, HopCapacity, HopKind};

    #[test]
    fn the_schema_round_trips() {
        let path = StoragePath {
            target: "/dev/sdb".into(),
            hops: vec![Hop {
                key: "declared:0".into(),
                kind: HopKind::FibreChannelLink,
                name: "4GFC".into(),
                description: String::new(),
                depth: 0,
                origin: HopOrigin::Declared,
                capacity: Some(HopCapacity {
                    payload_bytes_per_second: 412_903_225,
                    iops: None,
                    duplex: Duplex::Full,
                    catalog_name: Some("4GFC".into()),
                    variant: None,
                    derivation: "…".into(),
                }),
                queue: None,
                protocol: Some("fcp".into()),
                read_share: 1.0,
                write_share: 1.0,
            }]
            .into(),
            notes: vec![],
            first_blocks_all_zero: Some(false),
            allocated_bytes: None,
        };
        let text = serde_json::to_string(&path).unwrap();
        assert!(text.contains("\"fibre_channel_link\""), "{text}");
        assert!(text.contains("\"declared\""), "{text}");
        let back: StoragePath = serde_json::from_str(&text).unwrap();
        assert_eq!(back, path);
        assert_eq!(path_lines(&path).len(), 1);
        assert!(path_lines(&path)[0].contains("(declared)"));
    }
}
