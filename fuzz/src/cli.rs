//! The doors the fuzz targets use into idgen-cli's parsers, each with the checks that compare
//! its answer against the library (a target only feeds bytes in and fails on a panic).

use idgen_core::{AnyPublicId, Layout, Parts, SnowflakeId};
use serde_json::Value;

use crate::layout_arg;
use crate::time_arg;
use crate::web::compose::{self, ComposeRequest};
use crate::web::free_body::FreeBody;
use crate::web::inspect::{self, InspectRequest};
use crate::web::view::LayoutView;

/// `--layout TEXT` (and the page's layout input): whatever parses is a valid layout whose
/// canonical spec and whose display both read back as the same layout under the same name.
pub fn layout_text(text: &str) {
    let Ok(arg) = layout_arg::parse(text) else {
        return;
    };
    check_layout(&arg.layout);
    let spec = layout_arg::spec(&arg.layout);
    let back =
        layout_arg::parse(&spec).unwrap_or_else(|e| panic!("spec {spec:?} of {text:?}: {e}"));
    assert_eq!(back, arg, "spec {spec:?} of {text:?} reads back otherwise");
    let shown = arg.to_string();
    assert_eq!(
        layout_arg::parse(&shown).as_ref(),
        Ok(&arg),
        "display {shown:?}"
    );
    serde_json::to_string(&LayoutView::new(&arg)).expect("a layout view serializes");
}

/// The invariants of any layout the CLI accepts.
fn check_layout(l: &Layout) {
    assert!(l.total_bits() <= 63, "{l:?} has {} bits", l.total_bits());
    assert!(l.unit_ms() >= 1);
    let names: Vec<_> = l.node_fields().iter().map(|f| f.name).collect();
    let bits: u32 = l.node_fields().iter().map(|f| u32::from(f.bits)).sum();
    assert_eq!(bits, u32::from(l.node_bits()), "{names:?}");
    // The last tick starts exactly `unit - 1` ms before the layout's last instant.
    let last_tick_start = i128::from(l.tick_start_ms(l.max_ticks()));
    assert_eq!(
        last_tick_start,
        i128::from(l.last_unix_ms()) - i128::from(l.unit_ms()) + 1
    );
    assert_eq!(l.ticks_at(l.last_unix_ms()).ok(), Some(l.max_ticks()));
}

/// The canonical spec of a layout (what `idgen plan` prints) reads back as the same layout.
pub fn spec_reads_back(layout: &Layout) {
    let spec = layout_arg::spec(layout);
    let back = layout_arg::parse(&spec).unwrap_or_else(|e| panic!("spec {spec:?}: {e}"));
    assert_eq!(&back.layout, layout, "spec {spec:?}");
}

/// A fixed "now" for an empty time input (the handler uses the clock).
const NOW_MS: i64 = 1_793_448_000_000;

/// `POST /api/compose` with `body`: an ID that comes back decomposes into exactly the inputs,
/// composes again into itself, and equals the formula's terms ORed; a refusal names inputs.
pub fn web_compose(body: &[u8]) {
    let Ok(req) = serde_json::from_slice::<ComposeRequest>(body) else {
        return;
    };
    let Ok(arg) = compose::layout(&req.layout) else {
        return;
    };
    let l = arg.layout;
    match compose::compose(&arg, &req, NOW_MS) {
        Ok(view) => {
            let json = serde_json::to_value(&view).expect("a compose view serializes");
            let id: SnowflakeId = view.id.parse().expect("the view's ID parses");
            let d = l.decompose(id).expect("a composed ID decomposes");
            let time = req.time.trim();
            let ms = if time.is_empty() {
                NOW_MS
            } else {
                time_arg::parse_unix_ms(time).expect("an accepted time parses")
            };
            assert_eq!(l.ticks_at(ms).ok(), Some(d.ticks));
            assert_eq!(json["delta"], d.ticks.to_string());
            assert_eq!(json["unix_ms"], ms.to_string());
            // The ID's tick holds the time asked for.
            let start = i128::from(d.unix_ms);
            assert!(start <= i128::from(ms) && i128::from(ms) < start + i128::from(l.unit_ms()));
            for (name, value) in d.node_fields() {
                let typed = req.node.get(name).map(|t| t.trim().parse::<u64>());
                assert_eq!(typed, Some(Ok(value)), "node field {name}");
            }
            assert_eq!(req.sequence.trim().parse::<u64>(), Ok(d.sequence));
            let again = l.compose(Parts {
                ticks: d.ticks,
                node: d.node,
                sequence: d.sequence,
            });
            assert_eq!(again.ok(), Some(id));
            let ored = json["terms"]
                .as_array()
                .expect("terms")
                .iter()
                .map(|t| t["shifted"].as_str().unwrap().parse::<u64>().unwrap())
                .fold(0, |a, b| a | b);
            assert_eq!(ored, id.as_u64());
            // What the inspect form says of it agrees.
            let inspected = inspect::inspect(&arg, &view.id).expect("a composed ID inspects");
            let back = serde_json::to_value(&inspected).unwrap();
            assert_eq!(back["id"], json["id"]);
            assert_eq!(back["ticks"], json["delta"]);
            assert_eq!(back["sequence"], d.sequence.to_string());
        }
        Err(errors) => {
            assert!(!errors.is_empty(), "a refusal without an error");
            for e in &errors {
                let known = matches!(e.input.as_str(), "time" | "sequence" | "node" | "layout")
                    || e.input
                        .strip_prefix("node.")
                        .is_some_and(|n| l.node_fields().iter().any(|f| f.name == n));
                assert!(known, "error for an unknown input {:?}", e.input);
                assert!(!e.message.is_empty());
            }
            serde_json::to_string(&errors).expect("errors serialize");
        }
    }
}

/// `POST /api/inspect` with `body`: a Snowflake ID that comes back is the pasted number and
/// composes from its parts; a public ID or UUID is the pasted text.
pub fn web_inspect(body: &[u8]) {
    let Ok(req) = serde_json::from_slice::<InspectRequest>(body) else {
        return;
    };
    let Ok(arg) = compose::layout(&req.layout) else {
        return;
    };
    let Ok(view) = inspect::inspect(&arg, &req.text) else {
        return;
    };
    let json = serde_json::to_value(&view).expect("an inspect view serializes");
    let text = req.text.trim();
    let text = match serde_json::from_str::<String>(text) {
        Ok(s) if text.starts_with('"') => s.trim().to_owned(),
        _ => text.to_owned(),
    };
    let number = |key: &str| -> u64 { json[key].as_str().unwrap().parse().unwrap() };
    match json["kind"].as_str() {
        Some("snowflake") => {
            let id: SnowflakeId = text.parse().expect("an inspected Snowflake ID parses");
            assert_eq!(json["id"], id.to_string());
            let parts = Parts {
                ticks: number("ticks"),
                node: number("node"),
                sequence: number("sequence"),
            };
            assert_eq!(arg.layout.compose(parts).ok(), Some(id));
        }
        Some("public_id") => {
            let id: AnyPublicId = text.parse().expect("an inspected public ID parses");
            assert_eq!(json["public_id"], id.to_string());
            assert_eq!(json["prefix"], id.prefix());
            assert_eq!(json["uuid"], id.uuid().to_string());
        }
        Some("uuid") => {
            let uuid = idgen_core::uuid::Uuid::try_parse(&text).expect("a UUID");
            assert_eq!(json["uuid"], uuid.to_string());
        }
        other => panic!("unknown kind {other:?}"),
    }
}

/// `POST /api/leases/free` with `body`: the node ID read is the trimmed decimal text, exactly
/// when that is a `u64`; the holder and force are taken as sent.
pub fn web_free(body: &[u8]) {
    let Ok(req) = serde_json::from_slice::<FreeBody>(body) else {
        return;
    };
    let text = req.node.trim();
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    match req.node() {
        Some(node) => {
            assert!(digits || text.starts_with('+'), "{text:?} read as {node}");
            assert_eq!(
                text.trim_start_matches('+')
                    .trim_start_matches('0')
                    .parse::<u64>()
                    .unwrap_or(0),
                node
            );
        }
        None => assert!(!digits || text.len() > 19, "{text:?} refused"),
    }
    // (serde skips unknown fields without checking their escapes, so a body may read as a
    // FreeBody and not as a Value; and serde reads a struct from an array too, in field order.)
    if let Ok(value @ Value::Object(_)) = serde_json::from_slice::<Value>(body) {
        assert_eq!(value["force"].as_bool().unwrap_or(false), req.force);
        assert_eq!(value["holder"].as_str(), req.holder.as_deref());
    }
}
