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
        (&["public-id", "-n", "0"][..], "--count <N>: 0 is too few"),
        (
            &["uuid7", "-n", "x"][..],
            "--count <N>: \"x\" is not a count",
        ),
    ] {
        idgen(args)
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::starts_with("error: ").and(predicate::str::contains(want)));
    }
}

/// `inspect` takes a public ID apart: prefix, UUID, version; a UUIDv7's time.
#[test]
fn inspect_takes_a_public_id_apart() {
    // The TypeID spec's example: a UUIDv7 under the prefix "ord".
    let v = json(&["inspect", "ord_01h455vb4pex5vsknk084sn02q"]);
    assert_eq!(v["kind"], "public_id");
    assert_eq!(v["public_id"], "ord_01h455vb4pex5vsknk084sn02q");
    assert_eq!(v["prefix"], "ord");
    assert_eq!(v["uuid"], "01890a5d-ac96-774b-bcce-b302099a8057");
    assert_eq!(v["version"], 7);
    assert_eq!(v["unix_ms"], 1_688_096_058_518i64);
    assert_eq!(v["utc"], "2023-06-30T03:34:18.518Z");

    // A public ID from `public-id` holds a random UUIDv4: no time.
    let made = stdout(&["public-id", "--prefix", "usr"]);
    let v = json(&["inspect", made.trim_end()]);
    assert_eq!(v["prefix"], "usr");
    assert_eq!(v["version"], 4);
    assert!(v.get("utc").is_none(), "{v}");

    let text = stdout(&["inspect", "pre_fix_00000000000000000000000000"]);
    assert!(text.starts_with("public id    pre_fix_00000000000000000000000000\nprefix       pre_fix\nuuid         00000000-0000-0000-0000-000000000000\n"), "{text}");
}

/// `inspect` takes a UUID: its version, and a UUIDv7's time.
#[test]
fn inspect_reads_a_uuid7_time() {
    let made = stdout(&["uuid7"]);
    let v = json(&["inspect", made.trim_end()]);
    assert_eq!(v["kind"], "uuid");
    let ms = uuid7::timestamp_ms(made.trim_end().parse().unwrap()).unwrap();
    assert_eq!(v["unix_ms"], ms);
    let text = stdout(&["inspect", "01890a5d-ac96-774b-bcce-b302099a8057"]);
    assert_eq!(
        text,
        "uuid         01890a5d-ac96-774b-bcce-b302099a8057\n\
         version      7 (Unix time in milliseconds, then random)\n\
         utc          2023-06-30T03:34:18.518Z\n\
         local        2023-06-30T03:34:18.518+00:00[UTC]\n\
         unix ms      1688096058518\n"
    );
    let v = json(&["inspect", "f36c14dd-21a1-4e83-ac78-1dcf9ecc3ddf"]);
    assert_eq!(v["version"], 4);
    assert!(v.get("unix_ms").is_none());
}

/// Malformed public IDs and UUIDs are usage errors naming the text and the fault.
#[test]
fn inspect_refuses_malformed_public_ids_and_uuids() {
    for (arg, want) in [
        (
            "ord_81h455vb4pex5vsknk084sn02q",
            "its first base32 character is '8'",
        ),
        (
            "Ord_01h455vb4pex5vsknk084sn02q",
            "its prefix \"Ord\" is invalid",
        ),
        (
            "ord_01h455vb4pex5vsknk084sn0",
            "its base32 part has 24 characters",
        ),
        ("01890a5d-ac96-774b-bcce-b302099a805g", "is not a UUID"),
    ] {
        idgen(&["inspect", arg])
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(
                predicate::str::starts_with(format!("error: <ID>: \"{arg}\""))
                    .and(predicate::str::contains(want)),
            );
    }
}

/// `--prefix` has no default to show: without it, there is no prefix.
#[test]
fn public_id_help_shows_no_empty_default() {
    let help = stdout(&["public-id", "--help"]);
    assert!(help.contains("--prefix <PREFIX>"), "{help}");
    assert!(!help.contains("[default: \"\"]"), "{help}");
    assert!(help.contains("without it, no prefix"), "{help}");
}
