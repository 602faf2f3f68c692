//! `--json`: what the commands print for scripts.

use std::io::Write;

use crate::error::CliError;

/// Writes `value` as pretty JSON and a newline.
pub(crate) fn write_json(
    out: &mut dyn Write,
    value: &impl serde::Serialize,
) -> Result<(), CliError> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(std::io::Error::from)?;
    writeln!(out)?;
    Ok(())
}
