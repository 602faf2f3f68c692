//! `idgen compose --time … --node … --seq …`.

use std::io::Write;

use clap::ArgGroup;

use crate::describe::Described;
use crate::error::CliError;
use crate::layout_opt::LayoutOpt;
use crate::node_arg::NodeArgs;
use crate::time_arg;

/// Arguments of `compose`.
#[derive(Debug, clap::Args)]
#[command(group(
    ArgGroup::new("node_value")
        .args(["node", "datacenter", "worker", "node_fields"])
        .required(true)
        .multiple(true)
))]
pub(crate) struct ComposeArgs {
    /// The time: RFC 3339 (2026-10-31T12:00:00Z), milliseconds since the Unix epoch, or `now`;
    /// rounded down to the layout's tick
    #[arg(long, value_name = "TIME", value_parser = parse_time, allow_hyphen_values = true)]
    pub(crate) time: i64,

    #[command(flatten)]
    pub(crate) node: NodeArgs,

    /// The sequence number within the tick
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        allow_hyphen_values = true
    )]
    pub(crate) seq: u64,

    #[command(flatten)]
    pub(crate) layout: LayoutOpt,
}

fn parse_time(text: &str) -> Result<i64, String> {
    if text == "now" {
        let now = jiff::Timestamp::now();
        return Ok(now.as_millisecond());
    }
    time_arg::parse_unix_ms(text)
}

/// Prints the ID made of the fields (with `--json`, the ID taken apart again).
pub(crate) fn run(args: &ComposeArgs, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let layout = &args.layout.layout;
    let node = args.node.resolve(layout)?;
    let id = layout.layout.compose_at(args.time, node, args.seq)?;
    if json {
        crate::json::write_json(out, &Described::new(id, layout)?.to_json())
    } else {
        writeln!(out, "{id}")?;
        Ok(())
    }
}
