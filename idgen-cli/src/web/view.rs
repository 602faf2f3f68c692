//! What the page shows of a layout and of an ID's fields, every number as text (so JavaScript
//! never parses a 64-bit value into a float).

use serde::Serialize;

use crate::bits::{Field, Kind};
use crate::layout_arg::{self, LayoutArg};
use crate::time_arg;

/// One field of an ID (or of a layout, with no value).
#[derive(Debug, Serialize)]
pub(crate) struct FieldView {
    /// `timestamp`, `sequence`, a node sub-field's name, or `unused`.
    pub(crate) name: &'static str,
    /// `timestamp`, `node`, `sequence` or `unused`: what the page styles it as.
    kind: &'static str,
    /// Its width in bits.
    bits: u8,
    /// The position of its lowest bit.
    shift: u8,
    /// Its value.
    value: String,
    /// Its bits, most significant first.
    pub(crate) binary: String,
}

impl FieldView {
    pub(crate) fn new(f: &Field) -> FieldView {
        FieldView {
            name: f.name,
            kind: match f.kind {
                Kind::Unused => "unused",
                Kind::Timestamp => "timestamp",
                Kind::Node(_) => "node",
                Kind::Sequence => "sequence",
            },
            bits: f.bits,
            shift: f.shift,
            value: f.value.to_string(),
            binary: f.binary(),
        }
    }
}

/// One node sub-field of a layout, with the range an input accepts.
#[derive(Debug, Serialize)]
struct NodeInput {
    name: &'static str,
    bits: u8,
    max: String,
}

/// A layout as the page shows it: its name, spec, epoch, widths, the inputs' ranges and how
/// long it lasts.
#[derive(Debug, Serialize)]
pub(crate) struct LayoutView {
    /// `twitter`, `sonyflake`, `instagram`, `js-safe` or `custom`.
    name: &'static str,
    /// The canonical `custom:` spec (what `--layout` reads back).
    spec: String,
    epoch_ms: String,
    epoch_utc: Option<String>,
    unit_ms: String,
    timestamp_bits: u8,
    sequence_bits: u8,
    max_sequence: String,
    node: Vec<NodeInput>,
    /// The last millisecond the layout can hold, and in UTC.
    last_unix_ms: String,
    last_utc: Option<String>,
}

impl LayoutView {
    pub(crate) fn new(layout: &LayoutArg) -> LayoutView {
        let l = &layout.layout;
        LayoutView {
            name: layout.name,
            spec: layout_arg::spec(l),
            epoch_ms: l.epoch_ms().to_string(),
            epoch_utc: time_arg::utc(l.epoch_ms()),
            unit_ms: l.unit_ms().to_string(),
            timestamp_bits: l.timestamp_bits(),
            sequence_bits: l.sequence_bits(),
            max_sequence: l.max_sequence().to_string(),
            node: l
                .node_fields()
                .iter()
                .map(|f| NodeInput {
                    name: f.name,
                    bits: f.bits,
                    max: ((1u64 << f.bits) - 1).to_string(),
                })
                .collect(),
            last_unix_ms: l.last_unix_ms().to_string(),
            last_utc: time_arg::utc(l.last_unix_ms()),
        }
    }
}
