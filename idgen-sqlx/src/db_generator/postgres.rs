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
        with_lock_key(conn, "SELECT pg_advisory_lock($1)")
    }

    fn unlock(conn: &mut PgConnection) -> DialectFuture<'_, ()> {
        with_lock_key(conn, "SELECT pg_advisory_unlock($1)")
    }

    super::dialect::bind_and_decode!(PgConnection, sqlx::PgPool);
}

/// Runs `sql` (an advisory-lock function) with [`LOCK_KEY`] bound.
fn with_lock_key<'c>(conn: &'c mut PgConnection, sql: &'static str) -> DialectFuture<'c, ()> {
    Box::pin(async move {
        sqlx::query(sql)
            .bind(LOCK_KEY)
            .execute(conn)
            .await
            .map(drop)
    })
}
