//! `idgen`: inspect, compose and generate Snowflake IDs, and inspect public IDs and UUIDs, from
//! the command line.
//!
//! Exit status: 0 on success, 2 for a usage error (reported by clap: an unknown option, a value
//! that does not parse), 1 when the library rejects well-formed input (a field out of range, an
//! ID from another layout). Errors go to stderr, one line naming the bad value.

mod bits;
mod cli;
mod colour;
mod commands;
mod describe;
mod describe_uuid;
mod error;
mod json;
mod layout_arg;
mod layout_opt;
#[cfg(feature = "leases")]
mod leases;
mod node_arg;
mod pace;
mod subject;
mod time_arg;
mod usage;
#[cfg(feature = "web")]
mod web;

use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;

use crate::error::CliError;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            eprint!("{}", usage::render(&e));
            return ExitCode::from(2);
        }
        // --help and --version: clap prints them to stdout and exits 0.
        Err(e) => e.exit(),
    };
    let stdout = io::stdout();
    let colour = colour::use_colour(
        cli.color,
        stdout.is_terminal(),
        std::env::var_os("NO_COLOR").as_deref(),
    );
    let mut out = BufWriter::new(stdout.lock());
    let result = commands::run(&cli, colour, &mut out).and_then(|()| Ok(out.flush()?));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that went away (`idgen new -n 1000000 | head`) is not an error.
        Err(CliError::Output(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            drop(out);
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
