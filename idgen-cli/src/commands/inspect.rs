//! `idgen inspect ID`.

use std::io::Write;

use idgen_core::SnowflakeId;

use crate::cli::LayoutOpt;
use crate::describe::Described;
use crate::error::CliError;

/// Arguments of `inspect`.
#[derive(Debug, clap::Args)]
pub(crate) struct InspectArgs {
    /// The ID, in decimal
    #[arg(value_name = "ID", allow_hyphen_values = true)]
    pub(crate) id: SnowflakeId,

    #[command(flatten)]
    pub(crate) layout: LayoutOpt,
}

/// Prints the ID's time, fields and bits.
pub(crate) fn run(
    args: &InspectArgs,
    json: bool,
    colour: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let described = Described::new(args.id, &args.layout.layout)?;
    if json {
        super::write_json(out, &described.to_json())
    } else {
        out.write_all(described.to_text(colour).as_bytes())?;
        Ok(())
    }
}
