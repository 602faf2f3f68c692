//! [`Database`]: the fresh database of one case, and the plain SQL the suites check it with.

use std::net::SocketAddr;

use sqlx::pool::PoolConnection;
use sqlx::{AssertSqlSafe, Connection, Executor, MySql, Postgres, Sqlite};

use idgen_testdb::{TcpProxy, TestDb};

use super::lease_row::LeaseRow;

/// A database the suites run on.
///
/// ```
/// use idgen_testkit::conformance::DbKind;
/// assert_eq!(DbKind::MySql.name(), "MySQL/MariaDB");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbKind {
    /// PostgreSQL.
    Postgres,
    /// MySQL or MariaDB.
    MySql,
    /// SQLite (a file).
    Sqlite,
    /// etcd (a key prefix per case; testkit feature `etcd`).
    Etcd,
    /// Redis (a key prefix per case; testkit feature `redis`).
    Redis,
}

impl DbKind {
    /// The database's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            DbKind::Postgres => "PostgreSQL",
            DbKind::MySql => "MySQL/MariaDB",
            DbKind::Sqlite => "SQLite",
            DbKind::Etcd => "etcd",
            DbKind::Redis => "Redis",
        }
    }

    /// Whether it speaks SQL (the cases about tables, schemas and transactions run only there).
    ///
    /// ```
    /// use idgen_testkit::conformance::DbKind;
    /// assert!(DbKind::Sqlite.is_sql() && !DbKind::Redis.is_sql());
    /// ```
    pub fn is_sql(self) -> bool {
        !matches!(self, DbKind::Etcd | DbKind::Redis)
    }

    /// Whether its lease store reports the server's clock (`LeaseStore::clock_ms`), so that a
    /// lease checks a holder's clock against it: all but etcd, which puts no wall-clock time
    /// in its answers.
    ///
    /// ```
    /// use idgen_testkit::conformance::DbKind;
    /// assert!(DbKind::Redis.reports_clock() && !DbKind::Etcd.reports_clock());
    /// ```
    pub fn reports_clock(self) -> bool {
        !matches!(self, DbKind::Etcd)
    }

    /// How the database quotes an identifier part.
    pub(crate) fn quote(self) -> char {
        match self {
            DbKind::MySql => '`',
            DbKind::Postgres | DbKind::Sqlite | DbKind::Etcd | DbKind::Redis => '"',
        }
    }
}

/// A fresh database for one case (dropped with it), from idgen-testkit's discovery order, and
/// plain SQL on it that does not go through the store under test.
///
/// On MySQL/MariaDB every helper switches its connection to autocommit first, so it reads what
/// is committed even on a server whose sessions start with autocommit off.
///
/// ```
/// # idgen_testkit::conformance::run(async {
/// use idgen_testkit::conformance::{Database, DbKind};
/// let db = Database::fresh(DbKind::Sqlite).await;
/// db.execute("CREATE TABLE t (x INTEGER)").await;
/// db.execute("INSERT INTO t VALUES (7)").await;
/// assert_eq!(db.scalar("SELECT x FROM t").await, Some(7));
/// # });
/// ```
pub struct Database {
    inner: Inner,
}

enum Inner {
    Postgres(TestDb<Postgres>),
    MySql(TestDb<MySql>),
    Sqlite(TestDb<Sqlite>),
    /// etcd or Redis: a key prefix of its own.
    KeyValue(idgen_testdb::KeyPrefix),
}

impl Database {
    /// A new, empty database of `kind`.
    pub async fn fresh(kind: DbKind) -> Database {
        let inner = match kind {
            DbKind::Postgres => Inner::Postgres(
                idgen_testdb::postgres()
                    .await
                    .expect("a PostgreSQL database"),
            ),
            DbKind::MySql => Inner::MySql(
                idgen_testdb::mysql()
                    .await
                    .expect("a MySQL/MariaDB database"),
            ),
            DbKind::Sqlite => {
                Inner::Sqlite(idgen_testdb::sqlite().await.expect("an SQLite database"))
            }
            DbKind::Etcd => Inner::KeyValue(key_value_prefix(kind).await),
            DbKind::Redis => Inner::KeyValue(key_value_prefix(kind).await),
        };
        Database { inner }
    }

    /// A new, empty MariaDB database on a server whose sessions start with autocommit off
    /// ([`local_server::mysql_autocommit_off`](idgen_testdb::local_server::mysql_autocommit_off)).
    pub async fn fresh_with_autocommit_off() -> Database {
        let db = idgen_testdb::local_server::mysql_autocommit_off()
            .await
            .expect("a local MariaDB server started with --autocommit=0");
        Database {
            inner: Inner::MySql(db),
        }
    }

    /// The database's kind.
    pub fn kind(&self) -> DbKind {
        match &self.inner {
            Inner::Postgres(_) => DbKind::Postgres,
            Inner::MySql(_) => DbKind::MySql,
            Inner::Sqlite(_) => DbKind::Sqlite,
            Inner::KeyValue(keys) => match keys.kind() {
                idgen_testdb::ServerKind::Etcd => DbKind::Etcd,
                _ => DbKind::Redis,
            },
        }
    }

    /// Its URL (`postgres://…`, `mysql://…`, `sqlite://<path>?mode=rwc`; on etcd and Redis
    /// `<server>#<key prefix>`, see [`KeyPrefix`](idgen_testdb::KeyPrefix)).
    pub fn url(&self) -> &str {
        match &self.inner {
            Inner::Postgres(db) => db.url(),
            Inner::MySql(db) => db.url(),
            Inner::Sqlite(db) => db.url(),
            Inner::KeyValue(keys) => keys.url(),
        }
    }

    /// Its name (the database's, the SQLite file's path, or the key prefix).
    pub fn name(&self) -> &str {
        match &self.inner {
            Inner::Postgres(db) => db.name(),
            Inner::MySql(db) => db.name(),
            Inner::Sqlite(db) => db.name(),
            Inner::KeyValue(keys) => keys.prefix(),
        }
    }

    /// The key prefix, on etcd and Redis.
    pub(crate) fn key_prefix(&self) -> Option<&idgen_testdb::KeyPrefix> {
        match &self.inner {
            Inner::KeyValue(keys) => Some(keys),
            _ => None,
        }
    }

    /// `name` or `schema.name` quoted for this database.
    pub fn quoted(&self, name: &str) -> String {
        let q = self.kind().quote();
        name.split('.')
            .map(|part| format!("{q}{part}{q}"))
            .collect::<Vec<_>>()
            .join(".")
    }

    /// Runs `sql` (one or more statements, no result).
    pub async fn execute(&self, sql: &str) {
        let statement = AssertSqlSafe(sql.to_owned());
        let done = match &self.inner {
            Inner::Postgres(db) => db.pool().execute(statement).await.map(drop),
            Inner::MySql(db) => mysql_autocommit(db)
                .await
                .execute(statement)
                .await
                .map(drop),
            Inner::Sqlite(db) => db.pool().execute(statement).await.map(drop),
            Inner::KeyValue(_) => panic!("SQL on {}: {sql}", self.kind().name()),
        };
        done.unwrap_or_else(|e| panic!("{e}: {sql}"));
    }

    /// The first column of the first row of `sql` as a `BIGINT`, `None` without a row.
    pub async fn scalar(&self, sql: &str) -> Option<i64> {
        self.try_scalar(sql)
            .await
            .unwrap_or_else(|e| panic!("{e}: {sql}"))
    }

    /// [`scalar`](Self::scalar), with the error.
    pub async fn try_scalar(&self, sql: &str) -> Result<Option<i64>, sqlx::Error> {
        let sql = AssertSqlSafe(sql.to_owned());
        match &self.inner {
            Inner::Postgres(db) => sqlx::query_scalar(sql).fetch_optional(db.pool()).await,
            Inner::MySql(db) => {
                let mut conn = mysql_autocommit(db).await;
                sqlx::query_scalar(sql).fetch_optional(&mut *conn).await
            }
            Inner::Sqlite(db) => sqlx::query_scalar(sql).fetch_optional(db.pool()).await,
            Inner::KeyValue(_) => panic!("SQL on {}", self.kind().name()),
        }
    }

    /// Runs `first`, then returns the scalar of `then`, both on one connection (for
    /// per-connection values such as MySQL's `LAST_INSERT_ID()`).
    pub async fn scalar_after(&self, first: &str, then: &str) -> Option<i64> {
        let (first, then) = (
            AssertSqlSafe(first.to_owned()),
            AssertSqlSafe(then.to_owned()),
        );
        let done = match &self.inner {
            Inner::Postgres(db) => {
                let mut conn = db.pool().acquire().await.expect("a connection");
                conn.execute(first).await.expect("the first statement");
                sqlx::query_scalar(then).fetch_optional(&mut *conn).await
            }
            Inner::MySql(db) => {
                let mut conn = mysql_autocommit(db).await;
                conn.execute(first).await.expect("the first statement");
                sqlx::query_scalar(then).fetch_optional(&mut *conn).await
            }
            Inner::Sqlite(db) => {
                let mut conn = db.pool().acquire().await.expect("a connection");
                conn.execute(first).await.expect("the first statement");
                sqlx::query_scalar(then).fetch_optional(&mut *conn).await
            }
            Inner::KeyValue(_) => panic!("SQL on {}", self.kind().name()),
        };
        done.expect("the second statement")
    }

    /// A transaction of another client, open (it has read a row) until
    /// [`OpenTransaction::rollback`].
    pub async fn begin(&self) -> OpenTransaction {
        let begin = |kind: DbKind| match kind {
            DbKind::Sqlite => "BEGIN",
            _ => "START TRANSACTION",
        };
        match &self.inner {
            Inner::Postgres(db) => {
                let mut conn = db.pool().acquire().await.expect("a connection");
                conn.execute(begin(DbKind::Postgres)).await.expect("BEGIN");
                conn.execute("SELECT 1").await.expect("SELECT 1");
                OpenTransaction::Postgres(conn)
            }
            Inner::MySql(db) => {
                let mut conn = mysql_autocommit(db).await;
                conn.execute(begin(DbKind::MySql)).await.expect("BEGIN");
                conn.execute("SELECT 1").await.expect("SELECT 1");
                OpenTransaction::MySql(conn)
            }
            Inner::Sqlite(db) => {
                let mut conn = db.pool().acquire().await.expect("a connection");
                conn.execute(begin(DbKind::Sqlite)).await.expect("BEGIN");
                conn.execute("SELECT 1").await.expect("SELECT 1");
                OpenTransaction::Sqlite(conn)
            }
            Inner::KeyValue(_) => panic!("no transactions on {}", self.kind().name()),
        }
    }

    /// The server's version string (`SELECT VERSION()`; SQLite's `sqlite_version()`).
    pub async fn version(&self) -> String {
        let sql = match self.kind() {
            DbKind::Sqlite => "SELECT sqlite_version()",
            _ => "SELECT VERSION()",
        };
        match &self.inner {
            Inner::Postgres(db) => sqlx::query_scalar(sql).fetch_one(db.pool()).await,
            Inner::MySql(db) => sqlx::query_scalar(sql).fetch_one(db.pool()).await,
            Inner::Sqlite(db) => sqlx::query_scalar(sql).fetch_one(db.pool()).await,
            Inner::KeyValue(_) => panic!("SQL on {}", self.kind().name()),
        }
        .expect("the server's version")
    }

    /// The rows of `namespace` in the lease table `table` (unquoted `name` or `schema.name`),
    /// by node ID.
    pub async fn lease_rows(&self, table: &str, namespace: &str) -> Vec<LeaseRow> {
        if let Some(keys) = self.key_prefix() {
            return super::key_value::lease_rows(keys, table, namespace).await;
        }
        let table = self.quoted(table);
        let (expires_ms, param) = match self.kind() {
            DbKind::Postgres => ("(EXTRACT(EPOCH FROM expires_at) * 1000)::bigint", "$1"),
            DbKind::MySql => (
                "CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', expires_at) DIV 1000 AS SIGNED)",
                "?",
            ),
            DbKind::Sqlite => ("expires_at", "?1"),
            DbKind::Etcd | DbKind::Redis => unreachable!("read above"),
        };
        let sql = AssertSqlSafe(format!(
            "SELECT node, holder, {expires_ms}, last_timestamp FROM {table} \
             WHERE namespace = {param} ORDER BY node"
        ));
        type Raw = (i64, Option<String>, i64, Option<i64>);
        let rows: Vec<Raw> = match &self.inner {
            Inner::Postgres(db) => {
                let query = sqlx::query_as(sql).bind(namespace);
                query.fetch_all(db.pool()).await
            }
            Inner::MySql(db) => {
                let query = sqlx::query_as(sql).bind(namespace);
                query.fetch_all(&mut *mysql_autocommit(db).await).await
            }
            Inner::Sqlite(db) => {
                let query = sqlx::query_as(sql).bind(namespace);
                query.fetch_all(db.pool()).await
            }
            Inner::KeyValue(_) => unreachable!("read above"),
        }
        .expect("read the lease table");
        rows.into_iter()
            .map(|(node, holder, expires_at_ms, last)| LeaseRow {
                node: u64::try_from(node).expect("a node ID >= 0"),
                holder,
                expires_at_ms,
                last_timestamp_ms: last,
            })
            .collect()
    }

    /// Marks the lease rows `nodes` of `namespace` held by `someone` until 2100 (plain SQL,
    /// as other processes' claims would leave them).
    pub async fn hold_lease_rows(&self, table: &str, namespace: &str, nodes: std::ops::Range<u64>) {
        if let Some(keys) = self.key_prefix() {
            return super::key_value::hold(keys, table, namespace, nodes).await;
        }
        let until = match self.kind() {
            DbKind::Postgres => "'2100-01-01 00:00:00+00'",
            DbKind::MySql => "'2100-01-01 00:00:00'",
            DbKind::Sqlite => "4102444800000",
            DbKind::Etcd | DbKind::Redis => unreachable!("held above"),
        };
        let sql = format!(
            "UPDATE {} SET holder = 'someone', expires_at = {until} \
             WHERE namespace = '{namespace}' AND node >= {} AND node < {}",
            self.quoted(table),
            nodes.start,
            nodes.end
        );
        self.execute(&sql).await;
    }

    /// Deletes the lease rows (keys) of `namespace` in `table`, as a store that forgot them
    /// would have none: a database back empty, Redis restarted without persistence.
    pub async fn forget_lease_rows(&self, table: &str, namespace: &str) {
        if let Some(keys) = self.key_prefix() {
            return super::key_value::forget(keys, table, namespace).await;
        }
        let sql = format!(
            "DELETE FROM {} WHERE namespace = '{namespace}'",
            self.quoted(table)
        );
        self.execute(&sql).await;
    }

    /// Drops the lease table `table`, as an operator's `DROP TABLE` would; on etcd and Redis
    /// deletes every lease key of the prefix instead (the store back empty).
    pub async fn drop_lease_table(&self, table: &str) {
        if let Some(keys) = self.key_prefix() {
            return super::key_value::forget(keys, table, "default").await;
        }
        self.execute(&format!("DROP TABLE {}", self.quoted(table)))
            .await;
    }

    /// A URL that reaches this server through a [`TcpProxy`] the returned [`Outage`] can cut;
    /// for SQLite the same URL, and an outage that holds the file's write lock.
    pub async fn reachable_until_cut(&self) -> (String, Outage) {
        let url = self.url();
        if self.kind() == DbKind::Sqlite {
            let lock = Outage::Lock {
                url: url.to_owned(),
                holder: None,
            };
            return (url.to_owned(), lock);
        }
        let (start, end) = host_port_span(url);
        let upstream: SocketAddr = tokio::net::lookup_host(&url[start..end])
            .await
            .expect("the server's address")
            .next()
            .expect("one address");
        let proxy = TcpProxy::start(upstream).await.expect("a TCP proxy");
        let mut proxied = format!("{}{}{}", &url[..start], proxy.addr(), &url[end..]);
        if self.kind() == DbKind::MySql {
            // mysql_async (under diesel-async) asks the server for its Unix socket and, when
            // that is reachable (a server on this host: the url and local-binaries routes),
            // reconnects through it, past the proxy: the cut would never reach the store. The
            // other drivers ignore the parameter, and none of them switches transport.
            let joiner = if proxied.contains('?') { '&' } else { '?' };
            proxied.push(joiner);
            proxied.push_str("prefer_socket=false");
        }
        (proxied, Outage::Proxy(proxy))
    }
}

/// A key prefix on the server of `kind` (etcd or Redis), if the kit was built for it.
async fn key_value_prefix(kind: DbKind) -> idgen_testdb::KeyPrefix {
    match kind {
        #[cfg(feature = "etcd")]
        DbKind::Etcd => idgen_testdb::etcd().await.expect("an etcd server"),
        #[cfg(feature = "redis")]
        DbKind::Redis => idgen_testdb::redis().await.expect("a Redis server"),
        other => panic!(
            "idgen-testkit was built without its `{}` feature",
            other.name().to_lowercase()
        ),
    }
}

/// A connection of `db`'s pool in autocommit mode (ends any transaction left open on it).
async fn mysql_autocommit(db: &TestDb<MySql>) -> PoolConnection<MySql> {
    let mut conn = db.pool().acquire().await.expect("a MySQL connection");
    conn.execute("SET autocommit = 1")
        .await
        .expect("SET autocommit = 1");
    conn
}

/// Where `host:port` is in `scheme://user@host:port/db` (or `http://host:port#prefix`).
fn host_port_span(url: &str) -> (usize, usize) {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let authority_end = url[after_scheme..]
        .find(['/', '#', ','])
        .map_or(url.len(), |slash| after_scheme + slash);
    let start = url[after_scheme..authority_end]
        .rfind('@')
        .map_or(after_scheme, |at| after_scheme + at + 1);
    (start, authority_end)
}

/// A transaction another client holds open, from [`Database::begin`].
pub enum OpenTransaction {
    /// On PostgreSQL.
    Postgres(PoolConnection<Postgres>),
    /// On MySQL/MariaDB.
    MySql(PoolConnection<MySql>),
    /// On SQLite.
    Sqlite(PoolConnection<Sqlite>),
}

impl OpenTransaction {
    /// Runs `sql` (one or more statements, no result) inside the transaction.
    pub async fn execute(&mut self, sql: &str) {
        let statement = AssertSqlSafe(sql.to_owned());
        match self {
            OpenTransaction::Postgres(conn) => conn.execute(statement).await.map(drop),
            OpenTransaction::MySql(conn) => conn.execute(statement).await.map(drop),
            OpenTransaction::Sqlite(conn) => conn.execute(statement).await.map(drop),
        }
        .unwrap_or_else(|e| panic!("{e}: {sql}"));
    }

    /// Rolls the transaction back.
    pub async fn rollback(self) {
        match self {
            OpenTransaction::Postgres(mut conn) => conn.execute("ROLLBACK").await.map(drop),
            OpenTransaction::MySql(mut conn) => conn.execute("ROLLBACK").await.map(drop),
            OpenTransaction::Sqlite(mut conn) => conn.execute("ROLLBACK").await.map(drop),
        }
        .expect("ROLLBACK");
    }
}

/// Makes a database unreachable for a store, and reachable again.
pub enum Outage {
    /// The store connects through this proxy.
    Proxy(TcpProxy),
    /// SQLite: another connection holds the file's write lock, so writes wait and time out.
    Lock {
        /// The database file's URL.
        url: String,
        /// The connection in `BEGIN EXCLUSIVE` while cut.
        holder: Option<sqlx::SqliteConnection>,
    },
}

impl Outage {
    /// Cuts: open connections are dropped (or writes block), new ones fail.
    pub async fn cut(&mut self) {
        match self {
            Outage::Proxy(proxy) => proxy.cut(),
            Outage::Lock { url, holder } => {
                let mut conn = sqlx::SqliteConnection::connect(url)
                    .await
                    .expect("open the SQLite file");
                conn.execute("BEGIN EXCLUSIVE")
                    .await
                    .expect("take the write lock");
                *holder = Some(conn);
            }
        }
    }

    /// Restores.
    pub async fn restore(&mut self) {
        match self {
            Outage::Proxy(proxy) => proxy.restore(),
            Outage::Lock { holder, .. } => {
                if let Some(mut conn) = holder.take() {
                    conn.execute("ROLLBACK")
                        .await
                        .expect("give the write lock back");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::host_port_span;

    #[test]
    fn finds_the_server_address_in_a_url() {
        let url = "postgres://postgres@127.0.0.1:5432/idgen_test_1";
        let (start, end) = host_port_span(url);
        assert_eq!(&url[start..end], "127.0.0.1:5432");
        let url = "mysql://root:p@ss@localhost:3306/x?ssl-mode=disabled";
        let (start, end) = host_port_span(url);
        assert_eq!(&url[start..end], "localhost:3306");
        let url = "http://127.0.0.1:2379#t0123456789ab_";
        let (start, end) = host_port_span(url);
        assert_eq!(&url[start..end], "127.0.0.1:2379");
    }
}
