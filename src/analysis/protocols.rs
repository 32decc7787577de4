//! Per-I/O header bytes of the storage protocols, so that a hop's utilisation counts requests
//! and replies, not just data.
//!
//! Each figure is what one I/O of a given size adds on top of its data, in each direction,
//! with the protocol's default or common settings (docs/links.md, "Protocol overhead"). The
//! framing of the link underneath (TCP/IP and Ethernet, FC frames) is already in the link's
//! payload rate and is not counted again here.
//!
//! ```
//! use iopath::analysis::protocols::Protocol;
//! use iopath::result::Direction;
//! // An NBD read: a 28-byte request goes out, a 16-byte reply header comes back with the data.
//! let overhead = Protocol::Nbd.per_io_overhead(Direction::Read, 4096);
//! assert_eq!((overhead.to_target_bytes, overhead.from_target_bytes), (28, 16));
//! ```

use crate::result::Direction;

/// A storage protocol whose headers travel with the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// Network Block Device, simple replies.
    Nbd,
    /// iSCSI with the RFC 7143 default parameters.
    Iscsi,
    /// NVMe over TCP, digests off.
    NvmeTcp,
    /// SMB 2/3 over direct TCP, unencrypted.
    Smb,
    /// NFS version 3 over TCP, AUTH_SYS.
    Nfs,
    /// NFS version 4.1 over TCP, AUTH_SYS: one COMPOUND (SEQUENCE, PUTFH, READ or WRITE) per
    /// request.
    Nfs41,
    /// SCSI over Fibre Channel (FCP).
    Fcp,
    /// Serial SCSI Protocol over SAS.
    Ssp,
    /// ATA native command queuing over SATA.
    Ata,
}

/// Header bytes one I/O adds in each direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WireOverhead {
    /// From the host to the target (requests, write headers).
    pub to_target_bytes: u64,
    /// From the target to the host (replies, read headers, transfer grants).
    pub from_target_bytes: u64,
}

/// iSCSI PDUs start with a 48-byte Basic Header Segment (RFC 7143 §11.2).
const ISCSI_BHS_BYTES: u64 = 48;
/// RFC 7143 default MaxRecvDataSegmentLength, which targets keep (tgtd does): data bytes per
/// Data-Out PDU.
const ISCSI_DATA_SEGMENT_BYTES: u64 = 8192;
/// The MaxRecvDataSegmentLength initiators declare (libiscsi, which iopath uses, and
/// open-iscsi's iscsid.conf both say 256 KiB): the target sends Data-In PDUs of up to it. At
/// the RFC's 8 KiB a 1 MiB read would cost 0.6 % in headers, and a 1GbE link that iopath's
/// lab fills with 117.7 MB/s of read data would be at 100.6 % of its payload.
const ISCSI_DATA_IN_SEGMENT_BYTES: u64 = 262_144;
/// RFC 7143 default MaxBurstLength: data bytes one R2T grants.
const ISCSI_MAX_BURST_BYTES: u64 = 262_144;
/// NVMe/TCP: bytes of data one R2T / H2CData PDU carries (a common MAXH2CDATA).
const NVME_TCP_H2C_DATA_BYTES: u64 = 131_072;
/// NVMe/TCP: largest write sent inside the command capsule (a common in-capsule data size).
const NVME_TCP_IN_CAPSULE_BYTES: u64 = 8192;
/// SMB and NFS: largest single READ or WRITE (common negotiated MaxReadSize / rsize).
const FILE_PROTOCOL_CHUNK_BYTES: u64 = 1_048_576;
/// A Fibre Channel frame costs 60 bytes besides its payload (SOF, header, CRC, EOF, idles).
const FC_FRAME_OVERHEAD_BYTES: u64 = 60;
/// A SAS frame costs 36 bytes besides its payload (SOF, header, CRC, EOF).
const SAS_FRAME_OVERHEAD_BYTES: u64 = 36;
/// A SATA frame costs 12 bytes besides its FIS (SOF, CRC, EOF).
const SATA_FRAME_OVERHEAD_BYTES: u64 = 12;

impl Protocol {
    /// Every protocol.
    pub const ALL: [Protocol; 9] = [
        Protocol::Iscsi,
        Protocol::Nbd,
        Protocol::Smb,
        Protocol::Nfs,
        Protocol::Nfs41,
        Protocol::NvmeTcp,
        Protocol::Fcp,
        Protocol::Ssp,
        Protocol::Ata,
    ];

    /// Name as written in reports (`iSCSI`).
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Nbd => "NBD",
            Protocol::Iscsi => "iSCSI",
            Protocol::NvmeTcp => "NVMe/TCP",
            Protocol::Smb => "SMB",
            Protocol::Nfs => "NFS",
            Protocol::Nfs41 => "NFSv4.1",
            Protocol::Fcp => "FCP",
            Protocol::Ssp => "SSP",
            Protocol::Ata => "ATA NCQ",
        }
    }

    /// Key stored in [`crate::result::Hop::protocol`] (`iscsi`).
    pub fn key(self) -> &'static str {
        match self {
            Protocol::Nbd => "nbd",
            Protocol::Iscsi => "iscsi",
            Protocol::NvmeTcp => "nvme-tcp",
            Protocol::Smb => "smb",
            Protocol::Nfs => "nfs",
            Protocol::Nfs41 => "nfs41",
            Protocol::Fcp => "fcp",
            Protocol::Ssp => "ssp",
            Protocol::Ata => "ata",
        }
    }

    /// The protocol with `key`.
    pub fn from_key(key: &str) -> Option<Self> {
        Protocol::ALL.into_iter().find(|p| p.key() == key)
    }

    /// Header bytes one I/O of `io_bytes` adds in each direction.
    pub fn per_io_overhead(self, direction: Direction, io_bytes: u64) -> WireOverhead {
        let read = direction == Direction::Read;
        let (to_target_bytes, from_target_bytes) = match self {
            // Request: magic 4, flags 2, type 2, cookie 8, offset 8, length 4 = 28.
            // Simple reply: magic 4, error 4, cookie 8 = 16.
            Protocol::Nbd => (28, 16),
            Protocol::Iscsi => iscsi(read, io_bytes),
            Protocol::NvmeTcp => nvme_tcp(read, io_bytes),
            Protocol::Smb => {
                let requests = io_bytes.div_ceil(FILE_PROTOCOL_CHUNK_BYTES).max(1);
                // Direct TCP header 4 + SMB2 header 64 + READ request 49 / WRITE request 48.
                // READ response 4 + 64 + 16 / WRITE response 4 + 64 + 17.
                if read {
                    (requests * 117, requests * 84)
                } else {
                    (requests * 116, requests * 85)
                }
            }
            Protocol::Nfs => {
                let requests = io_bytes.div_ceil(FILE_PROTOCOL_CHUNK_BYTES).max(1);
                // Record mark 4 + RPC call 24 + AUTH_SYS credential 36 + verifier 8 = 72;
                // reply: record mark 4 + RPC reply 24 = 28.
                // READ3args 48, READ3resok 104; WRITE3args 56, WRITE3resok 132.
                if read {
                    (requests * 120, requests * 132)
                } else {
                    (requests * 128, requests * 160)
                }
            }
            Protocol::Nfs41 => {
                let requests = io_bytes.div_ceil(FILE_PROTOCOL_CHUNK_BYTES).max(1);
                // Call 72 as NFSv3's + COMPOUND head 12 + SEQUENCE 36 + PUTFH with a 32-byte
                // handle 40 + READ 32 / WRITE 36; reply 28 + COMPOUND head 12 + SEQUENCE 44 +
                // PUTFH 8 + READ 16 / WRITE 24.
                if read {
                    (requests * 192, requests * 108)
                } else {
                    (requests * 196, requests * 116)
                }
            }
            Protocol::Fcp => {
                // FCP_CMND (32-byte IU) out; FCP_RSP (24) back; writes also get FCP_XFER_RDY (12).
                let command = 32 + FC_FRAME_OVERHEAD_BYTES;
                let response = 24 + FC_FRAME_OVERHEAD_BYTES;
                let transfer_ready = if read {
                    0
                } else {
                    12 + FC_FRAME_OVERHEAD_BYTES
                };
                (command, response + transfer_ready)
            }
            Protocol::Ssp => {
                // COMMAND frame (28-byte IU), RESPONSE frame (24), XFER_RDY for writes (12).
                let command = 28 + SAS_FRAME_OVERHEAD_BYTES;
                let response = 24 + SAS_FRAME_OVERHEAD_BYTES;
                let transfer_ready = if read {
                    0
                } else {
                    12 + SAS_FRAME_OVERHEAD_BYTES
                };
                (command, response + transfer_ready)
            }
            Protocol::Ata => {
                // Register H2D FIS 20 out; DMA Setup 28 and Set Device Bits 8 back; writes
                // also wait for a DMA Activate 4.
                let command = 20 + SATA_FRAME_OVERHEAD_BYTES;
                let replies = 28 + 8 + 2 * SATA_FRAME_OVERHEAD_BYTES;
                let activate = if read {
                    0
                } else {
                    4 + SATA_FRAME_OVERHEAD_BYTES
                };
                (command, replies + activate)
            }
        };
        WireOverhead {
            to_target_bytes,
            from_target_bytes,
        }
    }

    /// What the figures count, for listings.
    pub fn description(self) -> &'static str {
        match self {
            Protocol::Nbd => {
                "request 28 bytes (magic, flags, type, cookie, offset, length); simple reply 16 bytes (magic, error, cookie)"
            }
            Protocol::Iscsi => {
                "48-byte BHS per PDU: command; Data-In per 256 KiB (the initiator's MaxRecvDataSegmentLength); Data-Out per 8 KiB (the target's, RFC default); R2T per 256 KiB burst; 8 KiB immediate data; response; digests off"
            }
            Protocol::NvmeTcp => {
                "command capsule 72 (8 + 64-byte SQE); response capsule 24; C2HData 24 per read; writes above 8 KiB: R2T 24 and H2CData 24 per 128 KiB; digests off"
            }
            Protocol::Smb => {
                "per 1 MiB request: 4-byte direct TCP header + 64-byte SMB2 header + READ 49 / WRITE 48 bytes; responses 84 / 85 bytes"
            }
            Protocol::Nfs => {
                "NFSv3 per 1 MiB request: record mark, RPC call with AUTH_SYS 72; READ args 48, reply 132; WRITE args 56, reply 160"
            }
            Protocol::Nfs41 => {
                "NFSv4.1 per 1 MiB request: record mark, RPC call with AUTH_SYS 72; COMPOUND of SEQUENCE, PUTFH and READ 120 / WRITE 124, replies 108 / 116"
            }
            Protocol::Fcp => {
                "FCP_CMND frame 92, FCP_RSP frame 84, FCP_XFER_RDY frame 72 for writes (frame payload + 60 bytes of framing)"
            }
            Protocol::Ssp => {
                "COMMAND frame 64, RESPONSE frame 60, XFER_RDY frame 48 for writes (frame payload + 36 bytes of framing)"
            }
            Protocol::Ata => {
                "Register H2D FIS 32; DMA Setup and Set Device Bits FIS 60; DMA Activate 16 for writes (FIS + 12 bytes of framing)"
            }
        }
    }

    /// The document the figures come from.
    pub fn source(self) -> &'static str {
        match self {
            Protocol::Nbd => "NBD protocol specification (doc/proto.md of the NBD project)",
            Protocol::Iscsi => "RFC 7143 (iSCSI)",
            Protocol::NvmeTcp => "NVM Express TCP Transport Specification 1.0",
            Protocol::Smb => "[MS-SMB2] Server Message Block Protocol Versions 2 and 3",
            Protocol::Nfs => "RFC 1813 (NFSv3), RFC 5531 (ONC RPC), RFC 4506 (XDR)",
            Protocol::Nfs41 => "RFC 8881 (NFSv4.1), RFC 5531 (ONC RPC), RFC 4506 (XDR)",
            Protocol::Fcp => "INCITS T10 FCP-4, INCITS T11 FC-FS-3",
            Protocol::Ssp => "INCITS T10 SAS-3 / SPL",
            Protocol::Ata => "Serial ATA Revision 3.x (SATA-IO)",
        }
    }
}

/// iSCSI with RFC 7143 defaults (ImmediateData=Yes, InitialR2T=Yes, FirstBurstLength 64 KiB,
/// MaxBurstLength 256 KiB, the target's MaxRecvDataSegmentLength 8 KiB) and the initiator's
/// MaxRecvDataSegmentLength at 256 KiB (see [`ISCSI_DATA_IN_SEGMENT_BYTES`]).
fn iscsi(read: bool, io_bytes: u64) -> (u64, u64) {
    let pdus = |bytes: u64| bytes.div_ceil(ISCSI_DATA_SEGMENT_BYTES);
    if read {
        // SCSI Command out; Data-In PDUs and a SCSI Response back.
        let data_in = io_bytes.div_ceil(ISCSI_DATA_IN_SEGMENT_BYTES).max(1);
        (ISCSI_BHS_BYTES, (data_in + 1) * ISCSI_BHS_BYTES)
    } else {
        // Up to one segment rides in the command as immediate data; the rest waits for R2Ts.
        let rest = io_bytes.saturating_sub(ISCSI_DATA_SEGMENT_BYTES);
        let data_out = pdus(rest);
        let transfer_grants = rest.div_ceil(ISCSI_MAX_BURST_BYTES);
        (
            (1 + data_out) * ISCSI_BHS_BYTES,
            (transfer_grants + 1) * ISCSI_BHS_BYTES,
        )
    }
}

/// NVMe/TCP PDUs: 8-byte common header; command capsule 72, response capsule 24, data and
/// R2T PDUs 24.
fn nvme_tcp(read: bool, io_bytes: u64) -> (u64, u64) {
    const COMMAND: u64 = 72;
    const RESPONSE: u64 = 24;
    const DATA_HEADER: u64 = 24;
    if read {
        (COMMAND, DATA_HEADER + RESPONSE)
    } else if io_bytes <= NVME_TCP_IN_CAPSULE_BYTES {
        (COMMAND, RESPONSE)
    } else {
        let grants = io_bytes.div_ceil(NVME_TCP_H2C_DATA_BYTES);
        (
            COMMAND + grants * DATA_HEADER,
            grants * DATA_HEADER + RESPONSE,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overhead(protocol: Protocol, direction: Direction, bytes: u64) -> (u64, u64) {
        let o = protocol.per_io_overhead(direction, bytes);
        (o.to_target_bytes, o.from_target_bytes)
    }

    #[test]
    fn nbd_sends_a_request_and_gets_a_reply_header() {
        assert_eq!(overhead(Protocol::Nbd, Direction::Read, 1 << 20), (28, 16));
        assert_eq!(overhead(Protocol::Nbd, Direction::Write, 512), (28, 16));
    }

    #[test]
    fn iscsi_counts_one_header_per_data_segment() {
        // 4 KiB read: command out; one Data-In and a response back.
        assert_eq!(overhead(Protocol::Iscsi, Direction::Read, 4096), (48, 96));
        // 1 MiB read: 4 Data-In PDUs of 256 KiB + response.
        assert_eq!(
            overhead(Protocol::Iscsi, Direction::Read, 1 << 20),
            (48, 5 * 48)
        );
        // 4 KiB write: immediate data in the command; a response back.
        assert_eq!(overhead(Protocol::Iscsi, Direction::Write, 4096), (48, 48));
        // 1 MiB write: 8 KiB immediate, 127 Data-Out PDUs, 4 R2Ts of 256 KiB, response.
        assert_eq!(
            overhead(Protocol::Iscsi, Direction::Write, 1 << 20),
            (128 * 48, 5 * 48)
        );
    }

    #[test]
    fn nvme_tcp_smb_nfs_and_fc_count_their_headers() {
        assert_eq!(overhead(Protocol::NvmeTcp, Direction::Read, 4096), (72, 48));
        assert_eq!(
            overhead(Protocol::NvmeTcp, Direction::Write, 4096),
            (72, 24)
        );
        assert_eq!(
            overhead(Protocol::NvmeTcp, Direction::Write, 1 << 20),
            (72 + 8 * 24, 8 * 24 + 24)
        );
        assert_eq!(overhead(Protocol::Smb, Direction::Read, 65536), (117, 84));
        assert_eq!(
            overhead(Protocol::Smb, Direction::Write, 4 << 20),
            (4 * 116, 4 * 85)
        );
        assert_eq!(overhead(Protocol::Nfs, Direction::Read, 4096), (120, 132));
        assert_eq!(overhead(Protocol::Nfs, Direction::Write, 4096), (128, 160));
        assert_eq!(overhead(Protocol::Nfs41, Direction::Read, 4096), (192, 108));
        assert_eq!(
            overhead(Protocol::Nfs41, Direction::Write, 2 << 20),
            (392, 232)
        );
        assert_eq!(overhead(Protocol::Fcp, Direction::Read, 4096), (92, 84));
        assert_eq!(overhead(Protocol::Fcp, Direction::Write, 4096), (92, 156));
        assert_eq!(overhead(Protocol::Ssp, Direction::Write, 4096), (64, 108));
        assert_eq!(overhead(Protocol::Ata, Direction::Read, 4096), (32, 60));
    }

    #[test]
    fn keys_round_trip() {
        for protocol in Protocol::ALL {
            assert_eq!(Protocol::from_key(protocol.key()), Some(protocol));
            assert!(!protocol.description().is_empty());
            assert!(!protocol.source().is_empty());
        }
        assert_eq!(Protocol::from_key("smtp"), None);
    }
}
