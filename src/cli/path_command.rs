//! `iopath path TARGET [--link …] [--path …]`: the storage path of a target as discovered on
//! this host, with the hops declared beyond it, and what each hop can carry.

use super::exit::{self, Failed};
use super::links_command::print_lines;
use clap::Args;
use iopath::analysis::{DeclaredPath, HostFacts, describe_path, path::inspect_for_path};
use iopath::report::path::path_lines;

/// Flags of `iopath path`.
#[derive(Debug, Args)]
#[command(after_help = "\
The path is read from sysfs, the mount table and the routing table: file → filesystem → block
device and its stack (partition, device-mapper, md, loop and its backing file) → the disk → its
transport (NVMe, SATA, SAS, FC, virtio, iSCSI, USB) → the PCIe link of its controller; for
network storage the interface that routes to the server and its link. What cannot be seen is
declared, and marked as declared.

Examples:
  iopath path /dev/sdb --link 4gfc
  iopath path /mnt/data/file
  iopath path nbd://server/export --path \"10gbe,array:1.2GB/s\"")]
pub struct PathArgs {
    /// A file, a block device, or an nbd:// or iscsi:// URL.
    #[arg(value_name = "TARGET")]
    pub target: String,
    /// Declare the link to the storage where it cannot be seen (a catalog alias such as
    /// 4gfc, 10gbe, 10gbe-9000; `iopath links` lists them). May repeat.
    #[arg(long, value_name = "LINK")]
    pub link: Vec<String>,
    /// Declare hops beyond this host, in order: catalog aliases or NAME:RATE[:IOPS], such as
    /// "pcie3x8,40gbe,array:3.8GB/s". May repeat.
    #[arg(long = "path", value_name = "HOPS")]
    pub hops: Vec<String>,
    /// Also show how each capacity is derived.
    #[arg(long, short)]
    pub verbose: bool,
    /// Print the path as JSON (the same StoragePath a RunResult carries).
    #[arg(long)]
    pub json: bool,
}

/// Prints the path of `args.target`; returns the exit status.
pub fn run(args: &PathArgs) -> i32 {
    let declared = match DeclaredPath::from_flags(&args.link, &args.hops) {
        Ok(declared) => declared,
        Err(error) => return exit::fail(&error),
    };
    let info = match inspect_for_path(&args.target) {
        Ok(info) => info,
        Err(error) => return exit::fail(&error),
    };
    let path = describe_path(&info, &declared, &HostFacts::gather());
    if args.json {
        return match serde_json::to_string_pretty(&path) {
            Ok(text) => {
                print_lines(&[text]);
                exit::SUCCESS
            }
            Err(error) => exit::fail(&Failed(error.to_string())),
        };
    }
    let mut out = vec![format!("Storage path of {}:", path.target)];
    for (line, hop) in path_lines(&path).iter().zip(&path.hops) {
        out.push(format!("  {line}"));
        if args.verbose
            && let Some(capacity) = &hop.capacity
        {
            let indent = "  ".repeat(hop.depth as usize);
            out.push(format!("  {indent}    {}", capacity.derivation));
        }
    }
    if !path.notes.is_empty() {
        out.push("Notes:".into());
    }
    for note in &path.notes {
        out.push(format!("  {note}"));
    }
    if let Some(true) = path.first_blocks_all_zero {
        out.push(
            "  the first 64 KiB read as zeros: reads of a never-written volume may not touch the media"
                .into(),
        );
    }
    print_lines(&out);
    exit::SUCCESS
}
