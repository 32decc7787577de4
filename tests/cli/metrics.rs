//! `--metrics`: a real Prometheus server scrapes a run every second; what it stored, queried
//! through its HTTP API, matches the run's own result: each test's counters at its end (their
//! increase over the test) and at every scrape while it ran (against the result's per-second
//! series up to the same elapsed time), within 5 %. Beyond loopback the endpoint needs a
//! bearer token file, which the same Prometheus sends with `authorization: credentials_file:`;
//! idle connections do not delay a scrape; control characters in labels are escaped.

use crate::common::*;
use crate::support::devices::has_command;
use crate::support::process::free_port;
use crate::support::skip_unless;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `GET path` on 127.0.0.1:port: the status code and the body.
pub(crate) fn get(port: u16, path: &str) -> Option<(u16, String)> {
    get_with(port, path, "")
}

/// `GET path` on 127.0.0.1:port with `headers` (each ending with CRLF): the status code and
/// the body.
fn get_with(port: u16, path: &str, headers: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Connection: close\r\n\r\n"
    )
    .ok()?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).ok()?;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer.split(' ').nth(1)?.parse().ok()?;
    let (head, body) = answer.split_once("\r\n\r\n")?;
    // Chunked answers: join the chunks.
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        let mut joined = String::new();
        let mut rest = body;
        while let Some((size, after)) = rest.split_once("\r\n") {
            let size = usize::from_str_radix(size.trim(), 16).ok()?;
            if size == 0 {
                break;
            }
            joined.push_str(after.get(..size)?);
            rest = after.get(size + 2..)?;
        }
        return Some((status, joined));
    }
    Some((status, body.to_string()))
}

/// Percent-encodes a query parameter.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A Prometheus server on a loopback port with its own storage, stopped when dropped.
struct Prometheus {
    child: Child,
    port: u16,
}

impl Prometheus {
    fn start(dir: &Path, scraped_port: u16) -> Prometheus {
        Prometheus::with_jobs(dir, &scrape_job("iopath", scraped_port, ""))
    }

    /// A Prometheus scraping every second with `jobs` (the items of `scrape_configs:`).
    fn with_jobs(dir: &Path, jobs: &str) -> Prometheus {
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n{jobs}"
            ),
        )
        .unwrap();
        let port = free_port();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus starts");
        let prometheus = Prometheus { child, port };
        let started = Instant::now();
        while get(port, "/-/ready").is_none_or(|(status, _)| status != 200) {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "prometheus never got ready"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        prometheus
    }

    /// The `data.result` of an instant query.
    fn query(&self, query: &str) -> Vec<Value> {
        let (status, body) = get(self.port, &format!("/api/v1/query?query={}", encode(query)))
            .expect("prometheus answers");
        assert_eq!(status, 200, "{query}: {body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        answer["data"]["result"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

/// One item of `scrape_configs:`: job `name` scraping 127.0.0.1:`port`, with `extra` (indented
/// YAML lines) added.
fn scrape_job(name: &str, port: u16, extra: &str) -> String {
    format!(
        "  - job_name: {name}\n{extra}    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
    )
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The raw samples of a range-vector result: (seconds, value).
fn samples(series: &Value) -> Vec<(f64, f64)> {
    series["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| {
            (
                pair[0].as_f64().unwrap(),
                pair[1].as_str().unwrap().parse().unwrap(),
            )
        })
        .collect()
}

fn within(measured: f64, expected: f64, share: f64) -> bool {
    (measured - expected).abs() <= share * expected
}

#[test]
fn prometheus_scrapes_counters_that_match_the_result() {
    skip_unless!(
        has_command("prometheus"),
        "prometheus is not installed (apt-get install prometheus)"
    );
    let dir = tempfile::tempdir().unwrap();
    let metrics_port = free_port();
    let prometheus = Prometheus::start(dir.path(), metrics_port);
    // Its first scrape comes a few seconds after it is ready: wait for it (the target is down).
    let started = Instant::now();
    while prometheus.query("up{job=\"iopath\"}").is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "prometheus never scraped"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // Two sweep points, each long enough for several scrapes; 1 ms per I/O keeps the rates
    // steady whatever the machine.
    let run = run_in(
        dir.path(),
        &[
            "--engine",
            "null",
            "--rw",
            "randrw",
            "--read-pct",
            "50",
            "--bs",
            "4k",
            "--null-delay",
            "1ms",
            "--sweep",
            "qd=2,4,1",
            "--duration",
            "6",
            // Per-second points, which the scrapes are checked against (a run under 10 s
            // would otherwise be sampled every 250 ms).
            "--interval",
            "1s",
            "--ramp",
            "0",
            "--no-live",
            "--metrics",
            &metrics_port.to_string(),
        ],
    );
    run.expect_status(0);
    assert!(
        run.stderr.contains(&format!(
            "metrics on http://127.0.0.1:{metrics_port}/metrics"
        )),
        "{}",
        run.stderr
    );
    let result = run.json();
    let tests = result["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 3);
    // What Prometheus stored of the test's elapsed time, by scrape time.
    let elapsed: Vec<(f64, f64)> = samples(&prometheus.query("iopath_test_elapsed_seconds[5m]")[0]);
    // The last test is the tail that lets the others be scraped after their end.
    for (index, test) in tests.iter().enumerate().take(2) {
        let name = test["name"].as_str().unwrap();
        let running: Vec<f64> =
            samples(&prometheus.query(&format!("iopath_test_info{{test=\"{name}\"}}[5m]"))[0])
                .iter()
                .map(|(at, _)| *at)
                .collect();
        assert!(
            running.len() >= 4,
            "{name} scraped {} times while it ran",
            running.len()
        );
        for direction in ["read", "write"] {
            let selector = format!("test=\"{name}\",direction=\"{direction}\"");
            for (metric, field) in [
                ("iopath_ios_total", "io_count"),
                ("iopath_bytes_total", "bytes"),
            ] {
                let total = test[direction][field].as_f64().unwrap();
                // The increase over the whole test (the counter starts at 0 with it), read
                // once the test had ended.
                let at_end =
                    prometheus.query(&format!("max_over_time({metric}{{{selector}}}[5m])"));
                let at_end: f64 = at_end[0]["value"][1].as_str().unwrap().parse().unwrap();
                eprintln!("{metric} {selector}: {at_end} at the end, {total} in the result");
                assert!(
                    within(at_end, total, 0.05),
                    "{metric} {selector}: {at_end} at the end, {total} in the result"
                );
                // Every scrape while it ran: the counter against the result's per-second
                // series up to the same elapsed time (the same sample gave both figures).
                let series = test[direction]["series"].as_array().unwrap();
                let stored = prometheus.query(&format!("{metric}{{{selector}}}[5m]"));
                let mut compared = 0;
                for (at, value) in samples(&stored[0]) {
                    let Some((_, seconds)) = elapsed.iter().find(|(t, _)| *t == at) else {
                        continue;
                    };
                    if !running.contains(&at) || *seconds < 2.0 {
                        continue;
                    }
                    // The whole seconds before it, and the share of the next one.
                    let whole = seconds.floor() as usize;
                    let of_point = |index: usize| {
                        series
                            .get(index)
                            .map_or(0.0, |point: &Value| point[field].as_f64().unwrap())
                    };
                    let expected: f64 = (0..whole).map(of_point).sum::<f64>()
                        + (seconds - whole as f64) * of_point(whole);
                    assert!(
                        within(value, expected, 0.05),
                        "{metric} {selector} at {seconds} s: {value}, {expected} in the result's series"
                    );
                    compared += 1;
                }
                assert!(
                    compared >= 2,
                    "{metric} {selector}: {compared} scrapes compared"
                );
            }
            // The latency histogram puts the median in the bucket of the result's median.
            let median = prometheus.query(&format!(
                "histogram_quantile(0.5, max_over_time(iopath_latency_seconds_bucket{{{selector}}}[5m]))"
            ));
            let median: f64 = median[0]["value"][1].as_str().unwrap().parse().unwrap();
            let expected = f64_at(test, &[direction, "latency", "percentiles_ns", "50"]) / 1e9;
            assert!(
                median > expected / 2.0 && median < expected * 2.0,
                "median {median} s against {expected} s"
            );
        }
        // The sweep point was named while it ran.
        let info = prometheus.query(&format!(
            "max_over_time(iopath_test_info{{test=\"{name}\"}}[5m])"
        ));
        assert_eq!(
            info[0]["metric"]["sweep"].as_str().unwrap(),
            ["qd=2", "qd=4"][index]
        );
    }
    // The first test's verdict was served while the second ran.
    let first = tests[0]["name"].as_str().unwrap();
    let verdict = prometheus.query(&format!(
        "max_over_time(iopath_verdict_info{{test=\"{first}\"}}[5m])"
    ));
    assert_eq!(verdict.len(), 1, "{verdict:?}");
    let served = verdict[0]["metric"]["verdict"].as_str().unwrap();
    assert_eq!(
        served.to_lowercase().replace('-', "_"),
        tests[0]["analysis"]["verdict"].as_str().unwrap()
    );
}

#[test]
fn a_bad_metrics_address_is_refused_before_any_io() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_in(
        dir.path(),
        &[
            "--engine",
            "null",
            "--duration",
            "1",
            "--metrics",
            "nowhere",
        ],
    );
    run.expect_status(2);
    assert!(run.stderr.contains("--metrics 'nowhere'"), "{}", run.stderr);
    // A port already taken.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let run = run_in(
        dir.path(),
        &["--engine", "null", "--rw", "read", "--metrics", &port],
    );
    run.expect_status(2);
    assert!(run.stderr.contains("cannot listen there"), "{}", run.stderr);
    assert!(run.json.is_none());
}

/// A run of the null engine serving its metrics on `port` (`--metrics ADDR`) for up to two
/// minutes, stopped when dropped.
struct Serving {
    child: Child,
}

impl Serving {
    /// Starts `iopath run` with `args` after the workload, and waits until `port` answers.
    fn start(dir: &Path, port: u16, args: &[&str]) -> Serving {
        let mut all: Vec<&str> = vec![
            "run",
            "--engine",
            "null",
            "--rw",
            "read",
            "--null-delay",
            "1ms",
            "--duration",
            "120",
            "--ramp",
            "0",
            "--no-live",
        ];
        all.extend_from_slice(args);
        let all: Vec<&std::ffi::OsStr> = all.iter().map(std::ffi::OsStr::new).collect();
        let serving = Serving {
            child: spawn_in(dir, &all),
        };
        let started = Instant::now();
        while get(port, "/").is_none() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the metrics endpoint never answered"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        serving
    }
}

/// The first scrape of `port` whose body holds `needle`, tried every 100 ms for up to a minute
/// (the last scrape when none did).
fn scrape_until(port: u16, needle: &str) -> (u16, String) {
    let started = Instant::now();
    loop {
        let scraped = get(port, "/metrics").expect("the scrape is answered");
        if scraped.1.contains(needle) || started.elapsed() > Duration::from_secs(60) {
            return scraped;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Longest time the server gives one connection to send its request: before the endpoint
/// answered connections at the same time, each idle one held every scrape this long.
const ONE_CONNECTION_TIMEOUT: Duration = Duration::from_secs(2);

#[test]
fn timing_idle_connections_do_not_delay_a_scrape() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let _serving = Serving::start(dir.path(), port, &["--metrics", &port.to_string()]);
    for idle_count in [10, 100] {
        let mut idle: Vec<TcpStream> = (0..idle_count)
            .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
            .collect();
        // And a slow one that sent half a request.
        idle[0].write_all(b"GET /metrics HTTP/1.1\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let started = Instant::now();
        let (status, body) = get(port, "/metrics").expect("the scrape is answered");
        let took = started.elapsed();
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("iopath_tests_planned 1"), "{body}");
        assert!(
            took < ONE_CONNECTION_TIMEOUT,
            "a scrape behind {idle_count} idle connections took {took:?}, as long as one idle \
             connection may last"
        );
    }
}

#[test]
fn control_characters_in_labels_are_escaped_in_the_exposition() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let name = "a\u{1b}]0;title\u{7}b\u{1b}[2J\u{202e}c\rd";
    let _serving = Serving::start(
        dir.path(),
        port,
        &["--name", name, "--metrics", &port.to_string()],
    );
    // The endpoint answers before the test starts; its name is there once it has.
    let (status, body) = scrape_until(port, "iopath_tests_started 1");
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains(
            r#"iopath_test_info{test="a\\u{1b}]0;title\\u{7}b\\u{1b}[2J\\u{202e}c\\rd",sweep=""} 1"#
        ),
        "{body}"
    );
    assert!(
        !body
            .chars()
            .any(|c| c != '\n' && iopath::text::escape::needs_escape(c)),
        "{body:?}"
    );
}

#[test]
fn metrics_beyond_loopback_without_a_good_token_file_are_refused_before_any_io() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("made.bin");
    let target_arg = target.to_str().unwrap();
    let workload = [target_arg, "--size", "1m", "--rw", "read", "--bytes", "64k"];
    let refused = |extra: &[&str], expected: &str| {
        let mut args = workload.to_vec();
        args.extend_from_slice(extra);
        let run = run_in(dir.path(), &args);
        run.expect_status(2);
        assert!(run.stderr.contains(expected), "{}", run.stderr);
        assert!(
            !target.exists(),
            "no I/O: {} was not created",
            target.display()
        );
        assert!(run.json.is_none());
    };
    for address in ["0.0.0.0:0", "[::]:0"] {
        refused(
            &["--metrics", address],
            "--metrics-token-file FILE (a bearer token",
        );
    }
    let token = dir.path().join("token");
    std::fs::write(&token, "a token of twenty-four b\n").unwrap();
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o644)).unwrap();
    let token_arg = token.to_str().unwrap();
    refused(
        &["--metrics", "0.0.0.0:0", "--metrics-token-file", token_arg],
        "too open",
    );
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(&token, "short\n").unwrap();
    refused(
        &["--metrics", "0.0.0.0:0", "--metrics-token-file", token_arg],
        "the secret has 5 bytes",
    );
    let absent = dir.path().join("absent");
    refused(
        &[
            "--metrics",
            "127.0.0.1:0",
            "--metrics-token-file",
            absent.to_str().unwrap(),
        ],
        "--metrics-token-file",
    );
}

#[test]
fn prometheus_with_the_token_file_scrapes_beyond_loopback_and_without_it_gets_401() {
    skip_unless!(
        has_command("prometheus"),
        "prometheus is not installed (apt-get install prometheus)"
    );
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("metrics.token");
    let token_text = format!("iopath-test-{}-{}", std::process::id(), free_port());
    std::fs::write(&token, format!("{token_text}\n")).unwrap();
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    let port = free_port();
    // Every address, reached here through 127.0.0.1.
    let _serving = Serving::start(
        dir.path(),
        port,
        &[
            "--name",
            "read\u{1b}[2J",
            "--metrics",
            &format!("0.0.0.0:{port}"),
            "--metrics-token-file",
            token.to_str().unwrap(),
        ],
    );
    let authorization = |token: &str| format!("Authorization: Bearer {token}\r\n");
    let (status, body) = get_with(port, "/metrics", &authorization(&token_text)).unwrap();
    assert_eq!(status, 200, "{body}");
    for refused in [
        "",
        &authorization("iopath-test-wrong"),
        "Authorization: Basic eDp5\r\n",
    ] {
        let (status, body) = get_with(port, "/metrics", refused).unwrap();
        assert_eq!(status, 401, "{refused}: {body}");
        assert!(!body.contains("iopath_"), "{body}");
    }
    let credentials = format!(
        "    authorization:\n      credentials_file: {}\n",
        token.display()
    );
    let prometheus = Prometheus::with_jobs(
        dir.path(),
        &(scrape_job("with_token", port, &credentials) + &scrape_job("without_token", port, "")),
    );
    let started = Instant::now();
    let up = |job: &str| -> Option<f64> {
        let result = prometheus.query(&format!("up{{job=\"{job}\"}}"));
        result.first()?["value"][1].as_str()?.parse().ok()
    };
    while up("with_token").is_none() || up("without_token").is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "prometheus never scraped"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(up("with_token"), Some(1.0));
    assert_eq!(up("without_token"), Some(0.0));
    let planned = prometheus.query("iopath_tests_planned{job=\"with_token\"}");
    assert_eq!(planned.len(), 1, "{planned:?}");
    assert!(
        prometheus
            .query("iopath_tests_planned{job=\"without_token\"}")
            .is_empty()
    );
    // The control character in the test's name was stored as visible text.
    let running = prometheus.query("iopath_test_info{job=\"with_token\"}");
    assert_eq!(
        running[0]["metric"]["test"].as_str(),
        Some("read\\u{1b}[2J"),
        "{running:?}"
    );
}
