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
pub(crate) struct Tmux {
    /// The tmux server's socket name (`tmux -L`).
    pub(crate) socket: String,
}

impl Tmux {
    pub(crate) fn command(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub(crate) fn screen(&self) -> String {
        self.command(&["capture-pane", "-p", "-t", "live"])
    }

    /// Waits until the screen shows what `ready` looks for; panics with the screen after
    /// `timeout`.
    pub(crate) fn wait_for(
        &self,
        what: &str,
        timeout: Duration,
        ready: impl Fn(&str) -> bool,
    ) -> String {
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
    assert_terminal_cooked(dir.path());
}

/// Starts `iopath run ARGS` in a 120x40 tmux pane; the pane's shell then writes the exit
/// status and `stty -a` into `dir`. The shell outlives a Ctrl-C that reaches it too (a second
/// one, once iopath has given the terminal back, goes to the whole foreground group).
fn start_in_tmux(dir: &Path, tmux: &Tmux, args: &str) {
    new_session(dir, tmux, args, (120, 40), "");
}

/// The pane of [`start_in_tmux`] at `(columns, rows)`; iopath starts once `before` (shell
/// commands in `dir`) has run.
pub(crate) fn new_session(
    dir: &Path,
    tmux: &Tmux,
    args: &str,
    (columns, rows): (u16, u16),
    before: &str,
) {
    let script = format!(
        "trap true INT; cd '{}' && {before} '{}' run {args} --no-history --json out.json; \
         echo $? > status; stty -a > stty.txt; sleep 600",
        dir.display(),
        env!("CARGO_BIN_EXE_iopath")
    );
    let (columns, rows) = (columns.to_string(), rows.to_string());
    tmux.command(&[
        "new-session",
        "-d",
        "-s",
        "live",
        "-x",
        &columns,
        "-y",
        &rows,
        "sh",
        "-c",
        &script,
    ]);
}

/// Starts `iopath run ARGS` as [`start_in_tmux`] does, in a pane of `columns` x `rows`,
/// everything the pane shows logged to `dir/pane.log` from the start (iopath waits for the
/// log to be set up).
fn start_logged_in_tmux(dir: &Path, tmux: &Tmux, args: &str, columns: u16, rows: u16) {
    let gate = "while [ ! -e go ]; do sleep 0.05; done;";
    new_session(dir, tmux, args, (columns, rows), gate);
    let log = dir.join("pane.log");
    tmux.command(&[
        "pipe-pane",
        "-o",
        "-t",
        "live",
        &format!("cat >> '{}'", log.display()),
    ]);
    std::fs::write(dir.join("go"), "").unwrap();
}

/// Waits until `dir/pane.log` holds `text` after the last `after` (anywhere when `after` is
/// empty); panics with the log after `timeout`.
fn wait_in_log(dir: &Path, after: &str, text: &str, timeout: Duration) -> String {
    let started = Instant::now();
    loop {
        let log = read(&dir.join("pane.log")).unwrap_or_default();
        let tail = match after {
            "" => Some(log.as_str()),
            _ => log.rsplit_once(after).map(|(_, tail)| tail),
        };
        if tail.is_some_and(|tail| tail.contains(text)) {
            return log;
        }
        assert!(
            started.elapsed() < timeout,
            "no '{text}' after '{after}' in the pane's log:\n{log}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The pane's shell found the terminal cooked again (`stty -a` after iopath ended).
fn assert_terminal_cooked(dir: &Path) {
    let stty = read(&dir.join("stty.txt")).unwrap();
    assert!(
        stty.contains(" icanon") && stty.contains(" echo "),
        "{stty}"
    );
}

/// The exit status the pane's shell wrote, once it has.
pub(crate) fn status_after(dir: &Path, tmux: &Tmux, timeout: Duration) -> String {
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
    assert_terminal_cooked(dir.path());
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
    assert_terminal_cooked(dir.path());
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

/// A terminal too small for the dashboard — 1x1 from the start, or made so by a resize while
/// it shows — gets one line saying so on stderr, then the progress line for the rest of the
/// run; Ctrl-C still stops it and the terminal is cooked again.
#[test]
fn a_terminal_too_small_for_the_dashboard_says_so_and_shows_the_progress_line() {
    skip_unless!(
        has_command("tmux"),
        "tmux is not installed (apt-get install tmux)"
    );
    let args = "--engine null --rw randread --bs 4k --qd 4 --null-delay 1ms --duration 30 \
                --ramp 0 --live";
    let dir = tempfile::tempdir().unwrap();
    let tmux = Tmux {
        socket: format!("iopath-live-small-{}", std::process::id()),
    };
    start_logged_in_tmux(dir.path(), &tmux, args, 1, 1);
    wait_in_log(
        dir.path(),
        "",
        "the dashboard cannot use this terminal (the terminal is 1x1, smaller than the 60x18 it \
         needs): showing the progress line",
        Duration::from_secs(60),
    );
    let log = wait_in_log(
        dir.path(),
        "showing the progress line",
        " s / 30 s",
        Duration::from_secs(30),
    );
    assert!(
        !log.contains("\u{1b}[?1049h"),
        "the dashboard opened:\n{log}"
    );
    tmux.command(&["send-keys", "-t", "live", "C-c"]);
    assert_eq!(
        status_after(dir.path(), &tmux, Duration::from_secs(20)),
        "130"
    );
    drop(tmux);

    // Made too small while it shows: the dashboard gives the terminal back and says why.
    let dir = tempfile::tempdir().unwrap();
    let tmux = Tmux {
        socket: format!("iopath-live-shrunk-{}", std::process::id()),
    };
    start_logged_in_tmux(dir.path(), &tmux, args, 120, 40);
    tmux.wait_for("the dashboard", Duration::from_secs(60), |s| {
        s.contains("CPU per core")
    });
    tmux.command(&["resize-window", "-t", "live", "-x", "30", "-y", "8"]);
    wait_in_log(
        dir.path(),
        "",
        "note: the dashboard closed (the terminal is 30x8, smaller than the 60x18 it needs): \
         showing the progress line; Ctrl-C stops the run",
        Duration::from_secs(20),
    );
    wait_in_log(
        dir.path(),
        "Ctrl-C stops the run",
        " s / 30 s",
        Duration::from_secs(20),
    );
    tmux.command(&["send-keys", "-t", "live", "C-c"]);
    assert_eq!(
        status_after(dir.path(), &tmux, Duration::from_secs(20)),
        "130"
    );
    assert_terminal_cooked(dir.path());
    let result: serde_json::Value =
        serde_json::from_str(&read(&dir.path().join("out.json")).unwrap()).unwrap();
    assert_eq!(result["partial"], true);
}

/// A terminal that never answers the cursor-position query (a bare pty, read by a program
/// that answers nothing): the dashboard asks none, shows the run, and q stops it.
#[test]
fn the_dashboard_works_on_a_terminal_that_never_answers_a_cursor_query() {
    skip_unless!(
        has_command("python3"),
        "python3 is not installed (apt-get install python3)"
    );
    let dir = tempfile::tempdir().unwrap();
    let harness = dir.path().join("silent_terminal.py");
    std::fs::write(&harness, SILENT_PTY).unwrap();
    let output = Command::new("python3")
        .arg(&harness)
        .arg(dir.path().join("screen.log"))
        .arg(env!("CARGO_BIN_EXE_iopath"))
        .args(
            "run --engine null --rw randread --bs 4k --qd 4 --null-delay 1ms --duration 30 \
             --ramp 0 --live --no-history --json"
                .split_whitespace(),
        )
        .arg(dir.path().join("out.json"))
        .current_dir(dir.path())
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&std::fs::read(dir.path().join("screen.log")).unwrap())
        .into_owned();
    let said = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        said.trim(),
        "exit 130",
        "{said}\n{}\n{screen}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!screen.contains("\u{1b}[6n"), "a cursor query:\n{screen}");
    assert!(screen.contains("CPU per core"), "{screen}");
    assert!(!screen.contains("dashboard closed"), "{screen}");
    let result: serde_json::Value =
        serde_json::from_str(&read(&dir.path().join("out.json")).unwrap()).unwrap();
    assert_eq!(result["tests"][0]["stop_reason"], "interrupted");
}

/// Runs ARGS (after the log's path) on a new 120x40 pty whose output goes to the log and is
/// never answered; sends q once the dashboard shows (at most 60 s), prints `exit STATUS`.
const SILENT_PTY: &str = r#"
import fcntl, os, pty, select, signal, struct, sys, termios, time
log_path, argv = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    os.execv(argv[0], argv)
screen = b""
sent = False
deadline = time.monotonic() + 90
while time.monotonic() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.2)
    if ready:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        screen += data
    if not sent and b"CPU per core" in screen:
        os.write(fd, b"q")
        sent = True
    if not sent and time.monotonic() > deadline - 30:
        os.kill(pid, signal.SIGKILL)
        break
open(log_path, "wb").write(screen)
_, status = os.waitpid(pid, 0)
print("exit", os.waitstatus_to_exitcode(status))
"#;
