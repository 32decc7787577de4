//! Per-slot state shared by all connections of one engine: the slot buffers, what each slot's
//! request is and where it is, and the completions parsed but not reaped yet.
//!
//! A slot is `Free`, `InFlight` (submitted: queued or sent on one connection, waiting for its
//! reply) or `Done` (its reply was parsed into the ready queue, not reaped yet). Everything is
//! sized to the queue depth when the engine opens; nothing here allocates afterwards (the
//! ready queue never holds more than the queue depth).

use crate::engine::Completion;
use crate::engine::buffer::BufferPool;
use crate::result::Direction;
use std::collections::VecDeque;

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
    direction: Direction,
    length: u32,
    connection: u16,
}

/// What a reply answers: the slot of its handle and that slot's request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answered {
    /// The slot.
    pub slot: u32,
    /// Its request's direction.
    pub direction: Direction,
    /// Its request's length, bytes.
    pub length: u32,
}

/// Slot buffers, states and the ready queue.
pub struct Slots {
    buffers: BufferPool,
    states: Vec<SlotState>,
    ready: VecDeque<Completion>,
}

impl Slots {
    /// `count` free slots with buffers of `buffer_size` bytes.
    pub fn new(count: usize, buffer_size: usize) -> Self {
        Slots {
            buffers: BufferPool::new(count, buffer_size),
            states: vec![
                SlotState {
                    phase: Phase::Free,
                    direction: Direction::Read,
                    length: 0,
                    connection: 0,
                };
                count
            ],
            ready: VecDeque::with_capacity(count),
        }
    }

    /// Size of each buffer, bytes.
    pub fn buffer_size(&self) -> usize {
        self.buffers.slot_size()
    }

    /// Whether `slot` is free; `None` when there is no such slot.
    #[inline]
    pub fn is_free(&self, slot: usize) -> Option<bool> {
        self.states
            .get(slot)
            .map(|state| state.phase == Phase::Free)
    }

    /// Marks free `slot` in flight on `connection` with this request.
    #[inline]
    pub fn begin(&mut self, slot: usize, connection: u16, direction: Direction, length: u32) {
        self.states[slot] = SlotState {
            phase: Phase::InFlight,
            direction,
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
            direction: state.direction,
            length: state.length,
        })
    }

    /// Finishes in-flight `slot` with `result` (bytes or a negative errno).
    #[inline]
    pub fn complete(&mut self, slot: u32, result: i64) {
        self.states[slot as usize].phase = Phase::Done;
        self.ready.push_back(Completion { slot, result });
    }

    /// The buffer of `slot`.
    #[inline]
    pub fn buffer_mut(&mut self, slot: usize) -> &mut [u8] {
        self.buffers.slot_mut(slot)
    }

    /// Start of the buffer of `slot`, for handing to the kernel.
    #[inline]
    pub fn buffer_ptr(&self, slot: usize) -> *mut u8 {
        self.buffers.slot_ptr(slot)
    }

    /// Completions parsed and not reaped yet.
    #[inline]
    pub fn ready(&self) -> usize {
        self.ready.len()
    }

    /// Moves up to `completions.len()` ready completions into `completions`, freeing their
    /// slots; returns how many.
    #[inline]
    pub fn take_ready(&mut self, completions: &mut [Completion]) -> usize {
        let count = self.ready.len().min(completions.len());
        for (out, completion) in completions.iter_mut().zip(self.ready.drain(..count)) {
            self.states[completion.slot as usize].phase = Phase::Free;
            *out = completion;
        }
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_goes_round() {
        let mut slots = Slots::new(2, 4096);
        assert_eq!(slots.is_free(1), Some(true));
        assert_eq!(slots.is_free(2), None);
        slots.begin(1, 0, Direction::Write, 512);
        assert_eq!(slots.is_free(1), Some(false));
        assert!(slots.answer(1, 1).is_err(), "other connection");
        assert!(slots.answer(0, 0).is_err(), "free slot");
        assert!(slots.answer(u64::MAX, 0).is_err(), "no such slot");
        let answered = slots.answer(1, 0).unwrap();
        assert_eq!((answered.slot, answered.length), (1, 512));
        slots.complete(1, 512);
        assert!(slots.answer(1, 0).is_err(), "answered twice");
        let mut out = [Completion::default(); 2];
        assert_eq!(slots.take_ready(&mut out), 1);
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
