//! `idgen plan`: its report, that the layout it prints reads back through `--layout`, its
//! refusals and their exit status, and the `js-safe` preset.

mod common;

use common::{idgen, json, stdout};
use idgen_core::Layout;
use idgen_core::snowflake::plan::Requirements;
use serde_json::Value;

const EPOCH: &str = "2026-01-01T00:00:00Z";
const EPOCH_MS: i64 = 1_767_225_600_000;

#[test]
fn prints_the_layout_and_why() {
    let out = stdout(&[
        "plan", "--nodes", "1024", "--rate", "100000/s", "--years", "50", "--epoch", EPOCH,
    ]);
    assert_eq!(
        out,
        "\
layout     custom:epoch=2026-01-01T00:00:00Z,unit=1ms,time=46,node=10,seq=7,order=tns
bits       63 of 63: timestamp 46 | node 10 | sequence 7, 1 ms ticks
nodes      1024 (node IDs 0 to 1023), asked 1024
rate       128000 IDs/s per node (128 per 1 ms tick), asked 100000
lifetime   2229.9 years, from 2026-01-01T00:00:00.000Z until 4255-11-25T01:22:57.663Z, asked 50
tick       1 ms: of 1 ms, 10 ms, 100 ms, 1 s, the tick that needs the fewest bits (58; the finer wins a tie)
spare      5 bits, to the timestamp (41 → 46 bits): when the timestamp runs out every node stops at once, while a low rate only makes a generator wait
"
    );
}

#[test]
fn a_53_bit_plan_for_sonyflakes_rate_is_the_js_safe_preset() {
    let out = stdout(&[
        "plan",
        "--nodes",
        "128",
        "--rate",
        "25600",
        "--years",
        "87",
        "--max-bits",
        "53",
        "--epoch",
        EPOCH,
    ]);
    assert!(
        out.contains("\npreset     js-safe (--layout js-safe)\n"),
        "{out}"
    );
    assert!(out.contains("until 2113-02-08T13:44:29.439Z"), "{out}");
    // The largest ID of the preset is Number.MAX_SAFE_INTEGER.
    let max = stdout(&[
        "compose",
        "--layout",
        "js-safe",
        "--time",
        "2113-02-08T13:44:29.439Z",
        "--node",
        "127",
        "--seq",
        "255",
    ]);
    assert_eq!(max, "9007199254740991\n");
    let v = json(&["inspect", "9007199254740991", "--layout", "JS-SAFE"]);
    assert_eq!(v["layout"]["name"], "js-safe");
    assert_eq!(v["node"], 127);
}

/// `plan --json` for these inputs.
fn plan_json(nodes: u64, rate: u64, years: u32, max_bits: u8) -> Value {
    json(&[
        "plan",
        "--nodes",
        &nodes.to_string(),
        "--rate",
        &format!("{rate}/s"),
        "--years",
        &years.to_string(),
        "--max-bits",
        &max_bits.to_string(),
        "--epoch",
        &EPOCH_MS.to_string(),
    ])
}

#[test]
fn each_printed_layout_reads_back_and_is_the_librarys() {
    for (nodes, rate, years, max_bits) in [
        (1024, 100_000, 50, 63),
        (128, 25_600, 87, 53),
        (1, 1, 10, 63),
        (128, 3, 10, 37), // an odd tick: 333 ms
        (100, 1000, 100, 53),
        (5000, 1_000_000, 30, 63), // every bit used
    ] {
        let v = plan_json(nodes, rate, years, max_bits);
        let needs = Requirements::new(nodes, rate, years)
            .with_max_bits(max_bits)
            .with_epoch_ms(EPOCH_MS);
        let lib = Layout::plan(&needs).unwrap();
        let l = lib.layout;
        assert!(needs.is_met_by(&l));
        let what = format!("{nodes} × {rate}/s × {years} y in {max_bits} bits: {v}");
        assert_eq!(v["layout"]["unit_ms"], l.unit_ms(), "{what}");
        assert_eq!(v["layout"]["timestamp_bits"], l.timestamp_bits(), "{what}");
        assert_eq!(v["layout"]["node_bits"], l.node_bits(), "{what}");
        assert_eq!(v["layout"]["sequence_bits"], l.sequence_bits(), "{what}");
        assert_eq!(v["layout"]["epoch_ms"], EPOCH_MS, "{what}");
        assert_eq!(v["node_capacity"], l.node_capacity(), "{what}");
        assert_eq!(v["ids_per_second"], l.ids_per_second(), "{what}");
        assert_eq!(v["lifetime_ms"], l.lifetime_ms(), "{what}");
        assert_eq!(v["until"], l.last_rfc3339(), "{what}");
        assert_eq!(v["spare_bits"], lib.spare_bits(), "{what}");
        assert_eq!(v["needs_bits"], lib.narrowest.total_bits(), "{what}");
        // The spec, given to --layout, is the same layout.
        let spec = v["layout"]["spec"].as_str().unwrap();
        let back = json(&[
            "compose",
            "--layout",
            spec,
            "--time",
            &EPOCH_MS.to_string(),
            "--node",
            &(l.node_capacity() - 1).to_string(),
        ]);
        assert_eq!(back["layout"], v["layout"], "{what}");
    }
}

#[test]
fn the_default_epoch_is_the_start_of_this_year() {
    let v = json(&["plan", "--nodes", "2", "--rate", "10", "--years", "1"]);
    let epoch = v["asked"]["epoch_ms"].as_i64().unwrap();
    let year = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .year();
    let start: jiff::Timestamp = format!("{year:04}-01-01T00:00:00Z").parse().unwrap();
    assert_eq!(epoch, start.as_millisecond());
    assert_eq!(v["layout"]["epoch_ms"], epoch);
}

#[test]
fn a_refusal_names_the_bits_and_what_would_fit_and_exits_1() {
    let out = idgen(&[
        "plan",
        "--nodes",
        "1024",
        "--rate",
        "100000/s",
        "--years",
        "50",
        "--max-bits",
        "53",
    ])
    .assert()
    .code(1)
    .get_output()
    .clone();
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "error: 53 bits cannot hold 1024 nodes × 100000 IDs/s per node for 50 years: that needs \
         58 bits (node 10 + sequence 7 + timestamp 41, 1 ms ticks), 5 more than the 53 allowed; \
         within 53 bits: 1024 nodes × 100000 IDs/s last at most 2 years, 1024 nodes for 50 years \
         allow at most 5574 IDs/s per node, 100000 IDs/s for 50 years allow at most 32 nodes\n"
    );
}

#[test]
fn bad_inputs_are_errors_not_panics() {
    // Well-formed but impossible: the planner's typed errors, exit status 1.
    for (args, message) in [
        (["--nodes", "0", "--rate", "1", "--years", "1"], "0 nodes"),
        (
            ["--nodes", "1", "--rate", "0", "--years", "1"],
            "a rate of 0",
        ),
        (["--nodes", "1", "--rate", "1", "--years", "0"], "0 years"),
        (
            ["--nodes", "1", "--rate", "1", "--years", "4000000000"],
            "4000000000 years from",
        ),
    ] {
        let out = idgen(&[&["plan"][..], &args].concat())
            .assert()
            .code(1)
            .get_output()
            .clone();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.starts_with("error: ") && stderr.contains(message),
            "{stderr}"
        );
    }
    for bits in ["0", "64"] {
        let out = idgen(&[
            "plan",
            "--nodes",
            "1",
            "--rate",
            "1",
            "--years",
            "1",
            "--max-bits",
            bits,
        ])
        .assert()
        .code(1)
        .get_output()
        .clone();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.contains(&format!("max bits {bits}: an ID has 1 to 63 bits")),
            "{stderr}"
        );
    }
    // Not numbers: usage errors, exit status 2.
    for args in [
        ["--nodes", "x", "--rate", "1", "--years", "1"],
        ["--nodes", "1", "--rate", "1e5", "--years", "1"],
        ["--nodes", "1", "--rate", "1", "--years", "-1"],
    ] {
        idgen(&[&["plan"][..], &args].concat()).assert().code(2);
    }
}

/// The README's `idgen plan` examples are what `idgen` prints (stdout, or stderr for the
/// refusal).
#[test]
fn the_readme_examples_are_the_real_output() {
    let readme = include_str!("../README.md");
    for (command, success) in [
        (
            "idgen plan --nodes 1024 --rate 100000/s --years 50 --epoch 2026-01-01T00:00:00Z",
            true,
        ),
        (
            "idgen plan --nodes 1024 --rate 100000/s --years 50 --max-bits 53",
            false,
        ),
    ] {
        let start = format!("$ {command}\n");
        let from = readme.find(&start).expect("README has the example") + start.len();
        // The example ends at the next command or the end of its block, whichever is first.
        let rest = &readme[from..];
        let len = [rest.find("\n$ "), rest.find("```")]
            .into_iter()
            .flatten()
            .min()
            .expect("the example ends");
        let shown = readme[from..from + len].trim_end();
        let args: Vec<&str> = command.split_whitespace().skip(1).collect();
        let out = idgen(&args).assert().get_output().clone();
        assert_eq!(out.status.success(), success, "{command}");
        let printed = String::from_utf8(if success { out.stdout } else { out.stderr }).unwrap();
        assert_eq!(printed.trim_end(), shown, "{command}");
    }
}
