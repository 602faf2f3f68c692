//! `public-id` and `uuid7`, checked against idgen-core.

mod common;

use std::collections::HashSet;

use common::{idgen, json, stdout};
use idgen_core::{PublicId, PublicIdPrefix, uuid7};
use predicates::prelude::*;

struct Order;
impl PublicIdPrefix for Order {
    const PREFIX: &'static str = "ord";
}

#[test]
fn public_ids_parse_back_as_the_prefixed_type() {
    let text = stdout(&["public-id", "--prefix", "ord", "-n", "50"]);
    let ids: Vec<PublicId<Order>> = text.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 50);
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 50, "all distinct");
    for id in &ids {
        assert_eq!(id.uuid().get_version_num(), 4, "random");
        assert!(id.to_string().starts_with("ord_"));
    }
}

#[test]
fn a_public_id_without_prefix_is_the_untyped_form() {
    let text = stdout(&["public-id"]);
    let line = text.trim_end();
    assert_eq!(line.len(), 26);
    assert_eq!(line.parse::<PublicId>().unwrap().to_string(), line);
}

#[test]
fn public_id_json_holds_the_text_and_its_uuid() {
    let v = json(&["public-id", "--prefix", "ord", "-n", "3"]);
    assert_eq!(v["prefix"], "ord");
    let ids = v["ids"].as_array().unwrap();
    assert_eq!(ids.len(), 3);
    for entry in ids {
        let id: PublicId<Order> = entry["id"].as_str().unwrap().parse().unwrap();
        assert_eq!(entry["uuid"], id.uuid().to_string());
    }
}

#[test]
fn uuid7s_are_strictly_increasing_version_7() {
    let text = stdout(&["uuid7", "-n", "500"]);
    let uuids: Vec<uuid::Uuid> = text.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(uuids.len(), 500);
    assert!(uuids.windows(2).all(|w| w[0] < w[1]), "strictly increasing");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.windows(2).all(|w| w[0] < w[1]),
        "the text sorts the same way"
    );
    assert!(uuids.iter().all(|u| u.get_version_num() == 7));
}

#[test]
fn uuid7_json_carries_the_timestamp_of_now() {
    let before = jiff::Timestamp::now().as_millisecond();
    let v = json(&["uuid7", "-n", "2"]);
    let after = jiff::Timestamp::now().as_millisecond();
    for entry in v["uuids"].as_array().unwrap() {
        let uuid: uuid::Uuid = entry["uuid"].as_str().unwrap().parse().unwrap();
        let ms = uuid7::timestamp_ms(uuid).unwrap();
        assert_eq!(entry["unix_ms"], ms);
        assert!(
            (before..=after).contains(&ms),
            "{before} <= {ms} <= {after}"
        );
        let utc: jiff::Timestamp = entry["utc"].as_str().unwrap().parse().unwrap();
        assert_eq!(utc.as_millisecond(), ms);
    }
}

#[test]
fn bad_prefixes_and_counts_are_usage_errors() {
    for (args, want) in [
        (
            &["public-id", "--prefix", "Ord"][..],
            "\"Ord\": a public ID prefix holds only the characters a-z and '_'",
        ),
        (
            &["public-id", "--prefix", "_ord"][..],
            "must not start or end with '_'",
        ),
        (&["public-id", "-n", "0"][..], "'0'"),
        (&["uuid7", "-n", "x"][..], "'x'"),
    ] {
        idgen(args)
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::starts_with("error: ").and(predicate::str::contains(want)));
    }
}
