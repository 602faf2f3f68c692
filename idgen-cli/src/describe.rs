//! An ID taken apart under a layout, as text for people and JSON for scripts.

use std::fmt::Write as _;

use idgen_core::{Decomposed, Layout, SnowflakeId};
use serde::Serialize;

use crate::bits::{self, Field, Kind};
use crate::error::CliError;
use crate::layout_arg::{self, LayoutArg};
use crate::time_arg;

/// An ID with its fields under a layout.
pub(crate) struct Described {
    id: SnowflakeId,
    layout: LayoutArg,
    parts: Decomposed,
    fields: Vec<Field>,
}

/// The JSON of `inspect` (and `compose --json`).
#[derive(Serialize)]
pub(crate) struct DescribedJson {
    /// The ID, as a string.
    id: SnowflakeId,
    layout: LayoutJson,
    /// The start of the ID's tick.
    unix_ms: i64,
    utc: Option<String>,
    local: Option<String>,
    ticks: u64,
    node: u64,
    /// Node sub-field name → value.
    node_fields: serde_json::Map<String, serde_json::Value>,
    sequence: u64,
    /// Every field, most significant first, covering bits 62..0.
    fields: Vec<FieldJson>,
    /// Bits 62..0 as 63 characters `0`/`1`.
    binary: String,
}

#[derive(Serialize)]
struct FieldJson {
    name: &'static str,
    value: u64,
    bits: u8,
    shift: u8,
}

/// A layout in JSON: its name, canonical spec, epoch and field widths.
#[derive(Serialize)]
pub(crate) struct LayoutJson {
    name: &'static str,
    spec: String,
    epoch_ms: i64,
    unit_ms: u32,
    timestamp_bits: u8,
    node_bits: u8,
    node_fields: Vec<NodeFieldJson>,
    sequence_bits: u8,
}

#[derive(Serialize)]
struct NodeFieldJson {
    name: &'static str,
    bits: u8,
}

impl LayoutJson {
    pub(crate) fn new(layout: &LayoutArg) -> LayoutJson {
        let l = &layout.layout;
        LayoutJson {
            name: layout.name,
            spec: layout_arg::spec(l),
            epoch_ms: l.epoch_ms(),
            unit_ms: l.unit_ms(),
            timestamp_bits: l.timestamp_bits(),
            node_bits: l.node_bits(),
            node_fields: l
                .node_fields()
                .iter()
                .map(|f| NodeFieldJson {
                    name: f.name,
                    bits: f.bits,
                })
                .collect(),
            sequence_bits: l.sequence_bits(),
        }
    }
}

impl Described {
    /// Takes `id` apart; fails when `id` has bits set above `layout`'s fields.
    pub(crate) fn new(id: SnowflakeId, layout: &LayoutArg) -> Result<Described, CliError> {
        let parts = layout
            .layout
            .decompose(id)
            .map_err(|source| CliError::NotThisLayout {
                id: id.to_string(),
                layout: layout.to_string(),
                source: Box::new(source),
            })?;
        Ok(Described {
            id,
            layout: layout.clone(),
            parts,
            fields: bits::fields(&layout.layout, id),
        })
    }

    /// The JSON: the ID as a string, the layout, the time (UTC, local, Unix ms) and each field
    /// with its value and bit position.
    pub(crate) fn to_json(&self) -> DescribedJson {
        let d = &self.parts;
        DescribedJson {
            id: self.id,
            layout: LayoutJson::new(&self.layout),
            unix_ms: d.unix_ms,
            utc: time_arg::utc(d.unix_ms),
            local: time_arg::local(d.unix_ms),
            ticks: d.ticks,
            node: d.node,
            node_fields: d
                .node_fields()
                .map(|(name, value)| (name.to_string(), value.into()))
                .collect(),
            sequence: d.sequence,
            fields: self
                .fields
                .iter()
                .map(|f| FieldJson {
                    name: f.name,
                    value: f.value,
                    bits: f.bits,
                    shift: f.shift,
                })
                .collect(),
            binary: format!("{:063b}", self.id.as_u64()),
        }
    }

    /// The text for people: time, fields, and the bits drawn per field (ANSI colours with
    /// `colour`, letters otherwise).
    pub(crate) fn to_text(&self, colour: bool) -> String {
        let d = &self.parts;
        let layout = &self.layout.layout;
        let outside = || "(outside the years -9999..=9999)".to_string();
        let mut out = String::new();
        let mut row = |label: &str, value: &str| {
            let _ = writeln!(out, "{label:<12} {value}");
        };
        row("id", &self.id.to_string());
        row("layout", &format!("{} ({})", self.layout, summary(layout)));
        row("utc", &time_arg::utc(d.unix_ms).unwrap_or_else(outside));
        row("local", &time_arg::local(d.unix_ms).unwrap_or_else(outside));
        if layout.unit_ms() > 1 {
            row(
                "",
                &format!("(the start of the ID's {} ms tick)", layout.unit_ms()),
            );
        }
        out.push('\n');
        let _ = writeln!(out, "{:<12} {:<26} bits", "field", "value");
        for f in self.fields.iter().filter(|f| f.kind != Kind::Unused) {
            let range = format!("{}..{}", f.shift + f.bits - 1, f.shift);
            let value = if f.kind == Kind::Timestamp {
                format!("{} ticks", f.value)
            } else {
                f.value.to_string()
            };
            let _ = writeln!(
                out,
                "{:<12} {value:<26} {range:<7} ({} bits)",
                f.name, f.bits
            );
        }
        if layout.node_fields().len() > 1 {
            let names: Vec<_> = layout.node_fields().iter().map(|f| f.name).collect();
            let _ = writeln!(
                out,
                "{:<12} {:<26} ({} together)",
                "node",
                d.node,
                names.join(" + ")
            );
        }
        out.push('\n');
        let _ = writeln!(out, "bits 62..0 (bit 63, the sign bit, is always 0):");
        for line in bits::draw(&self.fields, colour) {
            let _ = writeln!(out, "{line}");
        }
        out
    }
}

/// `epoch …, N ms ticks`.
fn summary(layout: &Layout) -> String {
    let epoch = time_arg::utc(layout.epoch_ms()).unwrap_or_else(|| layout.epoch_ms().to_string());
    format!("epoch {epoch}, {} ms ticks", layout.unit_ms())
}
