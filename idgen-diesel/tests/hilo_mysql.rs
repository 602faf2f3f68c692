//! Hi-lo over diesel on MySQL/MariaDB (a database of its own per test, from idgen-testkit).

mod hilo_common;

use hilo_common::Backend;
use idgen_testkit::TestDb;

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

hilo_tests!(My);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sequence_with_another_increment_is_refused() {
    hilo_common::a_sequence_with_another_increment_is_refused::<My>().await;
}
