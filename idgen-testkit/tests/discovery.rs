//! The discovery order's first step: with `IDGEN_POSTGRES_URL` / `IDGEN_MYSQL_URL` set, tests
//! get databases on those servers. (Without them this checks whichever path is found.)

#[tokio::test]
async fn postgres_uses_the_url_from_the_environment() {
    let db = idgen_testkit::postgres()
        .await
        .expect("a PostgreSQL server");
    if let Ok(url) = std::env::var("IDGEN_POSTGRES_URL") {
        let server = url
            .rsplit_once('/')
            .map_or(url.as_str(), |(server, _)| server);
        assert!(
            db.url().starts_with(&format!("{server}/idgen_test_")),
            "{} vs {url}",
            db.url()
        );
    }
    let one: i32 = sqlx::query_scalar("SELECT 1")
        .fetch_one(db.pool())
        .await
        .unwrap();
    assert_eq!(one, 1);
}

#[tokio::test]
async fn mysql_uses_the_url_from_the_environment() {
    let db = idgen_testkit::mysql()
        .await
        .expect("a MySQL/MariaDB server");
    if let Ok(url) = std::env::var("IDGEN_MYSQL_URL") {
        let server = url
            .rsplit_once('/')
            .map_or(url.as_str(), |(server, _)| server);
        assert!(
            db.url().starts_with(&format!("{server}/idgen_test_")),
            "{} vs {url}",
            db.url()
        );
    }
    let current: String = sqlx::query_scalar("SELECT DATABASE()")
        .fetch_one(db.pool())
        .await
        .unwrap();
    assert_eq!(current, db.name());
}
