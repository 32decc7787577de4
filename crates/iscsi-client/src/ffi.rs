//! The C types and constants of libiscsi 1.19 (`libiscsi.so.7`) that this crate touches,
//! declared from its public headers (`iscsi/iscsi.h`, `iscsi/scsi-lowlevel.h`).
//!
//! Only what is read or passed is declared. `struct scsi_task` is declared whole so that the
//! offsets of the fields we read (status, residual, sense, data-in) are those of the C
//! compiler; the layout was checked against the installed headers with `offsetof` on
//! x86-64 (176 bytes, `residual` at 40, `sense` at 48, `datain` at 64) and is asserted at
//! compile time below for 64-bit Linux.

use libc::{c_int, c_uchar, c_void, size_t};
use std::marker::{PhantomData, PhantomPinned};

/// `struct iscsi_context`: opaque; only ever handled through a pointer.
#[repr(C)]
pub struct IscsiContext {
    _opaque: [u8; 0],
    _not_send_sync_or_unpin: PhantomData<(*mut u8, PhantomPinned)>,
}

/// `iscsi_command_cb`: how libiscsi reports a finished command, login or logout. For SCSI
/// commands `command_data` is the `struct scsi_task`; `private_data` is what was passed
/// when the command was issued.
pub type CommandCallback = unsafe extern "C" fn(
    context: *mut IscsiContext,
    status: c_int,
    command_data: *mut c_void,
    private_data: *mut c_void,
);

/// `enum iscsi_session_type`: a normal (I/O) session.
pub const ISCSI_SESSION_NORMAL: c_int = 2;
/// `enum iscsi_header_digest`: offer no header digest, accept CRC32C if the target insists.
pub const ISCSI_HEADER_DIGEST_NONE_CRC32C: c_int = 1;

/// `enum scsi_status`: the command succeeded.
pub const SCSI_STATUS_GOOD: c_int = 0;
/// The command failed with sense data in `scsi_task::sense`.
pub const SCSI_STATUS_CHECK_CONDITION: c_int = 2;
/// Another initiator holds a reservation.
pub const SCSI_STATUS_RESERVATION_CONFLICT: c_int = 0x18;
/// libiscsi cancelled the command (the session was dropped or the context destroyed).
pub const SCSI_STATUS_CANCELLED: c_int = 0x0f00_0000;
/// libiscsi could not complete the command (transport error, unexpected status, timeout).
pub const SCSI_STATUS_ERROR: c_int = 0x0f00_0001;
/// The command ran past the timeout set with `iscsi_set_timeout`.
pub const SCSI_STATUS_TIMEOUT: c_int = 0x0f00_0002;

/// `enum scsi_residual`: fewer bytes were transferred than asked for.
pub const SCSI_RESIDUAL_UNDERFLOW: c_int = 1;

/// `enum scsi_sense_key` values this crate distinguishes.
pub mod sense_key {
    use libc::c_int;
    /// The logical unit is not ready.
    pub const NOT_READY: c_int = 0x02;
    /// Unrecoverable medium error.
    pub const MEDIUM_ERROR: c_int = 0x03;
    /// The target's hardware failed.
    pub const HARDWARE_ERROR: c_int = 0x04;
    /// The command or its parameters are not valid for this logical unit.
    pub const ILLEGAL_REQUEST: c_int = 0x05;
    /// Something changed on the logical unit (reset, capacity, …).
    pub const UNIT_ATTENTION: c_int = 0x06;
    /// The medium is write protected (or space allocation failed).
    pub const DATA_PROTECTION: c_int = 0x07;
    /// The target aborted the command.
    pub const ABORTED_COMMAND: c_int = 0x0b;
}

/// Additional sense code and qualifier (ASC << 8 | ASCQ) values this crate distinguishes.
pub mod additional_sense {
    use libc::c_int;
    /// SPACE ALLOCATION FAILED WRITE PROTECT (a thin-provisioned volume ran out of space).
    pub const SPACE_ALLOCATION_FAILED: c_int = 0x2707;
}

/// `struct scsi_sense`. The three one-bit fields after `ascq` share one byte (GCC packs the
/// `unsigned x:1` fields at offset 12 and places `bit_pointer` right after them).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ScsiSense {
    /// Response code (0x70–0x73).
    pub error_type: c_uchar,
    /// `enum scsi_sense_key`.
    pub key: c_int,
    /// Additional sense code and qualifier, ASC << 8 | ASCQ.
    pub ascq: c_int,
    /// `sense_specific`, `ill_param_in_cdb`, `bit_pointer_valid` (bits 0–2).
    pub specific_flags: c_uchar,
    /// Bit pointer of a sense-key-specific descriptor.
    pub bit_pointer: c_uchar,
    /// Field pointer of a sense-key-specific descriptor.
    pub field_pointer: u16,
}

/// `struct scsi_data`: a buffer owned by the task.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ScsiData {
    /// Bytes at `data`.
    pub size: c_int,
    /// Start of the buffer (may be null when `size` is 0).
    pub data: *mut c_uchar,
}

/// `struct scsi_iovec`, laid out like `struct iovec`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ScsiIovec {
    /// Start of the memory.
    pub iov_base: *mut c_void,
    /// Its length in bytes.
    pub iov_len: size_t,
}

/// `struct scsi_iovector`: libiscsi's cursor over a task's iovecs.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ScsiIovector {
    iov: *mut ScsiIovec,
    niov: c_int,
    nalloc: c_int,
    offset: size_t,
    consumed: c_int,
}

/// `struct scsi_task`: one SCSI command and, once finished, its outcome.
#[repr(C)]
#[derive(Debug)]
pub struct ScsiTask {
    /// `enum scsi_status` of the finished command.
    pub status: c_int,
    cdb_size: c_int,
    xfer_dir: c_int,
    expxferlen: c_int,
    cdb: [c_uchar; 16],
    /// `enum scsi_residual`.
    pub residual_status: c_int,
    /// Bytes not transferred (underflow) or not asked for (overflow).
    pub residual: size_t,
    /// Sense data of a CHECK CONDITION.
    pub sense: ScsiSense,
    /// Data-in of a command that was not given its own buffer.
    pub datain: ScsiData,
    mem: *mut c_void,
    ptr: *mut c_void,
    itt: u32,
    cmdsn: u32,
    lun: u32,
    iovector_in: ScsiIovector,
    iovector_out: ScsiIovector,
}

/// `struct unmap_list`: one range of an UNMAP command (libiscsi copies it into the command's
/// parameter data, so it need only live for the call).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct UnmapList {
    /// First logical block.
    pub lba: u64,
    /// Number of blocks.
    pub num: u32,
}

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
const _: () = {
    assert!(size_of::<UnmapList>() == 16);
    use std::mem::{offset_of, size_of};
    assert!(size_of::<ScsiSense>() == 16);
    assert!(offset_of!(ScsiSense, key) == 4);
    assert!(offset_of!(ScsiSense, ascq) == 8);
    assert!(offset_of!(ScsiSense, bit_pointer) == 13);
    assert!(offset_of!(ScsiSense, field_pointer) == 14);
    assert!(size_of::<ScsiIovector>() == 32);
    assert!(size_of::<ScsiTask>() == 176);
    assert!(offset_of!(ScsiTask, residual_status) == 32);
    assert!(offset_of!(ScsiTask, residual) == 40);
    assert!(offset_of!(ScsiTask, sense) == 48);
    assert!(offset_of!(ScsiTask, datain) == 64);
    assert!(offset_of!(ScsiTask, iovector_in) == 112);
    assert!(size_of::<ScsiIovec>() == size_of::<libc::iovec>());
};
