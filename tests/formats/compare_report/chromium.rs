//! A real headless Chromium driven over the DevTools protocol on a pipe
//! (`--remote-debugging-pipe`: commands in on fd 3, replies out on fd 4, each message JSON
//! ending in a NUL byte). Enough of the protocol to load a page, hear every console message,
//! exception and network request, evaluate an expression, take a screenshot and print to PDF.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// How long one command may take.
const TIMEOUT: Duration = Duration::from_secs(60);

/// The Chromium to use: `$CHROMIUM`, else the first of the usual names on PATH.
pub fn find() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser", "google-chrome", "chrome"] {
        for directory in std::env::split_paths(&path).chain([PathBuf::from("/usr/bin")]) {
            let candidate = directory.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// What happened while a page was open.
#[derive(Debug, Default)]
pub struct PageEvents {
    /// Console messages of level error or warning, and uncaught exceptions.
    pub errors: Vec<String>,
    /// Every URL the page asked for, the page itself included.
    pub requests: Vec<String>,
}

/// A running browser with one page attached.
pub struct Browser {
    child: Child,
    commands: std::io::PipeWriter,
    replies: Receiver<Value>,
    next_id: u64,
    session: String,
    events: PageEvents,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts `binary` headless with a fresh profile and attaches to a new blank page of
    /// `width` × `height` CSS pixels.
    pub fn start(binary: &Path, width: u32, height: u32) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let (command_reader, command_writer) = std::io::pipe().unwrap();
        let (reply_reader, reply_writer) = std::io::pipe().unwrap();
        let (command_fd, reply_fd) = (command_reader.as_raw_fd(), reply_writer.as_raw_fd());
        let mut command = Command::new(binary);
        command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--remote-debugging-pipe",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: only fcntl and dup2 run between fork and exec, both async-signal-safe. The
        // pipe ends are first copied above fd 10 so that placing them on 3 and 4 cannot
        // overwrite one with the other; dup2 leaves the new descriptors open across exec.
        unsafe {
            command.pre_exec(move || {
                let commands = libc::fcntl(command_fd, libc::F_DUPFD, 10);
                let replies = libc::fcntl(reply_fd, libc::F_DUPFD, 10);
                if commands < 0
                    || replies < 0
                    || libc::dup2(commands, 3) < 0
                    || libc::dup2(replies, 4) < 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("chromium starts");
        drop(command_reader);
        drop(reply_writer);
        let (sender, replies) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(reply_reader);
            let mut message = Vec::new();
            while reader
                .read_until(0, &mut message)
                .is_ok_and(|read| read > 0)
            {
                message.pop_if(|byte| *byte == 0);
                if let Ok(value) = serde_json::from_slice::<Value>(&message)
                    && sender.send(value).is_err()
                {
                    break;
                }
                message.clear();
            }
        });
        let mut browser = Browser {
            child,
            commands: command_writer,
            replies,
            next_id: 0,
            session: String::new(),
            events: PageEvents::default(),
            _profile: profile,
        };
        let target = browser.call("Target.createTarget", json!({"url": "about:blank"}));
        let target_id = target["targetId"].as_str().expect("a target").to_string();
        let attached = browser.call(
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
        );
        browser.session = attached["sessionId"].as_str().expect("a session").into();
        for domain in ["Runtime", "Log", "Network", "Page"] {
            browser.call(&format!("{domain}.enable"), json!({}));
        }
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
        browser
    }

    /// Sends `method` (to the page once attached) and waits for its reply, noting events.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            message["sessionId"] = json!(self.session);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.commands
            .write_all(&bytes)
            .expect("chromium reads commands");
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let reply = self
                .replies
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no reply to {method}"));
            if reply["id"].as_u64() == Some(id) {
                assert!(reply["error"].is_null(), "{method}: {}", reply["error"]);
                return reply["result"].clone();
            }
            self.note(&reply);
        }
    }

    /// Waits for event `method` of the page.
    pub fn wait_for(&mut self, method: &str) {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let event = self
                .replies
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no {method}"));
            self.note(&event);
            if event["method"] == method {
                return;
            }
        }
    }

    fn note(&mut self, event: &Value) {
        let params = &event["params"];
        match event["method"].as_str() {
            Some("Runtime.consoleAPICalled") => {
                let level = params["type"].as_str().unwrap_or("");
                if level == "error" || level == "warning" || level == "assert" {
                    self.events
                        .errors
                        .push(format!("console.{level}: {}", params["args"]));
                }
            }
            Some("Runtime.exceptionThrown") => self
                .events
                .errors
                .push(format!("exception: {}", params["exceptionDetails"])),
            Some("Log.entryAdded") => {
                let entry = &params["entry"];
                if entry["level"] == "error" || entry["level"] == "warning" {
                    self.events.errors.push(format!(
                        "log {}: {} {}",
                        entry["level"], entry["text"], entry["url"]
                    ));
                }
            }
            Some("Network.requestWillBeSent") => {
                if let Some(url) = params["request"]["url"].as_str() {
                    self.events.requests.push(url.to_string());
                }
            }
            _ => {}
        }
    }

    /// Opens `file` and waits until it has loaded.
    pub fn open(&mut self, file: &Path) {
        let url = format!("file://{}", file.canonicalize().unwrap().display());
        self.call("Page.navigate", json!({"url": url}));
        self.wait_for("Page.loadEventFired");
        // Let anything queued after load (late console messages) arrive.
        self.call("Runtime.evaluate", json!({"expression": "1"}));
    }

    /// The value of `expression`, evaluated in the page (JSON-serialisable).
    pub fn evaluate(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        assert!(
            result["exceptionDetails"].is_null(),
            "{}",
            result["exceptionDetails"]
        );
        result["result"]["value"].clone()
    }

    /// A PNG of the top `height` CSS pixels of the page at its full width.
    pub fn screenshot(&mut self, width: u32, height: u32) -> Vec<u8> {
        let result = self.call(
            "Page.captureScreenshot",
            json!({
                "format": "png",
                "captureBeyondViewport": true,
                "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}
            }),
        );
        decode_base64(result["data"].as_str().expect("png data"))
    }

    /// The page printed to PDF on A4, as the print style sheet lays it out.
    pub fn print_to_pdf(&mut self) -> Vec<u8> {
        let result = self.call(
            "Page.printToPDF",
            json!({"paperWidth": 8.27, "paperHeight": 11.69, "preferCSSPageSize": true}),
        );
        decode_base64(result["data"].as_str().expect("pdf data"))
    }

    /// What has happened so far while the page was open.
    pub fn events(&self) -> &PageEvents {
        &self.events
    }

    /// Closes the browser; returns what happened while the page was open.
    pub fn close(mut self) -> PageEvents {
        self.session.clear();
        self.next_id += 1;
        let mut bytes =
            serde_json::to_vec(&json!({"id": self.next_id, "method": "Browser.close"})).unwrap();
        bytes.push(0);
        let _ = self.commands.write_all(&bytes);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::mem::take(&mut self.events)
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Standard base64 (with padding) to bytes.
fn decode_base64(text: &str) -> Vec<u8> {
    let value = |byte: u8| -> u32 {
        match byte {
            b'A'..=b'Z' => u32::from(byte - b'A'),
            b'a'..=b'z' => u32::from(byte - b'a') + 26,
            b'0'..=b'9' => u32::from(byte - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            other => panic!("not base64: {other}"),
        }
    };
    let clean: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(clean.len() / 4 * 3);
    for chunk in clean.chunks(4) {
        let digits: Vec<u8> = chunk.iter().copied().filter(|b| *b != b'=').collect();
        let mut bits = 0u32;
        for (index, digit) in digits.iter().enumerate() {
            bits |= value(*digit) << (18 - 6 * index);
        }
        let bytes = bits.to_be_bytes();
        out.extend_from_slice(&bytes[1..digits.len()]);
    }
    out
}

#[test]
fn base64_decodes() {
    assert_eq!(decode_base64("aW9wYXRo"), b"iopath");
    assert_eq!(decode_base64("aW9wYXQ="), b"iopat");
    assert_eq!(decode_base64("aW9wYQ=="), b"iopa");
}
