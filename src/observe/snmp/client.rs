//! One SNMP request and its response over UDP: the socket connected to the agent (so only its
//! datagrams are read, and a closed port is reported at once), each try waiting at most
//! [`TRY_TIMEOUT`], at most [`TRIES`] tries, and never past the caller's deadline.

use super::agent::SwitchAgent;
use super::ber::MAX_MESSAGE_BYTES;
use super::message::{Request, Response, read_response};
use std::io::ErrorKind;
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::time::{Duration, Instant};

/// How long one try waits for its answer.
pub const TRY_TIMEOUT: Duration = Duration::from_millis(600);
/// How often a request is sent before the agent counts as not answering.
pub const TRIES: u32 = 3;

/// A socket talking to one agent.
pub struct Session {
    socket: UdpSocket,
    community: Vec<u8>,
    next_id: i32,
    buffer: Vec<u8>,
}

impl Session {
    /// Resolves the agent's host and connects a UDP socket to it; the reason when it cannot.
    pub fn open(agent: &SwitchAgent) -> Result<Session, String> {
        let address: SocketAddr = (agent.host.as_str(), agent.port)
            .to_socket_addrs()
            .map_err(|error| format!("cannot resolve {}: {error}", agent.host))?
            .next()
            .ok_or_else(|| format!("{} has no address", agent.host))?;
        let local: SocketAddr = if address.is_ipv4() {
            "0.0.0.0:0".parse().expect("an address")
        } else {
            "[::]:0".parse().expect("an address")
        };
        let socket = UdpSocket::bind(local).map_err(|error| error.to_string())?;
        socket.connect(address).map_err(|error| error.to_string())?;
        Ok(Session {
            socket,
            community: agent.community.clone(),
            // Ids start at a value of the clock, so that answers to an earlier session's
            // requests are not taken for this one's.
            next_id: (std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |t| t.subsec_nanos())
                & 0x3fff_ffff) as i32,
            buffer: vec![0; MAX_MESSAGE_BYTES],
        })
    }

    /// A fresh request id.
    pub fn next_id(&mut self) -> i32 {
        self.next_id = self.next_id.wrapping_add(1) & 0x7fff_ffff;
        self.next_id
    }

    /// Sends `request` and returns the response with its id, trying again after
    /// [`TRY_TIMEOUT`], up to [`TRIES`] times and never after `deadline`.
    pub fn exchange(&mut self, request: &Request, deadline: Instant) -> Result<Response, String> {
        let message = request.encode(&self.community);
        for _ in 0..TRIES {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            self.socket
                .send(&message)
                .map_err(|error| format!("cannot send: {error}"))?;
            let try_end = (now + TRY_TIMEOUT).min(deadline);
            loop {
                let left = try_end.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                self.socket
                    .set_read_timeout(Some(left))
                    .map_err(|error| error.to_string())?;
                let length = match self.socket.recv(&mut self.buffer) {
                    Ok(length) => length,
                    Err(error)
                        if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) =>
                    {
                        break;
                    }
                    Err(error) if error.kind() == ErrorKind::ConnectionRefused => {
                        return Err("refused (nothing listens on that UDP port)".into());
                    }
                    Err(error) => return Err(error.to_string()),
                };
                // Datagrams that are not this request's answer (late answers to earlier
                // tries, another community) are passed over.
                match read_response(&self.buffer[..length], &self.community) {
                    Ok(response) if response.id == request.id => return Ok(response),
                    _ => continue,
                }
            }
        }
        Err(format!(
            "no answer ({TRIES} tries of {} ms): is the agent there, and the community right?",
            TRY_TIMEOUT.as_millis()
        ))
    }
}
