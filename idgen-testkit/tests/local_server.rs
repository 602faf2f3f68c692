//! Path 3, forced: throwaway PostgreSQL and MariaDB servers from the local binaries, even when
//! `IDGEN_POSTGRES_URL` / `IDGEN_MYSQL_URL` are set.

use sqlx::Row;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_databases_are_isolated_and_dropped() {
    let a = idgen_testkit::local_server::postgres()
        .await
        .expect("local PostgreSQL");
    let b = idgen_testkit::local_server::postgres()
        .await
        .expect("local PostgreSQL");
    assert!(
        a.url().starts_with("postgres://postgres@127.0.0.1:"),
        "{}",
        a.url()
    );
    assert_ne!(a.name(), b.name());

    sqlx::query("CREATE TABLE t (x INT8)")
        .execute(a.pool())
        .await
        .unwrap();
    sqlx::query("INSERT INTO t VALUES (1)")
        .execute(a.pool())
        .await
        .unwrap();
    let err = sqlx::query("SELECT x FROM t")
        .fetch_all(b.pool())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("does not exist"), "{err}");

    let exists = "SELECT count(*) FROM pg_database WHERE datname = $1";
    let name = a.name().to_owned();
    a.cleanup().await.expect("explicit cleanup");
    let count: i64 = sqlx::query_scalar(exists)
        .bind(&name)
        .fetch_one(b.pool())
        .await
        .unwrap();
    assert_eq!(count, 0, "database {name} is still there after cleanup");

    let c = idgen_testkit::local_server::postgres().await.unwrap();
    let c_name = c.name().to_owned();
    drop(c);
    let count: i64 = sqlx::query_scalar(exists)
        .bind(&c_name)
        .fetch_one(b.pool())
        .await
        .unwrap();
    assert_eq!(count, 0, "database {c_name} is still there after drop");
}

#[tokio::test]
async fn postgres_url_works_from_a_child_process() {
    let db = idgen_testkit::local_server::postgres().await.unwrap();
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
    let a = idgen_testkit::local_server::mysql()
        .await
        .expect("local MariaDB");
    let b = idgen_testkit::local_server::mysql()
        .await
        .expect("local MariaDB");
    assert!(
        a.url().starts_with("mysql://root@127.0.0.1:"),
        "{}",
        a.url()
    );
    assert_ne!(a.name(), b.name());

    sqlx::query("CREATE TABLE t (x BIGINT)")
        .execute(a.pool())
        .await
        .unwrap();
    let err = sqlx::query("SELECT x FROM t")
        .fetch_all(b.pool())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("doesn't exist"), "{err}");

    let exists = "SELECT count(*) FROM information_schema.schemata WHERE schema_name = ?";
    let name = a.name().to_owned();
    a.cleanup().await.expect("explicit cleanup");
    let row = sqlx::query(exists)
        .bind(&name)
        .fetch_one(b.pool())
        .await
        .unwrap();
    assert_eq!(
        row.get::<i64, _>(0),
        0,
        "database {name} is still there after cleanup"
    );

    let c = idgen_testkit::local_server::mysql().await.unwrap();
    let c_name = c.name().to_owned();
    drop(c);
    let row = sqlx::query(exists)
        .bind(&c_name)
        .fetch_one(b.pool())
        .await
        .unwrap();
    assert_eq!(
        row.get::<i64, _>(0),
        0,
        "database {c_name} is still there after drop"
    );
}

#[tokio::test]
async fn sqlite_file_is_deleted_on_drop() {
    let db = idgen_testkit::sqlite().await.unwrap();
    sqlx::query("CREATE TABLE t (x INTEGER)")
        .execute(db.pool())
        .await
        .unwrap();
    let path = std::path::PathBuf::from(db.name());
    assert!(path.exists());
    drop(db);
    assert!(!path.exists(), "{} survived the drop", path.display());
}
