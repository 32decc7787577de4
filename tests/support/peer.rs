//! Connections from a chosen loopback address: Linux routes all of 127.0.0.0/8 to the
//! loopback interface, so 127.0.0.2 is a second peer address a test can use without a
//! namespace (the kernel itself would always pick 127.0.0.1).

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::fd::{FromRawFd, OwnedFd};

/// A TCP connection to `server` (IPv4) from `source` (a local address, any port).
pub fn connect_from(source: Ipv4Addr, server: SocketAddr) -> std::io::Result<TcpStream> {
    let SocketAddr::V4(server) = server else {
        return Err(std::io::Error::other("an IPv4 server address"));
    };
    let address = |ip: Ipv4Addr, port: u16| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(ip).to_be(),
        },
        sin_zero: [0; 8],
    };
    let length = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: socket() takes no pointers; a non-negative result is a new descriptor that
    // nothing else owns, handed at once to an OwnedFd that closes it.
    let descriptor =
        unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if descriptor < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `descriptor` is open and owned by no one else (above).
    let socket = unsafe { OwnedFd::from_raw_fd(descriptor) };
    let local = address(source, 0);
    let remote = address(*server.ip(), server.port());
    use std::os::fd::AsRawFd;
    // SAFETY: both addresses are live sockaddr_in values of `length` bytes for the duration of
    // each call, and the descriptor is open (owned by `socket`).
    let bound = unsafe {
        libc::bind(socket.as_raw_fd(), (&raw const local).cast(), length) == 0
            && libc::connect(socket.as_raw_fd(), (&raw const remote).cast(), length) == 0
    };
    if !bound {
        return Err(std::io::Error::last_os_error());
    }
    Ok(TcpStream::from(socket))
}
