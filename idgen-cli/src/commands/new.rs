//! `idgen new [-n N]`.

use std::io::{IsTerminal, Write};

use idgen_core::{Snowflake, SnowflakeId};
use serde::Serialize;

use crate::describe::LayoutJson;
use crate::error::CliError;
use crate::layout_opt::LayoutOpt;
use crate::node_arg::NodeArgs;
use crate::pace::{self, Progress};

/// Arguments of `new`.
#[derive(Debug, clap::Args)]
pub(crate) struct NewArgs {
    /// How many IDs
    #[arg(short = 'n', long = "count", value_name = "N", default_value_t = 1, allow_hyphen_values = true,
          value_parser = crate::usage::parse_count)]
    pub(crate) count: u64,

    /// The node (without one, node 0, with a note on stderr)
    #[command(flatten)]
    pub(crate) node: NodeArgs,

    #[command(flatten)]
    pub(crate) layout: LayoutOpt,
}

/// The JSON of `new`.
#[derive(Serialize)]
struct NewJson {
    /// The IDs, as strings.
    ids: Vec<SnowflakeId>,
    layout: LayoutJson,
    node: u64,
}

/// What `new` says on stderr when no node was given.
pub(crate) const NO_NODE_NOTE: &str = "note: no node given, so node 0 is used; IDs are unique \
     only among generators with different nodes (give --node N, --datacenter/--worker or --node-field)";

/// Prints `count` new IDs from one generator, one per line (strictly increasing).
pub(crate) fn run(args: &NewArgs, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let layout = &args.layout.layout;
    if !args.node.given() {
        eprintln!("{NO_NODE_NOTE}");
    }
    let node = args.node.resolve(layout)?;
    let ids = Snowflake::new(layout.layout, node)?;
    if let Some(note) = pace::announcement(&layout.to_string(), &layout.layout, args.count) {
        eprintln!("{note}");
    }
    let mut progress = std::io::stderr()
        .is_terminal()
        .then(|| Progress::new(args.count))
        .filter(|_| {
            pace::minimum_time(&layout.layout, args.count) > std::time::Duration::from_secs(1)
        });
    let mut collected = Vec::new();
    for done in 1..=args.count {
        let id = ids.next_id()?;
        if json {
            collected.push(id);
        } else {
            writeln!(out, "{id}")?;
        }
        if let Some(p) = progress.as_mut() {
            p.tick(done);
        }
    }
    if let Some(p) = progress {
        p.finish();
    }
    if json {
        let value = NewJson {
            ids: collected,
            layout: LayoutJson::new(layout),
            node,
        };
        return crate::json::write_json(out, &value);
    }
    Ok(())
}
