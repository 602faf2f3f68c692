//! The discovery order's first step: with `IDGEN_POSTGRES_URL` / `IDGEN_MYSQL_URL` set, tests
//! get databases on those servers. (Without them this checks whichever path is found.)

mod common;

use common::assert_on_its_database;

/// With `var` set, `url` (a test database's) is on that server: it ends in a fresh database name
/// instead of the variable's.
fn assert_on_the_server_of(var: &str, url: &str) {
    if let Ok(server_url) = std::env::var(var) {
        let server = server_url
            .rsplit_once('/')
            .map_or(server_url.as_str(), |(server, _)| server);
        assert!(
            url.starts_with(&format!("{server}/idgen_test_")),
            "{url} vs {server_url}"
        );
    }
}

#[tokio::test]
async fn postgres_uses_the_url_from_the_environment() {
    let db = idgen_testkit::postgres()
        .await
        .expect("a PostgreSQL server");
    assert_on_the_server_of("IDGEN_POSTGRES_URL", db.url());
    assert_on_its_database(&db).await;
}

#[tokio::test]
async fn mysql_uses_the_url_from_the_environment() {
    let db = idgen_testkit::mysql()
        .await
        .expect("a MySQL/MariaDB server");
    assert_on_the_server_of("IDGEN_MYSQL_URL", db.url());
    assert_on_its_database(&db).await;
}
