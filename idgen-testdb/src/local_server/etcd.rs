//! A throwaway single-member etcd server from Debian's `etcd-server` (`etcd`).

use std::path::{Path, PathBuf};

use super::{LaunchSpec, binaries};
use crate::error::Error;
use crate::server::{Server, ServerKind};

const WHAT: &str = "a local etcd server";

/// Where `etcd` is: PATH, or Debian's `/usr/bin`.
pub(crate) fn binary() -> Result<PathBuf, Error> {
    binaries::find_debian("etcd", "etcd-server", WHAT)
}

pub(super) async fn start() -> Result<Server, Error> {
    super::launch(LaunchSpec::new(
        ServerKind::Etcd,
        WHAT,
        "etcd",
        binary()?,
        server_args,
        |port| format!("http://127.0.0.1:{port}"),
    ))
    .await
}

fn server_args(dir: &Path, port: u16) -> Vec<String> {
    // A second free port for the peer URL (unused by a single member, but etcd binds it).
    let peer = super::free_port().unwrap_or(port.wrapping_add(1));
    member_args(
        "test",
        &dir.join("data"),
        port,
        peer,
        &format!("test=http://127.0.0.1:{peer}"),
        "new",
    )
}

/// The arguments of one member `name` of the cluster `initial_cluster`, listening on
/// 127.0.0.1 only. `state` is `new` or `existing`.
pub(crate) fn member_args(
    name: &str,
    data: &Path,
    client_port: u16,
    peer_port: u16,
    initial_cluster: &str,
    state: &str,
) -> Vec<String> {
    let client = format!("http://127.0.0.1:{client_port}");
    let peer = format!("http://127.0.0.1:{peer_port}");
    vec![
        format!("--name={name}"),
        format!("--data-dir={}", data.display()),
        format!("--listen-client-urls={client}"),
        format!("--advertise-client-urls={client}"),
        format!("--listen-peer-urls={peer}"),
        format!("--initial-advertise-peer-urls={peer}"),
        format!("--initial-cluster={initial_cluster}"),
        format!("--initial-cluster-state={state}"),
        "--initial-cluster-token=idgen-testkit".to_owned(),
        // Faster elections than the defaults (100 ms / 1 s) for the fault tests, still stable
        // on a loaded machine.
        "--heartbeat-interval=100".to_owned(),
        "--election-timeout=1000".to_owned(),
        "--log-level=warn".to_owned(),
        "--logger=zap".to_owned(),
    ]
}
