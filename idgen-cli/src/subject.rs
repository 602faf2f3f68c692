//! What `idgen inspect` (and the inspect form of `idgen web`) was given: a Snowflake ID, a public
//! ID or a UUID, told apart by shape. Apart from the command so the fuzz targets in `fuzz/`
//! reach it (they include this file by path).

use idgen_core::uuid::Uuid;
use idgen_core::{AnyPublicId, SnowflakeId};

/// What `inspect` was given.
#[derive(Clone, Debug)]
pub(crate) enum Subject {
    /// Decimal digits.
    Snowflake(SnowflakeId),
    /// TypeID text: `ord_01h455vb4pex5vsknk084sn02q`, or 26 base32 characters without prefix.
    PublicId(AnyPublicId),
    /// A hyphenated UUID.
    Uuid(Uuid),
}

/// Tells the three kinds apart by shape, then parses strictly with the library's parser, whose
/// error names the text.
pub(crate) fn parse_subject(text: &str) -> Result<Subject, String> {
    let is_uuid_shape = text.len() == 36
        && text
            .char_indices()
            .all(|(i, c)| matches!(i, 8 | 13 | 18 | 23) == (c == '-'));
    let is_public_id_shape =
        text.contains('_') || (text.len() == 26 && text.bytes().any(|b| b.is_ascii_alphabetic()));
    if is_uuid_shape {
        Uuid::try_parse(text)
            .map(Subject::Uuid)
            .map_err(|e| format!("{text:?} is not a UUID: {e}"))
    } else if is_public_id_shape {
        text.parse()
            .map(Subject::PublicId)
            .map_err(|e: idgen_core::Error| e.to_string())
    } else {
        text.parse()
            .map(Subject::Snowflake)
            .map_err(|e: idgen_core::Error| {
                format!(
                    "{e} (inspect takes a Snowflake ID, a public ID such as \
                 ord_01h455vb4pex5vsknk084sn02q, or a UUID)"
                )
            })
    }
}
