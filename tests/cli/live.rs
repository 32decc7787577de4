//! `--live`: the dashboard, tested for real in a tmux pane (keys sent with send-keys, the
//! screen read with capture-pane), including a resize, a pause and q; and what happens
//! without a terminal.

use crate::common::*;
use crate::support::devices::has_command;
use crate::support::skip_unless;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of its own (its own socket), killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn command(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.command(&["capture-pane", "-p", "-t", "live"])
    }

    /// Waits until the screen shows what `ready` looks for; panics with the screen after
    /// `timeout`.
    fn wait_for(&self, what: &str, timeout: Duration, ready: impl Fn(&str) -> bool) -> String {
        let started = Instant::now();
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return screen;
            }
            assert!(started.elapsed() < timeout, "{what} never came:\n{screen}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.command(&["kill-server"]);
    }
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

#[test]
fn the_dashboard_shows_the_run_follows_a_resize_pauses_and_q_keeps_the_result() {
    skip_unless!(
        has_command("tmux"),
        "tmux is not installed (apt-get install tmux)"
    );
    let dir = tempfile::tempdir().unwrap();
    let tmux = Tmux {
        socket: format!("iopath-live-{}", std::process::id()),
    };
    // 1 ms per I/O at QD 4: a light load, 30 s planned (long enough to do everything).
    start_in_tmux(
        dir.path(),
        &tmux,
        "--engine null --rw randread --bs 4k --qd 4 --null-delay 1ms --duration 30 --ramp 0",
    );
    // No --live: a 30 s run on a terminal gets the dashboard unasked.
    let screen = tmux.wait_for("the first figures", Duration::from_secs(60), |screen| {
        screen.contains("per job and target, last second")
            && screen.contains(" read ")
            && screen.contains("cpu0")
    });
    for expected in [
        "test 1 of 1",
        "MB/s",
        "IOPS",
        "p50",
        "p99",
        "suite",
        "CPU per core",
        "cpu0",
        "path: hops",
    ] {
        assert!(screen.contains(expected), "no '{expected}' on:\n{screen}");
    }
    // A resize redraws at the new size: the bottom border ends at the new width.
    tmux.command(&["resize-window", "-t", "live", "-x", "90", "-y", "30"]);
    tmux.wait_for(
        "a redraw at 90 columns",
        Duration::from_secs(10),
        |screen| {
            screen.lines().any(|line| {
                // Drawn anew: a box closed at the new right edge (the old frame, cut by
                // the resize, has no corner there).
                line.starts_with('└')
                    && line.trim_end().ends_with('┘')
                    && line.trim_end().chars().count() == 90
            }) && screen.contains("CPU per core")
        },
    );
    // p pauses the display (the run goes on), p again resumes it.
    tmux.command(&["send-keys", "-t", "live", "p"]);
    tmux.wait_for("the pause", Duration::from_secs(10), |s| {
        s.contains("PAUSED")
    });
    tmux.command(&["send-keys", "-t", "live", "p"]);
    tmux.wait_for("the end of the pause", Duration::from_secs(10), |s| {
        !s.contains("PAUSED")
    });
    // q stops the run as Ctrl-C does and keeps what was measured.
    tmux.command(&["send-keys", "-t", "live", "q"]);
    let status = status_after(dir.path(), &tmux, Duration::from_secs(10));
    assert_eq!(status, "130");
    let result: serde_json::Value =
        serde_json::from_str(&read(&dir.path().join("out.json")).unwrap()).unwrap();
    assert_eq!(result["partial"], true);
    assert_eq!(result["tests"][0]["stop_reason"], "interrupted");
    assert!(u64_at(&result, &["tests", "0", "read", "io_count"]) > 0);
    // The terminal is back: the normal screen shows the table, and the line discipline is
    // cooked again.
    let screen = tmux.wait_for("the result", Duration::from_secs(10), |s| {
        s.contains("interrupted: 1 test(s) kept")
    });
    assert!(!screen.contains("per job and target"), "{screen}");
    let stty = read(&dir.path().join("stty.txt")).unwrap();
    assert!(
        stty.contains(" icanon") && stty.contains(" echo "),
        "{stty}"
    );
}

/// Starts `iopath run ARGS` in a tmux pane; the pane's shell then writes the exit status
/// and `stty -a` into `dir`. The shell outlives a Ctrl-C that reaches it too (a second one,
/// once iopath has given the terminal back, goes to the whole foreground group).
fn start_in_tmux(dir: &Path, tmux: &Tmux, args: &str) {
    let script = format!(
        "trap true INT; cd '{}' && '{}' run {args} --no-history --json out.json; \
         echo $? > status; stty -a > stty.txt; sleep 600",
        dir.display(),
        env!("CARGO_BIN_EXE_iopath")
    );
    tmux.command(&[
        "new-session",
        "-d",
        "-s",
        "live",
        "-x",
        "120",
        "-y",
        "40",
        "sh",
        "-c",
        &script,
    ]);
}

/// The exit status the pane's shell wrote, once it has.
fn status_after(dir: &Path, tmux: &Tmux, timeout: Duration) -> String {
    let started = Instant::now();
    loop {
        if let Some(status) = read(&dir.join("status")).filter(|s| s.ends_with('\n')) {
            return status.trim().to_string();
        }
        assert!(
            started.elapsed() < timeout,
            "the run did not end:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn timing_ctrl_c_and_sigterm_in_the_dashboard_give_the_terminal_back() {
    skip_unless!(
        has_command("tmux"),
        "tmux is not installed (apt-get install tmux)"
    );
    // Ctrl-C (a key in raw mode, passed on as the signal) twice: the run ends at once.
    let dir = tempfile::tempdir().unwrap();
    let tmux = Tmux {
        socket: format!("iopath-live-c-{}", std::process::id()),
    };
    let args = "--live --engine null --rw randread --null-delay 1ms --duration 30 --ramp 0";
    start_in_tmux(dir.path(), &tmux, args);
    tmux.wait_for("the dashboard", Duration::from_secs(60), |s| {
        s.contains("CPU per core")
    });
    tmux.command(&["send-keys", "-t", "live", "C-c"]);
    tmux.command(&["send-keys", "-t", "live", "C-c"]);
    assert_eq!(
        status_after(dir.path(), &tmux, Duration::from_secs(10)),
        "130"
    );
    let stty = read(&dir.path().join("stty.txt")).unwrap();
    assert!(
        stty.contains(" icanon") && stty.contains(" echo "),
        "{stty}"
    );
    let screen = tmux.screen();
    assert!(!screen.contains("CPU per core"), "{screen}");
    drop(tmux);

    // SIGTERM (as from `timeout` or `kill`): the run stops, keeps its result, and the
    // terminal is back.
    let dir = tempfile::tempdir().unwrap();
    let tmux = Tmux {
        socket: format!("iopath-live-t-{}", std::process::id()),
    };
    start_in_tmux(dir.path(), &tmux, args);
    tmux.wait_for("the dashboard", Duration::from_secs(60), |s| {
        s.contains("CPU per core")
    });
    let pid = tmux
        .command(&["list-panes", "-t", "live", "-F", "#{pane_pid}"])
        .trim()
        .to_string();
    // The pane runs sh; iopath is its child.
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap();
    let iopath = children.split_whitespace().next().expect("iopath runs");
    Command::new("kill")
        .args(["-TERM", iopath])
        .status()
        .unwrap();
    assert_eq!(
        status_after(dir.path(), &tmux, Duration::from_secs(10)),
        "130"
    );
    let result: serde_json::Value =
        serde_json::from_str(&read(&dir.path().join("out.json")).unwrap()).unwrap();
    assert_eq!(result["partial"], true);
    let stty = read(&dir.path().join("stty.txt")).unwrap();
    assert!(
        stty.contains(" icanon") && stty.contains(" echo "),
        "{stty}"
    );
}

#[test]
fn without_a_terminal_live_says_so_and_draws_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_in(
        dir.path(),
        &[
            "--engine",
            "null",
            "--rw",
            "randread",
            "--duration",
            "1",
            "--ramp",
            "0",
            "--live",
            "--no-history",
        ],
    );
    run.expect_status(0);
    assert!(
        run.stderr
            .contains("--live needs stdout and stderr on a terminal"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains('\u{1b}'), "{:?}", run.stderr);
    // --live and --no-live contradict each other.
    let run = run_in(dir.path(), &["--engine", "null", "--live", "--no-live"]);
    run.expect_status(2);
}

/// A verifying run shows, under the figures, the blocks its checks have covered and the bad
/// ones: a clean file reads `0 bad` as the counts grow.
#[test]
fn the_dashboard_shows_what_verification_has_checked() {
    skip_unless!(
        has_command("tmux"),
        "tmux is not installed (apt-get install tmux)"
    );
    let dir = tempfile::tempdir().unwrap();
    let tmux = Tmux {
        socket: format!("iopath-live-verify-{}", std::process::id()),
    };
    start_in_tmux(
        dir.path(),
        &tmux,
        "data.bin --size 4m --rw randrw --bs 4k --qd 4 --rate-iops 2000 --verify crc32c \
         --duration 30 --ramp 0 --live",
    );
    let screen = tmux.wait_for("the checks", Duration::from_secs(60), |screen| {
        screen.contains("verify ") && screen.contains("blocks checked, 0 bad")
    });
    let line = screen
        .lines()
        .find(|line| line.contains("blocks checked"))
        .unwrap();
    assert!(line.contains("data.bin"), "{line}");
    tmux.command(&["send-keys", "-t", "live", "q"]);
    assert_eq!(
        status_after(dir.path(), &tmux, Duration::from_secs(20)),
        "130"
    );
}
