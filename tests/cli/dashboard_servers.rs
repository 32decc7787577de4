//! `--live --server-metrics`: the dashboard shows the server's counters as they are scraped,
//! beside the client's figures — a real node exporter on loopback, the dashboard in a tmux
//! pane, what it shows checked against what the exporter itself answers.

use crate::live::{Tmux, new_session, status_after};
use crate::metrics::get;
use crate::server_metrics::Exporter;
use crate::support::devices::has_command;
use crate::support::skip_unless;
use std::collections::BTreeSet;
use std::time::Duration;

/// What a node exporter's answer names: its host name, and the distinct values of `label`
/// over the samples whose name starts with `prefix`.
fn names(answer: &str, prefix: &str, label: &str) -> BTreeSet<String> {
    let key = format!("{label}=\"");
    answer
        .lines()
        .filter(|line| line.starts_with(prefix))
        .filter_map(|line| {
            let (_, rest) = line.split_once(&key)?;
            Some(rest.split('"').next()?.to_string())
        })
        .collect()
}

/// The words of `line` after `word` (the first such).
fn after<'a>(line: &'a str, word: &str) -> Option<&'a str> {
    line.split_once(word).map(|(_, rest)| rest)
}

#[test]
fn the_dashboard_shows_the_servers_cores_disks_and_interfaces_as_its_exporter_reports_them() {
    skip_unless!(
        has_command("tmux"),
        "tmux is not installed (apt-get install tmux)"
    );
    let Some(exporter) = Exporter::start() else {
        return;
    };
    let port: u16 = exporter
        .url
        .rsplit(':')
        .next()
        .and_then(|tail| tail.split('/').next())
        .and_then(|port| port.parse().ok())
        .expect("the exporter's port");
    // The host's cores, disks and interfaces as the exporter names them now.
    let exporter_view = || {
        let (status, answer) = get(port, "/metrics").expect("the exporter answers");
        assert_eq!(status, 200);
        let node_name = names(&answer, "node_uname_info", "nodename")
            .into_iter()
            .next()
            .expect("node_uname_info");
        let cores = names(&answer, "node_cpu_seconds_total", "cpu");
        let disks = names(&answer, "node_disk_", "device");
        let interfaces = names(&answer, "node_network_receive_bytes_total", "device");
        (node_name, cores, disks, interfaces)
    };
    let node_name = exporter_view().0;

    let dir = tempfile::tempdir().unwrap();
    let tmux = Tmux {
        socket: format!("iopath-live-servers-{}", std::process::id()),
    };
    let args = format!(
        "--engine null --rw randread --bs 4k --qd 4 --null-delay 1ms --duration 60 --ramp 0 \
         --live --server-metrics {}",
        exporter.url
    );
    new_session(dir.path(), &tmux, &args, (160, 60), "");
    let title = format!("server {node_name}");
    let panel_shown = |screen: &str| {
        screen.contains(&title) && screen.contains("  cores ") && screen.contains("hidden")
    };
    tmux.wait_for("the server's panel", Duration::from_secs(60), panel_shown);
    // Other tests on this host add and remove network links (the lab's veths) at any time:
    // the panel is compared with what the exporter answered before and after it was drawn,
    // once those two agree (the dashboard scrapes once a second).
    let mut attempts = 0;
    let (screen, (_, cores, disks, interfaces)) = loop {
        let before = exporter_view();
        std::thread::sleep(Duration::from_millis(2500));
        let screen = tmux.wait_for("the server's panel", Duration::from_secs(60), panel_shown);
        let after = exporter_view();
        attempts += 1;
        if before == after || attempts == 10 {
            break (screen, after);
        }
    };
    let panel: Vec<&str> = screen
        .lines()
        .skip_while(|line| !line.contains(&title))
        .take_while(|line| !line.starts_with('└'))
        .map(|line| line.trim_matches('│').trim_end())
        .collect();
    let text = panel.join("\n");
    // The counts are the exporter's.
    let counts = format!(
        "{}: {} cores, {} disks, {} interfaces",
        exporter.url,
        cores.len(),
        disks.len(),
        interfaces.len()
    );
    assert!(panel[0].contains(&counts), "no '{counts}' in:\n{text}");
    // Every core, disk and interface shown is one the exporter reports; those not shown are
    // counted as hidden.
    let core_line = panel
        .iter()
        .find(|line| line.starts_with("  cores "))
        .unwrap();
    let cores_shown: Vec<&str> = core_line
        .split_whitespace()
        .filter(|word| word.starts_with("cpu"))
        .collect();
    assert!(!cores_shown.is_empty(), "{text}");
    for core in &cores_shown {
        assert!(
            cores.contains(core.trim_start_matches("cpu")),
            "{core}: {text}"
        );
    }
    let shown_of = |word: &str| -> Vec<String> {
        panel
            .iter()
            .filter_map(|line| after(line, &format!("  {word} ")))
            .filter_map(|rest| rest.split_whitespace().next().map(str::to_string))
            .collect()
    };
    let disks_shown = shown_of("disk");
    let interfaces_shown = shown_of("nic  ");
    for disk in &disks_shown {
        assert!(
            disks.contains(disk),
            "disk {disk} is not the exporter's: {text}"
        );
    }
    for interface in &interfaces_shown {
        assert!(
            interfaces.contains(interface),
            "interface {interface} is not the exporter's: {text}"
        );
    }
    let hidden_line = panel.iter().find(|line| line.contains("hidden")).unwrap();
    let hidden = |word: &str| -> usize {
        hidden_line
            .split(", ")
            .filter(|part| part.contains(&format!(" {word}")))
            .filter_map(|part| part.split_whitespace().next()?.parse().ok())
            .next()
            .unwrap_or(0)
    };
    assert_eq!(cores_shown.len() + hidden("core"), cores.len(), "{text}");
    assert_eq!(disks_shown.len() + hidden("disk"), disks.len(), "{text}");
    assert_eq!(
        interfaces_shown.len() + hidden("interface"),
        interfaces.len(),
        "{text}"
    );
    // The busiest core comes first, and the chart of the busiest devices stands beside the
    // client's.
    let percents: Vec<f64> = core_line
        .split('%')
        .filter_map(|part| part.split('▏').next_back()?.trim().parse().ok())
        .collect();
    assert!(
        percents.windows(2).all(|pair| pair[0] >= pair[1]),
        "cores not busiest first: {core_line}"
    );
    assert!(screen.contains("server % busy"), "{screen}");
    assert!(screen.contains(&format!("{node_name} core")), "{screen}");
    tmux.command(&["send-keys", "-t", "live", "q"]);
    assert_eq!(
        status_after(dir.path(), &tmux, Duration::from_secs(20)),
        "130"
    );
}
