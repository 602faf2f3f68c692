//! A throwaway MariaDB server from `mariadb-install-db` and `mariadbd`.

use std::path::{Path, PathBuf};

use super::{LaunchSpec, binaries};
use crate::error::Error;
use crate::server::{Server, ServerKind};

const WHAT: &str = "a local MariaDB server";

/// Starts a server with the usual arguments and then `extra` (e.g. `--autocommit=0`).
pub(super) async fn start(extra: &[&str]) -> Result<Server, Error> {
    let dirs = [
        "/usr/sbin",
        "/usr/bin",
        "/usr/local/sbin",
        "/usr/local/bin",
        "/usr/local/mysql/bin",
    ]
    .map(PathBuf::from);
    let init =
        binaries::find(&["mariadb-install-db", "mysql_install_db"], &dirs).ok_or_else(|| {
            Error::start(
                WHAT,
                "neither `mariadb-install-db` nor `mysql_install_db` is on PATH or in /usr/bin",
            )
        })?;
    let server = binaries::find(&["mariadbd", "mysqld"], &dirs).ok_or_else(|| {
        Error::start(
            WHAT,
            "neither `mariadbd` nor `mysqld` is on PATH or in /usr/sbin",
        )
    })?;
    let spec = LaunchSpec::new(
        ServerKind::MySql,
        WHAT,
        "mariadb",
        server,
        server_args,
        |port| format!("mysql://root@127.0.0.1:{port}/mysql"),
    );
    super::launch(
        spec.with_init(init, init_args)
            .with_extra_server_args(extra),
    )
    .await
}

fn init_args(dir: &Path) -> Vec<String> {
    vec![
        "--no-defaults".to_owned(),
        format!("--datadir={}", dir.join("data").display()),
        // root with an empty password over TCP (the default is unix-socket authentication).
        "--auth-root-authentication-method=normal".to_owned(),
        "--skip-test-db".to_owned(),
    ]
}

fn server_args(dir: &Path, port: u16) -> Vec<String> {
    vec![
        "--no-defaults".to_owned(),
        format!("--datadir={}", dir.join("data").display()),
        format!("--port={port}"),
        "--bind-address=127.0.0.1".to_owned(),
        format!("--socket={}", dir.join("mysqld.sock").display()),
        format!("--pid-file={}", dir.join("mysqld.pid").display()),
        "--skip-log-bin".to_owned(),
        "--max-connections=300".to_owned(),
        // A throwaway server: durability is not needed, speed is.
        "--innodb-flush-log-at-trx-commit=0".to_owned(),
        "--innodb-buffer-pool-size=64M".to_owned(),
    ]
}
