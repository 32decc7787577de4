//! The connections the metrics server is answering, at most [`MAX_CONNECTIONS`] at once.
//!
//! Each connection has a thread of its own, so an idle or slow client holds only its own
//! thread, never another client's answer. When every place is taken, a new connection takes
//! the place of the oldest one still sending its request (a client that has sent nothing
//! yet, or half a request): that one is shut down and its thread ends at once. A scraper
//! sends its request as soon as it is connected, so a crowd of idle connections cannot keep
//! it out; its answer, once its request is read, is only cut when every place holds an
//! answer being written.

use std::collections::VecDeque;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Most connections answered at once.
pub const MAX_CONNECTIONS: usize = 32;

/// One open connection.
#[derive(Debug)]
struct Open {
    id: u64,
    /// A handle of the connection's socket, to shut it down.
    socket: TcpStream,
    /// Whether its request has been read (its answer is being written).
    answering: Arc<AtomicBool>,
}

/// The open connections, oldest first.
#[derive(Debug, Default)]
struct Table {
    next_id: u64,
    open: VecDeque<Open>,
}

/// The open connections, shared between the accepting thread and each connection's thread.
#[derive(Clone, Debug, Default)]
pub struct Connections(Arc<Mutex<Table>>);

/// A place taken by one connection, given back when dropped.
#[derive(Debug)]
pub struct Place {
    id: u64,
    answering: Arc<AtomicBool>,
    connections: Connections,
}

impl Place {
    /// The connection's request has been read: from now on it is cut only when every place
    /// holds an answer.
    pub fn answering(&self) {
        self.answering.store(true, Ordering::Release);
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.connections
            .table()
            .open
            .retain(|open| open.id != self.id);
    }
}

impl Connections {
    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Gives `socket` (a handle of a new connection) a place, shutting down the oldest
    /// connection still sending its request (else the oldest) when all are taken.
    pub fn admit(&self, socket: TcpStream) -> Place {
        let mut table = self.table();
        if table.open.len() >= MAX_CONNECTIONS {
            let oldest = table
                .open
                .iter()
                .position(|open| !open.answering.load(Ordering::Acquire))
                .unwrap_or(0);
            if let Some(cut) = table.open.remove(oldest) {
                let _ = cut.socket.shutdown(Shutdown::Both);
            }
        }
        let id = table.next_id;
        table.next_id += 1;
        let answering = Arc::new(AtomicBool::new(false));
        table.open.push_back(Open {
            id,
            socket,
            answering: answering.clone(),
        });
        Place {
            id,
            answering,
            connections: self.clone(),
        }
    }

    /// How many connections are open.
    pub fn count(&self) -> usize {
        self.table().open.len()
    }

    /// Shuts every open connection down (the server stops).
    pub fn close_all(&self) {
        for open in self.table().open.drain(..) {
            let _ = open.socket.shutdown(Shutdown::Both);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;

    /// A connected pair: the client end and the server end.
    fn pair(listener: &TcpListener) -> (TcpStream, TcpStream) {
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        (client, server)
    }

    #[test]
    fn a_full_table_cuts_the_oldest_connection_still_sending_its_request() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let connections = Connections::default();
        let mut clients = Vec::new();
        let mut places = Vec::new();
        for _ in 0..MAX_CONNECTIONS {
            let (client, server) = pair(&listener);
            places.push(connections.admit(server));
            clients.push(client);
        }
        // The first one is answering: the second is the oldest still sending.
        places[0].answering();
        let (_newest, server) = pair(&listener);
        places.push(connections.admit(server));
        assert_eq!(connections.count(), MAX_CONNECTIONS);
        let mut byte = [0u8; 1];
        assert_eq!(clients[1].read(&mut byte).unwrap(), 0, "cut");
        clients[0]
            .set_read_timeout(Some(std::time::Duration::from_millis(50)))
            .unwrap();
        assert!(clients[0].read(&mut byte).is_err(), "still open");
        places.truncate(1);
        assert_eq!(connections.count(), 1, "given back when dropped");
        connections.close_all();
        assert_eq!(connections.count(), 0);
        assert_eq!(clients[0].read(&mut byte).unwrap(), 0);
    }
}
