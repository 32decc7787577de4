//! A password written into a URL (`user:PASSWORD@host`) reaches no output: every message,
//! result, job-file check and history entry shows it masked (`user:***@host`).

use crate::common::*;
use std::fs;

const PASSWORD: &str = "Pw0rdNotToShow";

#[test]
fn a_password_in_a_url_reaches_no_output() {
    let dir = disk_tempdir();
    let history = dir.path().join("history.sqlite");
    let urls = [
        format!("smb://alice:{PASSWORD}@127.0.0.1"),
        format!("smb://alice:{PASSWORD}@127.0.0.1/share/f?sign=1"),
        format!("nfs://alice:{PASSWORD}@127.0.0.1/srv/f"),
        format!("iscsi://alice:{PASSWORD}@[::1]:3260/iqn.2026-01.org.example:disk/0"),
        format!("nbd://alice:{PASSWORD}@127.0.0.1/disk"),
        format!("smb://alice:{PASSWORD}@127.0.0.1/share/f"),
    ];
    let json = dir.path().join("out.json");
    for url in &urls {
        // fio's filename= separates names with ':', so a URL's colons are escaped.
        let escaped = url.replace(':', "\\:");
        let job = format!("[a]\nfilename={escaped}\nrw=read\nsize=1m\n");
        fs::write(dir.path().join("job.fio"), job).unwrap();
        let commands: [&[&str]; 4] = [
            &["run", url, "--rw", "read", "--json", json.to_str().unwrap()],
            &["path", url],
            &["job", "check", "job.fio"],
            &["run", "--job", "job.fio", "--json", json.to_str().unwrap()],
        ];
        for args in commands {
            let output = iopath()
                .current_dir(dir.path())
                .env("IOPATH_HISTORY", &history)
                .args(args)
                .output()
                .expect("iopath runs");
            let run = into_run_output(output, None);
            let shown = format!("{}\n{}", run.stdout, run.stderr);
            assert_ne!(run.status, 0, "{args:?}: {shown}");
            assert!(
                !shown.contains(PASSWORD),
                "{args:?} shows the password: {shown}"
            );
            // A job file's name may be taken for a path (smb: without a share).
            assert!(
                args[0] == "job" || args[1] == "--job" || shown.contains("alice:***@"),
                "{args:?} should name the URL, masked: {shown}"
            );
            if let Ok(written) = fs::read_to_string(&json) {
                assert!(!written.contains(PASSWORD), "{args:?}: the JSON result");
            }
        }
    }
    let listed = iopath()
        .env("IOPATH_HISTORY", &history)
        .args(["history"])
        .output()
        .expect("iopath runs");
    assert!(!String::from_utf8_lossy(&listed.stdout).contains(PASSWORD));
    assert!(!String::from_utf8_lossy(&listed.stderr).contains(PASSWORD));
    for entry in fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        let bytes = fs::read(&path).unwrap_or_default();
        let holds = bytes
            .windows(PASSWORD.len())
            .any(|w| w == PASSWORD.as_bytes());
        assert!(
            !holds || path.ends_with("job.fio"),
            "{} holds the password",
            path.display()
        );
    }
}
