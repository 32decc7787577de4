//! `machine.toml`: what a recorded machine holds besides its files — the answers of system
//! calls (name lookups, routes, file states), the targets as they were inspected, and the
//! memory copy bandwidth measured there.
//!
//! ```
//! use iopath::discovery::machine_file::MachineFile;
//! let file = MachineFile::parse("format = 1\nmemory_copy_bytes_per_second = 10000000000\n\
//!     [[routes]]\ndestination = \"10.0.0.5\"\ninterface = \"eth2\"\n").unwrap();
//! assert_eq!(file.routes[0].interface.as_deref(), Some("eth2"));
//! assert!(MachineFile::parse("format = 7\n").is_err());
//! ```

use crate::result::TargetInfo;
use serde::{Deserialize, Serialize};
use std::net::IpAddr;
use std::path::PathBuf;

/// The name of the file in a recorded machine's directory.
pub const MACHINE_FILE: &str = "machine.toml";
/// The format this version writes and reads.
pub const FORMAT: u32 = 1;
/// Largest `machine.toml` read, bytes.
pub const MACHINE_FILE_LIMIT_BYTES: usize = 1 << 20;

/// The contents of `machine.toml`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineFile {
    /// Format version ([`FORMAT`]).
    pub format: u32,
    /// What the machine is, in a line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The documents its layout follows (a synthetic machine cites the kernel's ABI files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
    /// The version of iopath that recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_by: Option<String>,
    /// Memory copy bandwidth of one thread there, bytes per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_copy_bytes_per_second: Option<u64>,
    /// The targets as they were inspected there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetInfo>,
    /// Files whose state discovery asked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<RecordedFile>,
    /// Names discovery resolved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<RecordedHost>,
    /// Addresses discovery asked the route to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<RecordedRoute>,
}

/// The state of one file, as recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedFile {
    /// Its path there.
    pub path: PathBuf,
    /// Whether it existed.
    pub exists: bool,
    /// `st_dev` as `major:minor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Bytes allocated to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocated_bytes: Option<u64>,
    /// Its first 64 KiB read as zeros.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_zero: Option<bool>,
    /// The nearest existing directory above it, links resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory: Option<PathBuf>,
}

/// One name lookup, as recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedHost {
    /// The name.
    pub name: String,
    /// Its address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<IpAddr>,
    /// Why it had none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One route lookup, as recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedRoute {
    /// The address asked for.
    pub destination: IpAddr,
    /// The interface the kernel routed it through (none: no route).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
}

impl MachineFile {
    /// Parses `machine.toml` text; the error says what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let file: MachineFile = toml::from_str(text).map_err(|error| error.to_string())?;
        if file.format != FORMAT {
            return Err(format!(
                "format {} is not the format this iopath reads ({FORMAT})",
                file.format
            ));
        }
        Ok(file)
    }

    /// The text of `machine.toml`, with a header saying what it is.
    pub fn to_text(&self) -> Result<String, String> {
        let body = toml::to_string(self).map_err(|error| error.to_string())?;
        Ok(format!(
            "# A machine recorded for iopath (iopath path --root DIR TARGET shows its paths).\n\
             # The files beside this one are copies of what path discovery read there.\n{body}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::TargetKind;

    #[test]
    fn a_machine_file_round_trips() {
        let file = MachineFile {
            format: FORMAT,
            description: Some("two FC paths".into()),
            sources: vec!["Documentation/ABI/testing/sysfs-class-fc_host".into()],
            recorded_by: None,
            memory_copy_bytes_per_second: Some(8_000_000_000),
            targets: vec![TargetInfo {
                path: "/dev/mapper/mpatha".into(),
                kind: TargetKind::BlockDevice,
                size_bytes: 1 << 40,
                logical_block_size_bytes: 512,
                physical_block_size_bytes: 4096,
                rotational: None,
                filesystem: None,
                device: Some("dm-2".into()),
                direct_io_alignment_bytes: Some(512),
                created_by_iopath: false,
                transfer_sizes: None,
                file_session: None,
                created_content: None,
                allocated_bytes_looked: None,
                read_only: false,
            }],
            files: vec![RecordedFile {
                path: "/dev/mapper/mpatha".into(),
                exists: true,
                head_zero: Some(false),
                ..RecordedFile::default()
            }],
            hosts: vec![RecordedHost {
                name: "array".into(),
                address: Some("10.0.0.5".parse().unwrap()),
                error: None,
            }],
            routes: vec![RecordedRoute {
                destination: "10.0.0.5".parse().unwrap(),
                interface: Some("eth2".into()),
            }],
        };
        let text = file.to_text().unwrap();
        assert!(
            text.starts_with("# A machine recorded for iopath"),
            "{text}"
        );
        assert_eq!(MachineFile::parse(&text).unwrap(), file);
        let error = MachineFile::parse("format = 1\nsurprise = 2\n").unwrap_err();
        assert!(error.contains("surprise"), "{error}");
    }
}
