//! What an NBD export is, learned over one short connection before the run: size, transmission
//! flags and block size constraints from the handshake, and its first 68 KiB.

use super::engine::NbdEngine;
use super::export_volume::export_volume;
use crate::engine::volume::NetworkVolumeInfo;
use crate::engine::{Completion, Engine, EngineError, EngineOptions, IoRequest};
use crate::result::Direction;
use crate::targets::network_target::NetworkTarget;
use std::io;
use std::time::Duration;

/// Bytes read from the start of the volume for signature detection.
pub const HEAD_BYTES: u32 = 68 * 1024;

/// Attempts at each read of the head before the probe fails (a server may fail a read now and
/// then, as nbdkit's error filter does on purpose).
const HEAD_READ_ATTEMPTS: u32 = 3;

/// Connects to `target`, negotiates its export, reads its first `min(68 KiB, size)` bytes
/// (rounded down to the export's minimum block) and disconnects. Connecting and the handshake
/// get `timeout` in all, and so does each read.
///
/// Errors name the server and the export: connection refused, no such export
/// (`NBD_REP_ERR_UNKNOWN`), TLS required, a broken or endless handshake, no reply in time, a
/// failed read.
pub fn probe(target: &NetworkTarget, timeout: Duration) -> Result<NetworkVolumeInfo, EngineError> {
    let options = EngineOptions {
        net_timeout: timeout,
        ..EngineOptions::new(1, HEAD_BYTES as usize)
    };
    let mut engine = NbdEngine::open(target, &options)?;
    let export = *engine.export();
    let minimum = export.block_sizes.map_or(1, |sizes| sizes.minimum);
    let maximum = export.block_sizes.map_or(HEAD_BYTES, |sizes| sizes.maximum);
    let head_bytes = export.size_bytes.min(u64::from(HEAD_BYTES)) as u32 / minimum * minimum;
    let chunk = HEAD_BYTES.min(maximum) / minimum * minimum;
    let mut head = Vec::with_capacity(head_bytes as usize);
    while (head.len() as u32) < head_bytes {
        let offset = head.len() as u64;
        let length = chunk.min(head_bytes - head.len() as u32);
        read_with_retries(&mut engine, offset, length)?;
        head.extend_from_slice(&engine.buffer_mut(0)[..length as usize]);
    }
    Ok(NetworkVolumeInfo {
        head,
        ..export_volume(&export)
    })
}

/// Reads `length` bytes at `offset` into slot 0, trying again after a failed read.
fn read_with_retries(engine: &mut NbdEngine, offset: u64, length: u32) -> Result<(), EngineError> {
    let request = IoRequest {
        file: 0,
        slot: 0,
        direction: Direction::Read,
        offset,
        length,
    };
    let mut done = [Completion::default()];
    let mut attempt = 1;
    loop {
        engine.submit(request)?;
        engine.flush()?;
        while engine.reap(1, &mut done)? == 0 {}
        let result = done[0].result;
        if result == i64::from(length) {
            return Ok(());
        }
        if attempt == HEAD_READ_ATTEMPTS {
            let reason = if result < 0 {
                io::Error::from_raw_os_error(-result as i32)
            } else {
                io::Error::other(format!("short read of {result} bytes"))
            };
            return Err(EngineError::Operation {
                engine: super::engine::ENGINE_NAME,
                operation: "read the first blocks",
                source: io::Error::new(
                    reason.kind(),
                    format!(
                        "reading {length} bytes at offset {offset} failed {attempt} times: {reason}"
                    ),
                ),
            });
        }
        attempt += 1;
    }
}
