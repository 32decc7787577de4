//! The server's end of a handshake, scripted: for tests of code built on this crate (and of
//! the crate itself) that need a server sending exactly these bytes, or breaking the protocol
//! on purpose. Enabled by the `scripted-server` feature.
//!
//! Every function here panics when the client does not do what the script expects: that is
//! the test failing.
//!
//! ```
//! use nbd_client::handshake::negotiate;
//! use nbd_client::scripted::{accept_go, greet, read_option, scripted_server};
//! let (mut client, server) = scripted_server(|mut server| {
//!     greet(&mut server, 3);
//!     read_option(&mut server);
//!     accept_go(&mut server, 1 << 20, 0b1, None);
//! });
//! let export = negotiate(&mut client, "disk").unwrap();
//! server.join().unwrap();
//! assert_eq!(export.size_bytes, 1 << 20);
//! ```

use crate::wire;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::thread::JoinHandle;

/// A scripted server on the other end of a socket pair: `script` runs on its own thread.
pub fn scripted_server(
    script: impl FnOnce(UnixStream) + Send + 'static,
) -> (UnixStream, JoinHandle<()>) {
    let (client, server) = UnixStream::pair().unwrap();
    client
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    (client, std::thread::spawn(move || script(server)))
}

/// Sends the fixed newstyle greeting with `flags` and reads the client flags.
pub fn greet(server: &mut UnixStream, flags: u16) -> u32 {
    server.write_all(b"NBDMAGICIHAVEOPT").unwrap();
    server.write_all(&flags.to_be_bytes()).unwrap();
    let mut client_flags = [0; 4];
    server.read_exact(&mut client_flags).unwrap();
    u32::from_be_bytes(client_flags)
}

/// Reads one option: (option, data).
pub fn read_option(server: &mut UnixStream) -> (u32, Vec<u8>) {
    let mut header = [0; 16];
    server.read_exact(&mut header).unwrap();
    assert_eq!(&header[..8], b"IHAVEOPT");
    let option = wire::be_u32(&header[8..12]);
    let mut data = vec![0; wire::be_u32(&header[12..16]) as usize];
    server.read_exact(&mut data).unwrap();
    (option, data)
}

/// Sends one option reply.
pub fn option_reply(server: &mut UnixStream, option: u32, reply: u32, data: &[u8]) {
    let mut message = Vec::new();
    message.extend_from_slice(&wire::OPTION_REPLY_MAGIC.to_be_bytes());
    message.extend_from_slice(&option.to_be_bytes());
    message.extend_from_slice(&reply.to_be_bytes());
    message.extend_from_slice(&(data.len() as u32).to_be_bytes());
    message.extend_from_slice(data);
    server.write_all(&message).unwrap();
}

/// The information replies and acknowledgement of a successful `NBD_OPT_GO`.
pub fn accept_go(server: &mut UnixStream, size: u64, flags: u16, block_sizes: Option<[u32; 3]>) {
    let mut export = wire::INFO_EXPORT.to_be_bytes().to_vec();
    export.extend_from_slice(&size.to_be_bytes());
    export.extend_from_slice(&flags.to_be_bytes());
    option_reply(server, wire::OPT_GO, wire::REP_INFO, &export);
    if let Some(sizes) = block_sizes {
        let mut info = wire::INFO_BLOCK_SIZE.to_be_bytes().to_vec();
        for size in sizes {
            info.extend_from_slice(&size.to_be_bytes());
        }
        option_reply(server, wire::OPT_GO, wire::REP_INFO, &info);
    }
    option_reply(server, wire::OPT_GO, wire::REP_ACK, &[]);
}
