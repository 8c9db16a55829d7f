//! The `ppwave` command-line program as a library: argument definitions ([`cli`]), the
//! subcommands ([`run`], [`gen`], [`bench`](mod@bench)), the output writers ([`output`]), the pictures ([`figures`]), the
//! hand-written C reference measured by `ppwave bench` ([`cref`], feature `c-reference`) and
//! the mapping of errors to exit codes ([`exit_code`]). `src/main.rs` is a thin `main` over
//! [`execute`].
// run.json is one `serde_json::json!` literal with many keys.
#![recursion_limit = "256"]
#![warn(missing_docs)]

pub mod bench;
pub mod cli;
pub mod config;
pub mod cref;
pub mod crew;
pub mod dist;
pub mod figures;
pub mod gen;
pub mod inputs;
pub mod invert;
pub mod migrate;
pub mod output;
pub mod run;
pub mod shots;
pub mod survey;
pub mod zeros;

use std::fmt;

/// Bad input found by `ppwave` itself (as opposed to a runtime failure): exit code 2.
#[derive(Debug)]
pub struct BadInput(pub String);

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// Exit status for a usage error or bad input.
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit status for a failure while running (I/O, backend unavailable, device errors).
pub const EXIT_FAILURE: u8 = 1;

/// The exit status for an error: [`EXIT_BAD_INPUT`] when the cause is the user's input
/// ([`BadInput`], [`ppstencil::Error::InvalidParameter`], or a `--backend` this build does
/// not have: [`ppstencil::Error::BackendUnavailable`] for want of its feature), else
/// [`EXIT_FAILURE`] (a backend built in but without a device is a failure at run time).
pub fn exit_code(err: &anyhow::Error) -> u8 {
    // `downcast_ref` also finds a `BadInput` attached with `.context(..)`, which `chain()`
    // shows only as a message.
    let bad = err.downcast_ref::<BadInput>().is_some()
        || err.chain().any(|c| {
            c.is::<BadInput>()
                || match c.downcast_ref::<ppstencil::Error>() {
                    Some(ppstencil::Error::InvalidParameter { .. }) => true,
                    Some(ppstencil::Error::BackendUnavailable { reason, .. }) => {
                        reason.contains("built without it")
                    }
                    _ => false,
                }
        });
    if bad {
        EXIT_BAD_INPUT
    } else {
        EXIT_FAILURE
    }
}

/// Runs one parsed command line: one arm per [`cli::Command`] variant, each calling its
/// subcommand's module (a new subcommand is a variant, an arm here and a module).
pub fn execute(cli: cli::Cli) -> anyhow::Result<()> {
    match cli.command {
        cli::Command::Run(args) => run::run(&args).map(|_| ()),
        cli::Command::Gen(args) => gen::gen(&args),
        cli::Command::Bench(args) => bench::run(&args),
        cli::Command::Migrate(args) => migrate::migrate(&args),
        cli::Command::Invert(args) => invert::invert(&args),
    }
}
