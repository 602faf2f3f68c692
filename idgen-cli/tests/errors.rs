//! Exit status 2 for usage errors (clap), 1 for values the library rejects; one message on
//! stderr naming the bad value; never a panic or a Rust Debug dump; nothing on stdout.

mod common;

use common::idgen;
use predicates::prelude::*;

/// Runs `idgen args…`, asserts the exit `code`, an empty stdout and a stderr containing each of
/// `wants`, and returns stderr.
fn fails(args: &[&str], code: i32, wants: &[&str]) -> String {
    let debug_dump = [
        "panicked",
        "FieldOutOfRange",
        "InvalidLayout",
        "Error {",
        "Err(",
    ]
    .into_iter()
    .fold(predicate::never().boxed(), |any, s| {
        any.or(predicate::str::contains(s)).boxed()
    });
    let mut stderr = predicate::str::starts_with("error: ")
        .and(debug_dump.not())
        .boxed();
    for want in wants {
        stderr = stderr.and(predicate::str::contains(*want)).boxed();
    }
    let out = idgen(args)
        .assert()
        .code(code)
        .stdout(predicate::str::is_empty())
        .stderr(stderr)
        .get_output()
        .clone();
    String::from_utf8(out.stderr).unwrap()
}

const T: &str = "2026-10-31T12:00:00Z";

#[test]
fn fields_out_of_range_exit_1_naming_value_and_limit() {
    fails(
        &["compose", "--time", T, "--node", "1024"],
        1,
        &["node 1024 does not fit in 10 bits: the largest node is 1023"],
    );
    fails(
        &[
            "compose",
            "--time",
            T,
            "--datacenter",
            "32",
            "--worker",
            "0",
        ],
        1,
        &["datacenter 32 does not fit in 5 bits: the largest datacenter is 31"],
    );
    fails(
        &["compose", "--time", T, "--node", "1", "--seq", "4096"],
        1,
        &["sequence 4096 does not fit in 12 bits: the largest sequence is 4095"],
    );
    fails(
        &[
            "compose",
            "--layout",
            "sonyflake",
            "--time",
            T,
            "--node",
            "65536",
        ],
        1,
        &["node 65536", "the largest node is 65535"],
    );
    fails(
        &["new", "--layout", "instagram", "--node", "8192"],
        1,
        &["node 8192 does not fit in 13 bits"],
    );
}

#[test]
fn times_outside_the_layout_exit_1_naming_the_instant() {
    fails(
        &["compose", "--time", "2010-01-01T00:00:00Z", "--node", "1"],
        1,
        &[
            "2010-01-01T00:00:00",
            "before the layout's epoch",
            "2010-11-04T01:42:54.657",
        ],
    );
    fails(
        &["compose", "--time", "2090-01-01T00:00:00Z", "--node", "1"],
        1,
        &["2090-01-01T00:00:00", "2080-07-10T17:30:30.208"],
    );
}

#[test]
fn node_sub_fields_that_do_not_match_the_layout_exit_1() {
    fails(
        &["compose", "--time", T, "--datacenter", "3"],
        1,
        &["needs node sub-field worker too (--worker N)"],
    );
    fails(
        &[
            "compose",
            "--layout",
            "sonyflake",
            "--time",
            T,
            "--datacenter",
            "3",
            "--worker",
            "1",
        ],
        1,
        &[
            "layout sonyflake has no node sub-field datacenter",
            "machine",
        ],
    );
    fails(
        &["new", "--node", "env:IDGEN_TEST_UNSET_NODE"],
        1,
        &["environment variable IDGEN_TEST_UNSET_NODE", "not set"],
    );
}

#[test]
fn an_id_from_another_layout_exits_1() {
    fails(
        &[
            "inspect",
            "9223372036854775807",
            "--layout",
            "custom:time=30,node=10,seq=12",
        ],
        1,
        &[
            "ID 9223372036854775807 was not made with layout custom:epoch=1970-01-01T00:00:00Z,unit=1ms,time=30,node=10,seq=12,order=tns",
            "does not fit in 30 bits",
        ],
    );
}

#[test]
fn values_that_do_not_parse_are_usage_errors_exit_2() {
    fails(
        &["inspect", "12a"],
        2,
        &[
            r#"<ID>: "12a" is not a Snowflake ID"#,
            "only the decimal digits 0-9",
        ],
    );
    fails(&["inspect", "-5"], 2, &[r#""-5""#, "a sign is not allowed"]);
    fails(
        &["inspect", "9223372036854775808"],
        2,
        &[r#""9223372036854775808""#, "i64::MAX"],
    );
    fails(
        &["inspect", "1", "--layout", "twiter"],
        2,
        &["unknown layout \"twiter\""],
    );
    fails(
        &["inspect", "1", "--layout", "custom:time=42,node=10,seq=12"],
        2,
        &["timestamp 42 + node 10 + sequence 12 = 64 bits, more than the 63"],
    );
    fails(
        &["inspect", "1", "--layout", "custom:time=41,bits=3"],
        2,
        &[
            "unknown key \"bits\"",
            "base, epoch, unit, time, node, seq, order",
        ],
    );
    fails(
        &["compose", "--time", "yesterday", "--node", "1"],
        2,
        &["\"yesterday\"", "RFC 3339"],
    );
    fails(
        &["compose", "--time", T, "--node", "-1"],
        2,
        &["\"-1\" is not a node"],
    );
    fails(
        &["compose", "--time", T, "--node-field", "machine"],
        2,
        &["\"machine\" is not NAME=N"],
    );
    fails(
        &["new", "-n", "0"],
        2,
        &["error: --count <N>: 0 is too few: the count is at least 1"],
    );
    fails(
        &["new", "-n", "-3"],
        2,
        &[r#"--count <N>: "-3" is not a count: give a whole number from 1"#],
    );
    fails(
        &["compose", "--time", T, "--node", "1", "--seq", "-1"],
        2,
        &["'-1'", "--seq"],
    );
}

#[test]
fn missing_or_conflicting_options_are_usage_errors_exit_2() {
    fails(&["compose", "--node", "1"], 2, &["--time"]);
    fails(&["compose", "--time", T], 2, &["--node"]);
    fails(
        &["compose", "--time", T, "--node", "1", "--datacenter", "1"],
        2,
        &["'--node <NODE>' cannot be used with"],
    );
    fails(&["frobnicate"], 2, &["frobnicate"]);
    // Without a command, clap prints the help to stderr and exits 2.
    let out = idgen(&[]).assert().code(2).get_output().clone();
    assert!(String::from_utf8_lossy(&out.stderr).contains("Usage: idgen"));
}

/// Each usage error names the bad value once: clap's `invalid value 'X' for …` wrapper is
/// dropped when the parser's own message already names it.
#[test]
fn each_usage_error_names_the_bad_value_once() {
    for (args, value) in [
        (&["inspect", "12a"][..], "12a"),
        (&["inspect", "-5"], "-5"),
        (
            &["inspect", "ord_01h455vb4pex5vsknk084sn0"],
            "ord_01h455vb4pex5vsknk084sn0",
        ),
        (&["inspect", "1", "--layout", "twiter"], "twiter"),
        (
            &["compose", "--time", "yesterday", "--node", "1"],
            "yesterday",
        ),
        (&["compose", "--time", T, "--node", "-1"], "-1"),
        (&["compose", "--time", T, "--node-field", "shard"], "shard"),
        (
            &["compose", "--time", T, "--node", "1", "--seq", "-1"],
            "-1",
        ),
        (&["new", "-n", "-3"], "-3"),
        (&["public-id", "--prefix", "Ord"], "Ord"),
        (&["uuid7", "-n", "x"], "x"),
    ] {
        let stderr = fails(args, 2, &[value]);
        let first_line = stderr.lines().next().unwrap();
        assert_eq!(first_line.matches(value).count(), 1, "{args:?}: {stderr}");
    }
    // `0` is named once too ("0 is too few"), without clap's "invalid value '0'" in front.
    let stderr = fails(&["new", "-n", "0"], 2, &["0 is too few"]);
    assert!(!stderr.contains("invalid value"), "{stderr}");
}
