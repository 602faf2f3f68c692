//! `--layout`: a preset name or a `custom:` layout spec.
//!
//! ```text
//! twitter | sonyflake | instagram | js-safe
//! custom:KEY=VALUE[,KEY=VALUE…]
//!   base=PRESET                        start from a preset (default: 41 | 10 | 12 bits, epoch 1970, 1 ms)
//!   epoch=2026-01-01T00:00:00Z         RFC 3339, or milliseconds since the Unix epoch
//!   unit=10ms                          tick length: N, Nms or Ns
//!   time=41                            timestamp bits (also: timestamp=)
//!   node=10 | node=dc:5+worker:5       node bits, or named sub-fields, most significant first
//!   seq=12                             sequence bits (also: sequence=)
//!   order=tns | tsn                    time|node|seq (Twitter) or time|seq|node (Sonyflake)
//! ```

use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Mutex, PoisonError};

use idgen_core::{FieldOrder, Layout, LayoutBuilder};

use crate::time_arg;

/// The keys of a `custom:` spec, for error messages.
const KEYS: &str = "base, epoch, unit, time, node, seq, order";

/// A layout chosen on the command line, with the name it was chosen by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LayoutArg {
    /// The layout.
    pub(crate) layout: Layout,
    /// `twitter`, `sonyflake`, `instagram`, `js-safe`, or `custom` for anything else.
    pub(crate) name: &'static str,
}

impl Default for LayoutArg {
    fn default() -> Self {
        LayoutArg {
            layout: Layout::TWITTER,
            name: "twitter",
        }
    }
}

impl fmt::Display for LayoutArg {
    /// The preset's name, or the custom layout's canonical spec.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.name == "custom" {
            f.write_str(&spec(&self.layout))
        } else {
            f.write_str(self.name)
        }
    }
}

/// The clap value parser for `--layout`.
pub(crate) fn parse(text: &str) -> Result<LayoutArg, String> {
    if let Some(layout) = preset(text) {
        return Ok(layout);
    }
    let Some(body) = text.strip_prefix("custom:") else {
        return Err(format!(
            "unknown layout {text:?}: use twitter, sonyflake, instagram, js-safe or custom:KEY=VALUE,… \
             (see `idgen help inspect`)"
        ));
    };
    let layout = parse_custom(body)?;
    let name = PRESETS
        .iter()
        .find(|(preset, _)| *preset == layout)
        .map_or("custom", |(_, name)| name);
    Ok(LayoutArg { layout, name })
}

/// The presets by name.
const PRESETS: [(Layout, &str); 4] = [
    (Layout::TWITTER, "twitter"),
    (Layout::SONYFLAKE, "sonyflake"),
    (Layout::INSTAGRAM, "instagram"),
    (Layout::JS_SAFE, "js-safe"),
];

fn preset(name: &str) -> Option<LayoutArg> {
    let lower = name.to_ascii_lowercase();
    PRESETS
        .iter()
        .find(|(_, n)| *n == lower)
        .map(|&(layout, name)| LayoutArg { layout, name })
}

fn parse_custom(body: &str) -> Result<Layout, String> {
    let mut seen: Vec<&str> = Vec::new();
    let mut pairs = Vec::new();
    for item in body.split(',') {
        let Some((key, value)) = item.split_once('=') else {
            return Err(if item.is_empty() {
                "empty item in the custom layout: write KEY=VALUE pairs separated by single commas"
                    .to_string()
            } else {
                format!("{item:?} in the custom layout is not KEY=VALUE (keys: {KEYS})")
            });
        };
        let key = match key {
            "timestamp" => "time",
            "sequence" => "seq",
            other => other,
        };
        if !KEYS.split(", ").any(|k| k == key) {
            return Err(format!(
                "unknown key {key:?} in the custom layout (keys: {KEYS})"
            ));
        }
        if seen.contains(&key) {
            return Err(format!("key {key:?} is given twice in the custom layout"));
        }
        seen.push(key);
        pairs.push((key, value));
    }
    // `base` first, whatever its position, so the other keys override it.
    let mut builder = match pairs.iter().find(|(k, _)| *k == "base") {
        Some((_, base)) => match preset(base) {
            Some(p) => builder_from(&p.layout),
            None => {
                return Err(format!(
                    "base={base:?}: the base is one of twitter, sonyflake, instagram, js-safe"
                ));
            }
        },
        None => Layout::builder(),
    };
    for (key, value) in pairs {
        builder = match key {
            "base" => builder,
            "epoch" => builder.epoch_ms(
                time_arg::parse_unix_ms(value).map_err(|e| format!("epoch={value:?}: {e}"))?,
            ),
            "unit" => builder.unit_ms(parse_unit(value)?),
            "time" => builder.timestamp_bits(parse_bits(key, value)?),
            "seq" => builder.sequence_bits(parse_bits(key, value)?),
            "node" => parse_node(builder, value)?,
            "order" => builder.order(match value {
                "tns" | "time-node-seq" => FieldOrder::TimeNodeSequence,
                "tsn" | "time-seq-node" => FieldOrder::TimeSequenceNode,
                _ => {
                    return Err(format!(
                        "order={value:?}: the order is tns (time|node|seq) or tsn (time|seq|node)"
                    ));
                }
            }),
            _ => unreachable!("keys were checked above"),
        };
    }
    builder.build().map_err(|e| e.to_string())
}

/// A builder that builds `layout` again.
fn builder_from(layout: &Layout) -> LayoutBuilder {
    let mut b = Layout::builder()
        .epoch_ms(layout.epoch_ms())
        .unit_ms(layout.unit_ms())
        .timestamp_bits(layout.timestamp_bits())
        .sequence_bits(layout.sequence_bits())
        .order(layout.order())
        .node_bits(layout.node_bits());
    if !is_plain_node(layout) {
        for f in layout.node_fields() {
            b = b.node_field(f.name, f.bits);
        }
    }
    b
}

/// True when the node field is one sub-field called `node` (or has no bits).
fn is_plain_node(layout: &Layout) -> bool {
    matches!(
        layout.node_fields(),
        [] | [idgen_core::NodeField { name: "node", .. }]
    )
}

fn parse_bits(key: &str, value: &str) -> Result<u8, String> {
    match value.parse::<u8>() {
        Ok(bits) if bits <= 63 => Ok(bits),
        _ => Err(format!(
            "{key}={value:?}: a field width is a number of bits from 0 to 63"
        )),
    }
}

fn parse_unit(value: &str) -> Result<u32, String> {
    let (number, scale) = if let Some(n) = value.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = value.strip_suffix('s') {
        (n, 1000)
    } else {
        (value, 1)
    };
    let bad = || {
        format!(
            "unit={value:?}: the time unit is N, Nms or Ns (like 10ms), from 1 ms to 4294967295 ms"
        )
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    number
        .parse::<u32>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .filter(|&ms| ms > 0)
        .ok_or_else(bad)
}

/// `node=10` or `node=datacenter:5+worker:5`.
fn parse_node(builder: LayoutBuilder, value: &str) -> Result<LayoutBuilder, String> {
    if !value.contains(':') {
        return Ok(builder.node_bits(parse_bits("node", value)?));
    }
    let mut builder = builder.node_bits(0);
    for part in value.split('+') {
        let Some((name, bits)) = part.split_once(':') else {
            return Err(format!(
                "node={value:?}: {part:?} is not NAME:BITS (write node=datacenter:5+worker:5)"
            ));
        };
        let name_ok = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !name_ok {
            return Err(format!(
                "node={value:?}: the sub-field name {name:?} must be letters, digits, _ or -"
            ));
        }
        if matches!(name, "timestamp" | "time" | "sequence" | "seq") {
            return Err(format!(
                "node={value:?}: {name:?} names another field; choose another sub-field name"
            ));
        }
        let bits = parse_bits(&format!("node sub-field {name}"), bits)?;
        builder = builder.node_field(intern(name), bits);
    }
    Ok(builder)
}

/// `name` as the `&'static str` the library's sub-field names are. Each distinct name is leaked
/// once and reused after: `idgen web` parses the page's layout on every request, and leaking
/// the names again each time grew the server without bound (found by the `layout_text` fuzz
/// target under LeakSanitizer).
fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(known) = names.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.into());
    names.insert(leaked);
    leaked
}

/// The canonical `custom:` spec of `layout`: [`parse`] reads it back to the same layout.
pub(crate) fn spec(layout: &Layout) -> String {
    let epoch =
        time_arg::utc_compact(layout.epoch_ms()).unwrap_or_else(|| layout.epoch_ms().to_string());
    let node = if is_plain_node(layout) {
        layout.node_bits().to_string()
    } else {
        layout
            .node_fields()
            .iter()
            .map(|f| format!("{}:{}", f.name, f.bits))
            .collect::<Vec<_>>()
            .join("+")
    };
    let order = match layout.order() {
        FieldOrder::TimeNodeSequence => "tns",
        FieldOrder::TimeSequenceNode => "tsn",
    };
    format!(
        "custom:epoch={epoch},unit={}ms,time={},node={node},seq={},order={order}",
        layout.unit_ms(),
        layout.timestamp_bits(),
        layout.sequence_bits()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn custom(body: &str) -> Result<Layout, String> {
        parse(&format!("custom:{body}")).map(|l| l.layout)
    }

    #[test]
    fn presets_by_name_in_any_case() {
        assert_eq!(parse("twitter").unwrap().layout, Layout::TWITTER);
        assert_eq!(parse("Sonyflake").unwrap().layout, Layout::SONYFLAKE);
        assert_eq!(parse("INSTAGRAM").unwrap().name, "instagram");
        assert_eq!(parse("js-safe").unwrap().layout, Layout::JS_SAFE);
        assert_eq!(parse("JS-SAFE").unwrap().name, "js-safe");
    }

    #[test]
    fn each_preset_spec_reads_back_as_the_preset() {
        for (layout, name) in PRESETS {
            let back = parse(&spec(&layout)).unwrap();
            assert_eq!((back.layout, back.name), (layout, name));
        }
    }

    #[test]
    fn custom_keys_build_the_same_layout_as_the_builder() {
        let want = Layout::builder()
            .epoch_ms(1_767_225_600_000)
            .unit_ms(10)
            .timestamp_bits(39)
            .node_field("dc", 3)
            .node_field("worker", 7)
            .sequence_bits(12)
            .order(FieldOrder::TimeSequenceNode)
            .build()
            .unwrap();
        let got = custom(
            "epoch=2026-01-01T00:00:00Z,unit=10ms,time=39,node=dc:3+worker:7,seq=12,order=tsn",
        );
        assert_eq!(got, Ok(want));
        assert_eq!(parse(&spec(&want)).unwrap().layout, want);
        // Aliases and a bare epoch in milliseconds.
        assert_eq!(
            custom(
                "epoch=1767225600000,unit=10,timestamp=39,node=dc:3+worker:7,sequence=12,order=time-seq-node"
            ),
            Ok(want)
        );
    }

    #[test]
    fn base_is_applied_first_and_overridden_by_the_other_keys() {
        let got = custom("epoch=2026-01-01T00:00:00Z,base=instagram").unwrap();
        assert_eq!(
            got,
            Layout::INSTAGRAM.with_epoch_ms(1_767_225_600_000).unwrap()
        );
        assert_eq!(parse("custom:base=sonyflake").unwrap().name, "sonyflake");
        assert_eq!(custom("unit=1s").unwrap().unit_ms(), 1000);
    }

    #[test]
    fn sub_field_names_are_leaked_once_not_per_parse() {
        let spec = "custom:node=fuzz_dc:5+fuzz_worker:5";
        let a = parse(spec).unwrap().layout;
        let b = parse(spec).unwrap().layout;
        for (x, y) in a.node_fields().iter().zip(b.node_fields()) {
            assert!(std::ptr::eq(x.name, y.name), "{} read twice", x.name);
        }
    }

    #[test]
    fn errors_name_the_bad_part() {
        for (body, part) in [
            ("", "empty item"),
            ("time=41,,seq=12", "empty item"),
            ("time", "\"time\" in the custom layout is not KEY=VALUE"),
            ("bits=3", "unknown key \"bits\""),
            ("time=41,time=40", "key \"time\" is given twice"),
            ("time=64", "time=\"64\""),
            ("seq=x", "seq=\"x\""),
            ("unit=0ms", "unit=\"0ms\""),
            ("unit=5m", "unit=\"5m\""),
            ("unit=4294968s", "unit=\"4294968s\""),
            ("order=nts", "order=\"nts\""),
            ("base=discord", "base=\"discord\""),
            ("epoch=yesterday", "epoch=\"yesterday\""),
            ("node=dc:5+worker", "\"worker\" is not NAME:BITS"),
            ("node=d c:5", "sub-field name \"d c\""),
            ("node=seq:5", "\"seq\" names another field"),
            ("node=a:5+a:5", "\"a\" is used twice"),
            ("time=42,node=10,seq=12", "= 64 bits, more than the 63"),
            ("time=0", "0 bits"),
        ] {
            let err = custom(body).unwrap_err();
            assert!(err.contains(part), "{body:?}: {err}");
        }
        let err = parse("twiter").unwrap_err();
        assert!(err.contains("unknown layout \"twiter\""), "{err}");
    }
}
