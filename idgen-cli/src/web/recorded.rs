//! The layout a namespace recorded (its first claim writes it, every claim checks it), as the
//! operator view shows it beside the server's `--layout`.

use idgen_sqlx::lease::layout_key;
use serde::Serialize;

use crate::layout_arg::{self, LayoutArg};

/// What the operator view shows of the namespace's layout.
#[derive(Debug, PartialEq, Eq, Serialize)]
pub(crate) struct RecordedLayout {
    /// The record as the store keeps it (a layout key), if there is one.
    recorded: Option<String>,
    /// The record as `--layout` takes it: a preset's name, or a `custom:` spec.
    recorded_name: Option<String>,
    /// The server's `--layout`.
    server: String,
    /// The table's layout column: the recorded layout's name, or `none recorded yet`.
    shown: String,
    /// Whether a record exists and makes other IDs than the server's `--layout`.
    differs: bool,
}

impl RecordedLayout {
    /// The record `recorded` (as the store returned it) beside the server's layout.
    pub(crate) fn new(recorded: Option<String>, server: &LayoutArg) -> RecordedLayout {
        let recorded_name = recorded.as_deref().map(|key| name_of(key, server));
        let differs = recorded
            .as_deref()
            .is_some_and(|key| key != layout_key(&server.layout));
        let shown = recorded_name
            .clone()
            .unwrap_or_else(|| "none recorded yet".to_owned());
        RecordedLayout {
            recorded,
            recorded_name,
            server: server.to_string(),
            shown,
            differs,
        }
    }
}

/// A layout key as `--layout` takes it: the server's own layout or a preset when the key is
/// theirs (the server's first: its sub-field names), else the `custom:` spec of its numbers;
/// the key itself if it cannot be read.
fn name_of(key: &str, server: &LayoutArg) -> String {
    if key == layout_key(&server.layout) {
        return server.to_string();
    }
    for preset in ["twitter", "sonyflake", "instagram", "js-safe"] {
        if let Ok(p) = layout_arg::parse(preset)
            && key == layout_key(&p.layout)
        {
            return preset.to_owned();
        }
    }
    spec_of(key).unwrap_or_else(|| key.to_owned())
}

/// `epoch_ms=… unit_ms=… time=… node=… sequence=… order=…` → the canonical `custom:` spec.
fn spec_of(key: &str) -> Option<String> {
    let mut parts = Vec::new();
    for pair in key.split(' ') {
        let (k, v) = pair.split_once('=')?;
        let item = match k {
            "epoch_ms" => format!("epoch={v}"),
            "unit_ms" => format!("unit={v}ms"),
            "time" | "node" => format!("{k}={v}"),
            "sequence" => format!("seq={v}"),
            "order" => match v {
                "time-node-sequence" => "order=tns".to_owned(),
                "time-sequence-node" => "order=tsn".to_owned(),
                _ => return None,
            },
            _ => return None,
        };
        parts.push(item);
    }
    let layout = layout_arg::parse(&format!("custom:{}", parts.join(","))).ok()?;
    // Read back, it must be the same record.
    (layout_key(&layout.layout) == key).then(|| layout.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(text: &str) -> LayoutArg {
        layout_arg::parse(text).unwrap()
    }

    #[test]
    fn the_servers_own_layout_does_not_differ() {
        let twitter = server("twitter");
        let r = RecordedLayout::new(Some(layout_key(&twitter.layout)), &twitter);
        assert!(!r.differs);
        assert_eq!(r.shown, "twitter");
    }

    #[test]
    fn another_preset_is_named_and_differs() {
        let js = server("js-safe");
        let r = RecordedLayout::new(Some(layout_key(&js.layout)), &server("twitter"));
        assert!(r.differs);
        assert_eq!(r.shown, "js-safe");
        assert_eq!(r.server, "twitter");
    }

    #[test]
    fn a_custom_record_reads_back_as_its_spec() {
        let custom = server("custom:epoch=2026-01-01T00:00:00Z,unit=10ms,time=39,node=12,seq=12");
        let r = RecordedLayout::new(Some(layout_key(&custom.layout)), &server("twitter"));
        assert!(r.differs);
        let back = server(&r.shown);
        assert_eq!(layout_key(&back.layout), layout_key(&custom.layout));
    }

    #[test]
    fn no_record_and_an_unreadable_one() {
        let r = RecordedLayout::new(None, &server("twitter"));
        assert!(!r.differs && r.recorded.is_none());
        assert_eq!(r.shown, "none recorded yet");
        let odd = RecordedLayout::new(Some("something else".into()), &server("twitter"));
        assert!(odd.differs);
        assert_eq!(odd.shown, "something else");
    }
}
