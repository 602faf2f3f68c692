//! [`LeaseSql`]: the lease table's DDL and statements on each database.
//!
//! One row per namespace and node ID: `namespace`, `node`, `holder` (`NULL` when free),
//! `expires_at` (the database's clock: `TIMESTAMPTZ`, `DATETIME(6)` in UTC, Unix ms on SQLite)
//! and `last_timestamp` (Unix ms). Rows are created in chunks as a namespace needs them and
//! never deleted.

use std::ops::Range;

use crate::dialect::{Dialect, LeaseColumns, QuotedName, node_i64};
use crate::pool::CallTarget;
use crate::statement::{Statement, Value};
use idgen_engine::lease::FREED_HOLDER;
use idgen_engine::{Error, SqlName};

/// The lease table's SQL for one database and table name: what every adapter's lease store
/// sends, so stores of different adapters share one table.
///
/// Result columns are named (`node`, `last_timestamp`; `holder`, `expires_at_ms` in
/// [`rows`](Self::rows); `value` for a single number) and come in that order, so drivers may
/// read them by name or by position.
///
/// ```
/// use idgen_sql::{Dialect, LeaseSql, Value};
///
/// let sql = LeaseSql::new(Dialect::MySql, "ops.leases")?;
/// assert_eq!(sql.table(), "`ops`.`leases`");
/// let rows = sql.rows("orders");
/// assert!(rows.sql.contains("FROM `ops`.`leases`"));
/// assert_eq!(rows.params, [Value::Text("orders")]);
/// # Ok::<(), idgen_engine::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseSql {
    dialect: Dialect,
    table: String,
}

impl LeaseSql {
    /// The SQL for the lease table `table` (`name` or `schema.name`, checked by [`SqlName`]).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidSqlName`](idgen_engine::ErrorKind::InvalidSqlName) naming the refused name.
    pub fn new(dialect: Dialect, table: &str) -> Result<LeaseSql, Error> {
        let table = SqlName::parse("lease table", table)?.quoted(dialect);
        Ok(LeaseSql { dialect, table })
    }

    /// The database.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The table name as written into the SQL (quoted).
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The idempotent `CREATE TABLE IF NOT EXISTS` statement, for a migration file.
    ///
    /// ```
    /// use idgen_sql::{Dialect, LeaseSql, DEFAULT_LEASE_TABLE};
    /// let ddl = LeaseSql::new(Dialect::Sqlite, DEFAULT_LEASE_TABLE)?.create_table();
    /// assert!(ddl.contains("expires_at     INTEGER NOT NULL, -- Unix ms"));
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn create_table(&self) -> String {
        let table = &self.table;
        let LeaseColumns {
            text,
            timestamp,
            integer,
            suffix,
        } = self.dialect.sql().lease_columns();
        format!(
            "CREATE TABLE IF NOT EXISTS {table} (\n    \
             namespace      {text} NOT NULL,\n    \
             node           {integer} NOT NULL,\n    \
             holder         {text} NULL,\n    \
             expires_at     {timestamp}\n    \
             last_timestamp {integer} NULL,\n    \
             PRIMARY KEY (namespace, node)\n){suffix}"
        )
    }

    /// [`create_table`](Self::create_table) as the text to send, safe for processes that start
    /// together: on PostgreSQL after [`PG_DDL_LOCK`](crate::PG_DDL_LOCK) in one simple-query
    /// batch (one transaction, so the lock is held until the table is committed).
    ///
    /// ```
    /// use idgen_sql::{Dialect, LeaseSql, PG_DDL_LOCK};
    /// let ddl = LeaseSql::new(Dialect::Postgres, "leases")?.create_guarded();
    /// assert!(ddl.starts_with(PG_DDL_LOCK));
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn create_guarded(&self) -> String {
        match self.dialect.sql().ddl_lock() {
            Some(lock) => format!("{lock};\n{}", self.create_table()),
            None => self.create_table(),
        }
    }

    /// The database's clock in the form `expires_at` is stored in.
    fn now(&self) -> &'static str {
        self.dialect.sql().now()
    }

    /// `now + ttl`, the TTL bound as `ttl`'s placeholder, with its value.
    fn expiry(&self, p: usize, ttl_ms: i64) -> (String, Value<'static>) {
        let param = self.dialect.param(p);
        self.dialect.sql().plus_ms(self.now(), &param, ttl_ms)
    }

    /// PostgreSQL and SQLite: claims the lowest expired node ID below `capacity` in one
    /// statement (PostgreSQL `FOR UPDATE SKIP LOCKED`, so concurrent claims never wait or
    /// collide; SQLite's `UPDATE` takes the write lock before it reads), returning `node,
    /// last_timestamp`, or no row. On MySQL/MariaDB use [`lock_expired`](Self::lock_expired)
    /// and [`assign`](Self::assign) in one transaction.
    pub(crate) fn take_expired<'a>(
        &self,
        namespace: &'a str,
        capacity: u64,
        holder: &'a str,
        ttl_ms: i64,
    ) -> Statement<'a> {
        self.take(namespace, capacity, holder, ttl_ms, "")
    }

    /// [`take_expired`](Self::take_expired) limited to rows given back with
    /// [`release`](Self::release) (no holder, a stored last timestamp): their last timestamp
    /// is exact, so the new holder may issue at once. A claim tries it first; a row without a
    /// release (new, or a lease that expired) may hide a holder a store that forgot no longer
    /// knows, and costs the claimant a wait.
    pub(crate) fn take_released<'a>(
        &self,
        namespace: &'a str,
        capacity: u64,
        holder: &'a str,
        ttl_ms: i64,
    ) -> Statement<'a> {
        self.take(namespace, capacity, holder, ttl_ms, RELEASED)
    }

    fn take<'a>(
        &self,
        namespace: &'a str,
        capacity: u64,
        holder: &'a str,
        ttl_ms: i64,
        only: &str,
    ) -> Statement<'a> {
        let (table, now, d) = (&self.table, self.now(), self.dialect);
        let (expiry, ttl) = self.expiry(4, ttl_ms);
        let skip_locked = d.sql().claim_lock();
        let (p1, p2, p3) = (d.param(1), d.param(2), d.param(3));
        Statement::new(
            format!(
                "UPDATE {table} SET holder = {p3}, expires_at = {expiry} \
                 WHERE namespace = {p1} AND node = ( \
                     SELECT node FROM {table} \
                     WHERE namespace = {p1} AND node < {p2} AND expires_at <= {now}{only} \
                     ORDER BY node LIMIT 1{skip_locked}) \
                 RETURNING node, last_timestamp"
            ),
            vec![
                Value::Text(namespace),
                Value::BigInt(node_i64(capacity)),
                Value::Text(holder),
                ttl,
            ],
        )
    }

    /// MySQL/MariaDB, first statement of a claim's `READ COMMITTED` transaction: locks the
    /// lowest expired node ID below `capacity` (`SKIP LOCKED` when the server has it, see
    /// [`mysql_has_skip_locked`](crate::mysql_has_skip_locked)), returning `node,
    /// last_timestamp`, or no row.
    pub(crate) fn lock_expired<'a>(
        &self,
        namespace: &'a str,
        capacity: u64,
        skip_locked: bool,
    ) -> Statement<'a> {
        self.lock(namespace, capacity, skip_locked, "")
    }

    /// [`lock_expired`](Self::lock_expired) limited to rows given back with
    /// [`release`](Self::release), as [`take_released`](Self::take_released).
    pub(crate) fn lock_released<'a>(
        &self,
        namespace: &'a str,
        capacity: u64,
        skip_locked: bool,
    ) -> Statement<'a> {
        self.lock(namespace, capacity, skip_locked, RELEASED)
    }

    fn lock<'a>(
        &self,
        namespace: &'a str,
        capacity: u64,
        skip_locked: bool,
        only: &str,
    ) -> Statement<'a> {
        let skip = if skip_locked { " SKIP LOCKED" } else { "" };
        Statement::new(
            format!(
                "SELECT node, last_timestamp FROM {} \
                 WHERE namespace = ? AND node < ? AND expires_at <= {}{only} \
                 ORDER BY node LIMIT 1 FOR UPDATE{skip}",
                self.table,
                self.now()
            ),
            vec![Value::Text(namespace), Value::BigInt(node_i64(capacity))],
        )
    }

    /// MySQL/MariaDB, second statement of a claim: gives the locked `node` to `holder`.
    pub fn assign<'a>(
        &self,
        namespace: &'a str,
        node: i64,
        holder: &'a str,
        ttl_ms: i64,
    ) -> Statement<'a> {
        let (expiry, ttl) = self.expiry(1, ttl_ms);
        Statement::new(
            format!(
                "UPDATE {} SET holder = ?, expires_at = {expiry} WHERE namespace = ? AND node = ?",
                self.table
            ),
            vec![
                Value::Text(holder),
                ttl,
                Value::Text(namespace),
                Value::BigInt(node),
            ],
        )
    }

    /// The first node ID below `capacity` with no row yet (rows are created in order), as
    /// column `value`.
    pub(crate) fn next_missing<'a>(&self, namespace: &'a str, capacity: u64) -> Statement<'a> {
        let d = self.dialect;
        let max = d.sql().next_node();
        Statement::new(
            format!(
                "SELECT {max} AS value FROM {} WHERE namespace = {} AND node < {}",
                self.table,
                d.param(1),
                d.param(2)
            ),
            vec![Value::Text(namespace), Value::BigInt(node_i64(capacity))],
        )
    }

    /// How many node IDs below `capacity` are expired, locked or not, as column `value`: a
    /// claim that found none it could lock tells "full" from "held for a moment" with it.
    pub(crate) fn count_expired<'a>(&self, namespace: &'a str, capacity: u64) -> Statement<'a> {
        let d = self.dialect;
        Statement::new(
            format!(
                "SELECT COUNT(*) AS value FROM {} \
                 WHERE namespace = {} AND node < {} AND expires_at <= {}",
                self.table,
                d.param(1),
                d.param(2),
                self.now()
            ),
            vec![Value::Text(namespace), Value::BigInt(node_i64(capacity))],
        )
    }

    /// Creates the free rows `nodes` of `namespace`, leaving existing ones as they are.
    pub(crate) fn insert_rows<'a>(&self, namespace: &'a str, nodes: Range<u64>) -> Statement<'a> {
        self.dialect
            .sql()
            .insert_free_rows(&self.table, namespace, nodes)
    }

    /// Extends `holder`'s lease of `node` and keeps the larger last timestamp; one row
    /// affected when `holder` still holds it. (MySQL connections must report found rows, not
    /// changed ones: sqlx and diesel both do.)
    pub fn renew<'a>(
        &self,
        namespace: &'a str,
        node: u64,
        holder: &'a str,
        ttl_ms: i64,
        last_timestamp_ms: Option<i64>,
    ) -> Statement<'a> {
        let d = self.dialect;
        let (expiry, ttl) = self.expiry(1, ttl_ms);
        let last = Value::NullableBigInt(last_timestamp_ms);
        // The larger of the stored and the new bound, whichever is set (bound once or twice).
        let (greatest, binds) = d.sql().greatest_not_null("last_timestamp", 2);
        let mut params = vec![ttl];
        params.extend(std::iter::repeat_n(last, binds));
        self.update_held(
            &format!("expires_at = {expiry}, last_timestamp = {greatest}"),
            params,
            (namespace, node, holder),
            "",
        )
    }

    /// Gives `node` back: expires it now, clears its holder (so a late renewal finds nothing
    /// to renew) and stores the exact last timestamp.
    pub fn release<'a>(
        &self,
        namespace: &'a str,
        node: u64,
        holder: &'a str,
        last_timestamp_ms: Option<i64>,
    ) -> Statement<'a> {
        let least = self.dialect.sql().least();
        self.update_held(
            &format!(
                "holder = NULL, expires_at = {least}(expires_at, {}), last_timestamp = {}",
                self.now(),
                self.dialect.param(1)
            ),
            vec![Value::NullableBigInt(last_timestamp_ms)],
            (namespace, node, holder),
            "",
        )
    }

    /// An operator's free of an expired lease: replaces `holder` of `node` with the tombstone
    /// [`FREED_HOLDER`] if it still holds it and its lease has expired, keeping the last
    /// timestamp its last renewal stored (an upper bound on every tick it could issue). The
    /// row is not like a released one (`holder IS NULL`): the old holder's renewals no longer
    /// match it (a holder a restored table showed as expired may still be running: it
    /// fences), and the next claim takes it as an expired lease, a takeover that is not exact.
    /// One row affected when freed.
    pub(crate) fn free_expired<'a>(
        &self,
        namespace: &'a str,
        node: u64,
        holder: &'a str,
    ) -> Statement<'a> {
        self.update_held(
            &format!("holder = {}", self.dialect.param(1)),
            vec![Value::Text(FREED_HOLDER)],
            (namespace, node, holder),
            &format!(" AND expires_at <= {}", self.now()),
        )
    }

    /// An operator's forced free of a live lease: ends `holder`'s lease of `node` now,
    /// keeping the holder's name, so the next claim treats the row as a lease taken over
    /// after expiry (a takeover, not exact: it issues no ID timestamped before its claim
    /// time, plus one TTL and its clock allowance) and the old holder's next renewal fails
    /// once another process holds the node ID. One row affected when `holder` still held it.
    pub(crate) fn expire_now<'a>(
        &self,
        namespace: &'a str,
        node: u64,
        holder: &'a str,
    ) -> Statement<'a> {
        let least = self.dialect.sql().least();
        self.update_held(
            &format!("expires_at = {least}(expires_at, {})", self.now()),
            Vec::new(),
            (namespace, node, holder),
            "",
        )
    }

    /// `UPDATE <table> SET <set> WHERE <the row> <and>`, the row being `node`'s in `namespace`
    /// while `holder` holds it. `set` (and `and`) number their parameters from 1: `params`
    /// holds theirs, the row's three follow.
    fn update_held<'a>(
        &self,
        set: &str,
        mut params: Vec<Value<'a>>,
        (namespace, node, holder): (&'a str, u64, &'a str),
        and: &str,
    ) -> Statement<'a> {
        let d = self.dialect;
        let k = params.len();
        params.extend([
            Value::Text(namespace),
            Value::BigInt(node_i64(node)),
            Value::Text(holder),
        ]);
        Statement::new(
            format!(
                "UPDATE {} SET {set} WHERE namespace = {} AND node = {} AND holder = {}{and}",
                self.table,
                d.param(k + 1),
                d.param(k + 2),
                d.param(k + 3)
            ),
            params,
        )
    }

    /// The database's clock now, in Unix ms, as column `value` (what `expires_at_ms` in
    /// [`rows`](Self::rows) is measured on).
    pub fn now_ms(&self) -> Statement<'static> {
        let now = self.dialect.sql().epoch_ms(self.now());
        Statement::new(format!("SELECT {now} AS value"), Vec::new())
    }

    /// The row of `node` in `namespace`, as [`rows`](Self::rows) gives it (no row when the
    /// node ID was never claimed).
    pub fn row<'a>(&self, namespace: &'a str, node: u64) -> Statement<'a> {
        self.select_rows(namespace, Some(node))
    }

    /// The namespace of the row that records `namespace`'s layout: a row of its own (node 0,
    /// the layout in `holder`), which no claim of `namespace` reads, so the table needs no
    /// new column.
    ///
    /// ```
    /// assert_eq!(idgen_sql::LeaseSql::layout_namespace("default"), "idgen:layout:default");
    /// ```
    pub fn layout_namespace(namespace: &str) -> String {
        format!("idgen:layout:{namespace}")
    }

    /// Records `layout` in the row of `layout_namespace` ([`layout_namespace`](Self::layout_namespace))
    /// unless that row exists: an insert that does nothing on a conflict, so of two processes
    /// only the first records. Then read it with [`recorded_layout`](Self::recorded_layout).
    pub fn record_layout<'a>(&self, layout_namespace: &'a str, layout: &'a str) -> Statement<'a> {
        /// The record never expires: about 100 years.
        const FOREVER_MS: i64 = 100 * 36_525 * 864_000;
        let d = self.dialect;
        let (expiry, forever) = self.expiry(3, FOREVER_MS);
        let (insert, conflict) = d.sql().insert_or_ignore();
        Statement::new(
            format!(
                "{insert} INTO {} (namespace, node, holder, expires_at, last_timestamp) \
                 VALUES ({}, 0, {}, {expiry}, NULL){conflict}",
                self.table,
                d.param(1),
                d.param(2)
            ),
            vec![Value::Text(layout_namespace), Value::Text(layout), forever],
        )
    }

    /// The layout recorded in the row of `layout_namespace`, as column `value`.
    pub fn recorded_layout<'a>(&self, layout_namespace: &'a str) -> Statement<'a> {
        Statement::new(
            format!(
                "SELECT holder AS value FROM {} WHERE namespace = {} AND node = 0",
                self.table,
                self.dialect.param(1)
            ),
            vec![Value::Text(layout_namespace)],
        )
    }

    /// The rows of `namespace` by node ID: `node, holder, expires_at_ms` (Unix ms on the
    /// database's clock) and `last_timestamp`.
    pub fn rows<'a>(&self, namespace: &'a str) -> Statement<'a> {
        self.select_rows(namespace, None)
    }

    fn select_rows<'a>(&self, namespace: &'a str, node: Option<u64>) -> Statement<'a> {
        let d = self.dialect;
        let expires_at_ms = d.sql().epoch_ms("expires_at");
        let mut params = vec![Value::Text(namespace)];
        let only = match node {
            Some(node) => {
                params.push(Value::BigInt(node_i64(node)));
                format!(" AND node = {}", d.param(2))
            }
            None => String::new(),
        };
        Statement::new(
            format!(
                "SELECT node, holder, {expires_at_ms} AS expires_at_ms, last_timestamp \
                 FROM {} WHERE namespace = {}{only} ORDER BY node",
                self.table,
                d.param(1)
            ),
            params,
        )
    }
}

/// The condition of a row given back with `release`: `release` clears the holder and stores
/// the exact last timestamp; a new row has neither, an expired lease still names its holder,
/// and one an operator freed names [`FREED_HOLDER`].
const RELEASED: &str = " AND holder IS NULL AND last_timestamp IS NOT NULL";

/// A lease store's calls work on the lease table.
impl CallTarget for LeaseSql {
    fn describe(&self) -> String {
        format!("lease table {}", self.table())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn mysql_inserts_rows_once_with_namespace_and_node_per_row() {
        let sql = LeaseSql::new(Dialect::MySql, "ops.leases").unwrap();
        let insert = sql.insert_rows("orders", 0..2);
        assert!(insert.sql.ends_with("ON DUPLICATE KEY UPDATE node = node"));
        assert_eq!(insert.params.len(), 4);
    }

    #[test]
    fn the_take_expired_statement_reads_as_it_did_in_its_docs() {
        let claim = LeaseSql::new(Dialect::Postgres, "leases")
            .unwrap()
            .take_expired("orders", 1024, "web-1", 30_000);
        assert!(claim.sql.contains("FOR UPDATE SKIP LOCKED"));
        assert!(claim.sql.ends_with("RETURNING node, last_timestamp"));
    }

    #[test]
    fn the_take_released_statement_reads_as_it_did_in_its_docs() {
        let claim = LeaseSql::new(Dialect::Sqlite, "leases")
            .unwrap()
            .take_released("orders", 1024, "web-1", 30_000);
        assert!(
            claim
                .sql
                .contains("holder IS NULL AND last_timestamp IS NOT NULL")
        );
    }

    #[test]
    fn the_free_expired_statement_reads_as_it_did_in_its_docs() {
        let free = LeaseSql::new(Dialect::Postgres, "leases")
            .unwrap()
            .free_expired("orders", 3, "web-1");
        assert!(free.sql.starts_with(r#"UPDATE "leases" SET holder = $1 "#));
        assert!(free.sql.contains("holder = $4 AND expires_at <= now()"));
        assert_eq!(free.params[0], Value::Text(FREED_HOLDER));
    }

    fn placeholders(sql: &str, d: Dialect) -> usize {
        match d {
            Dialect::MySql => sql.matches('?').count(),
            _ => (1..=9).filter(|n| sql.contains(&d.param(*n))).count(),
        }
    }

    /// Every statement binds exactly as many values as it has placeholders.
    #[test]
    fn every_statement_binds_one_value_per_placeholder() {
        for d in [Dialect::Postgres, Dialect::MySql, Dialect::Sqlite] {
            let sql = LeaseSql::new(d, "t").unwrap();
            let mut statements = vec![
                sql.next_missing("n", 8),
                sql.count_expired("n", 8),
                sql.insert_rows("n", 0..3),
                sql.renew("n", 1, "h", 10, Some(5)),
                sql.release("n", 1, "h", None),
                sql.rows("n"),
                sql.row("n", 2),
                sql.free_expired("n", 1, "h"),
                sql.expire_now("n", 1, "h"),
                sql.now_ms(),
            ];
            if d == Dialect::MySql {
                statements.push(sql.lock_expired("n", 8, true));
                statements.push(sql.lock_released("n", 8, true));
                statements.push(sql.assign("n", 1, "h", 10));
            } else {
                statements.push(sql.take_expired("n", 8, "h", 10));
                statements.push(sql.take_released("n", 8, "h", 10));
            }
            for s in statements {
                assert_eq!(placeholders(&s.sql, d), s.params.len(), "{d}: {}", s.sql);
            }
        }
    }

    #[test]
    fn the_mysql_ttl_is_bound_in_microseconds_and_postgres_in_milliseconds() {
        let my = LeaseSql::new(Dialect::MySql, "t").unwrap();
        assert_eq!(
            my.renew("n", 1, "h", 30, None).params[0],
            Value::BigInt(30_000)
        );
        let pg = LeaseSql::new(Dialect::Postgres, "t").unwrap();
        let renew = pg.renew("n", 1, "h", 30, Some(7));
        assert_eq!(renew.params[0], Value::Double(30.0));
        assert!(renew.sql.contains("GREATEST(last_timestamp, $2)"));
        assert!(
            renew
                .sql
                .contains("namespace = $3 AND node = $4 AND holder = $5")
        );
    }
}
