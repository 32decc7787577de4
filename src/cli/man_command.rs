//! `iopath man`: the manual page, generated from the same clap declarations as `--help` and
//! the shell completions. `iopath man` prints `iopath.1`; `iopath man --dir DIR` writes it and
//! one page per subcommand (`iopath-run.1`, `iopath-compare.1` …) into DIR.

use super::exit;
use super::messages::for_terminal;
use super::outputs::{check_output, write_output};
use clap::{Args, Command, CommandFactory};
use clap_mangen::Man;
use std::io::Write;
use std::path::PathBuf;

/// Flags of `iopath man`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  iopath man | man -l -                         read it now
  iopath man --dir ~/.local/share/man/man1      install every page, then: man iopath-run")]
pub struct ManArgs {
    /// Write iopath.1 and a page per subcommand (iopath-run.1 …) into this directory, which
    /// must exist, instead of printing iopath.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The whole command line as clap declares it, built (help subcommand and flags in place).
fn declared() -> Command {
    let mut command = super::Cli::command().disable_help_subcommand(true);
    command.build();
    command
}

/// Every page: its file name (`iopath.1`, `iopath-run.1`, `iopath-job-convert.1` …) and its
/// roff text, the top-level page first.
pub fn pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    fn add(command: Command, pages: &mut Vec<(String, Vec<u8>)>) -> std::io::Result<()> {
        let subcommands: Vec<Command> = command
            .get_subcommands()
            .filter(|subcommand| !subcommand.is_hide_set())
            .cloned()
            .collect();
        let page = Man::new(command);
        let mut text = Vec::new();
        page.render(&mut text)?;
        let text = finish(&String::from_utf8_lossy(&text));
        pages.push((page.get_filename(), text.into_bytes()));
        for subcommand in subcommands {
            add(subcommand, pages)?;
        }
        Ok(())
    }
    let mut pages = Vec::new();
    add(declared(), &mut pages)?;
    Ok(pages)
}

/// Two touches to a page as clap_mangen renders it: the text after the options (examples,
/// notes) keeps its lines as written, under the heading NOTES (`.nf` … `.fi`, where clap_mangen
/// fills it into paragraphs under EXTRA); and every character beyond ASCII (→, ×, µ) becomes a
/// roff escape (`\[u2192]`), so that any troff reads the page whatever its input encoding.
fn finish(page: &str) -> String {
    let mut page = page.to_string();
    if let Some(start) = page.find("\n.SH EXTRA\n") {
        let body = start + "\n.SH EXTRA\n".len();
        let end = page[body..]
            .find("\n.SH ")
            .map_or(page.len(), |offset| body + offset + 1);
        page.insert_str(end, ".fi\n");
        page.replace_range(start..body, "\n.SH NOTES\n.nf\n");
    }
    let mut escaped = String::with_capacity(page.len());
    for character in page.chars() {
        if character.is_ascii() {
            escaped.push(character);
        } else {
            escaped.push_str(&format!("\\[u{:04X}]", u32::from(character)));
        }
    }
    escaped
}

/// Prints iopath.1, or writes every page into `--dir`; returns the exit status. Every file is
/// checked before any is written, and each is written whole (a temporary file renamed).
pub fn run(args: &ManArgs) -> i32 {
    let pages = match pages() {
        Ok(pages) => pages,
        Err(error) => {
            eprintln!(
                "error: cannot render the manual page: {}",
                for_terminal(error)
            );
            return exit::RUN_FAILED;
        }
    };
    let Some(directory) = &args.dir else {
        return match std::io::stdout().lock().write_all(&pages[0].1) {
            Ok(()) => exit::SUCCESS,
            Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => exit::SUCCESS,
            Err(error) => {
                eprintln!("error: standard output: {}", for_terminal(error));
                exit::RUN_FAILED
            }
        };
    };
    let mut outputs = Vec::with_capacity(pages.len());
    for (name, text) in &pages {
        match check_output("--dir", &directory.join(name)) {
            Ok(output) => outputs.push((output, text)),
            Err(message) => {
                eprintln!("error: {}", for_terminal(message));
                return exit::BAD_INPUT;
            }
        }
    }
    for (output, text) in &outputs {
        if let Err(message) = write_output("--dir", output, |out| out.write_all(text)) {
            eprintln!("error: {}", for_terminal(message));
            return exit::RUN_FAILED;
        }
    }
    eprintln!(
        "wrote {} manual pages to {} (man iopath, man iopath-run …)",
        outputs.len(),
        for_terminal(directory.display())
    );
    exit::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_per_subcommand_each_naming_its_flags() {
        let pages = pages().unwrap();
        let names: Vec<&str> = pages.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names[0], "iopath.1");
        for expected in [
            "iopath-run.1",
            "iopath-compare.1",
            "iopath-path.1",
            "iopath-man.1",
        ] {
            assert!(names.contains(&expected), "{names:?}");
        }
        assert!(!names.iter().any(|name| name.contains("help")), "{names:?}");
        let text = |name: &str| {
            let (_, text) = pages.iter().find(|(page, _)| page == name).unwrap();
            String::from_utf8(text.clone()).unwrap()
        };
        let top = text("iopath.1");
        assert!(top.starts_with(".ie \\n(.g .ds Aq"), "{}", &top[..80]);
        assert!(top.contains(".TH iopath 1"), "{top}");
        assert!(top.contains("iopath\\-run(1)"), "{top}");
        let run = text("iopath-run.1");
        assert!(run.contains("\\-\\-fsync\\-at\\-end"), "{run}");
        for (name, text) in &pages {
            assert!(text.is_ascii(), "{name}");
        }
        // The examples keep their lines: unfilled, between .nf and .fi, before VERSION.
        let notes = top
            .find(".SH NOTES\n.nf\nExamples:\n")
            .expect("a NOTES section");
        let fill = top
            .find(".fi\n.SH VERSION")
            .expect("filled again before VERSION");
        assert!(notes < fill);
        assert!(!top.contains("EXTRA"));
    }

    #[test]
    fn beyond_ascii_becomes_roff_escapes() {
        assert_eq!(
            finish("a → b × 2 µs"),
            "a \\[u2192] b \\[u00D7] 2 \\[u00B5]s"
        );
        let page = ".TH x 1\n.SH EXTRA\nline one\n  line two\n";
        assert_eq!(
            finish(page),
            ".TH x 1\n.SH NOTES\n.nf\nline one\n  line two\n.fi\n"
        );
    }
}
