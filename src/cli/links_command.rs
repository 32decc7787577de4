//! `iopath links`: the catalog of links and buses grouped by kind, with what each carries per
//! direction; the per-I/O overhead of the storage protocols; this host's memory copy bandwidth.

use super::exit::{self, Usage};
use clap::Args;
use iopath::analysis::links::{LinkEntry, LinkFamily, catalog, normalise};
use iopath::analysis::protocols::Protocol;
use iopath::discovery::memcpy;
use iopath::result::Duplex;
use iopath::units::format_rate;

/// Flags of `iopath links`.
#[derive(Debug, Args)]
#[command(after_help = "\
Every figure is derived from the link's line rate, line encoding and framing; --verbose shows
the derivation and the standard it comes from (docs/links.md has the same per family).
Aliases are what --link and --path accept (iopath run --link 4gfc, --path \"pcie3x8,40gbe\").

Examples:
  iopath links                 the whole catalog
  iopath links fc              Fibre Channel only (also: ethernet, roce, infiniband, sas, sata, usb, pci, pcie)
  iopath links pcie3 -v        PCIe 3.0 widths with their derivation")]
pub struct LinksArgs {
    /// Show only one family (fc, ethernet, roce, infiniband, sas, sata, usb, pci, pcix, pcie)
    /// or the entries whose name or alias contains this text.
    #[arg(value_name = "FILTER")]
    pub filter: Option<String>,
    /// Show how each figure is derived and where it comes from.
    #[arg(long, short)]
    pub verbose: bool,
}

/// The words that name a whole family.
fn family_of_word(word: &str) -> Option<LinkFamily> {
    Some(match word {
        "fc" | "fibrechannel" | "fibre" => LinkFamily::FibreChannel,
        "ethernet" | "eth" | "gbe" | "tcp" => LinkFamily::Ethernet,
        "roce" | "rocev2" | "rdma" | "nvmeof" => LinkFamily::RoceV2,
        "infiniband" | "ib" => LinkFamily::InfiniBand,
        "sas" => LinkFamily::Sas,
        "sata" => LinkFamily::Sata,
        "usb" => LinkFamily::Usb,
        "pci" => LinkFamily::Pci,
        "pcix" => LinkFamily::PciX,
        "pcie" | "pciexpress" => LinkFamily::Pcie,
        _ => return None,
    })
}

fn matches(entry: &LinkEntry, filter: &str) -> bool {
    normalise(&entry.full_name()).contains(filter)
        || entry.aliases.iter().any(|a| normalise(a).contains(filter))
}

/// Prints the catalog; returns the exit status.
pub fn run(args: &LinksArgs) -> i32 {
    let filter = args.filter.as_deref().map(normalise);
    let family_filter = filter.as_deref().and_then(family_of_word);
    let mut out: Vec<String> = Vec::new();
    let mut shown = 0;
    for family in LinkFamily::ALL {
        let entries: Vec<&LinkEntry> = catalog()
            .iter()
            .filter(|entry| entry.family == family)
            .filter(|entry| match (&filter, family_filter) {
                (None, _) => true,
                (Some(_), Some(wanted)) => wanted == family,
                (Some(text), None) => matches(entry, text),
            })
            .collect();
        if entries.is_empty() {
            continue;
        }
        if shown > 0 {
            out.push(String::new());
        }
        out.push(family.title().to_string());
        let width = entries
            .iter()
            .map(|e| e.full_name().chars().count())
            .max()
            .unwrap_or(0);
        for entry in &entries {
            let shared = if entry.duplex == Duplex::Half {
                " shared"
            } else {
                " each way"
            };
            out.push(format!(
                "  {:width$}  {:>11}{:9}  {}",
                entry.full_name(),
                format_rate(entry.payload_bytes_per_second() as f64),
                shared,
                entry.aliases.join(", ")
            ));
            if args.verbose {
                out.push(format!("  {:width$}    {}", "", entry.derivation()));
                out.push(format!("  {:width$}    source: {}", "", entry.source));
            }
        }
        shown += entries.len();
    }
    if shown == 0 {
        return exit::fail(&Usage(format!(
            "nothing in the catalog matches '{}'",
            args.filter.as_deref().unwrap_or("")
        )));
    }
    if filter.is_some() {
        print_lines(&out);
        return exit::SUCCESS;
    }
    out.push(String::new());
    out.push("Per-I/O protocol overhead (counted on the hops that carry it):".into());
    for protocol in Protocol::ALL {
        out.push(format!(
            "  {:9} {}",
            protocol.name(),
            protocol.description()
        ));
        if args.verbose {
            out.push(format!("  {:9} source: {}", "", protocol.source()));
        }
    }
    out.push(String::new());
    let bandwidth = memcpy::memory_copy_bandwidth();
    out.push(format!(
        "This host: memory copy {} (one thread; the ceiling of the page cache, tmpfs, Unix sockets and loopback){}",
        format_rate(bandwidth as f64),
        memcpy::default_cache_file()
            .map(|file| format!("; cached in {}", file.display()))
            .unwrap_or_default()
    ));
    print_lines(&out);
    exit::SUCCESS
}

/// Writes `lines` to standard output; a reader that went away (`| head`) is not an error.
pub fn print_lines(lines: &[String]) {
    use std::io::Write;
    let mut text = lines.join("\n");
    text.push('\n');
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}
