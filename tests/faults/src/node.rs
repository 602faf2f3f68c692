//! The instance `idgen-fault-node` runs: lease, then issue and print IDs until killed.

use std::io::Write;
use std::time::Duration;

use idgen_etcd::Etcd;
use idgen_etcd::hilo::EtcdCounter;
use idgen_redis::hilo::RedisCounter;
use idgen_redis::redis;
use idgen_sqlx::hilo::{HiLo, HiLoBuilder, IntoHiLoSource, MySqlCounter, PgSequence};
use idgen_sqlx::lease::{WorkerLease, create_lease_table};
use idgen_sqlx::{Error, ErrorKind, Layout, Snowflake};
use sqlx::mysql::MySqlPoolOptions;
use sqlx::pool::{Pool, PoolOptions};
use sqlx::postgres::PgPoolOptions;
use sqlx::{MySqlPool, PgPool};
use tokio::signal::unix::{SignalKind, signal};

use crate::line::Line;

/// The hi-lo counter the instances share.
pub const COUNTER: &str = "fault_hilo";
/// The table the hi-lo IDs go into with `IDGEN_FAULT_HILO_ROWS=1`.
pub const ROWS: &str = "fault_rows";
/// The Snowflake layout the instances use.
pub const LAYOUT: Layout = Layout::TWITTER;

/// Where an instance leases its node ID and takes its hi-lo blocks (`IDGEN_FAULT_STORE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// `postgres` (the default): the lease table and a sequence in PostgreSQL.
    Postgres,
    /// `redis`: the lease keys and the counter in Redis.
    Redis,
    /// `mariadb`: the lease table and a sequence in MariaDB (idgen-sqlx's MySQL support).
    MariaDb,
    /// `etcd`: the lease keys (on etcd leases) and the counter in etcd (idgen-etcd).
    Etcd,
}

impl Store {
    /// Every store.
    pub const ALL: [Store; 4] = [Store::Postgres, Store::Redis, Store::MariaDb, Store::Etcd];

    /// Its name in `IDGEN_FAULT_STORE`.
    ///
    /// ```
    /// use idgen_faults::node::Store;
    /// assert_eq!(Store::MariaDb.name(), "mariadb");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Store::Postgres => "postgres",
            Store::Redis => "redis",
            Store::MariaDb => "mariadb",
            Store::Etcd => "etcd",
        }
    }
}

/// What an instance is told through its environment (`IDGEN_FAULT_*`, times in milliseconds).
///
/// ```
/// let config = idgen_faults::node::Config::default();
/// assert_eq!(config.capacity, 2);
/// assert!(config.renew_every < config.ttl - config.safety_margin);
/// ```
#[derive(Debug, Clone)]
pub struct Config {
    /// `IDGEN_FAULT_STORE`: `postgres` (default), `redis`, `mariadb` or `etcd`.
    pub store: Store,
    /// `IDGEN_FAULT_DB_URL`: the PostgreSQL URL (needed with the store `postgres`).
    pub db_url: String,
    /// `IDGEN_FAULT_REDIS_URL`: the Redis URL (needed with the store `redis`).
    pub redis_url: String,
    /// `IDGEN_FAULT_MYSQL_URL`: the MariaDB URL (needed with the store `mariadb`).
    pub mysql_url: String,
    /// `IDGEN_FAULT_ETCD_URL`: the etcd endpoint (needed with the store `etcd`).
    pub etcd_url: String,
    /// `IDGEN_FAULT_TTL_MS` (3000).
    pub ttl: Duration,
    /// `IDGEN_FAULT_RENEW_MS` (500).
    pub renew_every: Duration,
    /// `IDGEN_FAULT_MARGIN_MS` (1000).
    pub safety_margin: Duration,
    /// `IDGEN_FAULT_STORE_TIMEOUT_MS` (800).
    pub store_timeout: Duration,
    /// `IDGEN_FAULT_CAPACITY` (2): node IDs `0..capacity` are leased, so a third instance
    /// waits for a node ID to expire.
    pub capacity: u64,
    /// `IDGEN_FAULT_REACQUIRE` (`0`): with `1`, an instance whose lease is lost acquires a new
    /// one (as an application that restarts its generator would) instead of staying stopped.
    pub reacquire: bool,
    /// `IDGEN_FAULT_GATE` (`0`): with `1`, the instance prints `START` and then waits for
    /// `SIGUSR1` before it connects, so a test can start it ahead and let it go the moment a
    /// fault ends (`docker kill --signal USR1`), without a container start in between.
    pub gate: bool,
    /// `IDGEN_FAULT_HILO_ROWS` (`0`): with `1`, each hi-lo ID goes into the PostgreSQL table
    /// [`ROWS`] (primary key `id`) before it is printed, as an application stores the IDs it
    /// takes, so the table's largest key bounds every hi-lo ID printed before.
    pub hilo_rows: bool,
    /// `IDGEN_FAULT_HILO_FLOOR_MARGIN`: when set (with `IDGEN_FAULT_HILO_ROWS=1`), hi-lo gets a
    /// floor (`HiLoBuilder::floor_from`): the largest key in [`ROWS`] plus this margin, read at
    /// start-up. The margin covers the IDs running generators hold in memory and have not
    /// stored yet (their blocks).
    pub hilo_floor_margin: Option<i64>,
    /// `IDGEN_FAULT_BLOCK` (100): the hi-lo block size.
    pub block: u64,
    /// `IDGEN_FAULT_HILO_TIMEOUT_MS` (1000): how long hi-lo waits for a block.
    pub hilo_timeout: Duration,
    /// `IDGEN_FAULT_MIN_LOW_WATER` (1): hi-lo keeps at least this many IDs buffered.
    pub min_low_water: u64,
    /// `IDGEN_FAULT_INTERVAL_MS` (5): the pause between two IDs of each kind.
    pub interval: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            store: Store::Postgres,
            db_url: String::new(),
            redis_url: String::new(),
            mysql_url: String::new(),
            etcd_url: String::new(),
            ttl: Duration::from_millis(3000),
            renew_every: Duration::from_millis(500),
            safety_margin: Duration::from_millis(1000),
            store_timeout: Duration::from_millis(800),
            capacity: 2,
            reacquire: false,
            gate: false,
            hilo_rows: false,
            hilo_floor_margin: None,
            block: 100,
            hilo_timeout: Duration::from_millis(1000),
            min_low_water: 1,
            interval: Duration::from_millis(5),
        }
    }
}

impl Config {
    /// The configuration from the environment, with the defaults for what is unset.
    ///
    /// ```no_run
    /// let config = idgen_faults::node::Config::from_env().unwrap();
    /// ```
    pub fn from_env() -> Result<Config, String> {
        let ms = |name: &str, default: Duration| -> Result<Duration, String> {
            match std::env::var(name) {
                Ok(v) => v
                    .parse()
                    .map(Duration::from_millis)
                    .map_err(|_| format!("{name}={v:?} is not a number of milliseconds")),
                Err(_) => Ok(default),
            }
        };
        let number = |name: &str, default: u64| -> Result<u64, String> {
            match std::env::var(name) {
                Ok(v) => v
                    .parse()
                    .map_err(|_| format!("{name}={v:?} is not a number")),
                Err(_) => Ok(default),
            }
        };
        let d = Config::default();
        let store = match std::env::var("IDGEN_FAULT_STORE") {
            Err(_) => Store::Postgres,
            Ok(name) => Store::ALL
                .into_iter()
                .find(|store| store.name() == name)
                .ok_or_else(|| {
                    format!("IDGEN_FAULT_STORE={name:?}: not postgres, redis, mariadb or etcd")
                })?,
        };
        let url = |name: &str, needed: bool| -> Result<String, String> {
            match std::env::var(name) {
                Ok(url) => Ok(url),
                Err(_) if needed => Err(format!("{name} is not set")),
                Err(_) => Ok(String::new()),
            }
        };
        Ok(Config {
            store,
            db_url: url(
                "IDGEN_FAULT_DB_URL",
                store == Store::Postgres || std::env::var_os("IDGEN_FAULT_HILO_ROWS").is_some(),
            )?,
            redis_url: url("IDGEN_FAULT_REDIS_URL", store == Store::Redis)?,
            mysql_url: url("IDGEN_FAULT_MYSQL_URL", store == Store::MariaDb)?,
            etcd_url: url("IDGEN_FAULT_ETCD_URL", store == Store::Etcd)?,
            ttl: ms("IDGEN_FAULT_TTL_MS", d.ttl)?,
            renew_every: ms("IDGEN_FAULT_RENEW_MS", d.renew_every)?,
            safety_margin: ms("IDGEN_FAULT_MARGIN_MS", d.safety_margin)?,
            store_timeout: ms("IDGEN_FAULT_STORE_TIMEOUT_MS", d.store_timeout)?,
            capacity: number("IDGEN_FAULT_CAPACITY", d.capacity)?,
            reacquire: number("IDGEN_FAULT_REACQUIRE", 0)? != 0,
            gate: number("IDGEN_FAULT_GATE", 0)? != 0,
            hilo_rows: number("IDGEN_FAULT_HILO_ROWS", 0)? != 0,
            hilo_floor_margin: match std::env::var("IDGEN_FAULT_HILO_FLOOR_MARGIN") {
                Ok(v) => {
                    Some(v.parse().map_err(|_| {
                        format!("IDGEN_FAULT_HILO_FLOOR_MARGIN={v:?} is not a number")
                    })?)
                }
                Err(_) => None,
            },
            block: number("IDGEN_FAULT_BLOCK", d.block)?,
            hilo_timeout: ms("IDGEN_FAULT_HILO_TIMEOUT_MS", d.hilo_timeout)?,
            min_low_water: number("IDGEN_FAULT_MIN_LOW_WATER", d.min_low_water)?,
            interval: ms("IDGEN_FAULT_INTERVAL_MS", d.interval)?,
        })
    }
}

/// Prints `line` with the current wall-clock time.
fn emit(line: Line) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", line.to_text(now).replace('\n', " "));
    let _ = out.flush();
}

/// An error as one line: `fenced …`, `unavailable …` or `other …`, so the tests can tell the
/// typed errors apart.
fn describe(err: &Error) -> String {
    let kind = match err.kind() {
        ErrorKind::Id(idgen_sqlx::CoreError::Fenced { .. }) => "fenced",
        ErrorKind::HiLoUnavailable { .. } => "unavailable",
        _ => "other",
    };
    format!("{kind} {err}")
}

/// The store an instance is connected to (public for other fleets of test processes, such as
/// `tests/nemesis`, which issue through the same set-up).
#[derive(Clone)]
pub enum Backend {
    /// PostgreSQL.
    Postgres(PgPool),
    /// Redis.
    Redis(redis::Client),
    /// MariaDB.
    MariaDb(MySqlPool),
    /// etcd.
    Etcd(Etcd),
}

impl Backend {
    /// Connects to `config`'s store (retrying for a minute while a database starts).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), String> {
    /// let config = idgen_faults::node::Config::from_env()?;
    /// let backend = idgen_faults::node::Backend::connect(&config).await?;
    /// # Ok(()) }
    /// ```
    pub async fn connect(config: &Config) -> Result<Backend, String> {
        match config.store {
            Store::Postgres => Ok(Backend::Postgres(connect(config).await?)),
            Store::Redis => redis::Client::open(config.redis_url.as_str())
                .map(Backend::Redis)
                .map_err(|e| format!("the Redis URL {}: {e}", config.redis_url)),
            Store::MariaDb => Ok(Backend::MariaDb(
                connect_to(MySqlPoolOptions::new(), &config.mysql_url).await?,
            )),
            // Connects on first use, and again after a failed call.
            Store::Etcd => Ok(Backend::Etcd(Etcd::new([config.etcd_url.as_str()]))),
        }
    }

    /// Creates the lease table and the counter when missing (as a deployment's migration would;
    /// every instance runs it at start, and creates them again when missing later, with
    /// `create_if_missing`).
    ///
    /// ```no_run
    /// # async fn demo(backend: idgen_faults::node::Backend, config: idgen_faults::node::Config) {
    /// backend.prepare(&config).await;
    /// # }
    /// ```
    pub async fn prepare(&self, config: &Config) {
        match self {
            Backend::Postgres(pool) => {
                retry("create the lease table", || async {
                    create_lease_table(pool).await.map_err(|e| e.to_string())
                })
                .await;
                retry("create the hi-lo sequence", || async {
                    let sequence = PgSequence::new(pool, COUNTER).map_err(|e| e.to_string())?;
                    sequence
                        .create(config.block)
                        .await
                        .map_err(|e| e.to_string())
                })
                .await;
            }
            Backend::MariaDb(pool) => {
                retry("create the lease table", || async {
                    create_lease_table(pool).await.map_err(|e| e.to_string())
                })
                .await;
                retry("create the hi-lo sequence", || async {
                    let sequence =
                        MySqlCounter::sequence(pool, COUNTER).map_err(|e| e.to_string())?;
                    sequence
                        .create(config.block)
                        .await
                        .map_err(|e| e.to_string())
                })
                .await;
            }
            Backend::Redis(client) => {
                retry("create the hi-lo counter", || async {
                    let counter = RedisCounter::new(client, COUNTER).map_err(|e| e.to_string())?;
                    counter.create().await.map_err(|e| e.to_string())
                })
                .await;
            }
            Backend::Etcd(etcd) => {
                retry("create the hi-lo counter", || async {
                    let counter = EtcdCounter::new(etcd, COUNTER).map_err(|e| e.to_string())?;
                    counter
                        .create(config.block)
                        .await
                        .map_err(|e| e.to_string())
                })
                .await;
            }
        }
    }

    /// A `WorkerLease` with `config`'s TTL, renewal, margin, time-out and capacity.
    ///
    /// ```no_run
    /// # async fn demo(backend: idgen_faults::node::Backend, config: idgen_faults::node::Config) {
    /// let lease = backend.acquire(&config).await.unwrap();
    /// # }
    /// ```
    pub async fn acquire(&self, config: &Config) -> Result<WorkerLease, Error> {
        let options = WorkerLease::options()
            .ttl(config.ttl)
            .renew_every(config.renew_every)
            .safety_margin(config.safety_margin)
            .store_timeout(config.store_timeout)
            .capacity(config.capacity)
            .create_if_missing(true);
        match self {
            Backend::Postgres(pool) => options.acquire(pool, &LAYOUT).await,
            Backend::Redis(client) => options.acquire(client, &LAYOUT).await,
            Backend::MariaDb(pool) => options.acquire(pool, &LAYOUT).await,
            Backend::Etcd(etcd) => options.acquire(etcd, &LAYOUT).await,
        }
    }

    /// Hi-lo on [`COUNTER`] with `config`'s block and time-out, and with `rows` (and
    /// `config.hilo_floor_margin`) a floor: the largest key in [`ROWS`] plus the margin.
    ///
    /// ```no_run
    /// # async fn demo(backend: idgen_faults::node::Backend, config: idgen_faults::node::Config) {
    /// let hilo = backend.hilo(&config, None).await.unwrap();
    /// # }
    /// ```
    pub async fn hilo(&self, config: &Config, rows: Option<&PgPool>) -> Result<HiLo, Error> {
        let floor = rows.zip(config.hilo_floor_margin);
        match self {
            Backend::Postgres(pool) => build_hilo(HiLo::builder(pool.clone()), config, floor).await,
            Backend::Redis(client) => {
                build_hilo(HiLo::builder(client.clone()), config, floor).await
            }
            // A MariaDB sequence: what the pool's `MySqlMode::Detect` picks on MariaDB 10.3+.
            Backend::MariaDb(pool) => build_hilo(HiLo::builder(pool.clone()), config, floor).await,
            Backend::Etcd(etcd) => build_hilo(HiLo::builder(etcd.clone()), config, floor).await,
        }
    }
}

impl Backend {
    /// Hi-lo as [`hilo`](Self::hilo) without rows, with the fixed floor `floor` (read once by
    /// the caller, e.g. the largest key it stored plus what running generators may hold in
    /// memory): the counter is moved above it at start, and a block at or below it later (a
    /// store that forgot its counter) fails the generator closed, for the caller to build it
    /// again above a new floor.
    ///
    /// ```no_run
    /// # async fn demo(backend: idgen_faults::node::Backend, config: idgen_faults::node::Config) {
    /// let hilo = backend.hilo_above(&config, 5_000).await.unwrap();
    /// # }
    /// ```
    pub async fn hilo_above(&self, config: &Config, floor: i64) -> Result<HiLo, Error> {
        match self {
            Backend::Postgres(pool) => {
                build_hilo(HiLo::builder(pool.clone()).floor(floor), config, None).await
            }
            Backend::Redis(client) => {
                build_hilo(HiLo::builder(client.clone()).floor(floor), config, None).await
            }
            Backend::MariaDb(pool) => {
                build_hilo(HiLo::builder(pool.clone()).floor(floor), config, None).await
            }
            Backend::Etcd(etcd) => {
                build_hilo(HiLo::builder(etcd.clone()).floor(floor), config, None).await
            }
        }
    }
}

/// Builds hi-lo with the options every instance uses, whatever the store, and with `floor`
/// (the rows table's pool and margin) a floor: the largest key in [`ROWS`] plus the margin.
async fn build_hilo<T: IntoHiLoSource<M>, M>(
    builder: HiLoBuilder<T, M>,
    config: &Config,
    floor: Option<(&PgPool, i64)>,
) -> Result<HiLo, Error> {
    let builder = builder
        .counter(COUNTER)
        .block(config.block)
        .timeout(config.hilo_timeout)
        .min_low_water(config.min_low_water)
        // At most the current block and one more in memory: what a floor's margin must cover.
        .max_buffered_blocks(1)
        .create_if_missing(true);
    let Some((pool, margin)) = floor else {
        return builder.build().await;
    };
    let pool = pool.clone();
    let floor = move || {
        let pool = pool.clone();
        async move {
            let max: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM fault_rows")
                .fetch_one(&pool)
                .await?;
            Ok(max + margin)
        }
    };
    builder.floor_from(floor).build().await
}

/// Runs an instance until the process is killed; returns only on a set-up error.
///
/// ```no_run
/// # async fn demo() -> Result<(), String> {
/// idgen_faults::node::run(idgen_faults::node::Config::from_env()?).await
/// # }
/// ```
pub async fn run(config: Config) -> Result<(), String> {
    let mut go = match config.gate {
        true => Some(
            signal(SignalKind::user_defined1())
                .map_err(|e| format!("cannot wait for SIGUSR1: {e}"))?,
        ),
        false => None,
    };
    // A gated instance waits before it connects: a connection opened before the fault could
    // point at a server that is gone (no answer, not even a reset) and stall its first calls.
    if let Some(go) = &mut go {
        emit(Line::Start);
        go.recv().await;
    }
    emit(Line::Start);
    let backend = Backend::connect(&config).await?;
    if !config.gate {
        // The gated instances start after a fault: their `create_if_missing` does this.
        backend.prepare(&config).await;
    }
    let rows = match (&backend, config.hilo_rows) {
        (_, false) => None,
        (Backend::Postgres(pool), true) => Some(pool.clone()),
        (_, true) => Some(connect(&config).await?),
    };
    if let Some(pool) = &rows {
        retry("create the rows table", || async {
            sqlx::query("CREATE TABLE IF NOT EXISTS fault_rows (id BIGINT PRIMARY KEY)")
                .execute(pool)
                .await
                .map(drop)
                .map_err(|e| e.to_string())
        })
        .await;
    }

    let interval = config.interval;
    let hilo_backend = backend.clone();
    let hilo_config = config.clone();
    tokio::spawn(async move {
        let hilo = retry("start hi-lo", || async {
            hilo_backend
                .hilo(&hilo_config, rows.as_ref())
                .await
                .map_err(|e| e.to_string())
        })
        .await;
        let mut failing = false;
        loop {
            match hilo.next_id().await {
                Ok(id) => {
                    failing = false;
                    if let Some(pool) = &rows {
                        store_row(pool, id).await;
                    }
                    emit(Line::HiLo(id));
                }
                Err(err) => {
                    if !failing {
                        emit(Line::HiLoError(describe(&err)));
                    }
                    failing = true;
                }
            }
            tokio::time::sleep(interval).await;
        }
    });

    loop {
        emit(Line::Claim);
        let lease = loop {
            match backend.acquire(&config).await {
                Ok(lease) => break lease,
                Err(err) => {
                    emit(Line::LeaseWait(err.to_string()));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        };
        let handle = lease.handle();
        emit(Line::Lease(handle.node()));
        let ids = Snowflake::builder()
            .layout(LAYOUT)
            .lease(lease)
            .build()
            .map_err(|e| e.to_string())?;
        let mut failing = false;
        loop {
            match ids.next_id() {
                Ok(id) => {
                    failing = false;
                    emit(Line::Snowflake(id.get()));
                }
                Err(err) => {
                    if !failing {
                        emit(Line::SnowflakeError(describe(&err.into())));
                    }
                    failing = true;
                    let status = handle.status();
                    if status.lost && config.reacquire {
                        emit(Line::Lost(status.last_error.unwrap_or_default()));
                        break;
                    }
                }
            }
            tokio::time::sleep(interval).await;
        }
    }
}

/// Inserts hi-lo ID `id` into [`ROWS`], retrying while the database fails; an ID already there
/// (handed out twice) is printed as an error, and then as the ID it is.
async fn store_row(pool: &PgPool, id: i64) {
    loop {
        match sqlx::query("INSERT INTO fault_rows (id) VALUES ($1)")
            .bind(id)
            .execute(pool)
            .await
        {
            Ok(_) => return,
            Err(sqlx::Error::Database(err)) if err.is_unique_violation() => {
                emit(Line::HiLoError(format!(
                    "duplicate {id} is in {ROWS} already"
                )));
                return;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// The PostgreSQL pool (`IDGEN_FAULT_DB_URL`), retrying for a minute while the server starts.
///
/// ```no_run
/// # async fn demo(config: idgen_faults::node::Config) {
/// let pool = idgen_faults::node::connect(&config).await.unwrap();
/// # }
/// ```
pub async fn connect(config: &Config) -> Result<PgPool, String> {
    connect_to(PgPoolOptions::new(), &config.db_url).await
}

/// The MariaDB pool (`IDGEN_FAULT_MYSQL_URL`), retrying for a minute while the server starts.
///
/// ```no_run
/// # async fn demo(config: idgen_faults::node::Config) {
/// let pool = idgen_faults::node::connect_mariadb(&config).await.unwrap();
/// # }
/// ```
pub async fn connect_mariadb(config: &Config) -> Result<MySqlPool, String> {
    connect_to(MySqlPoolOptions::new(), &config.mysql_url).await
}

/// A pool of at most 4 connections to `url`, retrying for a minute while the server starts.
async fn connect_to<DB: sqlx::Database>(
    options: PoolOptions<DB>,
    url: &str,
) -> Result<Pool<DB>, String> {
    let options = options
        .max_connections(4)
        .acquire_timeout(Duration::from_secs(1));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        match options.clone().connect(url).await {
            Ok(pool) => return Ok(pool),
            Err(err) if tokio::time::Instant::now() > deadline => {
                return Err(format!("cannot connect to {url}: {err}"));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

/// Runs `step` until it succeeds (several instances start at once on an empty database).
async fn retry<T, F, Fut>(what: &str, mut step: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    loop {
        match step().await {
            Ok(value) => return value,
            Err(err) => {
                emit(Line::LeaseWait(format!("{what}: {err}")));
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}
