//! Colour or plain text, local time zones, and a reader that goes away.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common::{idgen, json, stdout, stdout_of};
use serde_json::Value;

const ID: &str = "2116500430648709162";

#[test]
fn plain_text_into_a_pipe_marks_each_field_with_letters() {
    let text = stdout(&["inspect", ID]);
    assert!(
        !text.contains('\x1b'),
        "no escape codes into a pipe:\n{text}"
    );
    for want in [
        "utc          2026-10-31T12:00:00.000Z",
        "datacenter   3 ",
        "worker       17 ",
        "sequence     42 ",
        "00111010101111101010001111011011000111111 00011 10001 000000101010",
        "TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT DDDDD WWWWW SSSSSSSSSSSS",
        "T=timestamp 41  D=datacenter 5  W=worker 5  S=sequence 12",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
}

#[test]
fn color_always_draws_each_field_as_a_coloured_block() {
    let text = stdout(&["inspect", ID, "--color", "always"]);
    assert!(
        text.contains("\x1b[30;42m00011\x1b[0m"),
        "datacenter block:\n{text}"
    );
    assert!(
        text.contains("\x1b[30;43m10001\x1b[0m"),
        "worker block:\n{text}"
    );
    assert!(
        text.contains("\x1b[1;97;41m000000101010\x1b[0m"),
        "sequence block:\n{text}"
    );
    assert!(!text.contains("TTTT"), "no letter line with colours");
    // An explicit --color always wins over NO_COLOR; --color never is plain.
    let forced = idgen(&["inspect", ID, "--color", "always"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&forced.stdout).contains('\x1b'));
    assert!(!stdout(&["inspect", ID, "--color", "never"]).contains('\x1b'));
}

/// Runs `idgen inspect ID` on a real pseudo-terminal (util-linux `script`), so stdout is a
/// terminal, and returns what it printed.
fn on_a_terminal(no_color: Option<&str>) -> String {
    let exe = assert_cmd::cargo::cargo_bin!("idgen");
    let mut cmd = Command::new("script");
    cmd.args([
        "-qec",
        &format!("{} inspect {ID}", exe.display()),
        "/dev/null",
    ])
    .env_remove("IDGEN_LAYOUT")
    .env("TZ", "UTC")
    .stdin(Stdio::null());
    match no_color {
        Some(v) => cmd.env("NO_COLOR", v),
        None => cmd.env_remove("NO_COLOR"),
    };
    let out = cmd.output().expect("util-linux `script` runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_terminal_gets_colour_unless_no_color_is_set() {
    assert!(on_a_terminal(None).contains("\x1b[30;42m00011\x1b[0m"));
    assert!(
        on_a_terminal(Some("")).contains('\x1b'),
        "an empty NO_COLOR does not count"
    );
    let plain = on_a_terminal(Some("1"));
    assert!(!plain.contains('\x1b'), "{plain}");
    assert!(plain.contains("DDDDD WWWWW"), "{plain}");
}

fn local_time(tz: Option<&str>) -> Value {
    let mut cmd = idgen(&["inspect", ID, "--json"]);
    match tz {
        Some(tz) => cmd.env("TZ", tz),
        None => cmd.env_remove("TZ"),
    };
    let out = cmd.assert().success().get_output().stdout.clone();
    serde_json::from_slice::<Value>(&out).unwrap()["local"].clone()
}

#[test]
fn local_time_follows_tz_and_works_without_it() {
    assert_eq!(
        local_time(Some("Asia/Kolkata")),
        "2026-10-31T17:30:00.000+05:30[Asia/Kolkata]"
    );
    // 2026-10-31 is still summer time in New York (it ends on 2026-11-01).
    assert_eq!(
        local_time(Some("America/New_York")),
        "2026-10-31T08:00:00.000-04:00[America/New_York]"
    );
    // Without TZ, the system zone (/etc/localtime); an unknown TZ falls back to UTC. Either way
    // the instant is the same.
    for tz in [None, Some("Nowhere/Atlantis")] {
        let local = local_time(tz);
        let text = local.as_str().unwrap_or_else(|| panic!("{tz:?}: {local}"));
        let instant: jiff::Timestamp = text.parse::<jiff::Zoned>().unwrap().timestamp();
        assert_eq!(
            instant.to_string(),
            "2026-10-31T12:00:00Z",
            "{tz:?}: {text}"
        );
    }
    assert_eq!(json(&["inspect", ID])["utc"], "2026-10-31T12:00:00.000Z");
}

#[test]
fn a_reader_that_stops_early_ends_idgen_quietly() {
    let exe = assert_cmd::cargo::cargo_bin!("idgen");
    let mut child = Command::new(exe)
        .args(["new", "-n", "2000000", "--node", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.trim_end().parse::<i64>().is_ok(), "{first:?}");
    // stdout is closed now: the next write fails with a broken pipe.
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The README's example `$ idgen inspect <subject>` shows, up to `end`, what `idgen` prints
/// (in the README's time zone).
fn assert_readme_example_is_the_real_output(subject: &str, end: &str) {
    let readme = include_str!("../README.md");
    let start = format!("$ idgen inspect {subject}\n");
    let from = readme.find(&start).expect("README has the example") + start.len();
    let len = readme[from..].find(end).unwrap();
    let out = stdout_of(idgen(&["inspect", subject]).env("TZ", "Europe/Berlin"));
    assert_eq!(out, readme[from..from + len]);
}

/// The README's example is what `idgen` prints.
#[test]
fn the_readme_example_is_the_real_output() {
    // Up to the blank line before the next command.
    assert_readme_example_is_the_real_output(ID, "\n$ idgen compose");
}

/// The README's public-ID example is what `idgen` prints.
#[test]
fn the_readme_public_id_example_is_the_real_output() {
    assert_readme_example_is_the_real_output("ord_01h455vb4pex5vsknk084sn02q", "```");
}
