//! `iopath completions SHELL`: tab completion for bash, zsh, fish, elvish or PowerShell,
//! generated from the same clap declarations as `--help` and the manual page, so they never
//! disagree with the flags.

use super::exit;
use super::messages::for_terminal;
use clap::{Args, CommandFactory};
use clap_complete::Shell;
use std::io::Write;

/// Flags of `iopath completions`.
#[derive(Debug, Args)]
#[command(after_help = "\
Prints the script to standard output. Load it for this shell, or install it for every new one:

  source <(iopath completions bash)
  iopath completions bash > ~/.local/share/bash-completion/completions/iopath
  iopath completions zsh > ~/.zfunc/_iopath        (with fpath+=(~/.zfunc) before compinit)
  iopath completions fish > ~/.config/fish/completions/iopath.fish")]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_name = "SHELL")]
    pub shell: Shell,
}

/// The completion script of `shell` for the whole command line.
pub fn script(shell: Shell) -> Vec<u8> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut super::Cli::command(), "iopath", &mut script);
    script
}

/// Prints the script; returns the exit status. A reader that went away (`| head`) is not an
/// error; any other failure to write is.
pub fn run(args: &CompletionsArgs) -> i32 {
    match std::io::stdout().lock().write_all(&script(args.shell)) {
        Ok(()) => exit::SUCCESS,
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => exit::SUCCESS,
        Err(error) => {
            eprintln!("error: standard output: {}", for_terminal(error));
            exit::RUN_FAILED
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subcommand_and_a_run_flag_are_completed_in_every_shell() {
        for shell in [
            Shell::Bash,
            Shell::Zsh,
            Shell::Fish,
            Shell::Elvish,
            Shell::PowerShell,
        ] {
            let script = String::from_utf8(script(shell)).unwrap();
            for word in [
                "run",
                "compare",
                "path",
                "completions",
                "man",
                "fsync-at-end",
            ] {
                assert!(script.contains(word), "{shell}: no {word}");
            }
        }
    }
}
