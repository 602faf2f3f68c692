//! Helpers shared by the integration tests: run the `idgen` binary, read its JSON.

#![allow(dead_code, unreachable_pub)]

use assert_cmd::Command;
use serde_json::Value;

/// `idgen` with `args`, in a fixed environment: no colour, no layout from the environment, UTC.
pub fn idgen(args: &[&str]) -> Command {
    let mut cmd = assert_cmd::cargo::cargo_bin_cmd!("idgen");
    cmd.args(args)
        .env_remove("IDGEN_LAYOUT")
        .env_remove("NO_COLOR")
        .env("TZ", "UTC");
    cmd
}

/// Runs `idgen args… --json`, asserts success and parses stdout.
pub fn json(args: &[&str]) -> Value {
    let out = idgen(args)
        .arg("--json")
        .assert()
        .success()
        .get_output()
        .clone();
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

/// Runs `idgen args…`, asserts success and returns stdout.
pub fn stdout(args: &[&str]) -> String {
    stdout_of(&mut idgen(args))
}

/// Runs `cmd` (`idgen` with more settings, e.g. an environment variable), asserts success and
/// returns stdout.
pub fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.assert().success().get_output().clone();
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}
