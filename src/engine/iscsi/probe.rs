//! What an iSCSI logical unit is, learned over one short session before the run: INQUIRY
//! (it must be a disk), READ CAPACITY (16, or 10 where 16 is refused), the Block Limits VPD
//! page (largest transfer), MODE SENSE (write protection, FUA) and the first 68 KiB.

use super::{connect, setup_error};
use crate::engine::EngineError;
use crate::engine::volume::NetworkVolumeInfo;
use crate::targets::network_target::NetworkTarget;
use iscsi_client::session::Session;
use std::io;
use std::time::Duration;

/// Bytes read from the start of the volume for signature detection.
pub const HEAD_BYTES: u32 = 68 * 1024;

/// Peripheral device type of a direct-access block device (a disk).
const DIRECT_ACCESS_DEVICE: u8 = 0x00;

/// Connects to `target`, learns its geometry and reads its first bytes, then logs out; the
/// login and each command may take `timeout`.
pub fn probe(target: &NetworkTarget, timeout: Duration) -> Result<NetworkVolumeInfo, EngineError> {
    let mut session = connect(target, timeout)?;
    let volume = probe_session(&mut session).map_err(setup_error)?;
    session.logout(timeout).map_err(setup_error)?;
    Ok(volume)
}

fn probe_session(session: &mut Session) -> Result<NetworkVolumeInfo, io::Error> {
    check_is_disk(session)?;
    let capacity = read_capacity(session)?;
    let limits = block_limits(session).unwrap_or_default();
    let max_transfer_blocks = limits.max_transfer_blocks;
    let max_request_bytes =
        u32::try_from(u64::from(max_transfer_blocks) * u64::from(capacity.block_size_bytes))
            .unwrap_or(u32::MAX);
    let flags = mode_flags(session).unwrap_or_default();
    let head = read_head(session, &capacity, max_request_bytes)?;
    Ok(NetworkVolumeInfo {
        size_bytes: capacity.size_bytes(),
        logical_block_size: capacity.block_size_bytes,
        preferred_block_size: capacity.physical_block_size_bytes(),
        max_request_bytes,
        read_only: flags.write_protected,
        // SYNCHRONIZE CACHE is part of every SBC disk's command set.
        flush: true,
        fua: flags.dpo_fua,
        // UNMAP only where READ CAPACITY(16) says provisioning is managed (LBPME) and the
        // Logical Block Provisioning VPD page lists UNMAP (LBPU).
        trim: capacity.thin_provisioned && unmap_supported(session),
        max_trim_bytes: u64::from(limits.max_unmap_blocks) * u64::from(capacity.block_size_bytes),
        head,
        to_create: false,
        transfer_sizes: None,
        file_session: None,
        multichannel: false,
        server_interfaces: Vec::new(),
        file_handle: None,
    })
}

/// Fails unless the LUN is a direct-access block device (tgt, for one, puts a storage array
/// controller at LUN 0 and its disks from LUN 1).
fn check_is_disk(session: &mut Session) -> Result<(), io::Error> {
    let inquiry = session
        .run(
            "INQUIRY",
            session.timeout(),
            |library, context, lun, callback, private| {
                // SAFETY: `context` is the session's live context; the callback and its private
                // data are the session's own (see `Session::run`).
                unsafe { (library.inquiry_task)(context, lun, 0, 0, 96, callback, private) }
            },
        )?
        .check("INQUIRY")?;
    match device_type(inquiry.data_in()) {
        Some(DIRECT_ACCESS_DEVICE) => Ok(()),
        Some(other) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is a {} (peripheral device type {other:#04x}), not a disk{}",
                session.description(),
                device_type_name(other),
                if session.lun() == 0 {
                    "; tgt and many arrays put their disks at LUN 1 and up"
                } else {
                    ""
                }
            ),
        )),
        None => Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{}: no logical unit there", session.description()),
        )),
    }
}

/// Size and block sizes from READ CAPACITY.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    /// Address of the last logical block.
    pub last_lba: u64,
    /// Logical block size, bytes.
    pub block_size_bytes: u32,
    /// Logical blocks per physical block, as a power of two.
    pub blocks_per_physical_exponent: u8,
    /// Logical block provisioning (thin provisioning, UNMAP) is enabled.
    pub thin_provisioned: bool,
}

impl Capacity {
    /// Size of the volume, bytes.
    pub fn size_bytes(&self) -> u64 {
        (self.last_lba + 1).saturating_mul(u64::from(self.block_size_bytes))
    }

    /// Physical block size, bytes.
    pub fn physical_block_size_bytes(&self) -> u32 {
        self.block_size_bytes
            .checked_shl(u32::from(self.blocks_per_physical_exponent))
            .unwrap_or(self.block_size_bytes)
    }
}

/// READ CAPACITY(16), or READ CAPACITY(10) when the target refuses 16.
pub fn read_capacity(session: &mut Session) -> Result<Capacity, io::Error> {
    let sixteen = session.run(
        "READ CAPACITY(16)",
        session.timeout(),
        |library, context, lun, callback, private| {
            // SAFETY: as in `check_is_disk`.
            unsafe { (library.readcapacity16_task)(context, lun, callback, private) }
        },
    )?;
    if !sixteen.failed_with(iscsi_client::ffi::sense_key::ILLEGAL_REQUEST) {
        let sixteen = sixteen.check("READ CAPACITY(16)")?;
        return parse_read_capacity16(sixteen.data_in())
            .ok_or_else(|| short_answer("READ CAPACITY(16)"));
    }
    let ten = session
        .run(
            "READ CAPACITY(10)",
            session.timeout(),
            |library, context, lun, callback, private| {
                // SAFETY: as in `check_is_disk`.
                unsafe { (library.readcapacity10_task)(context, lun, 0, 0, callback, private) }
            },
        )?
        .check("READ CAPACITY(10)")?;
    parse_read_capacity10(ten.data_in()).ok_or_else(|| short_answer("READ CAPACITY(10)"))
}

fn short_answer(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{what}: the target's answer is too short or not usable"),
    )
}

/// What the Block Limits VPD page (0xb0) says, in blocks; 0: no limit given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct BlockLimits {
    /// MAXIMUM TRANSFER LENGTH.
    max_transfer_blocks: u32,
    /// MAXIMUM UNMAP LBA COUNT (0xffffffff, "no limit", reads as 0).
    max_unmap_blocks: u32,
}

/// The Block Limits VPD page's limits (`None` when not offered).
fn block_limits(session: &mut Session) -> Option<BlockLimits> {
    let page = session
        .run(
            "INQUIRY (Block Limits)",
            session.timeout(),
            |library, context, lun, callback, private| {
                // SAFETY: as in `check_is_disk`.
                unsafe { (library.inquiry_task)(context, lun, 1, 0xb0, 64, callback, private) }
            },
        )
        .ok()?
        .check("INQUIRY")
        .ok()?;
    parse_block_limits(page.data_in())
}

/// Whether the Logical Block Provisioning VPD page (0xb2) sets LBPU: the LUN accepts UNMAP
/// (false when the page is not offered).
fn unmap_supported(session: &mut Session) -> bool {
    session
        .run(
            "INQUIRY (Logical Block Provisioning)",
            session.timeout(),
            |library, context, lun, callback, private| {
                // SAFETY: as in `check_is_disk`.
                unsafe { (library.inquiry_task)(context, lun, 1, 0xb2, 64, callback, private) }
            },
        )
        .ok()
        .and_then(|answer| answer.check("INQUIRY").ok())
        .is_some_and(|page| parse_lbpu(page.data_in()))
}

/// The LBPU bit of a Logical Block Provisioning VPD page (byte 5, bit 7; the page code 0xb2
/// in byte 1).
fn parse_lbpu(data: &[u8]) -> bool {
    data.get(1) == Some(&0xb2) && data.get(5).is_some_and(|byte| byte & 0x80 != 0)
}

/// Flags of the MODE SENSE(6) header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ModeFlags {
    write_protected: bool,
    dpo_fua: bool,
}

/// The write-protect and DPO/FUA bits of the mode parameter header (`None` when MODE SENSE
/// is refused).
fn mode_flags(session: &mut Session) -> Option<ModeFlags> {
    let answer = session
        .run(
            "MODE SENSE(6)",
            session.timeout(),
            |library, context, lun, callback, private| {
                // SAFETY: as in `check_is_disk`. Current values (pc 0) of all pages (0x3f),
                // without block descriptors; only the 4-byte header is read.
                unsafe {
                    (library.modesense6_task)(context, lun, 1, 0, 0x3f, 0, 255, callback, private)
                }
            },
        )
        .ok()?
        .check("MODE SENSE(6)")
        .ok()?;
    parse_mode_header(answer.data_in())
}

/// The first [`HEAD_BYTES`] of the volume (fewer when it is smaller), in requests no larger
/// than the target accepts.
fn read_head(
    session: &mut Session,
    capacity: &Capacity,
    max_request_bytes: u32,
) -> Result<Vec<u8>, io::Error> {
    let block = capacity.block_size_bytes.max(1);
    let total = (u64::from(HEAD_BYTES).min(capacity.size_bytes()) / u64::from(block)
        * u64::from(block)) as u32;
    let limit = if max_request_bytes >= block {
        max_request_bytes / block * block
    } else {
        total
    };
    let mut head = Vec::with_capacity(total as usize);
    while (head.len() as u32) < total {
        let offset = head.len() as u32;
        let length = (total - offset).min(limit);
        let lba = u64::from(offset / block);
        let read = session
            .run(
                "READ(16)",
                session.timeout(),
                |library, context, lun, callback, private| {
                    // SAFETY: as in `check_is_disk`; the data lands in a buffer owned by the task.
                    unsafe {
                        (library.read16_task)(
                            context,
                            lun,
                            lba,
                            length,
                            block as libc::c_int,
                            0,
                            0,
                            0,
                            0,
                            0,
                            callback,
                            private,
                        )
                    }
                },
            )?
            .check("READ(16) of the first blocks")?;
        let data = read.data_in();
        if data.is_empty() {
            break;
        }
        head.extend_from_slice(&data[..data.len().min(length as usize)]);
    }
    Ok(head)
}

/// The peripheral device type of standard INQUIRY data (`None` when no unit is connected).
fn device_type(data: &[u8]) -> Option<u8> {
    let first = *data.first()?;
    // Peripheral qualifier 0: a unit of this type is connected.
    (first >> 5 == 0).then_some(first & 0x1f)
}

fn device_type_name(device_type: u8) -> &'static str {
    match device_type {
        0x00 => "disk",
        0x01 => "tape drive",
        0x05 => "CD/DVD drive",
        0x07 => "optical memory device",
        0x08 => "media changer",
        0x0c => "storage array controller",
        0x0d => "enclosure services device",
        0x1f => "unknown device",
        _ => "device other than a disk",
    }
}

fn be_u32(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(data.get(at..at + 4)?.try_into().ok()?))
}

fn be_u64(data: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(data.get(at..at + 8)?.try_into().ok()?))
}

/// READ CAPACITY(16) parameter data (SBC: last LBA, block length, exponent, LBPME).
fn parse_read_capacity16(data: &[u8]) -> Option<Capacity> {
    let capacity = Capacity {
        last_lba: be_u64(data, 0)?,
        block_size_bytes: be_u32(data, 8)?,
        blocks_per_physical_exponent: data.get(13).map_or(0, |byte| byte & 0x0f),
        thin_provisioned: data.get(14).is_some_and(|byte| byte & 0x80 != 0),
    };
    (capacity.block_size_bytes > 0).then_some(capacity)
}

/// READ CAPACITY(10) parameter data; a last LBA of 0xffffffff means the volume needs 16.
fn parse_read_capacity10(data: &[u8]) -> Option<Capacity> {
    let last_lba = be_u32(data, 0)?;
    let block_size_bytes = be_u32(data, 4)?;
    (last_lba != u32::MAX && block_size_bytes > 0).then_some(Capacity {
        last_lba: u64::from(last_lba),
        block_size_bytes,
        blocks_per_physical_exponent: 0,
        thin_provisioned: false,
    })
}

/// MAXIMUM TRANSFER LENGTH of a Block Limits VPD page (0: no limit reported).
fn parse_block_limits(data: &[u8]) -> Option<BlockLimits> {
    if *data.get(1)? != 0xb0 {
        return None;
    }
    Some(BlockLimits {
        max_transfer_blocks: be_u32(data, 8)?,
        max_unmap_blocks: be_u32(data, 20)
            .filter(|&count| count != u32::MAX)
            .unwrap_or(0),
    })
}

/// WP (bit 7) and DPOFUA (bit 4) of the device-specific parameter of a MODE SENSE(6) header.
fn parse_mode_header(data: &[u8]) -> Option<ModeFlags> {
    let device_specific = *data.get(2)?;
    Some(ModeFlags {
        write_protected: device_specific & 0x80 != 0,
        dpo_fua: device_specific & 0x10 != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unmap_bit_of_the_provisioning_page_is_read() {
        let mut page = [0u8; 8];
        page[1] = 0xb2;
        assert!(!parse_lbpu(&page));
        page[5] = 0x80;
        assert!(parse_lbpu(&page));
        assert!(!parse_lbpu(&page[..5]), "too short");
        page[1] = 0xb0;
        assert!(!parse_lbpu(&page), "another page");
    }

    #[test]
    fn read_capacity_answers_are_parsed() {
        let mut sixteen = [0u8; 32];
        sixteen[..8].copy_from_slice(&(2_097_151u64).to_be_bytes());
        sixteen[8..12].copy_from_slice(&512u32.to_be_bytes());
        sixteen[13] = 3;
        sixteen[14] = 0x80;
        let capacity = parse_read_capacity16(&sixteen).unwrap();
        assert_eq!(capacity.size_bytes(), 1 << 30);
        assert_eq!(capacity.physical_block_size_bytes(), 4096);
        assert!(capacity.thin_provisioned);
        assert_eq!(parse_read_capacity16(&sixteen[..10]), None);

        let mut ten = [0u8; 8];
        ten[..4].copy_from_slice(&262_143u32.to_be_bytes());
        ten[4..].copy_from_slice(&4096u32.to_be_bytes());
        assert_eq!(parse_read_capacity10(&ten).unwrap().size_bytes(), 1 << 30);
        ten[..4].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(parse_read_capacity10(&ten), None, "needs READ CAPACITY(16)");
    }

    #[test]
    fn inquiry_and_mode_answers_are_parsed() {
        assert_eq!(device_type(&[0x00, 0, 5]), Some(0));
        assert_eq!(device_type(&[0x0c]), Some(0x0c));
        assert_eq!(device_type(&[0x7f]), None, "qualifier 3: no unit");
        assert_eq!(device_type(&[]), None);

        let mut limits = [0u8; 64];
        limits[1] = 0xb0;
        limits[8..12].copy_from_slice(&2048u32.to_be_bytes());
        limits[20..24].copy_from_slice(&u32::MAX.to_be_bytes());
        let parsed = parse_block_limits(&limits).unwrap();
        assert_eq!(parsed.max_transfer_blocks, 2048);
        assert_eq!(parsed.max_unmap_blocks, 0, "no limit");
        limits[20..24].copy_from_slice(&8192u32.to_be_bytes());
        assert_eq!(parse_block_limits(&limits).unwrap().max_unmap_blocks, 8192);
        limits[1] = 0x80;
        assert_eq!(parse_block_limits(&limits), None);

        assert_eq!(
            parse_mode_header(&[0x23, 0, 0x90, 0]),
            Some(ModeFlags {
                write_protected: true,
                dpo_fua: true
            })
        );
        assert_eq!(
            parse_mode_header(&[0x23, 0, 0x00, 0]),
            Some(ModeFlags::default())
        );
    }
}
