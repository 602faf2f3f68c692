//! Path 3, forced: throwaway PostgreSQL and MariaDB servers from the local binaries, even when
//! `IDGEN_POSTGRES_URL` / `IDGEN_MYSQL_URL` are set.

mod common;

use std::future::Future;

use common::{Queries, assert_cleanup_drops, assert_gone, assert_isolated, two};
use idgen_testdb::{Error, TestDb};

/// Two databases from `new` (URLs starting with `url_start`) are isolated; one is gone after
/// `cleanup()`, another after being dropped.
async fn isolated_and_dropped<DB, F>(new: impl Fn() -> F, url_start: &str)
where
    DB: Queries,
    F: Future<Output = Result<TestDb<DB>, Error>>,
{
    let (a, b) = two(&new, "a local server").await;
    assert!(a.url().starts_with(url_start), "{}", a.url());
    assert_isolated(&a, &b).await;
    assert_cleanup_drops(a, &b).await;

    let c = new().await.unwrap();
    let c_name = c.name().to_owned();
    drop(c);
    assert_gone(&b, &c_name, "drop").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_databases_are_isolated_and_dropped() {
    isolated_and_dropped(
        idgen_testdb::local_server::postgres,
        "postgres://postgres@127.0.0.1:",
    )
    .await;
}

#[tokio::test]
async fn postgres_url_works_from_a_child_process() {
    let db = idgen_testdb::local_server::postgres().await.unwrap();
    sqlx::query("CREATE TABLE t (x INT8)")
        .execute(db.pool())
        .await
        .unwrap();
    let psql = ["psql", "/usr/lib/postgresql/15/bin/psql"]
        .into_iter()
        .find(|p| {
            std::process::Command::new(p)
                .arg("--version")
                .output()
                .is_ok()
        })
        .expect("psql is installed next to the server");
    let out = tokio::process::Command::new(psql)
        .arg(db.url())
        .args(["-c", "INSERT INTO t VALUES (42)"])
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let x: i64 = sqlx::query_scalar("SELECT x FROM t")
        .fetch_one(db.pool())
        .await
        .unwrap();
    assert_eq!(x, 42);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_databases_are_isolated_and_dropped() {
    isolated_and_dropped(idgen_testdb::local_server::mysql, "mysql://root@127.0.0.1:").await;
}

#[tokio::test]
async fn sqlite_file_is_deleted_on_drop() {
    let db = idgen_testdb::sqlite().await.unwrap();
    sqlx::query("CREATE TABLE t (x INTEGER)")
        .execute(db.pool())
        .await
        .unwrap();
    let path = std::path::PathBuf::from(db.name());
    assert!(path.exists());
    drop(db);
    assert!(!path.exists(), "{} survived the drop", path.display());
}
