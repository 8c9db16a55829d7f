//! `ppwave`: the acoustic wave simulator's command-line program (work in progress).
use clap::{Parser, Subcommand};
use ppstencil_examples::bench;

#[derive(Parser, Debug)]
#[command(name = "ppwave", about = "Acoustic wave simulator (ppstencil)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Roofline report: measured memory bandwidth and every kernel's GB/s, GFlop/s, % of it.
    Bench(bench::BenchArgs),
}

fn main() {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Bench(args) => bench::run(args),
    };
    if let Err(e) = result {
        eprintln!("ppwave: error: {e:#}");
        std::process::exit(2);
    }
}
