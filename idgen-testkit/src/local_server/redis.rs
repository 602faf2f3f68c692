//! A throwaway Redis server from Debian's `redis-server`.

use std::path::{Path, PathBuf};

use super::{LaunchSpec, binaries};
use crate::Error;
use crate::server::{Kind, Server};

const WHAT: &str = "a local Redis server";

pub(super) async fn start() -> Result<Server, Error> {
    let dirs = ["/usr/bin", "/usr/local/bin", "/usr/sbin"].map(PathBuf::from);
    let server = binaries::find(&["redis-server"], &dirs).ok_or_else(|| {
        Error::start(
            WHAT,
            "`redis-server` is neither on PATH nor in /usr/bin (Debian: apt-get install redis-server)",
        )
    })?;
    super::launch(LaunchSpec {
        kind: Kind::Redis,
        what: WHAT,
        dir_tag: "redis",
        init: None,
        init_args: |_| Vec::new(),
        server,
        server_args,
        extra_server_args: Vec::new(),
        stop_signal: "TERM",
        admin_url: |port| format!("redis://127.0.0.1:{port}/"),
    })
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
