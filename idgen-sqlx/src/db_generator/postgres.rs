//! The installer's statements on PostgreSQL.

use sqlx::{PgConnection, Postgres};

use super::dialect::DbGeneratorDialect;
use super::dialect::DialectFuture;
use crate::db_generator::SqlDialect;

/// The installers' session lock, `"idgenGEN"` in ASCII.
const LOCK_KEY: i64 = 0x6964_6765_6e47_454e;

impl DbGeneratorDialect for Postgres {
    const GENERATOR_DIALECT: SqlDialect = SqlDialect::Postgres;

    fn lock(conn: &mut PgConnection) -> DialectFuture<'_, ()> {
        Box::pin(async move {
            sqlx::query("SELECT pg_advisory_lock($1)")
                .bind(LOCK_KEY)
                .execute(conn)
                .await
                .map(drop)
        })
    }

    fn unlock(conn: &mut PgConnection) -> DialectFuture<'_, ()> {
        Box::pin(async move {
            sqlx::query("SELECT pg_advisory_unlock($1)")
                .bind(LOCK_KEY)
                .execute(conn)
                .await
                .map(drop)
        })
    }

    super::dialect::bind_and_decode!(PgConnection, sqlx::PgPool);
}
