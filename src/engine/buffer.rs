//! Aligned I/O buffers: one per queue slot, allocated before the clock starts.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;

/// Alignment of every buffer: enough for O_DIRECT on any device (4 KiB pages).
pub const BUFFER_ALIGNMENT: usize = 4096;

/// A pool of `slots` buffers of `slot_size` bytes each, every one aligned to
/// [`BUFFER_ALIGNMENT`], in one allocation.
pub struct BufferPool {
    memory: NonNull<u8>,
    layout: Layout,
    slot_size: usize,
    slots: usize,
}

// SAFETY: the pool owns its memory exclusively; moving it to another thread moves that ownership.
unsafe impl Send for BufferPool {}

impl BufferPool {
    /// Allocates `slots` zeroed buffers of `slot_size` bytes (rounded up to the alignment).
    pub fn new(slots: usize, slot_size: usize) -> Self {
        let slot_size = slot_size.max(1).next_multiple_of(BUFFER_ALIGNMENT);
        let layout = Layout::from_size_align(slot_size * slots.max(1), BUFFER_ALIGNMENT)
            .expect("buffer pool size fits in memory");
        // SAFETY: the layout has a non-zero size.
        let memory = unsafe { alloc_zeroed(layout) };
        let memory = NonNull::new(memory).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        BufferPool {
            memory,
            layout,
            slot_size,
            slots: slots.max(1),
        }
    }

    /// Number of buffers.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Size of each buffer in bytes.
    pub fn slot_size(&self) -> usize {
        self.slot_size
    }

    /// The buffer of `slot`.
    pub fn slot(&self, slot: usize) -> &[u8] {
        assert!(slot < self.slots);
        // SAFETY: the range lies inside the allocation and is borrowed immutably with `self`.
        unsafe {
            std::slice::from_raw_parts(
                self.memory.as_ptr().add(slot * self.slot_size),
                self.slot_size,
            )
        }
    }

    /// The buffer of `slot`, writable.
    pub fn slot_mut(&mut self, slot: usize) -> &mut [u8] {
        assert!(slot < self.slots);
        // SAFETY: the range lies inside the allocation and is borrowed mutably with `self`.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.memory.as_ptr().add(slot * self.slot_size),
                self.slot_size,
            )
        }
    }

    /// Raw pointer to the start of the buffer of `slot`, for handing to the kernel.
    pub fn slot_ptr(&self, slot: usize) -> *mut u8 {
        assert!(slot < self.slots);
        // SAFETY: the offset stays inside the allocation.
        unsafe { self.memory.as_ptr().add(slot * self.slot_size) }
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with exactly this layout, freed once.
        unsafe { dealloc(self.memory.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fill::fill_random_bytes;

    #[test]
    fn buffers_are_aligned_and_separate() {
        let mut pool = BufferPool::new(3, 5000);
        assert_eq!(pool.slot_size(), 8192);
        for slot in 0..3 {
            assert_eq!(pool.slot_ptr(slot) as usize % BUFFER_ALIGNMENT, 0);
        }
        pool.slot_mut(1).fill(7);
        assert!(pool.slot(0).iter().all(|b| *b == 0));
        assert!(pool.slot(1).iter().all(|b| *b == 7));
        let mut rng = fastrand::Rng::with_seed(1);
        for slot in 0..3 {
            fill_random_bytes(&mut rng, pool.slot_mut(slot));
        }
        assert_ne!(pool.slot(0), pool.slot(2));
    }
}
