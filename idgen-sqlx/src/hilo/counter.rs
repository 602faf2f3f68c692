//! idgen-sql's one hi-lo counter ([`SqlCounter`]) on a sqlx pool: the counter's own
//! one-connection pool ([`pool::dedicated`]) is its [`CounterPool`], and the lease store's
//! `SqlPool` binding runs its calls.

use idgen_sql::{CounterPool, SqlCounter};
use sqlx::Pool;

use super::pool;
use crate::hilo::IntoHiLoSource;
use crate::session::{SqlxDatabase, SqlxMarker};

/// idgen-sql's [`SqlCounter`] on a sqlx pool of `DB`: a sequence or a counter-table row, on a
/// one-connection pool of its own made from the application's pool's connect options
/// (connected lazily, reconnected after a failure); see [the module docs](crate::hilo).
/// [`PgSequence`](crate::hilo::PgSequence), [`MySqlCounter`](crate::hilo::MySqlCounter) and
/// [`SqliteCounter`](crate::hilo::SqliteCounter) name it per database.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_sqlx::hilo::{HiLo, SqlxCounter};
///
/// let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
/// let orders = SqlxCounter::<sqlx::Sqlite>::new(&pool, "orders")?;
/// orders.create(100).await?;
/// let ids = HiLo::new(orders, 100).await?;
/// assert_eq!(ids.next_id().await?, 1);
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub type SqlxCounter<DB> = SqlCounter<SqlxMarker, Pool<DB>>;

/// A counter's connections: a one-connection pool with the application's connect options.
impl<DB: SqlxDatabase> CounterPool<SqlxMarker> for Pool<DB> {
    type Of = Pool<DB>;

    fn for_counter(pool: &Pool<DB>) -> Pool<DB> {
        pool::dedicated(pool)
    }
}

/// `HiLo::new(pool, block)`: the counter named by
/// [`HiLoBuilder::counter`](crate::hilo::HiLoBuilder::counter) (default `hilo`), in
/// [`CounterMode::Detect`](idgen_sql::CounterMode::Detect): a sequence on PostgreSQL, a row of
/// the table `idgen_hilo` on SQLite, either on MySQL/MariaDB as the server allows.
impl<DB: SqlxDatabase> IntoHiLoSource<SqlxMarker> for Pool<DB> {
    type Source = SqlxCounter<DB>;

    fn into_hilo_source(self, counter: &str) -> SqlxCounter<DB> {
        SqlCounter::named(&self, counter)
    }
}
