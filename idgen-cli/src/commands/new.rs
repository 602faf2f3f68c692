//! `idgen new [-n N]`.

use std::io::Write;

use idgen_core::{Snowflake, SnowflakeId};
use serde::Serialize;

use crate::cli::LayoutOpt;
use crate::describe::LayoutJson;
use crate::error::CliError;
use crate::node_arg::NodeArgs;

/// Arguments of `new`.
#[derive(Debug, clap::Args)]
pub(crate) struct NewArgs {
    /// How many IDs
    #[arg(short = 'n', long = "count", value_name = "N", default_value_t = 1, allow_hyphen_values = true,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) count: u64,

    /// The node (default 0)
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

/// Prints `count` new IDs from one generator, one per line (strictly increasing).
pub(crate) fn run(args: &NewArgs, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let layout = &args.layout.layout;
    let node = args.node.resolve(layout)?;
    let ids = Snowflake::new(layout.layout, node)?;
    if json {
        let ids = (0..args.count)
            .map(|_| ids.next_id())
            .collect::<Result<Vec<_>, _>>()?;
        let value = NewJson {
            ids,
            layout: LayoutJson::new(layout),
            node,
        };
        return super::write_json(out, &value);
    }
    for _ in 0..args.count {
        writeln!(out, "{}", ids.next_id()?)?;
    }
    Ok(())
}
