//! `idgen public-id [--prefix ord] [-n N]`.

use std::io::Write;

use idgen_core::{AnyPublicId, PublicId};
use serde::Serialize;

use crate::error::CliError;

/// Arguments of `public-id`.
#[derive(Debug, clap::Args)]
pub(crate) struct PublicIdArgs {
    /// The type prefix, e.g. `ord` for `ord_01h455vb4pex5vsknk084sn02q` (TypeID rules: a-z and
    /// `_`, at most 63 characters, not starting or ending with `_`); without it, no prefix
    #[arg(long, value_name = "PREFIX", value_parser = parse_prefix)]
    pub(crate) prefix: Option<String>,

    /// How many public IDs
    #[arg(short = 'n', long = "count", value_name = "N", default_value_t = 1, allow_hyphen_values = true,
          value_parser = crate::usage::parse_count)]
    pub(crate) count: u64,
}

/// The TypeID prefix rules, as `PublicIdPrefix` checks them at compile time.
fn parse_prefix(text: &str) -> Result<String, String> {
    match idgen_core::public_id::prefix_problem(text) {
        Some(p) => Err(format!("{text:?}: {p}")),
        None => Ok(text.to_string()),
    }
}

/// One public ID in JSON.
#[derive(Serialize)]
struct PublicIdJson {
    /// The text form, with the prefix.
    id: String,
    /// The UUID it holds (what a `uuid` column stores).
    uuid: String,
}

/// The JSON of `public-id`.
#[derive(Serialize)]
struct PublicIdsJson<'a> {
    prefix: &'a str,
    ids: Vec<PublicIdJson>,
}

/// Prints `count` new random public IDs, one per line.
pub(crate) fn run(args: &PublicIdArgs, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let prefix = args.prefix.as_deref().unwrap_or("");
    let mut ids = Vec::new();
    for _ in 0..args.count {
        // A random PublicId's UUID under the run-time prefix: the text `PublicId<T>` with
        // `T::PREFIX == prefix` writes and parses back.
        let id = AnyPublicId::new(prefix, PublicId::<()>::try_new()?.uuid())?;
        let text = id.to_string();
        if json {
            ids.push(PublicIdJson {
                id: text,
                uuid: id.uuid().to_string(),
            });
        } else {
            writeln!(out, "{text}")?;
        }
    }
    if json {
        crate::json::write_json(out, &PublicIdsJson { prefix, ids })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_follow_the_typeid_rules() {
        assert_eq!(parse_prefix("ord"), Ok("ord".into()));
        assert_eq!(parse_prefix("order_line"), Ok("order_line".into()));
        assert_eq!(parse_prefix(""), Ok(String::new()));
        for (bad, why) in [
            ("Ord", "only the characters a-z"),
            ("ord1", "only the characters a-z"),
            ("_ord", "start or end"),
            ("ord_", "start or end"),
            (&"a".repeat(64), "at most 63"),
        ] {
            let err = parse_prefix(bad).unwrap_err();
            assert!(
                err.contains(why) && err.contains(&format!("{bad:?}")),
                "{err}"
            );
        }
    }
}
