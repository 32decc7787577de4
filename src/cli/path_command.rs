//! `iopath path TARGET [--link …] [--path …] [--root DIR | --record DIR]`: the storage path of
//! a target as discovered on this host (or on a recorded machine), with the hops declared
//! beyond it, and what each hop can carry.

use super::exit::{self, Failed, Flagged};
use super::links_command::print_lines;
use clap::Args;
use iopath::analysis::describe_path_on;
use iopath::analysis::path::{inspect_for_path, inspect_recorded};
use iopath::discovery::Machine;
use iopath::discovery::record::{prepare_directory, write_recording};
use iopath::report::path::path_lines;
use iopath::result::{StoragePath, TargetInfo};
use iopath::units::format_bytes;
use std::path::PathBuf;

/// Flags of `iopath path`.
#[derive(Debug, Args)]
#[command(after_help = "\
The path is read from sysfs, the mount table and the routing table: file → filesystem → block
device and its stack (partition, device-mapper, md, loop and its backing file) → the disk → its
transport (NVMe, SATA, SAS, FC, virtio, iSCSI, USB) → the PCIe or PCI-X bus of its controller;
for network storage the interface that routes to the server, what it is built on (bond members,
the bridge port, a VLAN's parent) and its link. Virtual interfaces (veth, bridge, tun/tap,
virtio-net…) have no capacity of their own. What cannot be seen is declared, and marked as
declared. A block device whose node cannot be opened (no permission, a container) is described
from its device number and /sys, with a note.

--record DIR copies just the files this discovery reads for TARGET (bounded in size) into DIR,
with machine.toml for what needed a system call; send DIR to someone who can then run
`iopath path --root DIR TARGET` (docs/verdict.md, \"Recorded machines\").

Examples:
  iopath path /dev/sdb --link 4gfc
  iopath path /mnt/data/file
  iopath path nbd://server/export --path \"10gbe,array:1.2GB/s\"
  iopath path --record /tmp/my-machine /dev/mapper/mpatha
  iopath path --root /tmp/my-machine /dev/mapper/mpatha")]
pub struct PathArgs {
    /// A file, a block device, or an nbd://, iscsi://, nfs:// or smb:// URL.
    #[arg(value_name = "TARGET")]
    pub target: String,
    /// The hops declared where discovery cannot see.
    #[command(flatten)]
    pub declared: super::declared_args::DeclaredArgs,
    /// Also show how each capacity is derived.
    #[arg(long, short)]
    pub verbose: bool,
    /// Print the path as JSON (the same StoragePath a RunResult carries).
    #[arg(long)]
    pub json: bool,
    /// Show the path on the machine recorded in DIR (with --record) instead of this host.
    #[arg(long, value_name = "DIR", conflicts_with = "record")]
    pub root: Option<PathBuf>,
    /// Record what discovery reads for TARGET on this host into DIR (new, empty, or an
    /// earlier recording of this host, which the target is added to).
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
}

/// Prints the path of `args.target`; returns the exit status.
pub fn run(args: &PathArgs) -> i32 {
    let declared = match args.declared.declared() {
        Ok(declared) => declared,
        Err(error) => return exit::fail(&error),
    };
    let machine = match &args.root {
        Some(root) => match Machine::recorded(root) {
            Ok(machine) => machine,
            Err(error) => {
                return exit::fail(&Flagged {
                    flag: "--root",
                    error,
                });
            }
        },
        None if args.record.is_some() => Machine::recording_this_host(),
        None => Machine::this_host(),
    };
    let found = if machine.is_recorded() {
        inspect_recorded(&machine, &args.target).map(|info| (info, None))
    } else {
        inspect_for_path(&args.target)
    };
    let (info, note) = match found {
        Ok(found) => found,
        Err(error) => return exit::fail(&error),
    };
    let earlier = match &args.record {
        Some(directory) => match prepare_directory(directory) {
            Ok(earlier) => Some(earlier),
            Err(error) => {
                return exit::fail(&Flagged {
                    flag: "--record",
                    error,
                });
            }
        },
        None => None,
    };
    let facts = machine.host_facts();
    let mut path = describe_path_on(&info, &declared, &facts, &machine);
    if let Some(note) = note {
        path.notes.insert(0, note);
    }
    if let (Some(directory), Some(earlier)) = (&args.record, earlier) {
        let status = record(
            directory,
            &machine,
            earlier,
            &info,
            facts.memory_copy_bytes_per_second,
        );
        if status != exit::SUCCESS {
            return status;
        }
    }
    if args.json {
        return match serde_json::to_string_pretty(&path) {
            Ok(text) => {
                print_lines(&[text]);
                exit::SUCCESS
            }
            Err(error) => exit::fail(&Failed(error.to_string())),
        };
    }
    print_lines(&text_lines(&path, args.verbose, args.root.as_ref()));
    exit::SUCCESS
}

/// Writes the recording; says on standard error what was written.
fn record(
    directory: &std::path::Path,
    machine: &Machine,
    earlier: iopath::discovery::machine_file::MachineFile,
    info: &TargetInfo,
    memory_copy: Option<u64>,
) -> i32 {
    match write_recording(
        directory,
        machine,
        earlier,
        std::slice::from_ref(info),
        memory_copy,
    ) {
        Ok(summary) => {
            eprintln!(
                "recorded {} files ({}), {} links and {} empty stand-ins into {}{}; `iopath path --root {} {}` shows this path from there",
                summary.files,
                format_bytes(summary.bytes as u64),
                summary.links,
                summary.placeholders,
                directory.display(),
                if summary.truncated {
                    " (a size limit was reached: the recording is incomplete)"
                } else {
                    ""
                },
                directory.display(),
                info.path
            );
            exit::SUCCESS
        }
        Err(error) => exit::fail(&Failed(format!("--record {error}"))),
    }
}

fn text_lines(path: &StoragePath, verbose: bool, root: Option<&PathBuf>) -> Vec<String> {
    let mut out = vec![match root {
        Some(root) => format!(
            "Storage path of {} on the machine recorded in {}:",
            path.target,
            root.display()
        ),
        None => format!("Storage path of {}:", path.target),
    }];
    for (line, hop) in path_lines(path).iter().zip(&path.hops) {
        out.push(format!("  {line}"));
        if verbose && let Some(capacity) = &hop.capacity {
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
    out
}
