//! Snowflake IDs made inside the database, under the application's [`Layout`].
//!
//! Rows inserted by SQL scripts, other languages or triggers can take their IDs from an SQL
//! function, `idgen_next_id()`, that issues IDs which sort and decode exactly like the
//! application's: the same epoch, time unit, field widths and order. This module writes that
//! function's SQL for PostgreSQL (PL/pgSQL) and MariaDB/MySQL (a stored function), as text,
//! with no database driver; the adapter crates install it (`idgen_sqlx::db_generator`).
//!
//! ```
//! use idgen_sql::db_generator::{DbGenerator, SqlDialect};
//! use idgen_core::Layout;
//!
//! let generator = DbGenerator::new(Layout::TWITTER);
//! let sql = generator.migration_sql(SqlDialect::Postgres);
//! assert!(sql[0].starts_with("CREATE TABLE IF NOT EXISTS \"idgen_db_generator\""));
//! assert!(sql[1].starts_with("CREATE OR REPLACE FUNCTION \"idgen_next_id\"() RETURNS bigint"));
//! assert_eq!(generator.holder(), "database:idgen_next_id");
//! ```
//!
//! # The database's node ID
//!
//! The function uses a node ID that the database holds through the **same lease table** the
//! applications' [`WorkerLease`](idgen_engine::lease::WorkerLease)s use, claimed with the same claim
//! procedure, so the database and the applications never share a node ID. A database cannot
//! renew a lease in the background (it has no scheduler we could count on), so the installer
//! claims the row under a dedicated holder label, `database:<function name>`
//! ([`holder`](DbGenerator::holder)), with a lease that ends only after
//! [`DATABASE_LEASE_TTL`] (100 years): applications claim only expired rows, so they never take
//! it. The label makes the row recognisable (`holder LIKE 'database:%'`) and makes installing
//! idempotent (a second install finds its row again). Uninstalling gives the node ID back and
//! stores the last timestamp issued, so its next holder never issues at or below it; installing
//! starts after the last timestamp any earlier holder stored.
//!
//! Every call checks that the lease row still names the function's holder, so a row freed by
//! hand makes the function refuse instead of sharing the node ID with its next holder.
//!
//! # Order and uniqueness
//!
//! The function's state is one row of a state table (`idgen_db_generator`): the last issued
//! (tick, sequence) as one word, as in the Rust generator. Each call locks that row
//! (`SELECT … FOR UPDATE`), so concurrent sessions are served one at a time and every ID is
//! strictly greater than the one before, whatever session asked. When a tick's sequence is used
//! up, the next call waits for the next tick, as the Rust generator does (Instagram's
//! `nextval() % 1024` wraps there and repeats IDs). When the database host's clock is behind
//! the last issued tick, the [`ClockPolicy`] decides, as in the Rust generator: `Refuse`,
//! `Wait { max }` (sleep until the clock catches up, if it is behind by at most `max`) or
//! `Borrow { max }` (issue from the last tick onwards while within `max`); beyond the bound an
//! error naming how far. The time comes from the database's clock (`clock_timestamp()`,
//! `SYSDATE(6)`), read afresh on every call.
//!
//! **The row lock is held until the calling transaction ends**: a transaction that takes an ID
//! and then works for a second holds up every other session's IDs for that second. Keep
//! transactions that take IDs short. A rolled-back transaction rolls the state back too, so its
//! IDs may be issued again; they were never committed, so no row has them.
//!
//! # Replication and privileges
//!
//! The function reads the clock and writes its state row, so it is not deterministic: on
//! MariaDB/MySQL with binary logging, creating it needs `log_bin_trust_function_creators = 1`
//! (or the privilege to create such functions), and replicas must use row-based replication,
//! so that they copy the IDs instead of calling the function again. A replica promoted to
//! primary continues from the replicated state row. On PostgreSQL, physical and logical
//! replication copy the IDs.
//!
//! # Errors from the function
//!
//! The function raises SQLSTATE `IDG01` (the clock moved backwards beyond the policy),
//! `IDG02` (its node ID lease is not held), `IDG03` (the time is before the layout's epoch) or
//! `IDG04` (after the layout's last instant); [`DbGenerator::error_from_database`] turns them
//! into the same [`Error`]s the Rust generator returns.

mod mysql;
mod postgres;
#[cfg(test)]
mod tests;

use std::time::Duration;

use idgen_core::{ClockPolicy, Layout};
use idgen_engine::Error;
use idgen_engine::SqlName;

/// How long the database's lease on its node ID lasts: 100 years, so that it never expires
/// while the function is installed; the adapters' `uninstall` gives it back.
///
/// ```
/// assert_eq!(idgen_sql::db_generator::DATABASE_LEASE_TTL.as_secs(), 100 * 365 * 24 * 3600);
/// ```
pub const DATABASE_LEASE_TTL: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// The default name of the function.
pub const DEFAULT_FUNCTION: &str = "idgen_next_id";

/// The default name of the state table (one row per installed function).
pub const DEFAULT_STATE_TABLE: &str = "idgen_db_generator";

/// The prefix of the holder label under which the database holds its node ID.
pub const HOLDER_PREFIX: &str = "database:";

/// Which database's SQL to write: the databases of [`sql::Dialect`](crate::dialect::Dialect) that
/// can host the function (not SQLite, which has no stored functions). It converts both ways, and
/// its quoting and placeholders are `sql::Dialect`'s.
///
/// ```
/// use idgen_sql::db_generator::SqlDialect;
/// use idgen_sql::Dialect;
/// assert_eq!(SqlDialect::MySql.to_string(), "MySQL/MariaDB");
/// assert_eq!(Dialect::from(SqlDialect::Postgres), Dialect::Postgres);
/// assert_eq!(SqlDialect::try_from(Dialect::MySql)?, SqlDialect::MySql);
/// assert!(SqlDialect::try_from(Dialect::Sqlite)
///     .unwrap_err()
///     .to_string()
///     .contains("SQLite"));
/// # Ok::<(), idgen_engine::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SqlDialect {
    /// PostgreSQL 11 or later (PL/pgSQL).
    Postgres,
    /// MariaDB 10.3 or later, MySQL 8 (a stored function; SQL statements with `?` parameters).
    MySql,
}

impl std::fmt::Display for SqlDialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        crate::dialect::Dialect::from(*self).fmt(f)
    }
}

impl From<SqlDialect> for crate::dialect::Dialect {
    fn from(dialect: SqlDialect) -> Self {
        match dialect {
            SqlDialect::Postgres => crate::dialect::Dialect::Postgres,
            SqlDialect::MySql => crate::dialect::Dialect::MySql,
        }
    }
}

impl TryFrom<crate::dialect::Dialect> for SqlDialect {
    type Error = Error;

    /// The same database, or [`Error::InvalidOptions`] for SQLite.
    fn try_from(dialect: crate::dialect::Dialect) -> Result<Self, Error> {
        match dialect {
            crate::dialect::Dialect::Postgres => Ok(SqlDialect::Postgres),
            crate::dialect::Dialect::MySql => Ok(SqlDialect::MySql),
            other => Err(Error::InvalidOptions {
                reason: format!(
                    "the database-side generator needs PostgreSQL or MySQL/MariaDB (stored functions); {other} has none"
                ),
            }),
        }
    }
}

impl SqlDialect {
    fn quote(self) -> char {
        crate::dialect::Dialect::from(self).quote()
    }

    /// The `n`-th (1-based) bind parameter.
    fn param(self, n: usize) -> String {
        crate::dialect::Dialect::from(self).param(n)
    }
}

/// The SQL of a database-side Snowflake generator: an SQL function issuing IDs under `layout`
/// with a node ID the database leases from the lease table. See the [module
/// documentation](self).
///
/// Defaults: function `idgen_next_id`, state table `idgen_db_generator`, lease table
/// `idgen_worker_lease`, lease namespace `default`, clock policy `Wait { max: 10 ms }` (the Rust
/// generator's default).
///
/// ```
/// use std::time::Duration;
/// use idgen_sql::db_generator::{DbGenerator, SqlDialect};
/// use idgen_core::{ClockPolicy, Layout};
///
/// let generator = DbGenerator::new(Layout::INSTAGRAM)
///     .function("app.next_order_id")?
///     .namespace("orders")
///     .clock_policy(ClockPolicy::Borrow { max: Duration::from_millis(50) });
/// let sql = generator.migration_sql(SqlDialect::MySql);
/// assert!(sql.iter().any(|s| s.starts_with("CREATE FUNCTION `app`.`next_order_id`()")));
///
/// let err = DbGenerator::new(Layout::TWITTER).function("next_id(); DROP TABLE x").unwrap_err();
/// assert!(err.to_string().starts_with("generator function name \"next_id(); DROP TABLE x\" is invalid"));
/// # Ok::<(), idgen_engine::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DbGenerator {
    layout: Layout,
    policy: ClockPolicy,
    function: SqlName,
    state_table: SqlName,
    lease_table: SqlName,
    namespace: String,
}

/// One row of the state table, as the installer reads and writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateRow {
    /// The layout the function was installed with ([`DbGenerator::layout_key`]).
    pub layout: String,
    /// The lease namespace of its node ID.
    pub namespace: String,
    /// Its node ID.
    pub node: u64,
    /// The holder label its lease row carries.
    pub holder: String,
    /// The last issued (tick, sequence) as one word: `tick << sequence_bits | sequence`.
    pub last_word: i64,
}

impl DbGenerator {
    /// The SQL for `layout`, with the defaults above.
    ///
    /// ```
    /// let generator = idgen_sql::db_generator::DbGenerator::new(idgen_core::Layout::TWITTER);
    /// assert_eq!(generator.function_name(), "idgen_next_id");
    /// ```
    pub fn new(layout: Layout) -> Self {
        let parse = |name| SqlName::parse("name", name).expect("the default names are valid");
        DbGenerator {
            layout,
            policy: ClockPolicy::default(),
            function: parse(DEFAULT_FUNCTION),
            state_table: parse(DEFAULT_STATE_TABLE),
            lease_table: parse(crate::DEFAULT_LEASE_TABLE),
            namespace: "default".to_owned(),
        }
    }

    /// The function's name, `name` or `schema.name` of ASCII letters, digits and `_`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidSqlName`] naming a name that is anything else.
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_sql::db_generator::DbGenerator;
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER).function("ops.next_id")?;
    /// assert_eq!(g.function_name(), "ops.next_id");
    /// assert!(DbGenerator::new(idgen_core::Layout::TWITTER).function("1x").is_err());
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn function(mut self, name: &str) -> Result<Self, Error> {
        self.function = SqlName::parse("generator function", name)?;
        Ok(self)
    }

    /// The state table's name (same rules as [`function`](DbGenerator::function)).
    ///
    /// ```
    /// use idgen_sql::db_generator::{DbGenerator, SqlDialect};
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER).state_table("ops.id_state")?;
    /// assert!(g.migration_sql(SqlDialect::Postgres)[0].contains("\"ops\".\"id_state\""));
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn state_table(mut self, name: &str) -> Result<Self, Error> {
        self.state_table = SqlName::parse("generator state table", name)?;
        Ok(self)
    }

    /// The lease table's name: the one the applications' `WorkerLease`s use
    /// (`LeaseOptions::table`; default `idgen_worker_lease`).
    ///
    /// ```
    /// use idgen_sql::db_generator::{DbGenerator, SqlDialect};
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER).lease_table("leases")?;
    /// assert_eq!(g.lease_table_name(), "leases");
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn lease_table(mut self, name: &str) -> Result<Self, Error> {
        self.lease_table = SqlName::parse("lease table", name)?;
        Ok(self)
    }

    /// The lease namespace: the one the applications' `WorkerLease`s use
    /// (`LeaseOptions::namespace`; default `default`). Bound as a parameter, never written
    /// into the SQL, so any text is accepted.
    ///
    /// ```
    /// let g = idgen_sql::db_generator::DbGenerator::new(idgen_core::Layout::TWITTER).namespace("orders");
    /// assert_eq!(g.lease_namespace(), "orders");
    /// ```
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// What the function does when the database's clock is behind its last issued tick.
    ///
    /// ```
    /// use idgen_core::{ClockPolicy, Layout};
    /// use idgen_sql::db_generator::DbGenerator;
    /// let g = DbGenerator::new(Layout::TWITTER).clock_policy(ClockPolicy::Refuse);
    /// assert_eq!(g.policy(), ClockPolicy::Refuse);
    /// ```
    pub fn clock_policy(mut self, policy: ClockPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The layout.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_sql::db_generator::DbGenerator;
    /// assert_eq!(DbGenerator::new(Layout::SONYFLAKE).layout(), &Layout::SONYFLAKE);
    /// ```
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The clock policy.
    ///
    /// ```
    /// use idgen_core::{ClockPolicy, Layout};
    /// use idgen_sql::db_generator::DbGenerator;
    /// assert_eq!(DbGenerator::new(Layout::TWITTER).policy(), ClockPolicy::default());
    /// ```
    pub fn policy(&self) -> ClockPolicy {
        self.policy
    }

    /// The function's name as given (unquoted).
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_sql::db_generator::DbGenerator;
    /// assert_eq!(DbGenerator::new(Layout::TWITTER).function_name(), "idgen_next_id");
    /// ```
    pub fn function_name(&self) -> String {
        self.function.as_str().to_owned()
    }

    /// The lease table's name as given (unquoted).
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_sql::db_generator::DbGenerator;
    /// assert_eq!(DbGenerator::new(Layout::TWITTER).lease_table_name(), "idgen_worker_lease");
    /// ```
    pub fn lease_table_name(&self) -> String {
        self.lease_table.as_str().to_owned()
    }

    /// The lease namespace.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_sql::db_generator::DbGenerator;
    /// assert_eq!(DbGenerator::new(Layout::TWITTER).lease_namespace(), "default");
    /// ```
    pub fn lease_namespace(&self) -> &str {
        &self.namespace
    }

    /// The holder label of the database's lease row: `database:<function name>`.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_sql::db_generator::DbGenerator;
    /// let g = DbGenerator::new(Layout::TWITTER).function("ops.next_id")?;
    /// assert_eq!(g.holder(), "database:ops.next_id");
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn holder(&self) -> String {
        format!("{HOLDER_PREFIX}{}", self.function.as_str().to_owned())
    }

    /// The layout as the state table records it, so that an install with another layout is
    /// refused instead of reading the old state under the new layout.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_sql::db_generator::DbGenerator;
    /// assert_eq!(
    ///     DbGenerator::new(Layout::TWITTER).layout_key(),
    ///     "epoch_ms=1288834974657 unit_ms=1 time=41 node=10 sequence=12 order=time-node-sequence"
    /// );
    /// ```
    pub fn layout_key(&self) -> String {
        let l = &self.layout;
        let order = match l.order() {
            idgen_core::FieldOrder::TimeNodeSequence => "time-node-sequence",
            idgen_core::FieldOrder::TimeSequenceNode => "time-sequence-node",
        };
        format!(
            "epoch_ms={} unit_ms={} time={} node={} sequence={} order={order}",
            l.epoch_ms(),
            l.unit_ms(),
            l.timestamp_bits(),
            l.node_bits(),
            l.sequence_bits()
        )
    }

    /// The statements that create the state table (if missing) and create or replace the
    /// function, in order: for a migration file, or what the adapters' installers run. The
    /// function works once the state row and the lease row exist (the installers write them).
    ///
    /// ```
    /// use idgen_sql::db_generator::{DbGenerator, SqlDialect};
    /// let sql = DbGenerator::new(idgen_core::Layout::TWITTER).migration_sql(SqlDialect::MySql);
    /// assert_eq!(sql.len(), 3); // the table, DROP FUNCTION IF EXISTS, CREATE FUNCTION
    /// ```
    pub fn migration_sql(&self, dialect: SqlDialect) -> Vec<String> {
        match dialect {
            SqlDialect::Postgres => {
                vec![self.state_table_sql(dialect), postgres::function_sql(self)]
            }
            SqlDialect::MySql => vec![
                self.state_table_sql(dialect),
                self.drop_function_sql(dialect),
                mysql::function_sql(self),
            ],
        }
    }

    /// `DROP FUNCTION IF EXISTS` for the function. (A column default or trigger that calls it
    /// must be dropped first on PostgreSQL.)
    ///
    /// ```
    /// use idgen_sql::db_generator::{DbGenerator, SqlDialect};
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER);
    /// assert_eq!(g.drop_function_sql(SqlDialect::Postgres), "DROP FUNCTION IF EXISTS \"idgen_next_id\"()");
    /// ```
    pub fn drop_function_sql(&self, dialect: SqlDialect) -> String {
        let f = self.function.quoted_with(dialect.quote());
        match dialect {
            SqlDialect::Postgres => format!("DROP FUNCTION IF EXISTS {f}()"),
            SqlDialect::MySql => format!("DROP FUNCTION IF EXISTS {f}"),
        }
    }

    /// The statement that makes the function the default of `table.column`: on PostgreSQL an
    /// `ALTER TABLE … SET DEFAULT`; on MariaDB/MySQL, which allow no stored function in a
    /// `DEFAULT`, a `BEFORE INSERT` trigger named `<table>_<column>_idgen` that sets the column
    /// when the insert leaves it `NULL` or 0 (declare the column `BIGINT NOT NULL DEFAULT 0`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidSqlName`] or [`Error::InvalidOptions`] naming a table or column name that is not a plain
    /// SQL identifier.
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_sql::db_generator::{DbGenerator, SqlDialect};
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER);
    /// assert_eq!(
    ///     g.column_default_sql(SqlDialect::Postgres, "orders", "id")?,
    ///     "ALTER TABLE \"orders\" ALTER COLUMN \"id\" SET DEFAULT \"idgen_next_id\"()"
    /// );
    /// assert!(g.column_default_sql(SqlDialect::MySql, "orders", "id")?.starts_with(
    ///     "CREATE TRIGGER `orders_id_idgen` BEFORE INSERT ON `orders` FOR EACH ROW"));
    /// assert!(g.column_default_sql(SqlDialect::MySql, "orders", "a.b").is_err());
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn column_default_sql(
        &self,
        dialect: SqlDialect,
        table: &str,
        column: &str,
    ) -> Result<String, Error> {
        let q = dialect.quote();
        let t = SqlName::parse("table", table)?;
        let c = SqlName::parse("column", column)?;
        if column.contains('.') {
            return Err(Error::InvalidOptions {
                reason: format!("column name {column:?} must not contain '.'"),
            });
        }
        let f = self.function.quoted_with(q);
        let (tq, cq) = (t.quoted_with(q), c.quoted_with(q));
        Ok(match dialect {
            SqlDialect::Postgres => format!("ALTER TABLE {tq} ALTER COLUMN {cq} SET DEFAULT {f}()"),
            SqlDialect::MySql => {
                let base = table.rsplit('.').next().unwrap_or(table);
                let schema = table
                    .rsplit_once('.')
                    .map(|(s, _)| format!("{q}{s}{q}."))
                    .unwrap_or_default();
                format!(
                    "CREATE TRIGGER {schema}{q}{base}_{column}_idgen{q} BEFORE INSERT ON {tq} FOR EACH ROW \
                     BEGIN IF NEW.{cq} IS NULL OR NEW.{cq} = 0 THEN SET NEW.{cq} = {f}(); END IF; END"
                )
            }
        })
    }

    /// `CREATE TABLE IF NOT EXISTS` for the state table.
    ///
    /// ```
    /// use idgen_sql::db_generator::{DbGenerator, SqlDialect};
    /// let sql = DbGenerator::new(idgen_core::Layout::TWITTER).state_table_sql(SqlDialect::MySql);
    /// assert!(sql.ends_with(") ENGINE = InnoDB"));
    /// ```
    pub fn state_table_sql(&self, dialect: SqlDialect) -> String {
        let t = self.state_table.quoted_with(dialect.quote());
        let engine = match dialect {
            SqlDialect::Postgres => "",
            SqlDialect::MySql => " ENGINE = InnoDB",
        };
        format!(
            "CREATE TABLE IF NOT EXISTS {t} (\n    \
             name      VARCHAR(255) NOT NULL PRIMARY KEY,\n    \
             layout    VARCHAR(255) NOT NULL,\n    \
             namespace VARCHAR(255) NOT NULL,\n    \
             node      BIGINT       NOT NULL,\n    \
             holder    VARCHAR(255) NOT NULL,\n    \
             last_word BIGINT       NOT NULL\n){engine}"
        )
    }

    /// Reads the function's state row and locks it until the transaction ends. Parameter: the
    /// function's name ([`function_name`](DbGenerator::function_name)). Columns: `layout`,
    /// `namespace`, `node`, `holder`, `last_word` (see [`StateRow`]).
    ///
    /// ```
    /// use idgen_sql::db_generator::{DbGenerator, SqlDialect};
    /// let sql = DbGenerator::new(idgen_core::Layout::TWITTER).select_state_sql(SqlDialect::Postgres);
    /// assert!(sql.ends_with("WHERE name = $1 FOR UPDATE"));
    /// ```
    pub fn select_state_sql(&self, dialect: SqlDialect) -> String {
        format!(
            "SELECT layout, namespace, node, holder, last_word FROM {} WHERE name = {} FOR UPDATE",
            self.state_table.quoted_with(dialect.quote()),
            dialect.param(1)
        )
    }

    /// Writes the function's state row. Parameters: name, layout, namespace, node, holder,
    /// last_word.
    ///
    /// ```
    /// use idgen_sql::db_generator::{DbGenerator, SqlDialect};
    /// let sql = DbGenerator::new(idgen_core::Layout::TWITTER).upsert_state_sql(SqlDialect::MySql);
    /// assert!(sql.contains("ON DUPLICATE KEY UPDATE"));
    /// ```
    pub fn upsert_state_sql(&self, dialect: SqlDialect) -> String {
        let t = self.state_table.quoted_with(dialect.quote());
        let p: Vec<String> = (1..=6).map(|n| dialect.param(n)).collect();
        let cols = ["layout", "namespace", "node", "holder", "last_word"];
        let update = match dialect {
            SqlDialect::Postgres => format!(
                "ON CONFLICT (name) DO UPDATE SET {}",
                cols.map(|c| format!("{c} = EXCLUDED.{c}")).join(", ")
            ),
            SqlDialect::MySql => format!(
                "ON DUPLICATE KEY UPDATE {}",
                cols.map(|c| format!("{c} = VALUES({c})")).join(", ")
            ),
        };
        format!(
            "INSERT INTO {t} (name, layout, namespace, node, holder, last_word) VALUES ({}) {update}",
            p.join(", ")
        )
    }

    /// Deletes the function's state row. Parameter: the function's name.
    ///
    /// ```
    /// use idgen_sql::db_generator::{DbGenerator, SqlDialect};
    /// let sql = DbGenerator::new(idgen_core::Layout::TWITTER).delete_state_sql(SqlDialect::MySql);
    /// assert_eq!(sql, "DELETE FROM `idgen_db_generator` WHERE name = ?");
    /// ```
    pub fn delete_state_sql(&self, dialect: SqlDialect) -> String {
        format!(
            "DELETE FROM {} WHERE name = {}",
            self.state_table.quoted_with(dialect.quote()),
            dialect.param(1)
        )
    }

    /// `SELECT <function>()`: one ID.
    ///
    /// ```
    /// use idgen_sql::db_generator::{DbGenerator, SqlDialect};
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER);
    /// assert_eq!(g.next_id_sql(SqlDialect::MySql), "SELECT `idgen_next_id`()");
    /// ```
    pub fn next_id_sql(&self, dialect: SqlDialect) -> String {
        format!("SELECT {}()", self.function.quoted_with(dialect.quote()))
    }

    /// The state word a newly claimed node ID starts from: the tick of the last timestamp an
    /// earlier holder stored, marked used up (the next ID is in a later tick), or 0.
    ///
    /// # Errors
    ///
    /// [`Error::Id`]([`idgen_core::Error::TimeOverflow`]) when that timestamp is past the layout's last instant.
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_sql::db_generator::DbGenerator;
    /// let g = DbGenerator::new(Layout::TWITTER);
    /// assert_eq!(g.initial_word(None)?, 0);
    /// assert_eq!(g.initial_word(Some(Layout::TWITTER.epoch_ms() + 5))?, (5 << 12) | 4095);
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn initial_word(&self, last_timestamp_ms: Option<i64>) -> Result<i64, Error> {
        let l = &self.layout;
        match last_timestamp_ms {
            Some(ms) if ms >= l.epoch_ms() => {
                let tick = l.ticks_at(ms)?;
                let word = (tick << l.sequence_bits()) | l.max_sequence();
                Ok(i64::try_from(word).unwrap_or(i64::MAX))
            }
            _ => Ok(0),
        }
    }

    /// The last timestamp (Unix ms, the start of its tick) a state word says was issued, for
    /// the lease row when the node ID is given back; `None` for the word 0 (nothing issued).
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_sql::db_generator::DbGenerator;
    /// let g = DbGenerator::new(Layout::TWITTER);
    /// assert_eq!(g.last_timestamp_ms(0), None);
    /// assert_eq!(g.last_timestamp_ms((5 << 12) | 7), Some(Layout::TWITTER.epoch_ms() + 5));
    /// ```
    pub fn last_timestamp_ms(&self, word: i64) -> Option<i64> {
        let word = u64::try_from(word).ok().filter(|w| *w > 0)?;
        Some(
            self.layout
                .tick_start_ms(word >> self.layout.sequence_bits()),
        )
    }

    /// The [`Error`] for an error the function raised (by its SQLSTATE and message), the same
    /// the Rust generator returns in that situation: `IDG01` →
    /// [`idgen_core::Error::ClockMovedBackwards`], `IDG02` → [`idgen_core::Error::Fenced`] (lease
    /// not held), `IDG03` → [`idgen_core::Error::BeforeEpoch`], `IDG04` →
    /// [`idgen_core::Error::TimeOverflow`]. `None` for any other error.
    ///
    /// ```
    /// use idgen_core::{Error, Layout};
    /// use idgen_sql::db_generator::DbGenerator;
    /// let g = DbGenerator::new(Layout::TWITTER);
    /// let err = g.error_from_database("IDG01",
    ///     "idgen: the clock moved backwards by 5000 ms (policy wait allows 10 ms); no ID was issued").unwrap();
    /// assert!(matches!(err, Error::ClockMovedBackwards { behind_ms: 5000, allowed_ms: 10, policy: "wait" }));
    /// assert!(g.error_from_database("23505", "duplicate key").is_none());
    /// ```
    pub fn error_from_database(&self, sqlstate: &str, message: &str) -> Option<idgen_core::Error> {
        let numbers = numbers_in(message);
        match sqlstate {
            "IDG01" => Some(idgen_core::Error::ClockMovedBackwards {
                behind_ms: u64::try_from(*numbers.first()?).ok()?,
                allowed_ms: u64::try_from(*numbers.get(1)?).ok()?,
                policy: self.policy.name(),
            }),
            // The message names the function, whose name may hold digits: no number is read.
            "IDG02" => Some(idgen_core::Error::Fenced {
                now_ms: 0,
                valid_until_ms: i64::MIN,
            }),
            "IDG03" => Some(idgen_core::Error::BeforeEpoch {
                unix_ms: *numbers.first()?,
                epoch_ms: self.layout.epoch_ms(),
            }),
            "IDG04" => Some(idgen_core::Error::TimeOverflow {
                unix_ms: *numbers.first()?,
                last_ms: self.layout.last_unix_ms(),
            }),
            _ => None,
        }
    }

    /// What the generated function body needs of the layout and policy.
    fn constants(&self) -> Constants {
        let l = &self.layout;
        let (time_shift, node_shift, seq_shift) = l.shifts();
        Constants {
            epoch_ms: l.epoch_ms(),
            unit_ms: l.unit_ms(),
            last_ms: l.last_unix_ms(),
            max_ticks: l.max_ticks(),
            seq_bits: l.sequence_bits(),
            seq_mask: l.max_sequence(),
            time_shift,
            node_shift,
            seq_shift,
            tolerance_ms: self.policy.tolerance_ms().min(i64::MAX as u64),
            policy: self.policy.name(),
            borrow: matches!(self.policy, ClockPolicy::Borrow { .. }),
            key: self.function.as_str().to_owned(),
        }
    }
}

/// The numbers of a layout and policy, as the function bodies write them.
struct Constants {
    epoch_ms: i64,
    unit_ms: u32,
    last_ms: i64,
    max_ticks: u64,
    seq_bits: u8,
    seq_mask: u64,
    time_shift: u32,
    node_shift: u32,
    seq_shift: u32,
    tolerance_ms: u64,
    policy: &'static str,
    borrow: bool,
    /// The state row's key: the function's unquoted name (letters, digits, `_` and `.` only,
    /// so it is safe in a string literal).
    key: String,
}

/// The (optionally negative) integers in `text`, in order.
fn numbers_in(text: &str) -> Vec<i64> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() || (c == '-' && current.is_empty()) {
            current.push(c);
        } else {
            if let Ok(n) = current.parse() {
                out.push(n);
            }
            current.clear();
        }
    }
    out
}
