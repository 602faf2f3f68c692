//! A throwaway PostgreSQL server from `initdb` and `postgres`.

use std::path::{Path, PathBuf};

use super::{LaunchSpec, binaries};
use crate::error::Error;
use crate::server::{Server, ServerKind};

const WHAT: &str = "a local PostgreSQL server";

pub(super) async fn start() -> Result<Server, Error> {
    super::launch(spec()?).await
}

/// How to initialise and run a local PostgreSQL server from the binaries found here.
pub(super) fn spec() -> Result<LaunchSpec, Error> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("IDGEN_PG_BIN_DIR")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    dirs.extend(binaries::debian_postgres_bin_dirs());
    dirs.extend(
        [
            "/usr/lib/postgresql/bin",
            "/usr/pgsql/bin",
            "/opt/homebrew/bin",
        ]
        .map(PathBuf::from),
    );
    let missing = |name: &str| {
        Error::start(
            WHAT,
            format!(
                "`{name}` is neither on PATH nor under /usr/lib/postgresql/<version>/bin (set IDGEN_PG_BIN_DIR)"
            ),
        )
    };
    let init = binaries::find(&["initdb"], &dirs).ok_or_else(|| missing("initdb"))?;
    // Prefer the `postgres` next to `initdb`, so both come from the same version.
    let server = init
        .parent()
        .map(|dir| dir.join("postgres"))
        .filter(|p| p.is_file())
        .or_else(|| binaries::find(&["postgres"], &dirs))
        .ok_or_else(|| missing("postgres"))?;
    let spec = LaunchSpec::new(
        ServerKind::Postgres,
        WHAT,
        "pg",
        server,
        server_args,
        |port| format!("postgres://postgres@127.0.0.1:{port}/postgres"),
    );
    Ok(spec.with_init(init, init_args).stopped_by("INT"))
}

fn init_args(dir: &Path) -> Vec<String> {
    let data = dir.join("data").display().to_string();
    [
        "-D",
        &data,
        "-U",
        "postgres",
        "-A",
        "trust",
        "-E",
        "UTF8",
        "--no-sync",
        "--no-instructions",
    ]
    .map(str::to_owned)
    .to_vec()
}

fn server_args(dir: &Path, port: u16) -> Vec<String> {
    let data = dir.join("data").display().to_string();
    let socket_dir = dir.display().to_string();
    let port = port.to_string();
    [
        "-D",
        &data,
        "-p",
        &port,
        "-k",
        &socket_dir,
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "max_connections=300",
        // A throwaway server: durability is not needed, speed is.
        "-c",
        "fsync=off",
        "-c",
        "synchronous_commit=off",
        "-c",
        "full_page_writes=off",
    ]
    .map(str::to_owned)
    .to_vec()
}
