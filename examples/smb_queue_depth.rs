//! How many READs per second iopath's own SMB client gets on one connection at a given queue
//! depth and block size, against a real server, and its CPU per read: the measurement behind
//! the choice recorded in docs/targets.md (a native pipelined READ path rather than a crate's).
//!
//! `IOPATH_SMB_PASSWORD=… cargo run --release --example smb_queue_depth -- 'smb://USER@HOST[:PORT]/SHARE/FILE' [DEPTH] [SECONDS] [BLOCK-BYTES] [sign|encrypt]`
//!
//! The file must exist and hold at least one block; reads are spread over it (a stride of
//! 7919 blocks).

use iopath::engine::smb::{self, SmbEngine, SmbSecurity, SmbUrl};
use iopath::engine::{Completion, Engine, EngineOptions, IoRequest};
use iopath::result::Direction;
use std::time::{Duration, Instant};

/// User plus system CPU time of this process, microseconds.
fn cpu_microseconds() -> f64 {
    // SAFETY: an all-zero rusage is valid, and getrusage only writes into it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, exclusively borrowed rusage for the call.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let time = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    time(usage.ru_utime) + time(usage.ru_stime)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut arguments = std::env::args().skip(1);
    let url = SmbUrl::parse(&arguments.next().ok_or("an smb:// URL is needed")?)?;
    let depth: u32 = arguments.next().map_or(Ok(32), |d| d.parse())?;
    let seconds: f64 = arguments.next().map_or(Ok(3.0), |s| s.parse())?;
    let block: u32 = arguments.next().map_or(Ok(4096), |b| b.parse())?;
    let security = match arguments.next().as_deref() {
        Some("sign") => SmbSecurity {
            sign: true,
            encrypt: false,
        },
        Some("encrypt") => SmbSecurity {
            sign: false,
            encrypt: true,
        },
        _ => SmbSecurity::default(),
    };
    let credentials = smb::resolve_credentials(&url, None, |name| std::env::var(name).ok())?;
    let file = smb::find(&url, &credentials, security, Duration::from_secs(10))?;
    let blocks = file.existing_size_bytes.ok_or("the file does not exist")? / u64::from(block);
    if blocks == 0 {
        return Err("the file is smaller than one block".into());
    }
    let options = EngineOptions::new(depth, block as usize);
    let mut engine = SmbEngine::open(&url, &credentials, security, &options, false)?;
    let mut done = vec![Completion::default(); depth as usize];
    let mut next = 0u64;
    let mut submit = |engine: &mut SmbEngine, slot: u32| {
        let offset = (next % blocks) * u64::from(block);
        next += 7919;
        engine.submit(IoRequest {
            slot,
            file: 0,
            direction: Direction::Read,
            offset,
            length: block,
        })
    };
    for slot in 0..depth {
        submit(&mut engine, slot)?;
    }
    engine.flush()?;
    let start = Instant::now();
    let cpu_start = cpu_microseconds();
    let mut reads = 0u64;
    let mut outstanding = depth as usize;
    while outstanding > 0 {
        let reaped = engine.reap(1, &mut done)?;
        outstanding -= reaped;
        for completion in &done[..reaped] {
            if completion.result != i64::from(block) {
                return Err(format!("a read ended with {}", completion.result).into());
            }
            reads += 1;
            if start.elapsed().as_secs_f64() < seconds {
                submit(&mut engine, completion.slot)?;
                outstanding += 1;
            }
        }
        engine.flush()?;
    }
    let elapsed = start.elapsed().as_secs_f64();
    let session = engine.session();
    println!(
        "iopath smb {} (signing {}, encryption {}) depth {depth}, {block}-byte reads: {reads} in {elapsed:.2} s = {:.0} IOPS, {:.1} MB/s, {:.1} µs CPU per read; credits {:?}",
        smb::wire::dialect_name(session.dialect),
        if session.signing { "on" } else { "off" },
        if session.encryption { "on" } else { "off" },
        reads as f64 / elapsed,
        reads as f64 * f64::from(block) / elapsed / 1e6,
        (cpu_microseconds() - cpu_start) / reads as f64,
        engine.credits(),
    );
    Ok(())
}
