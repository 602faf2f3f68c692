//! Node-ID leases over diesel on PostgreSQL (a database of its own per test, from idgen-testkit).

mod lease_common;

use idgen_testkit::TestDb;
use lease_common::Backend;

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

lease_tests!(Pg);
