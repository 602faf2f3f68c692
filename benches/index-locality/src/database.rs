//! One server under test: the benchmark's own database on it, created on connect and dropped
//! at the end. The SQL both servers run alike is here, once; what differs is a [`Dialect`]
//! (`postgres.rs`, `mysql.rs`). The hi-lo kind's counter is a sequence of the server's, read
//! through the [`Dialect`] too ([`Sequence`]).

use std::future::Future;
use std::str::FromStr;

use idgen_engine::hilo::{BoxError, HiLo, HiLoSource, Increment, MissingCounter};
use sqlx::pool::PoolOptions;
use sqlx::query_builder::Separated;
use sqlx::{Connection, Database, Executor, IntoArguments, Pool, QueryBuilder};

use crate::error::BoxResult;
use crate::keys::{Key, KeyKind};
use crate::measure::IndexStats;

/// How a server of kind `DB` is reached.
pub(crate) type Options<DB> = <<DB as Database>::Connection as Connection>::Options;

/// What differs between PostgreSQL and MariaDB. Everything that binds a value or reads a row
/// is here, so the generic code needs no bounds beyond this trait.
pub(crate) trait Dialect: Database<Arguments: IntoArguments<Self>> {
    /// The server's kind, for the report's heading (its version follows).
    const TITLE: &'static str;
    /// Whether the primary key is InnoDB's clustered index (rows included): the report says so.
    const INNODB: bool;
    /// Run once on the benchmark's database after connecting, if anything.
    const SETUP: Option<&'static str>;

    /// The `id` column of [`KeyKind::Identity`]'s table: filled by the server.
    const IDENTITY_COLUMN: &'static str;
    /// The `id` column of a UUID kind's table.
    const UUID_COLUMN: &'static str;
    /// After `DROP DATABASE IF EXISTS name`.
    const DROP_DATABASE_OPTIONS: &'static str;

    /// `CREATE TABLE` for `table`: column `id` (as [`id_column`] gives it), a payload, and
    /// `id` as the primary key.
    fn create_table(table: &str, id: &str) -> String;

    /// `SELECT` of `sequence`'s next value.
    fn nextval(sequence: &str) -> String;

    /// `SELECT` of `sequence`'s increment.
    fn increment(sequence: &str) -> String;

    /// `options` for database `name` on the same server.
    fn with_database(options: Options<Self>, name: &str) -> Options<Self>;

    /// Binds one row: its key (none for identity), then its payload.
    fn push_row(row: Separated<'_, Self, &'static str>, key: Option<Key>, payload: &str);

    /// `pool` as an executor (sqlx's `Executor` bound on the pool, said once per server).
    fn on(pool: &Pool<Self>) -> impl Executor<'_, Database = Self>;

    /// The one `BIGINT` that `sql` selects.
    fn scalar(pool: &Pool<Self>, sql: String) -> impl Future<Output = BoxResult<i64>> + Send;

    /// The server's version.
    fn version(pool: &Pool<Self>) -> impl Future<Output = BoxResult<String>> + Send;

    /// Analyzes `kind`'s table and measures its primary key.
    fn measure(
        bench: &Bench<Self>,
        kind: KeyKind,
    ) -> impl Future<Output = BoxResult<IndexStats>> + Send;
}

/// The `id` column of `kind`'s table on `DB`.
fn id_column<DB: Dialect>(kind: KeyKind) -> &'static str {
    match kind {
        KeyKind::Identity => DB::IDENTITY_COLUMN,
        kind if kind.is_uuid() => DB::UUID_COLUMN,
        _ => "id BIGINT NOT NULL",
    }
}

/// `DROP DATABASE` of `name` on `DB`.
fn drop_database<DB: Dialect>(name: &str) -> String {
    format!(
        "DROP DATABASE IF EXISTS {name}{}",
        DB::DROP_DATABASE_OPTIONS
    )
}

/// The benchmark's own database on one server: created on connect, dropped by [`Self::drop`].
pub(crate) struct Bench<DB: Dialect> {
    admin: Pool<DB>,
    options: Options<DB>,
    /// The database's name.
    pub(crate) name: String,
    /// Connections for the writers and the measurements.
    pub(crate) pool: Pool<DB>,
}

impl<DB: Dialect> Bench<DB> {
    /// Creates database `name` on the server at `url` and connects `connections` to it.
    pub(crate) async fn create(url: &str, name: &str, connections: u32) -> BoxResult<Bench<DB>> {
        let options = Options::<DB>::from_str(url)?;
        let admin = PoolOptions::<DB>::new()
            .max_connections(1)
            .connect_with(options.clone())
            .await?;
        for statement in [drop_database::<DB>(name), format!("CREATE DATABASE {name}")] {
            sqlx::raw_sql(sql(statement))
                .execute(DB::on(&admin))
                .await?;
        }
        let options = DB::with_database(options, name);
        let pool = PoolOptions::<DB>::new()
            .max_connections(connections)
            .connect_with(options.clone())
            .await?;
        if let Some(setup) = DB::SETUP {
            sqlx::raw_sql(setup).execute(DB::on(&pool)).await?;
        }
        Ok(Bench {
            admin,
            options,
            name: name.to_owned(),
            pool,
        })
    }

    /// The report's heading: the server's kind and version.
    pub(crate) async fn title(&self) -> BoxResult<String> {
        Ok(format!("{} {}", DB::TITLE, DB::version(&self.pool).await?))
    }

    /// Runs each of `statements` on the benchmark's database.
    async fn run(&self, statements: impl IntoIterator<Item = String>) -> BoxResult<()> {
        for statement in statements {
            sqlx::raw_sql(sql(statement))
                .execute(DB::on(&self.pool))
                .await?;
        }
        Ok(())
    }

    /// A fresh table (and, for hi-lo, a fresh sequence) for `kind`.
    pub(crate) async fn create_table(&self, kind: KeyKind) -> BoxResult<()> {
        let table = kind.table();
        self.run([
            format!("DROP TABLE IF EXISTS {table}"),
            DB::create_table(&table, id_column::<DB>(kind)),
        ])
        .await?;
        if kind == KeyKind::HiLo {
            self.run([
                format!("DROP SEQUENCE IF EXISTS {SEQUENCE}"),
                format!("CREATE SEQUENCE {SEQUENCE} INCREMENT BY {BLOCK} START WITH 1"),
            ])
            .await?;
        }
        Ok(())
    }

    /// A new hi-lo generator over the sequence, on a separate small pool of its own
    /// (autocommit): one application instance.
    pub(crate) async fn hilo(&self) -> BoxResult<HiLo> {
        let pool = PoolOptions::<DB>::new()
            .max_connections(2)
            .connect_with(self.options.clone())
            .await?;
        Ok(HiLo::new(Sequence { pool }, BLOCK).await?)
    }

    /// One multi-row `INSERT` of `rows`.
    pub(crate) async fn insert(
        &self,
        kind: KeyKind,
        rows: &[(Option<Key>, String)],
    ) -> BoxResult<()> {
        let table = kind.table();
        let mut sql = QueryBuilder::<DB>::new(if kind == KeyKind::Identity {
            format!("INSERT INTO {table} (payload) ")
        } else {
            format!("INSERT INTO {table} (id, payload) ")
        });
        sql.push_values(rows, |row, (key, payload)| DB::push_row(row, *key, payload));
        sql.build().execute(DB::on(&self.pool)).await?;
        Ok(())
    }

    /// The primary key's index after the inserts.
    pub(crate) async fn measure(&self, kind: KeyKind) -> BoxResult<IndexStats> {
        DB::measure(self, kind).await
    }

    /// Drops `kind`'s table (and sequence), so the next kind runs beside no leftover data.
    pub(crate) async fn drop_table(&self, kind: KeyKind) -> BoxResult<()> {
        self.run([
            format!("DROP TABLE IF EXISTS {}", kind.table()),
            format!("DROP SEQUENCE IF EXISTS {SEQUENCE}"),
        ])
        .await
    }

    /// Closes the pools and drops the database.
    pub(crate) async fn drop(self) -> BoxResult<()> {
        self.pool.close().await;
        sqlx::raw_sql(sql(drop_database::<DB>(&self.name)))
            .execute(DB::on(&self.admin))
            .await?;
        self.admin.close().await;
        Ok(())
    }
}

/// SQL built from this benchmark's own constants (table and sequence names, numbers), never
/// from input: marked safe for sqlx.
pub(crate) fn sql(text: String) -> sqlx::AssertSqlSafe<String> {
    sqlx::AssertSqlSafe(text)
}

// Hi-lo counters as database sequences with `INCREMENT BY` the block size. The PostgreSQL
// source of `idgen-sqlx` was not in `main` when this benchmark was written, so this is a local
// `HiLoSource` implementation: one `nextval` per block, pooled-lo (a value `v` is the block
// `[v, v + block)`), the increment read from the catalog, each in the server's own SQL
// (`Dialect::nextval`, `Dialect::increment`).

/// The sequence's name in both databases.
pub(crate) const SEQUENCE: &str = "hilo_seq";

/// IDs per block and the sequence's increment.
pub(crate) const BLOCK: u64 = 1000;

/// A PostgreSQL or MariaDB (10.3 and later) `SEQUENCE`, read on its own pool (autocommit).
pub(crate) struct Sequence<DB: Dialect> {
    pub(crate) pool: Pool<DB>,
}

impl<DB: Dialect> HiLoSource for Sequence<DB> {
    async fn allocate(&self, _size: u64) -> Result<i64, BoxError> {
        DB::scalar(&self.pool, DB::nextval(SEQUENCE)).await
    }

    async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> {
        let value = DB::scalar(&self.pool, DB::increment(SEQUENCE)).await?;
        u64::try_from(value)
            .map(|step| Ok(Increment::Fixed(step)))
            .map_err(|_| format!("sequence {SEQUENCE} has a negative increment {value}").into())
    }

    fn name(&self) -> &str {
        SEQUENCE
    }
}
