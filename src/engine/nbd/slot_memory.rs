//! The engine's aligned buffer pool as the memory of the NBD client's slots.

use crate::engine::buffer::BufferPool;
use nbd_client::SlotBuffers;

// SAFETY: the pool's buffers are one heap allocation, made once in `BufferPool::new` and freed
// only on drop; moving the pool moves the pointer to it, not the memory. Every slot below
// `slots()` is `slot_size()` bytes at a fixed offset of that allocation.
unsafe impl SlotBuffers for BufferPool {
    fn count(&self) -> usize {
        self.slots()
    }

    fn size(&self) -> usize {
        self.slot_size()
    }

    fn buffer(&self, slot: usize) -> &[u8] {
        self.slot(slot)
    }

    fn buffer_mut(&mut self, slot: usize) -> &mut [u8] {
        self.slot_mut(slot)
    }
}
