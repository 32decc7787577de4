//! The connections in their handshake, and who gets a place among them, so that a peer
//! without the secret cannot keep real clients out however many connections it holds open.
//!
//! Rules, applied as each connection is accepted ([`HandshakeTable::admit`]):
//! - one peer address has at most `per_address` connections in their handshake; more from it
//!   are closed at once (an address whose accepted test waits for its data connections is
//!   exempt: those are the test's own);
//! - when all `total` places are taken, the oldest handshake of the address holding the most is
//!   cut, so that a new connection always gets its chance to prove the secret;
//! - every handshake still has its one deadline (`handshake_timeout`, in the server).
//!
//! A connection leaves the table when its handshake ends (its [`HandshakeSlot`] is dropped),
//! or when it is cut.

use std::collections::HashMap;
use std::net::{IpAddr, Shutdown, TcpStream};
use std::sync::{Arc, Mutex};

/// What became of a new connection.
#[derive(Debug)]
pub(super) enum Admission {
    /// It has a place; to be kept until its handshake ends.
    Admitted(HandshakeSlot),
    /// Closed at once: its address already has `per_address` handshakes under way.
    PerAddress,
    /// Closed at once: every place is taken by addresses whose tests wait for data.
    Full,
}

/// The handshakes under way.
#[derive(Debug, Default)]
pub(super) struct HandshakeTable {
    entries: Vec<Entry>,
    next_id: u64,
    /// Handshakes cut to make room, since last taken.
    cut: u64,
}

#[derive(Debug)]
struct Entry {
    id: u64,
    peer: IpAddr,
    /// A handle on the connection, to cut it.
    connection: TcpStream,
}

impl HandshakeTable {
    /// Gives `connection` from `peer` a place within `total` and `per_address`, cutting the
    /// oldest handshake of the busiest address when all are taken. Addresses in `exempt`
    /// (whose accepted tests wait for their data connections) pass the per-address limit and
    /// are not cut.
    pub(super) fn admit(
        table: &Arc<Mutex<HandshakeTable>>,
        connection: &TcpStream,
        peer: IpAddr,
        (total, per_address): (u32, u32),
        exempt: &[IpAddr],
    ) -> std::io::Result<Admission> {
        let handle = connection.try_clone()?;
        let mut this = table.lock().unwrap_or_else(|e| e.into_inner());
        let is_exempt = exempt.contains(&peer);
        if !is_exempt && this.count(peer) >= per_address as usize {
            return Ok(Admission::PerAddress);
        }
        if this.entries.len() >= total as usize {
            let Some(victim) = this.victim(exempt) else {
                return Ok(Admission::Full);
            };
            let cut = this.entries.remove(victim);
            let _ = cut.connection.shutdown(Shutdown::Both);
            this.cut += 1;
        }
        let id = this.next_id;
        this.next_id += 1;
        this.entries.push(Entry {
            id,
            peer,
            connection: handle,
        });
        Ok(Admission::Admitted(HandshakeSlot {
            table: Arc::clone(table),
            id,
        }))
    }

    /// Handshakes under way.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Handshakes cut to make room since the last call.
    pub(super) fn take_cut(&mut self) -> u64 {
        std::mem::take(&mut self.cut)
    }

    fn count(&self, peer: IpAddr) -> usize {
        self.entries
            .iter()
            .filter(|entry| entry.peer == peer)
            .count()
    }

    /// The oldest handshake of the address with the most (entries are oldest first), among
    /// addresses not `exempt`.
    fn victim(&self, exempt: &[IpAddr]) -> Option<usize> {
        let mut counts: HashMap<IpAddr, usize> = HashMap::new();
        for entry in &self.entries {
            *counts.entry(entry.peer).or_default() += 1;
        }
        let most = counts
            .iter()
            .filter(|(peer, _)| !exempt.contains(peer))
            .map(|(_, count)| *count)
            .max()?;
        self.entries
            .iter()
            .position(|entry| counts[&entry.peer] == most && !exempt.contains(&entry.peer))
    }
}

/// A place among the handshakes under way, given back when dropped.
#[derive(Debug)]
pub(super) struct HandshakeSlot {
    table: Arc<Mutex<HandshakeTable>>,
    id: u64,
}

impl HandshakeSlot {
    /// Whether the connection was cut to make room for another (so its end is no refusal to
    /// report one by one: it is counted).
    pub(super) fn was_cut(&self) -> bool {
        let table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        !table.entries.iter().any(|entry| entry.id == self.id)
    }
}

impl Drop for HandshakeSlot {
    fn drop(&mut self) {
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        table.entries.retain(|entry| entry.id != self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;

    /// `count` accepted connections (server ends) and their client ends.
    fn connections(count: usize) -> Vec<(TcpStream, TcpStream)> {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        (0..count)
            .map(|_| {
                let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
                (listener.accept().unwrap().0, client)
            })
            .collect()
    }

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    #[test]
    fn one_address_gets_at_most_its_share() {
        let table = Arc::new(Mutex::new(HandshakeTable::default()));
        let pairs = connections(4);
        let mut slots = Vec::new();
        for (server, _) in &pairs[..3] {
            match HandshakeTable::admit(&table, server, ip(1), (10, 3), &[]).unwrap() {
                Admission::Admitted(slot) => slots.push(slot),
                other => panic!("{other:?}"),
            }
        }
        let fourth = HandshakeTable::admit(&table, &pairs[3].0, ip(1), (10, 3), &[]).unwrap();
        assert!(matches!(fourth, Admission::PerAddress), "{fourth:?}");
        // An address whose test waits for its data connections is not held to it.
        let data = HandshakeTable::admit(&table, &pairs[3].0, ip(1), (10, 3), &[ip(1)]).unwrap();
        assert!(matches!(data, Admission::Admitted(_)), "{data:?}");
        drop(data);
        slots.pop();
        let again = HandshakeTable::admit(&table, &pairs[3].0, ip(1), (10, 3), &[]).unwrap();
        assert!(matches!(again, Admission::Admitted(_)), "{again:?}");
    }

    #[test]
    fn when_full_the_busiest_addresses_oldest_handshake_is_cut() {
        let table = Arc::new(Mutex::new(HandshakeTable::default()));
        let mut pairs = connections(5);
        let peers = [ip(2), ip(3), ip(3), ip(2)];
        let slots: Vec<HandshakeSlot> = pairs[..4]
            .iter()
            .zip(peers)
            .map(|((server, _), peer)| {
                match HandshakeTable::admit(&table, server, peer, (4, 8), &[]).unwrap() {
                    Admission::Admitted(slot) => slot,
                    other => panic!("{other:?}"),
                }
            })
            .collect();
        // Both .2 and .3 hold two; .2's first is the oldest of them.
        let newcomer = HandshakeTable::admit(&table, &pairs[4].0, ip(9), (4, 8), &[]).unwrap();
        assert!(matches!(newcomer, Admission::Admitted(_)), "{newcomer:?}");
        assert!(slots[0].was_cut());
        assert!(slots[1..].iter().all(|slot| !slot.was_cut()));
        assert_eq!(table.lock().unwrap().take_cut(), 1);
        assert_eq!(table.lock().unwrap().len(), 4);
        // The cut connection's peer sees it closed.
        let mut byte = [0u8; 1];
        assert_eq!(pairs[0].1.read(&mut byte).unwrap(), 0);
        // Nothing to cut when every other address is exempt.
        let exempt = [ip(2), ip(3), ip(9)];
        let refused =
            HandshakeTable::admit(&table, &pairs.pop().unwrap().0, ip(5), (4, 8), &exempt);
        assert!(matches!(refused.unwrap(), Admission::Full));
        drop(slots);
        assert_eq!(table.lock().unwrap().len(), 1);
    }
}
