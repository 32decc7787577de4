//! How many 4 KiB NFSv3 READs per second iopath's own NFS client gets on one connection at a
//! given queue depth, against a real server: the measurement behind the choice recorded in
//! docs/targets.md (a native pipelined READ path rather than a crate's).
//!
//! `cargo run --release --example nfs_queue_depth -- 'nfs://HOST[:PORT]/EXPORT/FILE[?mountport=N]' [DEPTH] [SECONDS]`
//!
//! The file must exist and be at least 4 KiB; reads are spread over it (a stride of 7919
//! blocks), so a file larger than the server's cache measures the disk too.

use iopath::engine::nfs::{self, NfsEngine, NfsUrl};
use iopath::engine::{Completion, Engine, EngineOptions, IoRequest};
use iopath::result::Direction;
use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut arguments = std::env::args().skip(1);
    let url = NfsUrl::parse(&arguments.next().ok_or("an nfs:// URL is needed")?)?;
    let depth: u32 = arguments.next().map_or(Ok(32), |d| d.parse())?;
    let seconds: f64 = arguments.next().map_or(Ok(3.0), |s| s.parse())?;
    let file = nfs::find(&url, Duration::from_secs(10))?;
    let (handle, attributes) = file.existing.ok_or("the file does not exist")?;
    let blocks = attributes.size_bytes / 4096;
    if blocks == 0 {
        return Err("the file is smaller than 4 KiB".into());
    }
    let mut engine = NfsEngine::open(&url, handle, &EngineOptions::new(depth, 4096))?;
    let mut done = vec![Completion::default(); depth as usize];
    let mut next = 0u64;
    let mut submit = |engine: &mut NfsEngine, slot: u32| {
        let offset = (next % blocks) * 4096;
        next += 7919;
        engine.submit(IoRequest {
            slot,
            file: 0,
            direction: Direction::Read,
            offset,
            length: 4096,
        })
    };
    for slot in 0..depth {
        submit(&mut engine, slot)?;
    }
    engine.flush()?;
    let start = Instant::now();
    let mut reads = 0u64;
    let mut outstanding = depth as usize;
    let mut most_outstanding = 0;
    while outstanding > 0 {
        let reaped = engine.reap(1, &mut done)?;
        most_outstanding = most_outstanding.max(outstanding);
        outstanding -= reaped;
        for completion in &done[..reaped] {
            if completion.result != 4096 {
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
    println!(
        "iopath nfs depth {depth}: {reads} reads in {elapsed:.2} s = {:.0} IOPS (at most {most_outstanding} outstanding)",
        reads as f64 / elapsed
    );
    Ok(())
}
