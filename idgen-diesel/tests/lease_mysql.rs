//! Node-ID leases over diesel on MySQL/MariaDB (a database of its own per test, from
//! idgen-testkit).

mod lease_common;

use idgen_testkit::TestDb;
use lease_common::Backend;

struct My;

impl Backend for My {
    type Conn = diesel::MysqlConnection;
    type DB = sqlx::MySql;
    async fn test_db() -> TestDb<sqlx::MySql> {
        idgen_testkit::mysql()
            .await
            .expect("a MySQL/MariaDB database")
    }
    fn diesel_url(db: &TestDb<sqlx::MySql>) -> String {
        db.url().to_owned()
    }
}

lease_tests!(My);
