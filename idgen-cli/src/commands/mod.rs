//! The subcommands.

use std::io::Write;

use crate::cli::{Cli, Command};
use crate::error::CliError;

#[cfg(feature = "adopt")]
pub(crate) mod adopt;
pub(crate) mod compose;
pub(crate) mod inspect;
#[cfg(feature = "leases")]
pub(crate) mod leases;
pub(crate) mod new;
pub(crate) mod plan;
pub(crate) mod public_id;
pub(crate) mod uuid7;

/// Runs the parsed command, writing its output to `out`.
pub(crate) fn run(cli: &Cli, colour: bool, out: &mut dyn Write) -> Result<(), CliError> {
    match &cli.command {
        Command::Inspect(args) => inspect::run(args, cli.json, colour, out),
        Command::Compose(args) => compose::run(args, cli.json, out),
        Command::New(args) => new::run(args, cli.json, out),
        Command::Plan(args) => plan::run(args, cli.json, out),
        Command::PublicId(args) => public_id::run(args, cli.json, out),
        Command::Uuid7(args) => uuid7::run(args, cli.json, out),
        #[cfg(feature = "web")]
        Command::Web(args) => crate::web::run(args, out),
        #[cfg(feature = "leases")]
        Command::Leases(command) => leases::run(command, cli.json, out),
        #[cfg(feature = "adopt")]
        Command::Adopt(command) => adopt::run(command, cli.json, out),
    }
}
