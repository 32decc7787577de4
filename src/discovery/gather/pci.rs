//! The PCI functions on the way to a device: their PCI Express links (Documentation/ABI/
//! testing/sysfs-bus-pci: `current_link_speed`, `current_link_width`, `max_link_speed`,
//! `max_link_width`) and, from the configuration space (`config`), the PCI-X capability and
//! the PCI Express Max_Payload_Size in force (register layout: include/uapi/linux/pci_regs.h).

use super::Gatherer;
use crate::discovery::facts::{PciFunctionFacts, PcieLinkFacts, PcixFacts};
use std::path::{Path, PathBuf};

/// Bytes of configuration space read (the extended space is not needed).
const CONFIG_BYTES: usize = 256;
/// Standard header: Status register, its Capabilities List bit, Header Type and the first
/// capability pointer.
const STATUS: usize = 0x06;
const STATUS_CAPABILITY_LIST: u16 = 0x10;
const HEADER_TYPE: usize = 0x0e;
const CAPABILITY_POINTER: usize = 0x34;
/// Capability IDs.
const CAPABILITY_PCIX: u8 = 0x07;
const CAPABILITY_EXPRESS: u8 = 0x10;
/// PCI-X device status (offset 4, 32 bits) and bridge secondary status (offset 2, 16 bits).
const PCIX_STATUS_64BIT: u32 = 0x0001_0000;
const PCIX_STATUS_133MHZ: u32 = 0x0002_0000;
const PCIX_STATUS_266MHZ: u32 = 0x4000_0000;
const PCIX_STATUS_533MHZ: u32 = 0x8000_0000;
const PCIX_SECONDARY_64BIT: u16 = 0x0001;
const PCIX_SECONDARY_FREQUENCY: u16 = 0x03c0;
/// PCI Express Device Control register (offset 8) and its Max_Payload_Size field.
const EXPRESS_DEVICE_CONTROL: usize = 8;
const EXPRESS_PAYLOAD_FIELD: u16 = 0x00e0;

impl Gatherer<'_> {
    /// Every PCI function on the way to the device at `device_path` (a resolved sysfs path),
    /// outermost first.
    pub(super) fn pci_chain(&self, device_path: &Path) -> Vec<PciFunctionFacts> {
        pci_functions(device_path)
            .iter()
            .map(|function| self.pci_function(function))
            .collect()
    }

    fn pci_function(&self, directory: &Path) -> PciFunctionFacts {
        let view = self.view();
        let address = directory
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let link = view
            .attribute(&directory.join("current_link_speed"))
            .zip(view.number::<u32>(&directory.join("current_link_width")))
            .filter(|(_, width)| *width > 0)
            .map(|(current_speed, current_width)| PcieLinkFacts {
                current_speed,
                current_width,
                max_speed: view.attribute(&directory.join("max_link_speed")),
                max_width: view.number(&directory.join("max_link_width")),
            });
        let config = view
            .read_bytes(&directory.join("config"), CONFIG_BYTES)
            .unwrap_or_default();
        let capabilities = ConfigSpace(&config);
        PciFunctionFacts {
            address,
            vendor: view.attribute(&directory.join("vendor")),
            device: view.attribute(&directory.join("device")),
            subsystem_vendor: view.attribute(&directory.join("subsystem_vendor")),
            link,
            pcix: capabilities.pcix(),
            max_payload_bytes: capabilities.max_payload_bytes(),
        }
    }
}

/// Every PCI function directory (`…/0000:01:00.0`) on the way to `path`, outermost first.
pub fn pci_functions(path: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut current = PathBuf::new();
    for component in path.components() {
        current.push(component);
        if is_pci_address(&component.as_os_str().to_string_lossy()) {
            found.push(current.clone());
        }
    }
    found
}

/// `DDDD:BB:DD.F`.
pub fn is_pci_address(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 12
        && bytes[4] == b':'
        && bytes[7] == b':'
        && bytes[10] == b'.'
        && text
            .chars()
            .enumerate()
            .all(|(i, c)| matches!(i, 4 | 7 | 10) || c.is_ascii_hexdigit())
}

/// A function's configuration space, as far as it could be read (64 bytes without
/// privileges: the capabilities usually lie beyond).
struct ConfigSpace<'a>(&'a [u8]);

impl ConfigSpace<'_> {
    fn byte(&self, offset: usize) -> Option<u8> {
        self.0.get(offset).copied()
    }

    fn word(&self, offset: usize) -> Option<u16> {
        Some(u16::from_le_bytes([
            self.byte(offset)?,
            self.byte(offset + 1)?,
        ]))
    }

    fn dword(&self, offset: usize) -> Option<u32> {
        Some(u32::from_le_bytes([
            self.byte(offset)?,
            self.byte(offset + 1)?,
            self.byte(offset + 2)?,
            self.byte(offset + 3)?,
        ]))
    }

    /// The offset of capability `id`, following the list (at most 48 entries, as the
    /// kernel does).
    fn capability(&self, id: u8) -> Option<usize> {
        if self.word(STATUS)? & STATUS_CAPABILITY_LIST == 0 {
            return None;
        }
        let mut pointer = usize::from(self.byte(CAPABILITY_POINTER)? & 0xfc);
        for _ in 0..48 {
            if pointer < 0x40 {
                return None;
            }
            if self.byte(pointer)? == id {
                return Some(pointer);
            }
            pointer = usize::from(self.byte(pointer + 1)? & 0xfc);
        }
        None
    }

    fn pcix(&self) -> Option<PcixFacts> {
        let offset = self.capability(CAPABILITY_PCIX)?;
        if self.byte(HEADER_TYPE)? & 0x7f == 1 {
            let status = self.word(offset + 2)?;
            Some(PcixFacts::Bridge {
                bits64: status & PCIX_SECONDARY_64BIT != 0,
                mode_frequency: ((status & PCIX_SECONDARY_FREQUENCY) >> 6) as u8,
            })
        } else {
            let status = self.dword(offset + 4)?;
            Some(PcixFacts::Device {
                bits64: status & PCIX_STATUS_64BIT != 0,
                capable_133: status & PCIX_STATUS_133MHZ != 0,
                capable_266: status & PCIX_STATUS_266MHZ != 0,
                capable_533: status & PCIX_STATUS_533MHZ != 0,
            })
        }
    }

    fn max_payload_bytes(&self) -> Option<u32> {
        let offset = self.capability(CAPABILITY_EXPRESS)?;
        let control = self.word(offset + EXPRESS_DEVICE_CONTROL)?;
        Some(128 << ((control & EXPRESS_PAYLOAD_FIELD) >> 5))
    }
}

/// Configuration space bytes with the given capabilities, for building machines in tests:
/// `header_type` 0 (device) or 1 (bridge); each capability is its ID and the bytes after the
/// ID and next pointer.
#[cfg(test)]
pub fn config_space(header_type: u8, capabilities: &[(u8, Vec<u8>)]) -> Vec<u8> {
    let mut bytes = vec![0u8; CONFIG_BYTES];
    bytes[HEADER_TYPE] = header_type;
    if capabilities.is_empty() {
        return bytes;
    }
    bytes[STATUS] = STATUS_CAPABILITY_LIST as u8;
    let mut offset = 0x40usize;
    bytes[CAPABILITY_POINTER] = offset as u8;
    for (index, (id, body)) in capabilities.iter().enumerate() {
        let next = offset + 2 + body.len().div_ceil(4) * 4 + 2;
        bytes[offset] = *id;
        bytes[offset + 1] = if index + 1 < capabilities.len() {
            next as u8
        } else {
            0
        };
        bytes[offset + 2..offset + 2 + body.len()].copy_from_slice(body);
        offset = next;
    }
    bytes
}

/// The body of a PCI-X device capability.
#[cfg(test)]
pub fn pcix_device_capability(bits64: bool, capable_133: bool, capable_266: bool) -> (u8, Vec<u8>) {
    let mut status = 0u32;
    if bits64 {
        status |= PCIX_STATUS_64BIT;
    }
    if capable_133 {
        status |= PCIX_STATUS_133MHZ;
    }
    if capable_266 {
        status |= PCIX_STATUS_266MHZ;
    }
    let mut body = vec![0u8; 2];
    body.extend_from_slice(&status.to_le_bytes());
    (CAPABILITY_PCIX, body)
}

/// The body of a PCI-X bridge capability whose secondary bus runs in `mode_frequency`.
#[cfg(test)]
pub fn pcix_bridge_capability(bits64: bool, mode_frequency: u8) -> (u8, Vec<u8>) {
    let mut status = u16::from(mode_frequency & 0x0f) << 6;
    if bits64 {
        status |= PCIX_SECONDARY_64BIT;
    }
    (CAPABILITY_PCIX, status.to_le_bytes().to_vec())
}

/// The body of a PCI Express capability whose Device Control sets Max_Payload_Size.
#[cfg(test)]
pub fn express_capability(max_payload_bytes: u32) -> (u8, Vec<u8>) {
    let code = (max_payload_bytes / 128).trailing_zeros() as u16;
    let mut body = vec![0u8; 10];
    body[EXPRESS_DEVICE_CONTROL - 2..EXPRESS_DEVICE_CONTROL]
        .copy_from_slice(&(code << 5).to_le_bytes());
    (CAPABILITY_EXPRESS, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_functions_are_found_in_a_device_path() {
        assert!(is_pci_address("0000:00:02.0"));
        assert!(is_pci_address("0000:3b:00.1"));
        assert!(!is_pci_address("pci0000:00"));
        assert!(!is_pci_address("virtio1"));
        let path = Path::new(
            "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:03:00.0/nvme/nvme0",
        );
        let functions = pci_functions(path);
        assert_eq!(functions.len(), 4);
        assert!(functions[3].ends_with("0000:03:00.0"));
    }

    #[test]
    fn capabilities_are_read_from_the_configuration_space() {
        let device = config_space(
            0,
            &[
                express_capability(512),
                pcix_device_capability(true, true, true),
            ],
        );
        let space = ConfigSpace(&device);
        assert_eq!(space.max_payload_bytes(), Some(512));
        assert_eq!(
            space.pcix(),
            Some(PcixFacts::Device {
                bits64: true,
                capable_133: true,
                capable_266: true,
                capable_533: false
            })
        );
        let bridge = config_space(1, &[pcix_bridge_capability(true, 0x0b)]);
        assert_eq!(
            ConfigSpace(&bridge).pcix(),
            Some(PcixFacts::Bridge {
                bits64: true,
                mode_frequency: 0x0b
            })
        );
        assert_eq!(ConfigSpace(&bridge).max_payload_bytes(), None);
        // Only the first 64 bytes (unprivileged), a list that loops, nothing at all.
        assert_eq!(ConfigSpace(&device[..64]).pcix(), None);
        let mut looping = config_space(0, &[express_capability(256)]);
        looping[0x41] = 0x40;
        looping[0x40] = 0x05;
        assert_eq!(ConfigSpace(&looping).max_payload_bytes(), None);
        assert_eq!(ConfigSpace(&[]).pcix(), None);
    }
}
