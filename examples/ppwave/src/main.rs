//! `ppwave`: the acoustic wave simulator's command-line program. See `ppwave --help`.
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Usage errors are printed by clap, which exits with status 2 (0 for --help/--version).
    let cli = ppwave::cli::Cli::parse();
    match ppwave::execute(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(ppwave::exit_code(&e))
        }
    }
}
