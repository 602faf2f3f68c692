//! `inspect`, `compose` and `new`, checked against idgen-core.

mod common;

use common::{idgen, json, stdout, stdout_of};
use idgen_core::{Layout, SnowflakeId};
use predicates::prelude::*;
use serde_json::Value;

const TWITTER_VECTOR: &str = "2116500430648709162";
const SONYFLAKE_VECTOR: &str = "96902515261901317";
const T: &str = "2026-10-31T12:00:00Z";

#[test]
fn compose_gives_the_issue_vectors() {
    for (command, vector, what) in [
        (
            format!("compose --time {T} --datacenter 3 --worker 17 --seq 42"),
            TWITTER_VECTOR,
            "the Twitter sub-fields",
        ),
        // The whole node (3 << 5 | 17 = 113), and the time as Unix milliseconds.
        (
            "compose --time 1793448000000 --node 113 --seq 42 --layout twitter".to_owned(),
            TWITTER_VECTOR,
            "the whole node",
        ),
        (
            format!("compose --layout sonyflake --time {T} --node-field machine=2565 --seq 7"),
            SONYFLAKE_VECTOR,
            "a Sonyflake sub-field",
        ),
        (
            "compose --layout sonyflake --time 2026-10-31T13:00:00.009+01:00 --node 2565 --seq 7"
                .to_owned(),
            SONYFLAKE_VECTOR,
            "rounded down to the 10 ms tick",
        ),
    ] {
        let args: Vec<&str> = command.split_whitespace().collect();
        assert_eq!(stdout(&args), format!("{vector}\n"), "{what}: {command}");
    }
}

/// The names in `inspect --json`'s `fields`, most significant first.
fn field_names(v: &Value) -> Vec<&str> {
    let fields = v["fields"].as_array().unwrap();
    fields.iter().map(|f| f["name"].as_str().unwrap()).collect()
}

#[test]
fn inspect_json_reads_the_twitter_vector() {
    let v = json(&["inspect", TWITTER_VECTOR]);
    let lib = Layout::TWITTER
        .decompose(TWITTER_VECTOR.parse().unwrap())
        .unwrap();
    assert_eq!(v["id"], TWITTER_VECTOR, "the ID is a JSON string");
    assert_eq!(v["utc"], "2026-10-31T12:00:00.000Z");
    assert_eq!(v["local"], "2026-10-31T12:00:00.000+00:00[UTC]");
    assert_eq!(v["unix_ms"], lib.unix_ms);
    assert_eq!(v["ticks"], lib.ticks);
    assert_eq!(v["node"], 113);
    assert_eq!(v["node_fields"]["datacenter"], 3);
    assert_eq!(v["node_fields"]["worker"], 17);
    assert_eq!(v["sequence"], 42);
    assert_eq!(v["layout"]["name"], "twitter");
    assert_eq!(v["binary"], format!("{:063b}", 2116500430648709162u64));
    let names = field_names(&v);
    assert_eq!(names, ["timestamp", "datacenter", "worker", "sequence"]);
}

#[test]
fn inspect_json_reads_the_sonyflake_vector() {
    let v = json(&["inspect", SONYFLAKE_VECTOR, "--layout", "sonyflake"]);
    assert_eq!(v["utc"], "2026-10-31T12:00:00.000Z");
    assert_eq!(v["ticks"], 5_775_840_000u64);
    assert_eq!(v["node_fields"]["machine"], 2565);
    assert_eq!(v["sequence"], 7);
    let names = field_names(&v);
    assert_eq!(
        names,
        ["timestamp", "sequence", "machine"],
        "Sonyflake's sequence is above the node"
    );
}

/// compose → inspect gives back the fields, and both agree with the library, for every preset
/// and a custom layout with named sub-fields.
#[test]
fn compose_then_inspect_round_trips_on_every_layout() {
    let custom =
        "custom:epoch=2026-01-01T00:00:00Z,unit=5ms,time=38,node=region:3+host:9,seq=13,order=tsn";
    let cases: [(&str, &[&str], Layout); 4] = [
        (
            "twitter",
            &["--datacenter", "31", "--worker", "0"],
            Layout::TWITTER,
        ),
        ("sonyflake", &["--node", "65535"], Layout::SONYFLAKE),
        (
            "instagram",
            &["--node-field", "shard=4097"],
            Layout::INSTAGRAM,
        ),
        (
            custom,
            &["--node-field", "region=5", "--node-field", "host=300"],
            custom_layout(),
        ),
    ];
    for (layout, node_args, lib_layout) in cases {
        let mut args = vec![
            "compose",
            "--layout",
            layout,
            "--time",
            "2027-03-04T05:06:07.890Z",
            "--seq",
            "200",
        ];
        args.extend_from_slice(node_args);
        let composed = json(&args);
        let id_text = composed["id"]
            .as_str()
            .expect("the ID is a JSON string")
            .to_string();
        let inspected = json(&["inspect", &id_text, "--layout", layout]);
        assert_eq!(composed, inspected, "{layout}");

        let id: SnowflakeId = id_text.parse().unwrap();
        let lib = lib_layout.decompose(id).unwrap();
        assert_eq!(inspected["unix_ms"], lib.unix_ms, "{layout}");
        assert_eq!(inspected["node"], lib.node, "{layout}");
        assert_eq!(inspected["sequence"], 200, "{layout}");
        for (name, value) in lib.node_fields() {
            assert_eq!(inspected["node_fields"][name], value, "{layout} {name}");
        }
        let want_ms = lib_layout.tick_start_ms(lib_layout.ticks_at(1_804_136_767_890).unwrap());
        assert_eq!(lib.unix_ms, want_ms, "{layout}");
        // The layout's spec in the JSON names the same layout.
        let spec = inspected["layout"]["spec"].as_str().unwrap();
        assert_eq!(
            json(&["inspect", &id_text, "--layout", spec]),
            inspected,
            "{layout}"
        );
    }
}

fn custom_layout() -> Layout {
    Layout::builder()
        .epoch_ms(1_767_225_600_000)
        .unit_ms(5)
        .timestamp_bits(38)
        .node_field("region", 3)
        .node_field("host", 9)
        .sequence_bits(13)
        .order(idgen_core::FieldOrder::TimeSequenceNode)
        .build()
        .unwrap()
}

#[test]
fn the_layout_can_come_from_idgen_layout() {
    let v =
        stdout_of(idgen(&["inspect", SONYFLAKE_VECTOR, "--json"]).env("IDGEN_LAYOUT", "sonyflake"));
    let v: Value = serde_json::from_str(&v).unwrap();
    assert_eq!(v["node_fields"]["machine"], 2565);
}

#[test]
fn new_prints_n_increasing_ids_of_the_node() {
    let text = stdout(&[
        "new",
        "-n",
        "300",
        "--layout",
        "sonyflake",
        "--node",
        "2565",
    ]);
    let ids: Vec<SnowflakeId> = text.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 300);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "strictly increasing");
    for id in &ids {
        assert_eq!(Layout::SONYFLAKE.decompose(*id).unwrap().node, 2565);
    }
    // 300 > 256 IDs per tick: the generator moved to the next tick instead of wrapping.
    let first = Layout::SONYFLAKE.decompose(ids[0]).unwrap().ticks;
    let last = Layout::SONYFLAKE.decompose(ids[299]).unwrap().ticks;
    assert!(last > first);
}

#[test]
fn new_defaults_to_one_twitter_id_of_node_0_and_takes_sub_fields() {
    let out = idgen(&["new"]).assert().success().get_output().clone();
    // Node 0 is used, and said so on stderr.
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "note: no node given, so node 0 is used; IDs are unique only among generators with \
         different nodes (give --node N, --datacenter/--worker or --node-field)\n"
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1);
    let id: SnowflakeId = text.trim_end().parse().unwrap();
    assert_eq!(Layout::TWITTER.decompose(id).unwrap().node, 0);

    let out = idgen(&[
        "new",
        "-n",
        "3",
        "--datacenter",
        "2",
        "--worker",
        "9",
        "--json",
    ])
    .assert()
    .success()
    .stderr(predicate::str::is_empty())
    .get_output()
    .clone();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["node"], 2 * 32 + 9);
    assert_eq!(v["layout"]["name"], "twitter");
    let ids = v["ids"].as_array().unwrap();
    assert_eq!(ids.len(), 3);
    for id in ids {
        let id: SnowflakeId = id.as_str().expect("IDs are JSON strings").parse().unwrap();
        assert_eq!(
            Layout::TWITTER.decompose(id).unwrap().node_field("worker"),
            Some(9)
        );
    }
}

#[test]
fn new_takes_the_node_from_an_environment_variable() {
    let out =
        stdout_of(idgen(&["new", "--node", "env:IDGEN_TEST_NODE"]).env("IDGEN_TEST_NODE", "77"));
    let id: SnowflakeId = out.trim_end().parse().unwrap();
    assert_eq!(Layout::TWITTER.decompose(id).unwrap().node, 77);
}

#[test]
fn times_before_1970_work_with_an_earlier_epoch() {
    let layout = "custom:epoch=-10000,time=41,node=10,seq=12";
    let text = stdout(&[
        "compose", "--layout", layout, "--time", "-5000", "--node", "1",
    ]);
    let lib = Layout::builder().epoch_ms(-10_000).build().unwrap();
    assert_eq!(text, format!("{}\n", lib.compose_at(-5000, 1, 0).unwrap()));
    let v = json(&["inspect", text.trim_end(), "--layout", layout]);
    assert_eq!(v["unix_ms"], -5000);
    assert_eq!(v["utc"], "1969-12-31T23:59:55.000Z");
}

#[test]
fn compose_now_uses_the_current_time() {
    let before = jiff::Timestamp::now().as_millisecond();
    let v = json(&["compose", "--time", "now", "--node", "5"]);
    let after = jiff::Timestamp::now().as_millisecond();
    let ms = v["unix_ms"].as_i64().unwrap();
    assert!(
        (before..=after).contains(&ms),
        "{before} <= {ms} <= {after}"
    );
    assert_eq!(v["node"], 5);
}

/// A run at the layout's cap that takes over a second says so first, with its least duration.
#[test]
fn a_long_run_is_announced_with_its_least_duration() {
    // Sonyflake with a 1-bit sequence: 2 IDs per 10 ms tick, so 300 IDs need 149 more ticks.
    let layout = "custom:base=sonyflake,seq=1";
    let out = idgen(&["new", "-n", "300", "--layout", layout, "--node", "3"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr,
        "note: layout custom:epoch=2025-01-01T00:00:00Z,unit=10ms,time=39,node=machine:16,seq=1,order=tsn \
         issues at most 200 IDs per second from one node, so 300 IDs take at least 1.5 s\n"
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 300);
    // A short run is silent.
    idgen(&["new", "-n", "300", "--layout", "sonyflake", "--node", "3"])
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
}

/// On a terminal, stderr gets a progress line (stdout still gets only the IDs).
#[test]
fn a_long_run_shows_progress_on_a_terminal() {
    let exe = assert_cmd::cargo::cargo_bin!("idgen");
    // `script` gives the command a pseudo-terminal; stdout goes to /dev/null, so what the
    // terminal shows is stderr.
    let command = format!(
        "{} new -n 300 --layout custom:base=sonyflake,seq=1 --node 3 > /dev/null",
        exe.display()
    );
    let out = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .expect("`script` (util-linux) runs the command on a pseudo-terminal");
    assert!(out.status.success(), "{out:?}");
    let terminal = String::from_utf8_lossy(&out.stdout);
    assert!(terminal.contains("take at least 1.5 s"), "{terminal}");
    assert!(
        terminal.contains("/300 IDs (") && terminal.contains("left"),
        "no progress line: {terminal:?}"
    );
}
