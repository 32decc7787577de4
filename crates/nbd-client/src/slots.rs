//! Per-slot state shared by all connections of one client: the slot buffers, what each slot's
//! request is and where it is, and the completions parsed but not taken yet.
//!
//! A slot is `Free`, `InFlight` (submitted: queued or sent on one connection, waiting for its
//! reply) or `Done` (its reply was parsed into the ready queue, not taken yet). Everything is
//! sized to the queue depth when the slots are made; nothing here allocates afterwards (the
//! ready queue never holds more than the queue depth).

use crate::wire;
use std::collections::VecDeque;

/// The memory of the slots' buffers: one buffer per slot, all of the same size. A write's
/// payload is sent straight from its slot's buffer and a read's payload received straight into
/// it.
///
/// # Safety
///
/// A connection keeps pointers to the buffers of the writes it is sending between calls
/// (while the [`Slots`] are not otherwise borrowed mutably). So for every slot below
/// [`SlotBuffers::count`], [`SlotBuffers::buffer`] and [`SlotBuffers::buffer_mut`] must return
/// the same memory every time, at least [`SlotBuffers::size`] bytes long, which stays valid
/// for as long as the value lives, even when the value itself is moved (heap memory, not
/// memory inside the value).
pub unsafe trait SlotBuffers {
    /// How many buffers.
    fn count(&self) -> usize;
    /// Size of each buffer, bytes.
    fn size(&self) -> usize;
    /// The buffer of `slot` (below [`SlotBuffers::count`]).
    fn buffer(&self, slot: usize) -> &[u8];
    /// The buffer of `slot`, writable.
    fn buffer_mut(&mut self, slot: usize) -> &mut [u8];
}

// SAFETY: each boxed slice is its own heap allocation, which moving the vector does not move;
// nothing here reallocates a buffer. All are assumed to be the size of the first.
unsafe impl SlotBuffers for Vec<Box<[u8]>> {
    fn count(&self) -> usize {
        self.len()
    }

    fn size(&self) -> usize {
        self.iter().map(|buffer| buffer.len()).min().unwrap_or(0)
    }

    fn buffer(&self, slot: usize) -> &[u8] {
        &self[slot]
    }

    fn buffer_mut(&mut self, slot: usize) -> &mut [u8] {
        &mut self[slot]
    }
}

/// A finished request: its slot and its result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Completion {
    /// The slot (the request's handle).
    pub slot: u32,
    /// Bytes transferred, or a negative errno when the server failed the request.
    pub result: i64,
}

/// Where a slot is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Free,
    InFlight,
    Done,
}

/// The request a slot carries.
#[derive(Clone, Copy, Debug)]
struct SlotState {
    phase: Phase,
    command: u16,
    length: u32,
    connection: u16,
}

/// What a reply answers: the slot of its handle and that slot's request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answered {
    /// The slot.
    pub slot: u32,
    /// Its request's command (`wire::CMD_*`).
    pub command: u16,
    /// Its request's length, bytes.
    pub length: u32,
}

/// Slot buffers, states and the ready queue.
pub struct Slots<B> {
    buffers: B,
    states: Vec<SlotState>,
    ready: VecDeque<Completion>,
}

impl<B: SlotBuffers> Slots<B> {
    /// One free slot per buffer of `buffers`.
    pub fn new(buffers: B) -> Self {
        let count = buffers.count();
        Slots {
            buffers,
            states: vec![
                SlotState {
                    phase: Phase::Free,
                    command: wire::CMD_READ,
                    length: 0,
                    connection: 0,
                };
                count
            ],
            ready: VecDeque::with_capacity(count),
        }
    }

    /// How many slots.
    pub fn count(&self) -> usize {
        self.states.len()
    }

    /// Size of each buffer, bytes.
    pub fn buffer_size(&self) -> usize {
        self.buffers.size()
    }

    /// Whether `slot` is free; `None` when there is no such slot.
    #[inline]
    pub fn is_free(&self, slot: usize) -> Option<bool> {
        self.states
            .get(slot)
            .map(|state| state.phase == Phase::Free)
    }

    /// Marks free `slot` in flight on `connection` with a request of `command` (`wire::CMD_*`)
    /// for `length` bytes.
    #[inline]
    pub fn begin(&mut self, slot: usize, connection: u16, command: u16, length: u32) {
        self.states[slot] = SlotState {
            phase: Phase::InFlight,
            command,
            length,
            connection,
        };
    }

    /// The slot a reply with `handle` on `connection` answers, or why no request can be
    /// answered by it.
    #[inline]
    pub fn answer(&self, handle: u64, connection: u16) -> Result<Answered, String> {
        let state = usize::try_from(handle)
            .ok()
            .and_then(|slot| self.states.get(slot))
            .filter(|state| state.phase == Phase::InFlight && state.connection == connection)
            .ok_or_else(|| {
                format!(
                    "the server replied with handle {handle:#x}, which names no request in flight"
                )
            })?;
        Ok(Answered {
            slot: handle as u32,
            command: state.command,
            length: state.length,
        })
    }

    /// Finishes in-flight `slot` with `result` (bytes or a negative errno).
    #[inline]
    pub fn complete(&mut self, slot: u32, result: i64) {
        self.states[slot as usize].phase = Phase::Done;
        self.ready.push_back(Completion { slot, result });
    }

    /// The buffer of `slot`, writable.
    #[inline]
    pub fn buffer_mut(&mut self, slot: usize) -> &mut [u8] {
        self.buffers.buffer_mut(slot)
    }

    /// The buffer of `slot`.
    #[inline]
    pub fn buffer(&self, slot: usize) -> &[u8] {
        self.buffers.buffer(slot)
    }

    /// Completions parsed and not reaped yet.
    #[inline]
    pub fn ready(&self) -> usize {
        self.ready.len()
    }

    /// Moves up to `completions.len()` ready completions into `completions` (as the caller's
    /// type, made by `make` from a [`Completion`]), freeing their slots; returns how many.
    #[inline]
    pub fn take_ready<C>(
        &mut self,
        completions: &mut [C],
        make: impl Fn(Completion) -> C,
    ) -> usize {
        let count = self.ready.len().min(completions.len());
        for (out, completion) in completions.iter_mut().zip(self.ready.drain(..count)) {
            self.states[completion.slot as usize].phase = Phase::Free;
            *out = make(completion);
        }
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_goes_round() {
        let mut slots = Slots::new(vec![vec![0u8; 4096].into_boxed_slice(); 2]);
        assert_eq!((slots.count(), slots.buffer_size()), (2, 4096));
        assert_eq!(slots.is_free(1), Some(true));
        assert_eq!(slots.is_free(2), None);
        slots.begin(1, 0, wire::CMD_WRITE, 512);
        assert_eq!(slots.is_free(1), Some(false));
        assert!(slots.answer(1, 1).is_err(), "other connection");
        assert!(slots.answer(0, 0).is_err(), "free slot");
        assert!(slots.answer(u64::MAX, 0).is_err(), "no such slot");
        let answered = slots.answer(1, 0).unwrap();
        assert_eq!((answered.slot, answered.length), (1, 512));
        slots.complete(1, 512);
        assert!(slots.answer(1, 0).is_err(), "answered twice");
        let mut out = [Completion::default(); 2];
        assert_eq!(slots.take_ready(&mut out, |done| done), 1);
        assert_eq!(
            out[0],
            Completion {
                slot: 1,
                result: 512
            }
        );
        assert_eq!(slots.is_free(1), Some(true));
    }
}
