//! Recognising what is written at the start of a device or image: filesystems, partition
//! tables, swap, volume-manager and RAID labels. Used to refuse overwriting something that
//! holds data.
//!
//! Only the first [`SIGNATURE_SCAN_BYTES`] are read; names follow `blkid` where it has one.
//!
//! ```
//! use iopath::targets::signature::detect_signature;
//! let mut sector = vec![0u8; 4096];
//! sector[0..4].copy_from_slice(b"XFSB");
//! assert_eq!(detect_signature(&sector), Some("xfs"));
//! assert_eq!(detect_signature(&[0u8; 4096]), None);
//! ```

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// How many bytes from the start of a device cover every signature recognised here
/// (the furthest is Btrfs's magic at 64 KiB + 64).
pub const SIGNATURE_SCAN_BYTES: usize = 68 * 1024;

/// Generic name of a DOS/MBR partition table or a boot sector whose filesystem is not
/// recognised: both end their first sector with 0x55 0xAA.
pub const MBR_OR_BOOT_SECTOR: &str = "mbr/boot-sector";

/// Page sizes at whose end a Linux swap signature may sit.
const SWAP_PAGE_SIZES: [usize; 5] = [4096, 8192, 16384, 32768, 65536];

/// `bytes[offset..]` starts with `magic`.
fn has(bytes: &[u8], offset: usize, magic: &[u8]) -> bool {
    bytes.get(offset..offset + magic.len()) == Some(magic)
}

/// Little-endian u32 at `offset`, when present.
fn le_u32(bytes: &[u8], offset: usize) -> Option<u32> {
    let raw = bytes.get(offset..offset + 4)?;
    Some(u32::from_le_bytes(raw.try_into().ok()?))
}

/// ext2, ext3 or ext4, told apart by feature flags the way `blkid` does.
fn ext_variant(bytes: &[u8]) -> Option<&'static str> {
    const SUPERBLOCK: usize = 1024;
    if !has(bytes, SUPERBLOCK + 56, &[0x53, 0xEF]) {
        return None;
    }
    let compat = le_u32(bytes, SUPERBLOCK + 92)?;
    let incompat = le_u32(bytes, SUPERBLOCK + 96)?;
    let read_only_compat = le_u32(bytes, SUPERBLOCK + 100)?;
    // Features ext3 understands: filetype, recover, meta_bg / sparse_super, large_file, btree_dir.
    const EXT3_INCOMPAT: u32 = 0x0002 | 0x0004 | 0x0010;
    const EXT3_READ_ONLY_COMPAT: u32 = 0x0001 | 0x0002 | 0x0004;
    const HAS_JOURNAL: u32 = 0x0004;
    if incompat & !EXT3_INCOMPAT != 0 || read_only_compat & !EXT3_READ_ONLY_COMPAT != 0 {
        Some("ext4")
    } else if compat & HAS_JOURNAL != 0 {
        Some("ext3")
    } else {
        Some("ext2")
    }
}

/// Linux swap (or a hibernation image in a swap area).
fn is_swap(bytes: &[u8]) -> bool {
    const MAGICS: [&[u8]; 6] = [
        b"SWAPSPACE2",
        b"SWAP-SPACE",
        b"S1SUSPEND\0",
        b"S2SUSPEND\0",
        b"ULSUSPEND\0",
        b"LINHIB0001",
    ];
    SWAP_PAGE_SIZES
        .iter()
        .any(|page| MAGICS.iter().any(|magic| has(bytes, page - 10, magic)))
}

/// An LVM2 physical-volume label in one of the first four 512-byte sectors.
fn is_lvm2_physical_volume(bytes: &[u8]) -> bool {
    (0..4).any(|sector| {
        let offset = sector * 512;
        has(bytes, offset, b"LABELONE") && has(bytes, offset + 24, b"LVM2 001")
    })
}

/// An md RAID superblock of version 1.1 (at 0) or 1.2 (at 4 KiB).
fn is_md_raid_member(bytes: &[u8]) -> bool {
    const MD_MAGIC: u32 = 0xa92b_4efc;
    le_u32(bytes, 0) == Some(MD_MAGIC) || le_u32(bytes, 4096) == Some(MD_MAGIC)
}

/// Names the first signature found in `bytes`, which hold the start of a device or image
/// (ideally [`SIGNATURE_SCAN_BYTES`] of them; fewer when the device is smaller).
///
/// Recognised: crypto_LUKS, LVM2_member, linux_raid_member (md 1.1/1.2), gpt, xfs,
/// ext2/ext3/ext4, btrfs, f2fs, iso9660, swap, ntfs, exfat, vfat, and any other sector ending in
/// 0x55 0xAA as [`MBR_OR_BOOT_SECTOR`]. More specific signatures are tried first (a GPT disk
/// also carries a protective MBR; a FAT boot sector also ends in 0x55 0xAA).
pub fn detect_signature(bytes: &[u8]) -> Option<&'static str> {
    if has(bytes, 0, b"LUKS\xba\xbe") {
        return Some("crypto_LUKS");
    }
    if is_lvm2_physical_volume(bytes) {
        return Some("LVM2_member");
    }
    if is_md_raid_member(bytes) {
        return Some("linux_raid_member");
    }
    if has(bytes, 512, b"EFI PART") || has(bytes, 4096, b"EFI PART") {
        return Some("gpt");
    }
    if has(bytes, 0, b"XFSB") {
        return Some("xfs");
    }
    if let Some(ext) = ext_variant(bytes) {
        return Some(ext);
    }
    if has(bytes, 65536 + 64, b"_BHRfS_M") {
        return Some("btrfs");
    }
    if le_u32(bytes, 1024) == Some(0xF2F5_2010) {
        return Some("f2fs");
    }
    if has(bytes, 32769, b"CD001") {
        return Some("iso9660");
    }
    if is_swap(bytes) {
        return Some("swap");
    }
    if has(bytes, 3, b"NTFS    ") {
        return Some("ntfs");
    }
    if has(bytes, 3, b"EXFAT   ") {
        return Some("exfat");
    }
    let boot_sector = has(bytes, 510, &[0x55, 0xAA]);
    if boot_sector && (has(bytes, 54, b"FAT") || has(bytes, 82, b"FAT32")) {
        return Some("vfat");
    }
    if boot_sector {
        return Some(MBR_OR_BOOT_SECTOR);
    }
    None
}

/// Reads the start of `file` (up to [`SIGNATURE_SCAN_BYTES`]) and names the first signature
/// found. Reading does not move the file position.
pub fn read_signature(file: &File) -> io::Result<Option<&'static str>> {
    let mut bytes = vec![0u8; SIGNATURE_SCAN_BYTES];
    let mut filled = 0;
    while filled < bytes.len() {
        match file.read_at(&mut bytes[filled..], filled as u64) {
            Ok(0) => break,
            Ok(count) => filled += count,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    bytes.truncate(filled);
    Ok(detect_signature(&bytes))
}

/// Opens `path` read-only and names the first signature found at its start.
pub fn read_signature_at(path: &Path) -> io::Result<Option<&'static str>> {
    read_signature(&File::open(path)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::devices::{run, tool};
    use crate::targets::test_support::{sfdisk, zero_image};
    use std::ffi::OsStr;

    /// Formats a fresh sparse image of `size_mib` MiB with `tool_name args… image` and returns
    /// the detected signature, or `None` (with a note) when the tool is not installed.
    fn format_and_detect(
        tool_name: &str,
        args: &[&str],
        size_mib: u64,
    ) -> Option<Option<&'static str>> {
        if !crate::support::require(
            tool(tool_name).is_some(),
            format_args!("{tool_name} is not installed"),
        ) {
            return None;
        }
        let directory = tempfile::tempdir().unwrap();
        let image = zero_image(directory.path(), "image", size_mib);
        let mut all: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        all.push(image.as_os_str());
        run(tool_name, &all);
        Some(read_signature_at(&image).unwrap())
    }

    #[test]
    fn zeroed_image_has_no_signature() {
        let directory = tempfile::tempdir().unwrap();
        let image = zero_image(directory.path(), "zero", 1);
        assert_eq!(read_signature_at(&image).unwrap(), None);
        assert_eq!(detect_signature(&[]), None);
        assert_eq!(detect_signature(&[0u8; 100]), None);
    }

    #[test]
    fn random_data_has_no_signature() {
        let mut rng = fastrand::Rng::with_seed(7);
        let mut bytes = vec![0u8; SIGNATURE_SCAN_BYTES];
        crate::fill::fill_random_bytes(&mut rng, &mut bytes);
        assert_eq!(detect_signature(&bytes), None);
    }

    #[test]
    fn short_images_are_read_whole() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("short");
        let mut bytes = vec![0u8; 1024];
        bytes[0..4].copy_from_slice(b"XFSB");
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(read_signature_at(&path).unwrap(), Some("xfs"));
    }

    #[test]
    fn mkfs_ext4_is_ext4() {
        if let Some(found) = format_and_detect("mkfs.ext4", &["-q", "-F"], 16) {
            assert_eq!(found, Some("ext4"));
        }
    }

    #[test]
    fn mkfs_ext2_and_ext3_are_told_apart() {
        if let Some(found) = format_and_detect("mkfs.ext2", &["-q", "-F"], 16) {
            assert_eq!(found, Some("ext2"));
        }
        if let Some(found) = format_and_detect("mkfs.ext3", &["-q", "-F"], 16) {
            assert_eq!(found, Some("ext3"));
        }
    }

    #[test]
    fn mkswap_is_swap() {
        if let Some(found) = format_and_detect("mkswap", &[], 16) {
            assert_eq!(found, Some("swap"));
        }
    }

    #[test]
    fn swap_signature_at_every_page_size() {
        for page in SWAP_PAGE_SIZES {
            let mut bytes = vec![0u8; SIGNATURE_SCAN_BYTES];
            bytes[page - 10..page].copy_from_slice(b"SWAPSPACE2");
            assert_eq!(detect_signature(&bytes), Some("swap"), "page size {page}");
        }
    }

    #[test]
    fn mkfs_xfs_is_xfs() {
        // XFS wants at least 300 MiB; the image is sparse.
        if let Some(found) = format_and_detect("mkfs.xfs", &["-q", "-f"], 320) {
            assert_eq!(found, Some("xfs"));
        }
    }

    #[test]
    fn mkfs_btrfs_is_btrfs() {
        if let Some(found) = format_and_detect("mkfs.btrfs", &["-q", "-f"], 128) {
            assert_eq!(found, Some("btrfs"));
        }
    }

    #[test]
    fn mkfs_vfat_is_vfat() {
        if let Some(found) = format_and_detect("mkfs.vfat", &[], 16) {
            assert_eq!(found, Some("vfat"));
        }
    }

    #[test]
    fn lvm2_label_in_any_of_the_first_four_sectors() {
        for sector in 0..4 {
            let mut bytes = vec![0u8; SIGNATURE_SCAN_BYTES];
            let offset = sector * 512;
            bytes[offset..offset + 8].copy_from_slice(b"LABELONE");
            bytes[offset + 24..offset + 32].copy_from_slice(b"LVM2 001");
            assert_eq!(detect_signature(&bytes), Some("LVM2_member"));
            bytes[offset + 24..offset + 32].copy_from_slice(b"LVM3 001");
            assert_eq!(detect_signature(&bytes), None);
        }
    }

    #[test]
    fn gpt_at_512_and_4096_iso9660_and_boot_sectors() {
        for offset in [512, 4096] {
            let mut bytes = vec![0u8; SIGNATURE_SCAN_BYTES];
            bytes[offset..offset + 8].copy_from_slice(b"EFI PART");
            bytes[510] = 0x55;
            bytes[511] = 0xAA;
            assert_eq!(detect_signature(&bytes), Some("gpt"), "offset {offset}");
        }
        let mut bytes = vec![0u8; SIGNATURE_SCAN_BYTES];
        bytes[32769..32774].copy_from_slice(b"CD001");
        assert_eq!(detect_signature(&bytes), Some("iso9660"));
        let mut bytes = vec![0u8; 512];
        bytes[510] = 0x55;
        bytes[511] = 0xAA;
        assert_eq!(detect_signature(&bytes), Some(MBR_OR_BOOT_SECTOR));
        bytes[3..11].copy_from_slice(b"NTFS    ");
        assert_eq!(detect_signature(&bytes), Some("ntfs"));
    }

    #[test]
    fn sgdisk_table_is_gpt() {
        crate::support::skip_unless!(
            tool("sgdisk").is_some(),
            "sgdisk is not installed (apt-get install gdisk)"
        );
        let directory = tempfile::tempdir().unwrap();
        let image = zero_image(directory.path(), "disk", 16);
        run(
            "sgdisk",
            &[
                OsStr::new("-o"),
                OsStr::new("-n"),
                OsStr::new("1:0:0"),
                image.as_os_str(),
            ],
        );
        assert_eq!(read_signature_at(&image).unwrap(), Some("gpt"));
    }

    #[test]
    fn sfdisk_tables_are_mbr_and_gpt() {
        crate::support::skip_unless!(
            tool("sfdisk").is_some(),
            "sfdisk is not installed (apt-get install fdisk)"
        );
        let directory = tempfile::tempdir().unwrap();
        let dos = zero_image(directory.path(), "dos", 16);
        sfdisk(&dos, "label: dos\n,,L\n");
        assert_eq!(read_signature_at(&dos).unwrap(), Some(MBR_OR_BOOT_SECTOR));
        let gpt = zero_image(directory.path(), "gpt", 16);
        sfdisk(&gpt, "label: gpt\n,,L\n");
        assert_eq!(read_signature_at(&gpt).unwrap(), Some("gpt"));
    }
}
