//! `idgen adopt plan|apply` on real PostgreSQL and MariaDB tables (through idgen-testkit):
//! plan prints the steps and changes nothing, apply adopts and a second apply has nothing
//! left, an unsupported table is refused with exit status 1 and the reason.

mod common;

use idgen_testkit::TestDb;

fn adopt(step: &str, url: &str, table: &str, extra: &[&str]) -> assert_cmd::Command {
    let mut cmd = common::idgen(&["adopt", step, "--database-url", url, "--table", table]);
    cmd.args(extra);
    cmd
}

fn plan_then_apply(url: &str, hilo: &[&str]) {
    let plan = common::stdout_of(&mut adopt("plan", url, "orders", &[]));
    assert!(plan.contains("retire-default [to do]"), "{plan}");
    assert!(plan.contains("check-keys [to do]"), "{plan}");
    let json = common::json(&["adopt", "plan", "--database-url", url, "--table", "orders"]);
    assert_eq!(json["finished"], false, "plan changed nothing");
    assert_eq!(json["max_key"], "3");

    let applied = common::stdout_of(&mut adopt("apply", url, "orders", &[]));
    assert!(applied.contains("adopted: every step is done"), "{applied}");
    let json = common::json(&["adopt", "plan", "--database-url", url, "--table", "orders"]);
    assert_eq!(json["finished"], true);

    let hilo_applied = common::stdout_of(&mut adopt("apply", url, "order_lines", hilo));
    assert!(
        hilo_applied.contains("hilo-sequence [done]"),
        "{hilo_applied}"
    );

    // Public IDs for the rows already there: the same table, more steps.
    let plan = common::stdout_of(&mut adopt(
        "plan",
        url,
        "orders",
        &["--public-id", "public_id"],
    ));
    assert!(
        plan.contains("retire-default [done]") && plan.contains("public-id-backfill [to do]"),
        "{plan}"
    );
    let out = adopt(
        "apply",
        url,
        "orders",
        &["--public-id", "public_id", "--batch", "2"],
    )
    .assert()
    .success()
    .get_output()
    .clone();
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(stdout.contains("public-id-not-null [done]"), "{stdout}");
    assert!(
        stderr.contains("public-id-backfill: 3 of 3 rows (100%)"),
        "the progress line: {stderr}"
    );
    let bad = adopt(
        "apply",
        url,
        "orders",
        &["--public-id", "public_id", "--batch", "0"],
    )
    .assert()
    .code(1)
    .get_output()
    .clone();
    let stderr = String::from_utf8(bad.stderr).unwrap();
    assert!(
        stderr.contains("backfill batch of 0 rows is out of range"),
        "{stderr}"
    );

    let refused = adopt("plan", url, "pairs", &[])
        .assert()
        .code(1)
        .get_output()
        .clone();
    let stderr = String::from_utf8(refused.stderr).unwrap();
    assert!(
        stderr.contains("table pairs has a composite primary key (a, b)"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adopt_on_postgres() {
    let db: TestDb<sqlx::Postgres> = idgen_testkit::postgres().await.unwrap();
    for sql in [
        "CREATE TABLE orders (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, customer BIGINT)",
        "INSERT INTO orders (customer) VALUES (1), (2), (3)",
        "CREATE TABLE order_lines (id BIGSERIAL PRIMARY KEY, order_id BIGINT REFERENCES orders (id))",
        "INSERT INTO order_lines (order_id) VALUES (1), (2)",
        "CREATE TABLE pairs (a BIGINT, b BIGINT, PRIMARY KEY (a, b))",
    ] {
        sqlx::raw_sql(sql).execute(db.pool()).await.unwrap();
    }
    let url = db.url().to_owned();
    tokio::task::spawn_blocking(move || plan_then_apply(&url, &["--block", "50"]))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adopt_on_mariadb() {
    let db: TestDb<sqlx::MySql> = idgen_testkit::mysql().await.unwrap();
    for sql in [
        "CREATE TABLE orders (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, customer BIGINT)",
        "INSERT INTO orders (customer) VALUES (1), (2), (3)",
        "CREATE SEQUENCE order_lines_seq",
        "CREATE TABLE order_lines (id BIGINT NOT NULL DEFAULT NEXTVAL(order_lines_seq) PRIMARY KEY, order_id BIGINT, FOREIGN KEY (order_id) REFERENCES orders (id))",
        "INSERT INTO order_lines (order_id) VALUES (1), (2)",
        "CREATE TABLE pairs (a BIGINT, b BIGINT, PRIMARY KEY (a, b))",
    ] {
        sqlx::raw_sql(sql).execute(db.pool()).await.unwrap();
    }
    let url = db.url().to_owned();
    tokio::task::spawn_blocking(move || plan_then_apply(&url, &["--block", "50"]))
        .await
        .unwrap();
}

/// `--db-generator` on MariaDB: `plan` says which ways of reading a new key back are not
/// kept (naming the server), and `apply` refuses, changing nothing, without
/// `--accept-lost-key-readback`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_db_generator_needs_the_lost_readback_acknowledged() {
    let db: TestDb<sqlx::MySql> = idgen_testkit::mysql().await.unwrap();
    for sql in [
        "CREATE TABLE orders (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, customer BIGINT)",
        "INSERT INTO orders (customer) VALUES (1), (2), (3)",
    ] {
        sqlx::raw_sql(sql).execute(db.pool()).await.unwrap();
    }
    let url = db.url().to_owned();
    tokio::task::spawn_blocking(move || {
        let plan = common::stdout_of(&mut adopt("plan", &url, "orders", &["--db-generator"]));
        assert!(plan.contains("after the switch on MariaDB 1"), "{plan}");
        assert!(
            plan.contains("NOT KEPT: consecutive keys of a multi-row INSERT"),
            "{plan}"
        );
        assert!(plan.contains("kept: SELECT LAST_INSERT_ID()"), "{plan}");
        let json = common::json(&[
            "adopt",
            "plan",
            "--database-url",
            &url,
            "--table",
            "orders",
            "--db-generator",
        ]);
        assert_eq!(json["key_readback"][3]["kept"], false, "{json}");
        let refused = adopt("apply", &url, "orders", &["--db-generator"])
            .assert()
            .code(1)
            .get_output()
            .clone();
        let stderr = String::from_utf8(refused.stderr).unwrap();
        assert!(
            stderr.contains("pass --accept-lost-key-readback"),
            "{stderr}"
        );
        let json = common::json(&[
            "adopt",
            "plan",
            "--database-url",
            &url,
            "--table",
            "orders",
            "--db-generator",
        ]);
        assert_eq!(
            json["steps"][0]["done"], false,
            "the refusal changed nothing"
        );
    })
    .await
    .unwrap();
}
