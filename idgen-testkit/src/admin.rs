//! Administrator statements on a server (create, drop, ping), one short connection each.

use sqlx::{AssertSqlSafe, Connection, MySqlConnection, PgConnection};

use crate::Error;
use crate::server::Kind;

/// Runs one statement on a fresh connection to `url`.
pub(crate) async fn execute(kind: Kind, url: &str, sql: String) -> Result<(), Error> {
    let action = sql.clone();
    let result = match kind {
        Kind::Postgres => match PgConnection::connect(url).await {
            Ok(mut conn) => {
                let r = sqlx::raw_sql(AssertSqlSafe(sql))
                    .execute(&mut conn)
                    .await
                    .map(drop);
                let _ = conn.close().await;
                r
            }
            Err(err) => Err(err),
        },
        Kind::MySql => match MySqlConnection::connect(url).await {
            Ok(mut conn) => {
                let r = sqlx::raw_sql(AssertSqlSafe(sql))
                    .execute(&mut conn)
                    .await
                    .map(drop);
                let _ = conn.close().await;
                r
            }
            Err(err) => Err(err),
        },
    };
    result.map_err(|err| Error::database(action, url, err))
}

/// Whether the server at `url` answers a query.
pub(crate) async fn ping(kind: Kind, url: &str) -> Result<(), Error> {
    execute(kind, url, "SELECT 1".to_owned()).await
}

/// `CREATE DATABASE` for `name` (a plain identifier made by this crate).
pub(crate) fn create_database_sql(kind: Kind, name: &str) -> String {
    match kind {
        Kind::Postgres => format!("CREATE DATABASE \"{name}\""),
        Kind::MySql => format!("CREATE DATABASE `{name}`"),
    }
}

/// `DROP DATABASE` for `name`, closing the connections still open to it.
pub(crate) fn drop_database_sql(kind: Kind, name: &str) -> String {
    match kind {
        Kind::Postgres => format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"),
        Kind::MySql => format!("DROP DATABASE IF EXISTS `{name}`"),
    }
}
