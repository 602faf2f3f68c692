//! Hi-lo over diesel on PostgreSQL (a database of its own per test, from idgen-testkit).

mod hilo_common;

use hilo_common::Backend;
use idgen_testkit::TestDb;

struct Pg;

impl Backend for Pg {
    type Conn = diesel::PgConnection;
    type DB = sqlx::Postgres;
    async fn test_db() -> TestDb<sqlx::Postgres> {
        idgen_testkit::postgres()
            .await
            .expect("a PostgreSQL database")
    }
    fn diesel_url(db: &TestDb<sqlx::Postgres>) -> String {
        db.url().to_owned()
    }
}

hilo_tests!(Pg);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sequence_with_another_increment_is_refused() {
    hilo_common::a_sequence_with_another_increment_is_refused::<Pg>().await;
}
