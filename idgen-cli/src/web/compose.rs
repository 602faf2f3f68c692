//! The compose form of `idgen web`: text inputs in, the library's ID (or its errors, one per
//! input) out. Every number is computed here, by `Layout`, and sent as text.

use std::collections::BTreeMap;

use idgen_core::Parts;
use serde::{Deserialize, Serialize};

use crate::bits;
use crate::layout_arg::LayoutArg;
use crate::time_arg;
use crate::web::view::{FieldView, LayoutView};

/// What the page sends: every input as the text typed.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ComposeRequest {
    /// The layout: a preset name or a `custom:` spec.
    #[serde(default)]
    pub(crate) layout: String,
    /// RFC 3339 or Unix milliseconds; empty means now.
    #[serde(default)]
    pub(crate) time: String,
    /// Node sub-field name → value.
    #[serde(default)]
    pub(crate) node: BTreeMap<String, String>,
    /// The sequence number.
    #[serde(default)]
    pub(crate) sequence: String,
}

/// One term of the formula: `(value << shift)` and what it comes to.
#[derive(Debug, Serialize)]
pub(crate) struct Term {
    /// The field's name.
    name: &'static str,
    /// Its value.
    value: String,
    /// How far it is shifted.
    shift: u8,
    /// `value << shift`.
    shifted: String,
}

/// The composed ID, with everything the page shows about it.
#[derive(Debug, Serialize)]
pub(crate) struct ComposeView {
    /// The ID, in decimal.
    pub(crate) id: String,
    /// The time used (the input, or now), in Unix ms and UTC.
    unix_ms: String,
    utc: Option<String>,
    /// `d = t − epoch` (in ticks: divided by the tick length when it is over 1 ms).
    delta: String,
    /// The layout.
    layout: LayoutView,
    /// The fields, most significant first (the sign bit not included).
    pub(crate) fields: Vec<FieldView>,
    /// The formula's terms, most significant first.
    terms: Vec<Term>,
    /// The formula with the numbers: `I = (1000 << 22) | (1 << 17) | (1 << 12) | 0 = 4194439168`.
    pub(crate) formula: String,
    /// `d = t − epoch = … = …`.
    pub(crate) delta_formula: String,
    /// The sign bit and each field's bits, `0 | 000…1111101000 | 00001 | 00001 | 000000000000`.
    pub(crate) bit_groups: String,
}

/// Why an input was refused, for the page to show next to it.
#[derive(Debug, PartialEq, Eq, Serialize)]
pub(crate) struct InputError {
    /// `layout`, `time`, `node.<name>` or `sequence`.
    pub(crate) input: String,
    /// The library's message (or, for text that is not a number, ours naming the text).
    pub(crate) message: String,
}

impl InputError {
    fn new(input: impl Into<String>, message: impl Into<String>) -> InputError {
        InputError {
            input: input.into(),
            message: message.into(),
        }
    }
}

/// A non-negative integer typed into `input`.
fn number(input: &str, text: &str) -> Result<u64, InputError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(InputError::new(input, "empty: type a number"));
    }
    text.parse::<u64>().map_err(|_| {
        InputError::new(
            input,
            format!("{text:?} is not a non-negative integer below 2^64"),
        )
    })
}

/// Composes the ID of `req` under `layout`, or says what is wrong with each input (every
/// input is checked, by the library, so the page can mark all of them at once). `now_ms` is
/// used for an empty time.
pub(crate) fn compose(
    layout: &LayoutArg,
    req: &ComposeRequest,
    now_ms: i64,
) -> Result<ComposeView, Vec<InputError>> {
    let l = &layout.layout;
    let mut errors = Vec::new();
    let time = req.time.trim();
    let unix_ms = if time.is_empty() {
        Ok(now_ms)
    } else {
        time_arg::parse_unix_ms(time).map_err(|e| InputError::new("time", e))
    };
    let ticks = unix_ms.and_then(|ms| {
        l.ticks_at(ms)
            .map(|t| (ms, t))
            .map_err(|e| InputError::new("time", e.to_string()))
    });
    let ticks = ticks.map_err(|e| errors.push(e)).ok();

    let mut values = Vec::new();
    for (i, f) in l.node_fields().iter().enumerate() {
        let input = format!("node.{}", f.name);
        let text = req.node.get(f.name).map_or("", String::as_str);
        let value = number(&input, text).and_then(|v| {
            // The library checks each sub-field against its width; the others are 0 here, so
            // its error names this one.
            let mut alone = vec![0; l.node_fields().len()];
            alone[i] = v;
            l.node_from_fields(&alone)
                .map(|_| v)
                .map_err(|e| InputError::new(&input, e.to_string()))
        });
        match value {
            Ok(v) => values.push(v),
            Err(e) => errors.push(e),
        }
    }
    let sequence = number("sequence", &req.sequence).and_then(|s| {
        l.compose(Parts {
            ticks: 0,
            node: 0,
            sequence: s,
        })
        .map(|_| s)
        .map_err(|e| InputError::new("sequence", e.to_string()))
    });
    let sequence = sequence.map_err(|e| errors.push(e)).ok();

    let (Some((unix_ms, ticks)), Some(sequence), true) = (ticks, sequence, errors.is_empty())
    else {
        return Err(errors);
    };
    let node = l
        .node_from_fields(&values)
        .map_err(|e| vec![InputError::new("node", e.to_string())])?;
    let id = l
        .compose(Parts {
            ticks,
            node,
            sequence,
        })
        .map_err(|e| vec![InputError::new("layout", e.to_string())])?;
    Ok(view(layout, id, unix_ms, ticks))
}

fn view(layout: &LayoutArg, id: idgen_core::SnowflakeId, unix_ms: i64, ticks: u64) -> ComposeView {
    let l = &layout.layout;
    let fields = bits::fields(l, id);
    let terms: Vec<Term> = fields
        .iter()
        .filter(|f| f.kind != bits::Kind::Unused)
        .map(|f| Term {
            name: f.name,
            value: f.value.to_string(),
            shift: f.shift,
            shifted: (f.value << f.shift).to_string(),
        })
        .collect();
    let formula = format!(
        "I = {} = {id}",
        terms
            .iter()
            .map(|t| if t.shift == 0 {
                t.value.clone()
            } else {
                format!("({} << {})", t.value, t.shift)
            })
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let per_tick = if l.unit_ms() > 1 {
        format!(" ÷ {} ms", l.unit_ms())
    } else {
        String::new()
    };
    let delta_formula = if l.unit_ms() > 1 {
        format!(
            "d = (t − epoch){per_tick} = ({unix_ms} − {}){per_tick} = {ticks}",
            l.epoch_ms()
        )
    } else {
        format!("d = t − epoch = {unix_ms} − {} = {ticks}", l.epoch_ms())
    };
    let bit_groups = std::iter::once("0".to_string())
        .chain(fields.iter().map(bits::Field::binary))
        .collect::<Vec<_>>()
        .join(" | ");
    ComposeView {
        id: id.to_string(),
        unix_ms: unix_ms.to_string(),
        utc: time_arg::utc(unix_ms),
        delta: ticks.to_string(),
        layout: LayoutView::new(layout),
        fields: fields.iter().map(FieldView::new).collect(),
        terms,
        formula,
        delta_formula,
        bit_groups,
    }
}

/// The layout the page names, or the error next to the layout input.
pub(crate) fn layout(text: &str) -> Result<LayoutArg, InputError> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(LayoutArg::default());
    }
    crate::layout_arg::parse(text).map_err(|e| InputError::new("layout", e))
}

/// Unix ms now.
pub(crate) fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(time: &str, node: &[(&str, &str)], seq: &str) -> ComposeRequest {
        ComposeRequest {
            layout: String::new(),
            time: time.into(),
            node: node
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            sequence: seq.into(),
        }
    }

    #[test]
    fn the_worked_example() {
        let v = compose(
            &LayoutArg::default(),
            &req(
                "1288834975657",
                &[("datacenter", "1"), ("worker", "1")],
                "0",
            ),
            0,
        )
        .unwrap();
        assert_eq!(v.id, "4194439168");
        assert_eq!(
            v.formula,
            "I = (1000 << 22) | (1 << 17) | (1 << 12) | 0 = 4194439168"
        );
        assert_eq!(
            v.delta_formula,
            "d = t − epoch = 1288834975657 − 1288834974657 = 1000"
        );
        assert_eq!(
            v.bit_groups,
            format!("0 | {:041b} | 00001 | 00001 | 000000000000", 1000)
        );
    }

    #[test]
    fn every_bad_input_gets_the_librarys_error() {
        let errs = compose(
            &LayoutArg::default(),
            &req("1000", &[("datacenter", "32"), ("worker", "x")], "4096"),
            0,
        )
        .unwrap_err();
        let by_input: Vec<_> = errs
            .iter()
            .map(|e| (e.input.as_str(), e.message.as_str()))
            .collect();
        assert_eq!(by_input.len(), 4, "{by_input:?}");
        assert!(
            by_input[0].0 == "time"
                && by_input[0]
                    .1
                    .contains("is before the layout's epoch 2010-11-04T01:42:54.657Z"),
            "{by_input:?}"
        );
        assert_eq!(
            by_input[1],
            (
                "node.datacenter",
                "datacenter 32 does not fit in 5 bits: the largest datacenter is 31"
            )
        );
        assert!(by_input[2].1.contains("\"x\""));
        assert!(
            by_input[3].0 == "sequence"
                && by_input[3].1.contains("4096")
                && by_input[3].1.contains("4095")
        );
    }

    #[test]
    fn an_empty_time_is_now() {
        let v = compose(
            &LayoutArg::default(),
            &req(" ", &[("datacenter", "0"), ("worker", "0")], "0"),
            1_793_448_000_000,
        )
        .unwrap();
        assert_eq!(v.unix_ms, "1793448000000");
    }
}
