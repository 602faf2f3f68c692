//! `idgen inspect ID`: a Snowflake ID, a public ID (`ord_…`) or a UUID.

use std::io::Write;

use crate::describe::Described;
use crate::describe_uuid::DescribedUuid;
use crate::error::CliError;
use crate::layout_opt::LayoutOpt;
pub(crate) use crate::subject::{Subject, parse_subject};

/// Arguments of `inspect`.
#[derive(Debug, clap::Args)]
pub(crate) struct InspectArgs {
    /// A Snowflake ID (decimal), a public ID (TypeID text such as
    /// ord_01h455vb4pex5vsknk084sn02q) or a UUID (01890a5d-ac96-774b-bcce-b302099a8057); a
    /// UUIDv7's time is shown
    #[arg(value_name = "ID", allow_hyphen_values = true, value_parser = parse_subject)]
    pub(crate) id: Subject,

    /// Applies to Snowflake IDs
    #[command(flatten)]
    pub(crate) layout: LayoutOpt,
}

/// Prints the ID's parts: a Snowflake ID's time, fields and bits; a public ID's prefix and
/// UUID; a UUID's version and, for a UUIDv7, its time.
pub(crate) fn run(
    args: &InspectArgs,
    json: bool,
    colour: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let uuid = match &args.id {
        Subject::Snowflake(id) => {
            let described = Described::new(*id, &args.layout.layout)?;
            return if json {
                crate::json::write_json(out, &described.to_json())
            } else {
                out.write_all(described.to_text(colour).as_bytes())?;
                Ok(())
            };
        }
        Subject::PublicId(id) => DescribedUuid::public_id(id.clone()),
        Subject::Uuid(uuid) => DescribedUuid::uuid(*uuid),
    };
    if json {
        crate::json::write_json(out, &uuid.to_json())
    } else {
        out.write_all(uuid.to_text().as_bytes())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_told_apart_by_shape() {
        assert!(matches!(
            parse_subject("2116500430648709162"),
            Ok(Subject::Snowflake(_))
        ));
        assert!(matches!(
            parse_subject("ord_01h455vb4pex5vsknk084sn02q"),
            Ok(Subject::PublicId(id)) if id.prefix() == "ord"
        ));
        assert!(matches!(
            parse_subject("01h455vb4pex5vsknk084sn02q"),
            Ok(Subject::PublicId(id)) if id.prefix().is_empty()
        ));
        assert!(matches!(
            parse_subject("01890a5d-ac96-774b-bcce-b302099a8057"),
            Ok(Subject::Uuid(_))
        ));
    }

    #[test]
    fn each_rejection_names_the_text_once() {
        for (text, want) in [
            ("12a", "only the decimal digits"),
            ("-5", "a sign is not allowed"),
            (
                "ord_01h455vb4pex5vsknk084sn02",
                "its base32 part has 25 characters",
            ),
            (
                "Ord_01h455vb4pex5vsknk084sn02q",
                "its prefix \"Ord\" is invalid",
            ),
            ("01890a5d-ac96-774b-bcce-b302099a805z", "is not a UUID"),
        ] {
            let err = parse_subject(text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
            assert_eq!(err.matches(text).count(), 1, "{err}");
        }
    }
}
