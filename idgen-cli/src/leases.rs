//! The lease table of a database, for `idgen leases` and the web operator view: the store
//! chosen by the URL's scheme, and its rows as operators read them; for `idgen leases`, also
//! the leases of etcd (`--etcd`, feature `leases-etcd`) and Redis (`--redis`, feature
//! `leases-redis`).

use idgen_sql::{CounterKind, CounterSql, Dialect, LeaseRow};
use idgen_sqlx::SqlxDatabase;
use idgen_sqlx::lease::{
    FreeRequest, Freed, HeldLease, LeaseOperator, MySqlLeaseStore, NotFreed, PgLeaseStore,
    SqliteLeaseStore,
};
use serde::Serialize;
use sqlx::Pool;

use crate::error::CliError;
use crate::time_arg;

/// Where the lease table is.
#[derive(Clone, Debug, clap::Args)]
pub(crate) struct StoreArgs {
    /// The database with the lease table: postgres://…, mysql://… (MySQL or MariaDB) or
    /// sqlite:PATH
    #[arg(long, value_name = "URL", env = "IDGEN_DATABASE_URL")]
    pub(crate) database_url: Option<String>,

    /// The lease namespace (WorkerLease's `namespace` option)
    #[arg(long, value_name = "NAME", default_value = "default")]
    pub(crate) namespace: String,

    /// The lease table (`name` or `schema.name`); with --etcd or --redis, the key prefix
    #[arg(long, value_name = "TABLE", default_value = idgen_sql::DEFAULT_LEASE_TABLE)]
    pub(crate) lease_table: String,
}

/// A lease store on one of the three databases.
#[derive(Clone, Debug)]
pub(crate) enum Store {
    Postgres(PgLeaseStore),
    MySql(MySqlLeaseStore),
    Sqlite(SqliteLeaseStore),
}

/// Runs `$call` on whichever store it is.
macro_rules! on_store {
    ($store:expr, $s:ident => $call:expr) => {
        match $store {
            Store::Postgres($s) => $call,
            Store::MySql($s) => $call,
            Store::Sqlite($s) => $call,
        }
    };
}

impl Store {
    /// Connects to the database of `url` (a small pool: an operator's tool).
    pub(crate) async fn connect(url: &str, table: &str) -> Result<Store, CliError> {
        let connect_error = |e: sqlx::Error| CliError::Connect {
            url: redact(url),
            message: e.to_string(),
        };
        let store = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let pool = sqlx::postgres::PgPoolOptions::new()
                .max_connections(2)
                .connect(url)
                .await
                .map_err(connect_error)?;
            Store::Postgres(PgLeaseStore::with_table(pool, table)?)
        } else if url.starts_with("mysql://") || url.starts_with("mariadb://") {
            let pool = sqlx::mysql::MySqlPoolOptions::new()
                .max_connections(2)
                .connect(url)
                .await
                .map_err(connect_error)?;
            Store::MySql(MySqlLeaseStore::with_table(pool, table)?)
        } else if url.starts_with("sqlite:") {
            let pool = sqlx::sqlite::SqlitePoolOptions::new()
                .max_connections(1)
                .connect(url)
                .await
                .map_err(connect_error)?;
            Store::Sqlite(SqliteLeaseStore::with_table(pool, table)?)
        } else {
            return Err(CliError::Connect {
                url: redact(url),
                message: "the URL must start with postgres://, mysql:// or sqlite:".into(),
            });
        };
        Ok(store)
    }

    /// `PostgreSQL`, `MySQL/MariaDB` or `SQLite`, and the table.
    pub(crate) fn describe(&self) -> String {
        let (db, table) = match self {
            Store::Postgres(s) => ("PostgreSQL", s.table()),
            Store::MySql(s) => ("MySQL/MariaDB", s.table()),
            Store::Sqlite(s) => ("SQLite", s.table()),
        };
        format!("{db}, lease table {}", table.unwrap_or("?"))
    }
}

impl Store {
    /// The hi-lo counter `name` (a sequence, or a row of the counter table `table`): where
    /// its next block starts, or that it is missing.
    pub(crate) async fn counter(&self, name: &str, table: &str) -> Result<Counter, CliError> {
        match self {
            Store::Postgres(s) => {
                let seq = CounterSql::sequence(Dialect::Postgres, name)?;
                read_counter(s.pool(), [seq], name).await
            }
            // MySQL keeps counters in a table; MariaDB in a table or a sequence.
            Store::MySql(s) => {
                let row = CounterSql::table(Dialect::MySql, name, table)?;
                let seq = CounterSql::sequence(Dialect::MySql, name)?;
                read_counter(s.pool(), [row, seq], name).await
            }
            Store::Sqlite(s) => {
                let row = CounterSql::table(Dialect::Sqlite, name, table)?;
                read_counter(s.pool(), [row], name).await
            }
        }
    }
}

/// The first of `candidates` that exists.
async fn read_counter<DB: SqlxDatabase, const N: usize>(
    pool: &Pool<DB>,
    candidates: [CounterSql; N],
    name: &str,
) -> Result<Counter, CliError> {
    let failed = |e: sqlx::Error| CliError::Counter {
        name: name.to_owned(),
        message: e.to_string(),
    };
    for sql in candidates {
        let mut session = DB::session(pool).await.map_err(failed)?;
        if let Some(value) = idgen_sql::read_next_value(&mut session, &sql)
            .await
            .map_err(failed)?
        {
            return Ok(Counter {
                name: name.to_owned(),
                kind: match sql.kind() {
                    CounterKind::Sequence => "sequence",
                    CounterKind::Table => "row of the counter table",
                },
                next_value: Some(value.to_string()),
            });
        }
    }
    Ok(Counter {
        name: name.to_owned(),
        kind: "missing",
        next_value: None,
    })
}

/// A hi-lo counter as operators read it.
#[derive(Debug, Serialize)]
pub(crate) struct Counter {
    pub(crate) name: String,
    /// `sequence`, `row of the counter table`, or `missing`.
    pub(crate) kind: &'static str,
    /// Where its next block starts (a number as text), if it exists.
    pub(crate) next_value: Option<String>,
}

/// The URL without its password.
pub(crate) fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{}{user}:***{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

/// The held leases of a namespace.
#[derive(Debug, Serialize)]
pub(crate) struct LeaseTable {
    /// Whose clock `now_ms` is, for people (`database clock`).
    #[serde(skip)]
    pub(crate) clock: &'static str,
    pub(crate) namespace: String,
    /// The database's clock when they were read, in Unix ms and UTC.
    pub(crate) now_ms: i64,
    pub(crate) now_utc: Option<String>,
    pub(crate) leases: Vec<Lease>,
}

/// One held lease.
#[derive(Debug, Serialize)]
pub(crate) struct Lease {
    pub(crate) node: u64,
    pub(crate) holder: String,
    /// The database-side generator holding it (`public.idgen_next_id, install 1f`), if it is
    /// one: its lease has no expiry (idgen-db-generator's `DATABASE_LEASE_TTL`, 100 years).
    pub(crate) database_generator: Option<String>,
    /// What the text's "expires in" column shows: `12.3 s`, `expired 4.0 s ago`, `expired`,
    /// or `held by the database generator …, no expiry`.
    pub(crate) expires: String,
    /// When the lease ends, on the store's clock (Unix ms), and how long from now; `None` for
    /// an ended lease of a store that keeps no record of when (etcd, Redis), and for the
    /// database generator's, which does not end.
    pub(crate) expires_at_ms: Option<i64>,
    pub(crate) expires_in_ms: Option<i64>,
    /// Whether it is live (not expired).
    pub(crate) live: bool,
    /// The largest timestamp its holder may have issued (stored at each renewal), Unix ms
    /// and UTC.
    pub(crate) last_timestamp_ms: Option<i64>,
    pub(crate) last_timestamp_utc: Option<String>,
}

impl LeaseTable {
    /// The held leases of `namespace` as a store listed them, read at `now_ms` on `clock`.
    fn new(clock: &'static str, namespace: &str, now_ms: i64, held: Vec<HeldLease>) -> LeaseTable {
        LeaseTable {
            clock,
            namespace: namespace.to_owned(),
            now_ms,
            now_utc: time_arg::utc(now_ms),
            leases: held.into_iter().map(|h| Lease::of(h, now_ms)).collect(),
        }
    }
}

impl Lease {
    /// A held lease as a store listed it, read at `now_ms`.
    pub(crate) fn of(held: HeldLease, now_ms: i64) -> Lease {
        let live = held.is_live(now_ms);
        let mut expires_in_ms = held.expires_at_ms.map(|end| end.saturating_sub(now_ms));
        let mut expires_at_ms = held.expires_at_ms;
        let database_generator = database_generator(&held.holder, expires_in_ms);
        if database_generator.is_some() {
            (expires_at_ms, expires_in_ms) = (None, None);
        }
        let expires = match (&database_generator, expires_in_ms) {
            (Some(g), _) => format!("held by the database generator {g}, no expiry"),
            (None, None) => "expired".to_owned(),
            (None, Some(ms)) if live => format!("{:.1} s", ms as f64 / 1000.0),
            (None, Some(ms)) => format!("expired {:.1} s ago", -ms as f64 / 1000.0),
        };
        Lease {
            live,
            node: held.node,
            holder: held.holder,
            database_generator,
            expires,
            expires_at_ms,
            expires_in_ms,
            last_timestamp_ms: held.last_timestamp_ms,
            last_timestamp_utc: held.last_timestamp_ms.and_then(time_arg::utc),
        }
    }

    /// `12.3 s`, `expired 4.0 s ago`, `expired` (a store that keeps no time for it), or
    /// `held by the database generator …, no expiry`.
    pub(crate) fn expires_in(&self) -> String {
        self.expires.clone()
    }
}

/// The database-side generator holding a lease of `holder` that ends `expires_in_ms` from
/// now, as `schema.function, install ID`: a holder label `database:<function>[:<install ID>]`
/// (idgen-db-generator's `HOLDER_PREFIX`) on a lease that ends more than half of
/// `DATABASE_LEASE_TTL` from now (a process that merely named itself `database:…` renews a
/// lease of seconds).
fn database_generator(holder: &str, expires_in_ms: Option<i64>) -> Option<String> {
    use idgen_sqlx::db_generator::{DATABASE_LEASE_TTL, HOLDER_PREFIX};
    let label = holder.strip_prefix(HOLDER_PREFIX)?;
    let half_ttl = i64::try_from(DATABASE_LEASE_TTL.as_millis() / 2).unwrap_or(i64::MAX);
    if expires_in_ms? < half_ttl {
        return None;
    }
    Some(match label.rsplit_once(':') {
        Some((function, install)) => format!("{function}, install {install}"),
        None => label.to_owned(),
    })
}

/// The key-value stores `idgen leases` reads instead of a database: `--etcd` or `--redis`.
#[derive(Clone, Debug, Default, clap::Args)]
pub(crate) struct KvArgs {
    /// etcd's endpoints, comma-separated (http://host:2379,…), instead of --database-url
    /// (--lease-table is the key prefix)
    #[cfg(feature = "leases-etcd")]
    #[arg(long, value_name = "ENDPOINTS")]
    pub(crate) etcd: Option<String>,

    /// A Redis server (redis://host:6379/), instead of --database-url (--lease-table is the
    /// key prefix)
    #[cfg(feature = "leases-redis")]
    #[arg(long, value_name = "URL")]
    #[cfg_attr(feature = "leases-etcd", arg(conflicts_with = "etcd"))]
    pub(crate) redis: Option<String>,
}

/// The lease store `idgen leases` (and `idgen web`'s operator view) works on: a database's
/// lease table, etcd or Redis (with its connection, to read the namespace's layout record).
#[derive(Debug)]
pub(crate) enum AnyStore {
    Sql(Store),
    #[cfg(feature = "leases-etcd")]
    Etcd {
        store: idgen_etcd::lease::EtcdLeaseStore,
        etcd: idgen_etcd::Etcd,
    },
    #[cfg(feature = "leases-redis")]
    Redis {
        store: idgen_redis::lease::RedisLeaseStore,
        client: idgen_redis::redis::Client,
        /// The server's URL without its password.
        url: String,
    },
}

/// Runs `$call` on whichever store it is, as a [`LeaseOperator`].
macro_rules! on_any_store {
    ($store:expr, $s:ident => $call:expr) => {
        match $store {
            AnyStore::Sql(store) => on_store!(store, $s => $call),
            #[cfg(feature = "leases-etcd")]
            AnyStore::Etcd { store: $s, .. } => $call,
            #[cfg(feature = "leases-redis")]
            AnyStore::Redis { store: $s, .. } => $call,
        }
    };
}

/// The held leases of `namespace` on `store` (live or expired), read now on its clock.
async fn lease_table(store: &impl LeaseOperator, namespace: &str) -> Result<LeaseTable, CliError> {
    let held = store.held_leases(namespace).await?;
    let now_ms = store.now_ms().await?;
    Ok(LeaseTable::new(store.clock_name(), namespace, now_ms, held))
}

/// What a free came to, as `idgen leases free` reports it.
#[derive(Debug)]
pub(crate) enum FreeOutcome {
    /// Freed: the message.
    Freed(String),
    /// Refused: the lease is live and `--force` was not given.
    Live(String),
    /// Refused for another reason.
    Refused(String),
}

impl FreeOutcome {
    fn of(outcome: Result<Freed, NotFreed>) -> FreeOutcome {
        match outcome {
            Ok(freed) => FreeOutcome::Freed(freed.to_string()),
            Err(not @ NotFreed::Live { .. }) => FreeOutcome::Live(not.to_string()),
            Err(not) => FreeOutcome::Refused(not.to_string()),
        }
    }
}

impl AnyStore {
    /// The store `args` and `kv` name: exactly one of `--database-url`, `--etcd` and
    /// `--redis` (clap refuses `--etcd` with `--redis`). `--etcd` or `--redis` wins over a
    /// database URL from `IDGEN_DATABASE_URL`, not over one given on the command line.
    pub(crate) async fn connect(args: &StoreArgs, kv: &KvArgs) -> Result<AnyStore, CliError> {
        #[cfg(any(feature = "leases-etcd", feature = "leases-redis"))]
        {
            #[cfg(feature = "leases-etcd")]
            let etcd = kv.etcd.is_some().then_some("--etcd");
            #[cfg(not(feature = "leases-etcd"))]
            let etcd = None;
            #[cfg(feature = "leases-redis")]
            let redis = kv.redis.is_some().then_some("--redis");
            #[cfg(not(feature = "leases-redis"))]
            let redis = None;
            let from_env = std::env::var("IDGEN_DATABASE_URL").ok();
            if let (Some(kv), Some(url)) = (etcd.or(redis), args.database_url.as_deref())
                && from_env.as_deref() != Some(url)
            {
                return Err(CliError::TwoStores("--database-url", kv));
            }
        }
        #[cfg(feature = "leases-etcd")]
        if let Some(endpoints) = kv.etcd.as_deref() {
            let list: Vec<&str> = endpoints
                .split(',')
                .map(str::trim)
                .filter(|e| !e.is_empty())
                .collect();
            if list.is_empty() {
                return Err(CliError::Connect {
                    url: endpoints.to_owned(),
                    message: "--etcd needs at least one endpoint (http://host:2379)".into(),
                });
            }
            let etcd = idgen_etcd::Etcd::new(list);
            let store =
                idgen_etcd::lease::EtcdLeaseStore::new(&etcd).with_prefix(&args.lease_table)?;
            return Ok(AnyStore::Etcd { store, etcd });
        }
        #[cfg(feature = "leases-redis")]
        if let Some(url) = kv.redis.as_deref() {
            let client = idgen_redis::redis::Client::open(url).map_err(|e| CliError::Connect {
                url: redact(url),
                message: e.to_string(),
            })?;
            let store = idgen_redis::lease::RedisLeaseStore::new(client.clone())
                .with_prefix(&args.lease_table)?;
            return Ok(AnyStore::Redis {
                store,
                client,
                url: redact(url),
            });
        }
        let _ = kv;
        let url = args.database_url.as_deref().ok_or(CliError::NoDatabase)?;
        Ok(AnyStore::Sql(Store::connect(url, &args.lease_table).await?))
    }

    /// The held leases of `namespace` (live or expired), read now.
    pub(crate) async fn leases(&self, namespace: &str) -> Result<LeaseTable, CliError> {
        on_any_store!(self, s => lease_table(s, namespace).await)
    }

    /// Frees `req.node` with the rule of every store's [`LeaseOperator::free`].
    pub(crate) async fn free(&self, req: FreeRequest<'_>) -> Result<FreeOutcome, CliError> {
        Ok(FreeOutcome::of(self.free_or_refusal(req).await?))
    }

    /// [`free`](Self::free), with the store's answer as it is (the web page words it).
    pub(crate) async fn free_or_refusal(
        &self,
        req: FreeRequest<'_>,
    ) -> Result<Result<Freed, NotFreed>, CliError> {
        Ok(on_any_store!(self, s => LeaseOperator::free(s, req).await?))
    }

    /// The layout `namespace` recorded (a [`layout_key`](idgen_sqlx::lease::layout_key), which
    /// every claim checks), read without writing; `None` if no process recorded one yet. The
    /// record is where the stores keep it: the row of node 0 in the namespace
    /// `idgen:layout:<namespace>` of the lease table, the key `<prefix>/<namespace>/layout`
    /// on etcd, `<prefix>:<namespace>:layout` on Redis.
    pub(crate) async fn recorded_layout(
        &self,
        namespace: &str,
    ) -> Result<Option<String>, CliError> {
        match self {
            AnyStore::Sql(store) => {
                let key = idgen_sql::LeaseSql::layout_namespace(namespace);
                let rows: Vec<LeaseRow> = on_store!(store, s => s.rows(&key).await?);
                Ok(rows
                    .into_iter()
                    .find(|r| r.node == 0)
                    .and_then(|r| r.holder))
            }
            #[cfg(feature = "leases-etcd")]
            AnyStore::Etcd { store, etcd } => {
                let key = format!("{}/{namespace}/layout", store.prefix()?);
                let failed = |e: idgen_etcd::etcd_client::Error| CliError::Connect {
                    url: etcd.endpoints().join(","),
                    message: format!("reading {key}: {e}"),
                };
                let mut client = etcd.client().await.map_err(failed)?;
                let got = client.get(key.as_str(), None).await.map_err(failed)?;
                Ok(got
                    .kvs()
                    .first()
                    .map(|kv| String::from_utf8_lossy(kv.value()).into_owned()))
            }
            #[cfg(feature = "leases-redis")]
            AnyStore::Redis { store, client, url } => {
                let key = format!("{}:{namespace}:layout", store.prefix()?);
                let failed = |e: idgen_redis::redis::RedisError| CliError::Connect {
                    url: url.clone(),
                    message: format!("reading {key}: {e}"),
                };
                let mut conn = client
                    .get_multiplexed_async_connection()
                    .await
                    .map_err(failed)?;
                idgen_redis::redis::cmd("GET")
                    .arg(&key)
                    .query_async(&mut conn)
                    .await
                    .map_err(failed)
            }
        }
    }

    /// The database's store, if it is one: only a database keeps the hi-lo counters the
    /// operator view reads.
    pub(crate) fn sql(&self) -> Option<&Store> {
        match self {
            AnyStore::Sql(store) => Some(store),
            #[cfg(any(feature = "leases-etcd", feature = "leases-redis"))]
            _ => None,
        }
    }

    /// What the store is, for the page: the database and table, or etcd's endpoints or the
    /// Redis server, with the key prefix.
    pub(crate) fn describe(&self) -> String {
        match self {
            AnyStore::Sql(store) => store.describe(),
            #[cfg(feature = "leases-etcd")]
            AnyStore::Etcd { store, etcd } => format!(
                "etcd {}, key prefix {}",
                etcd.endpoints().join(","),
                store.prefix().unwrap_or("?")
            ),
            #[cfg(feature = "leases-redis")]
            AnyStore::Redis { store, url, .. } => {
                format!("Redis {url}, key prefix {}", store.prefix().unwrap_or("?"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_password() {
        assert_eq!(
            redact("postgres://app:secret@db:5432/x"),
            "postgres://app:***@db:5432/x"
        );
        assert_eq!(redact("sqlite:/tmp/a.db"), "sqlite:/tmp/a.db");
    }

    #[test]
    fn the_database_generators_lease_has_no_expiry_and_a_lookalike_does() {
        let held = |holder: &str, ttl_ms: i64| HeldLease {
            node: 3,
            holder: holder.to_owned(),
            expires_at_ms: Some(1_000 + ttl_ms),
            last_timestamp_ms: None,
        };
        let year_ms = 365 * 24 * 3_600_000;
        let g = Lease::of(
            held("database:public.idgen_next_id:1f", 100 * year_ms),
            1_000,
        );
        assert_eq!(
            g.expires_in(),
            "held by the database generator public.idgen_next_id, install 1f, no expiry"
        );
        assert_eq!((g.expires_at_ms, g.expires_in_ms), (None, None));
        assert!(g.live);
        let json = serde_json::to_value(&g).unwrap();
        assert_eq!(
            json["database_generator"],
            "public.idgen_next_id, install 1f"
        );
        assert_eq!(json["expires"], g.expires_in());
        let process = Lease::of(held("database:me", 30_000), 1_000);
        assert_eq!(process.expires_in(), "30.0 s");
        assert_eq!(process.database_generator, None);
    }
}
