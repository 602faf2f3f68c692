//! The discovery order's first step: with `IDGEN_POSTGRES_URL` / `IDGEN_MYSQL_URL` set, tests
//! get databases on those servers. (Without them this checks whichever path is found.)

use std::future::Future;

mod common;

use common::{Queries, assert_on_its_database};
use idgen_testdb::{Error, TestDb};

/// A database from `new` (the discovery order) is a fresh one of its own; with `var` set, on
/// that server (its URL ends in the fresh database's name instead of the variable's).
async fn found_on_the_server_of<DB, F>(var: &str, new: impl FnOnce() -> F, what: &str)
where
    DB: Queries,
    F: Future<Output = Result<TestDb<DB>, Error>>,
{
    let db = new().await.expect(what);
    if let Ok(server_url) = std::env::var(var) {
        let server = server_url
            .rsplit_once('/')
            .map_or(server_url.as_str(), |(server, _)| server);
        assert!(
            db.url().starts_with(&format!("{server}/idgen_test_")),
            "{} vs {server_url}",
            db.url()
        );
    }
    assert_on_its_database(&db).await;
}

#[tokio::test]
async fn postgres_uses_the_url_from_the_environment() {
    found_on_the_server_of(
        "IDGEN_POSTGRES_URL",
        idgen_testdb::postgres,
        "a PostgreSQL server",
    )
    .await;
}

#[tokio::test]
async fn mysql_uses_the_url_from_the_environment() {
    found_on_the_server_of(
        "IDGEN_MYSQL_URL",
        idgen_testdb::mysql,
        "a MySQL/MariaDB server",
    )
    .await;
}
