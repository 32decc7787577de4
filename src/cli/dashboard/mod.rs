//! `iopath run --live`: a full-screen dashboard on the terminal while the run goes on.
//!
//! The dashboard runs on a thread of its own. It receives the run's events (the same
//! once-a-second [`LiveSample`] the progress line reads, test starts and ends) over a
//! channel, so the coordinator never waits for it and no worker ever sees it; once a second it
//! reads the machine's counters (hops, cores) through discovery, and it reads the keyboard:
//! `q` stops the run as a first Ctrl-C does (the result so far is kept), `p` pauses the
//! display (never the I/O), Ctrl-C is passed on as the signal it would have been without raw
//! mode (so that a second one still ends the run at once).
//!
//! The terminal is restored whatever happens: when the dashboard closes (the run ended, was
//! stopped or failed), on a panic (a hook restores it before the panic message), and before
//! a second signal ends the process ([`restore_terminal`]).
//!
//! The dashboard never asks the terminal anything (no cursor-position query: a terminal that
//! does not answer one would stall it). A terminal smaller than [`MIN_COLUMNS`] x
//! [`MIN_ROWS`] — at the start or after a resize — or one that fails a write closes the
//! dashboard early; [`Dashboard::closed_early`] then says why, and the caller falls back to the
//! progress line.

pub mod marks;
pub mod server_view;
pub mod servers;
pub mod state;
pub mod view;

use iopath::discovery::HostView;
use iopath::discovery::counters::hop_counters;
use iopath::engine::StopSignal;
use iopath::host::cpu::CpuSnapshot;
use iopath::observe::sampler::LiveScrape;
use iopath::result::StoragePath;
use iopath::run::progress::LiveSample;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{
    self, Event as TerminalEvent, KeyCode, KeyEventKind, KeyModifiers,
};
use ratatui::crossterm::terminal::{
    Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::crossterm::{cursor, execute};
use state::{DashboardState, PlannedTest};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::sync::{Arc, Mutex, Once};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Whether the terminal is in the dashboard's mode (raw, alternate screen).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Puts the terminal back as it was, if the dashboard had changed it (idempotent; safe from
/// any thread, and before the process ends).
pub fn restore_terminal() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = disable_raw_mode();
        let _ = execute!(std::io::stderr(), LeaveAlternateScreen, cursor::Show);
    }
}

/// Installs (once) a panic hook that restores the terminal before the panic is reported.
fn restore_on_panic() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore_terminal();
            previous(info);
        }));
    });
}

/// What the run tells the dashboard.
pub enum Event {
    /// The paths of the run's targets.
    Paths(Vec<StoragePath>),
    /// A test starts.
    TestStarting(String),
    /// A live sample.
    Sample(LiveSample),
    /// The test running ended.
    TestFinished,
    /// A message (shown on the screen, and printed once it closes).
    Note(String),
}

/// Fewest columns the dashboard is drawn in.
pub const MIN_COLUMNS: u16 = 60;
/// Fewest rows the dashboard is drawn in.
pub const MIN_ROWS: u16 = 18;

/// Why a terminal of `columns` x `rows` is too small for the dashboard (`None`: it fits).
fn too_small(columns: u16, rows: u16) -> Option<String> {
    (columns < MIN_COLUMNS || rows < MIN_ROWS).then(|| {
        format!(
            "the terminal is {columns}x{rows}, smaller than the {MIN_COLUMNS}x{MIN_ROWS} it needs"
        )
    })
}

/// The dashboard while it is open.
pub struct Dashboard {
    sender: Option<Sender<Event>>,
    thread: Option<JoinHandle<()>>,
    /// Why the dashboard closed before it was asked to (set by its thread).
    closed_early: Arc<Mutex<Option<String>>>,
}

impl Dashboard {
    /// Takes over the terminal (stderr) and starts drawing. `stop` is raised by `q`;
    /// `scrapes` brings the servers' and switches' counters as they are read. A terminal too
    /// small for the dashboard is refused, saying its size.
    pub fn open(
        plan: Vec<PlannedTest>,
        stop: StopSignal,
        scrapes: Option<Receiver<LiveScrape>>,
    ) -> std::io::Result<Self> {
        let (columns, rows) = ratatui::crossterm::terminal::size()?;
        if let Some(reason) = too_small(columns, rows) {
            return Err(std::io::Error::other(reason));
        }
        restore_on_panic();
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        if let Err(error) = execute!(std::io::stderr(), EnterAlternateScreen, cursor::Hide) {
            restore_terminal();
            return Err(error);
        }
        let (sender, receiver) = channel();
        let closed_early = Arc::new(Mutex::new(None));
        let reason = Arc::clone(&closed_early);
        let thread = std::thread::Builder::new()
            .name("iopath-dashboard".into())
            .spawn(move || {
                let ended = run(
                    DashboardState::new(plan),
                    &receiver,
                    scrapes.as_ref(),
                    &stop,
                );
                restore_terminal();
                if let Err(why) = ended
                    && let Ok(mut slot) = reason.lock()
                {
                    *slot = Some(why);
                }
            });
        match thread {
            Ok(thread) => Ok(Dashboard {
                sender: Some(sender),
                thread: Some(thread),
                closed_early,
            }),
            Err(error) => {
                restore_terminal();
                Err(error)
            }
        }
    }

    /// Passes `event` on (dropped when the dashboard has gone).
    pub fn send(&self, event: Event) {
        if let Some(sender) = &self.sender {
            let _ = sender.send(event);
        }
    }

    /// Why the dashboard closed on its own while the run goes on (the terminal became too
    /// small, or failed): the terminal is already given back. `None` while it shows.
    pub fn closed_early(&self) -> Option<String> {
        self.closed_early.lock().ok().and_then(|slot| slot.clone())
    }

    /// Closes the dashboard and gives the terminal back.
    pub fn close(&mut self) {
        self.sender = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        restore_terminal();
    }
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        self.close();
    }
}

/// Longest wait for a key between two looks at the channel.
const KEY_POLL: Duration = Duration::from_millis(100);

/// The dashboard's loop, until the channel closes; `Err` says why it closed before that.
fn run(
    state: DashboardState,
    receiver: &Receiver<Event>,
    scrapes: Option<&Receiver<LiveScrape>>,
    stop: &StopSignal,
) -> Result<(), String> {
    match draw_until_closed(state, receiver, scrapes, stop) {
        Ok(ended) => ended,
        Err(error) => Err(format!("the terminal failed: {error}")),
    }
}

/// The loop of [`run`]: `Ok(Err(why))` when the terminal became too small.
fn draw_until_closed(
    mut state: DashboardState,
    receiver: &Receiver<Event>,
    scrapes: Option<&Receiver<LiveScrape>>,
    stop: &StopSignal,
) -> std::io::Result<Result<(), String>> {
    let mut terminal = Terminal::new(CrosstermBackend::new(std::io::stderr()))?;
    // Cleared directly: ratatui's clear asks for the cursor position first, which a terminal
    // that never answers would stall.
    execute!(std::io::stderr(), Clear(ClearType::All))?;
    let mut frozen: Option<DashboardState> = None;
    let mut last_counters: Option<Instant> = None;
    loop {
        let mut changed = false;
        loop {
            match receiver.try_recv() {
                Ok(event) => {
                    apply(&mut state, event);
                    changed = true;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return Ok(Ok(())),
            }
        }
        // The servers' scrapes (their channel closes with the run's scraping: nothing then).
        while let Some(scrape) = scrapes.and_then(|scrapes| scrapes.try_recv().ok()) {
            state.server_scrape(scrape, Instant::now());
            changed = true;
        }
        let now = Instant::now();
        if last_counters.is_none_or(|then| now.duration_since(then) >= Duration::from_secs(1)) {
            state.counters(hop_counters(&HostView::live()), CpuSnapshot::now(), now);
            last_counters = Some(now);
            changed = true;
        }
        let size = terminal.size()?;
        if let Some(reason) = too_small(size.width, size.height) {
            return Ok(Err(reason));
        }
        if changed && frozen.is_none() {
            terminal.draw(|frame| view::draw(frame, &state))?;
        }
        if !event::poll(KEY_POLL)? {
            continue;
        }
        match event::read()? {
            TerminalEvent::Key(key) if key.kind != KeyEventKind::Release => match key.code {
                KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                    // Raw mode keeps Ctrl-C from being a signal: make it one.
                    let _ = signal_hook::low_level::raise(signal_hook::consts::SIGINT);
                    state.stopping = true;
                }
                KeyCode::Char('q') | KeyCode::Char('Q') => {
                    stop.raise();
                    state.stopping = true;
                }
                KeyCode::Char('p') | KeyCode::Char('P') => {
                    frozen = match frozen {
                        Some(_) => None,
                        None => {
                            let mut paused = state.clone();
                            paused.paused = true;
                            Some(paused)
                        }
                    };
                }
                _ => {}
            },
            TerminalEvent::Resize(columns, rows) => {
                if let Some(reason) = too_small(columns, rows) {
                    return Ok(Err(reason));
                }
                terminal.autoresize()?;
            }
            _ => {}
        }
        if let Some(paused) = frozen.as_mut() {
            paused.stopping = state.stopping;
        }
        terminal.draw(|frame| view::draw(frame, frozen.as_ref().unwrap_or(&state)))?;
    }
}

/// Applies one event of the run.
fn apply(state: &mut DashboardState, event: Event) {
    match event {
        Event::Paths(paths) => state.set_paths(&paths),
        Event::TestStarting(name) => state.test_starting(&name),
        Event::Sample(sample) => state.sample(sample, Instant::now()),
        Event::TestFinished => state.test_finished(),
        Event::Note(note) => state.notes.push(note),
    }
}
