//! `idgen uuid7 [-n N]`.

use std::io::Write;

use idgen_core::{Uuid7Generator, uuid7};
use serde::Serialize;

use crate::error::CliError;
use crate::time_arg;

/// Arguments of `uuid7`.
#[derive(Debug, clap::Args)]
pub(crate) struct Uuid7Args {
    /// How many UUIDs
    #[arg(short = 'n', long = "count", value_name = "N", default_value_t = 1, allow_hyphen_values = true,
          value_parser = crate::usage::parse_count)]
    pub(crate) count: u64,
}

/// One UUIDv7 in JSON.
#[derive(Serialize)]
struct Uuid7Json {
    uuid: String,
    /// Its timestamp, in milliseconds since the Unix epoch.
    unix_ms: i64,
    utc: Option<String>,
}

/// The JSON of `uuid7`.
#[derive(Serialize)]
struct Uuid7sJson {
    uuids: Vec<Uuid7Json>,
}

/// Prints `count` new UUIDv7 from one monotonic generator, one per line (strictly increasing).
pub(crate) fn run(args: &Uuid7Args, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let generator = Uuid7Generator::new();
    let mut uuids = Vec::new();
    for _ in 0..args.count {
        let uuid = generator.next_uuid()?;
        if json {
            let unix_ms = uuid7::timestamp_ms(uuid)?;
            uuids.push(Uuid7Json {
                uuid: uuid.to_string(),
                unix_ms,
                utc: time_arg::utc(unix_ms),
            });
        } else {
            writeln!(out, "{uuid}")?;
        }
    }
    if json {
        crate::json::write_json(out, &Uuid7sJson { uuids })?;
    }
    Ok(())
}
