//! Data verification: every written block carries a header (offset, length, generation, the
//! run that wrote it, a checksum), and every block read back is checked against it and against
//! what the worker knows it wrote — so that a bad block names its target, its offset, what was
//! expected, what was found and which run wrote it, and a block never written reads as such.
//!
//! - [`checksum`]: the checksums (crc32c, crc32, md5, sha256, xxhash);
//! - [`header`]: the header layout, stamping a write, checking a read;
//! - [`ledger`]: which blocks a worker wrote, with which generation;
//! - [`log`]: what a worker's checks found, and whether a bad block stops it (the seam for
//!   error policies);
//! - [`pass_blocks`]: the blocks written since the last read-back of a pass, and its reads;
//! - [`state`]: the state file that carries a ledger from one run to the next;
//! - [`target_identity`]: which target a state describes.
//!
//! Pure code: no I/O but the state file's, no clock. The runner (`crate::run`) drives it.

pub mod checksum;
pub mod header;
pub mod ledger;
pub mod log;
pub mod pass_blocks;
pub mod state;
pub mod target_identity;
