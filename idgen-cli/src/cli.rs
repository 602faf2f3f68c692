//! The command line: global options and subcommands.

use clap::{Parser, Subcommand};

use crate::colour::ColorChoice;
use crate::commands::{
    compose::ComposeArgs, inspect::InspectArgs, new::NewArgs, public_id::PublicIdArgs,
    uuid7::Uuid7Args,
};

/// Inspect, compose and generate Snowflake IDs; generate public IDs and UUIDv7.
#[derive(Debug, Parser)]
#[command(name = "idgen", version, about, long_about = None, propagate_version = true)]
pub(crate) struct Cli {
    /// What to do
    #[command(subcommand)]
    pub(crate) command: Command,

    /// Print JSON for scripts (IDs as strings, so JavaScript never rounds them)
    #[arg(long, global = true, help_heading = "Output")]
    pub(crate) json: bool,

    /// When to colour the output
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto,
          help_heading = "Output")]
    pub(crate) color: ColorChoice,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Take an ID apart: a Snowflake ID's time, fields and bits; a public ID's prefix and UUID;
    /// a UUIDv7's time
    Inspect(InspectArgs),
    /// Make the ID for given fields (time, node, sequence)
    Compose(ComposeArgs),
    /// Generate new IDs, one per line
    New(NewArgs),
    /// Find a layout for a node count, a rate per node and a lifetime, within --max-bits; or say
    /// which cannot be met and by how much
    Plan(crate::commands::plan::PlanArgs),
    /// Generate random public IDs (TypeID text, e.g. ord_01h455vb4pex5vsknk084sn02q), one per line
    PublicId(PublicIdArgs),
    /// Generate monotonic UUIDv7, one per line
    Uuid7(Uuid7Args),
    /// Serve a local web application: compose and inspect IDs in a browser (and, given a
    /// database, the lease table)
    #[cfg(feature = "web")]
    Web(crate::web::WebArgs),
    /// The node-ID lease table of a database: list the leases, free a node ID
    #[cfg(feature = "leases")]
    #[command(subcommand)]
    Leases(crate::commands::leases::LeasesCommand),
    /// Take over a table that already has rows: new keys from idgen above the old ones, or
    /// hi-lo on its sequence; plan prints the steps and their SQL, apply runs them (resumable)
    #[cfg(feature = "adopt")]
    #[command(subcommand)]
    Adopt(crate::commands::adopt::AdoptCommand),
}
