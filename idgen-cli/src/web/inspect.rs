//! The inspect form of `idgen web`: a pasted Snowflake ID (decimal, or a JSON string), public
//! ID or UUID, taken apart by the library.

use idgen_core::SnowflakeId;
use serde::{Deserialize, Serialize};

use crate::bits;
use crate::commands::inspect::{Subject, parse_subject};
use crate::describe_uuid::{DescribedUuid, DescribedUuidJson};
use crate::layout_arg::LayoutArg;
use crate::time_arg;
use crate::web::view::{FieldView, LayoutView};

/// What the page sends.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct InspectRequest {
    /// The layout: a preset name or a `custom:` spec.
    #[serde(default)]
    pub(crate) layout: String,
    /// The pasted text.
    #[serde(default)]
    pub(crate) text: String,
}

/// A Snowflake ID taken apart.
#[derive(Debug, Serialize)]
pub(crate) struct SnowflakeView {
    /// `snowflake` (a public ID's or UUID's JSON says `public_id` or `uuid`).
    kind: &'static str,
    pub(crate) id: String,
    layout: LayoutView,
    /// The start of the ID's tick, in Unix ms (below 2^53: the browser may build a `Date` of it
    /// for its own time zone) and in UTC.
    unix_ms: String,
    utc: Option<String>,
    ticks: String,
    node: String,
    pub(crate) sequence: String,
    pub(crate) fields: Vec<FieldView>,
    /// The sign bit and each field's bits.
    bit_groups: String,
}

/// What the page shows.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum InspectView {
    /// A Snowflake ID.
    Snowflake(Box<SnowflakeView>),
    /// A public ID or a UUID.
    Uuid(DescribedUuidJson),
}

/// The text without surrounding white space and, if it is a JSON string (`"4194439168"`), its
/// content.
fn unwrap_json_string(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.starts_with('"') {
        serde_json::from_str::<String>(text)
            .map(|s| s.trim().to_owned())
            .map_err(|e| format!("{text} is not a JSON string: {e}"))
    } else {
        Ok(text.to_owned())
    }
}

/// Takes the pasted text apart, or the library's error.
pub(crate) fn inspect(layout: &LayoutArg, text: &str) -> Result<InspectView, String> {
    let text = unwrap_json_string(text)?;
    if text.is_empty() {
        return Err("empty: paste a Snowflake ID, a public ID (ord_…) or a UUID".into());
    }
    match parse_subject(&text)? {
        Subject::Snowflake(id) => {
            snowflake(layout, id).map(|v| InspectView::Snowflake(Box::new(v)))
        }
        Subject::PublicId(id) => Ok(InspectView::Uuid(DescribedUuid::public_id(id).to_json())),
        Subject::Uuid(uuid) => Ok(InspectView::Uuid(DescribedUuid::uuid(uuid).to_json())),
    }
}

fn snowflake(layout: &LayoutArg, id: SnowflakeId) -> Result<SnowflakeView, String> {
    let d = layout
        .layout
        .decompose(id)
        .map_err(|e| format!("ID {id} was not made with layout {layout}: {e}"))?;
    let fields = bits::fields(&layout.layout, id);
    Ok(SnowflakeView {
        kind: "snowflake",
        id: id.to_string(),
        layout: LayoutView::new(layout),
        unix_ms: d.unix_ms.to_string(),
        utc: time_arg::utc(d.unix_ms),
        ticks: d.ticks.to_string(),
        node: d.node.to_string(),
        sequence: d.sequence.to_string(),
        bit_groups: std::iter::once("0".to_string())
            .chain(fields.iter().map(bits::Field::binary))
            .collect::<Vec<_>>()
            .join(" | "),
        fields: fields.iter().map(FieldView::new).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_and_json_strings_are_snowflake_ids() {
        for text in ["4194439168", " \"4194439168\" "] {
            let InspectView::Snowflake(v) = inspect(&LayoutArg::default(), text).unwrap() else {
                panic!("not a Snowflake ID")
            };
            assert_eq!(
                (v.id.as_str(), v.utc.as_deref()),
                ("4194439168", Some("2010-11-04T01:42:55.657Z"))
            );
        }
    }

    #[test]
    fn public_ids_and_uuids_are_told_apart() {
        let v = inspect(&LayoutArg::default(), "ord_01h455vb4pex5vsknk084sn02q").unwrap();
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["kind"], "public_id");
        assert_eq!(json["prefix"], "ord");
        assert_eq!(json["uuid"], "01890a5d-ac96-774b-bcce-b302099a8057");
        assert_eq!(json["utc"], "2023-06-30T03:34:18.518Z");
    }

    #[test]
    fn errors_are_the_librarys() {
        let err = inspect(&LayoutArg::default(), "12a").unwrap_err();
        assert!(err.contains("only the decimal digits"), "{err}");
        let narrow = crate::layout_arg::parse("custom:time=30").unwrap();
        let err = inspect(&narrow, &i64::MAX.to_string()).unwrap_err();
        assert!(err.contains("was not made with layout custom:"), "{err}");
    }
}
