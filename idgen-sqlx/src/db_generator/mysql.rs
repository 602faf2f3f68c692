//! The installer's statements on MariaDB and MySQL.

use sqlx::{MySql, MySqlConnection};

use super::dialect::DbGeneratorDialect;
use super::dialect::DialectFuture;
use crate::db_generator::SqlDialect;

/// The installers' named lock, and how long an installer waits for it (seconds).
const LOCK_NAME: &str = "idgen_db_generator";
const LOCK_WAIT_S: i64 = 60;

impl DbGeneratorDialect for MySql {
    const GENERATOR_DIALECT: SqlDialect = SqlDialect::MySql;

    fn lock(conn: &mut MySqlConnection) -> DialectFuture<'_, ()> {
        Box::pin(async move {
            let got: Option<i64> = sqlx::query_scalar("SELECT GET_LOCK(?, ?)")
                .bind(LOCK_NAME)
                .bind(LOCK_WAIT_S)
                .fetch_one(conn)
                .await?;
            match got {
                Some(1) => Ok(()),
                _ => Err(sqlx::Error::Protocol(format!(
                    "GET_LOCK('{LOCK_NAME}') was not granted within {LOCK_WAIT_S} s: another installer holds it"
                ))),
            }
        })
    }

    fn unlock(conn: &mut MySqlConnection) -> DialectFuture<'_, ()> {
        Box::pin(async move {
            sqlx::query("SELECT RELEASE_LOCK(?)")
                .bind(LOCK_NAME)
                .execute(conn)
                .await
                .map(drop)
        })
    }

    super::dialect::bind_and_decode!(MySqlConnection, sqlx::MySqlPool);
}
