//! A throwaway Redis server from Debian's `redis-server`.

use std::path::Path;

use super::{LaunchSpec, binaries};
use crate::error::Error;
use crate::server::{Server, ServerKind};

const WHAT: &str = "a local Redis server";

pub(super) async fn start() -> Result<Server, Error> {
    super::launch(LaunchSpec::new(
        ServerKind::Redis,
        WHAT,
        "redis",
        binaries::find_debian("redis-server", "redis-server", WHAT)?,
        server_args,
        |port| format!("redis://127.0.0.1:{port}/"),
    ))
    .await
}

fn server_args(dir: &Path, port: u16) -> Vec<String> {
    [
        "--port",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--dir",
        &dir.display().to_string(),
        // A throwaway server: no snapshots, no append-only file.
        "--save",
        "",
        "--appendonly",
        "no",
        "--protected-mode",
        "no",
        "--daemonize",
        "no",
    ]
    .map(str::to_owned)
    .to_vec()
}
