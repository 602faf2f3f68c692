//! The instance `idgen-fault-node` runs: lease, then issue and print IDs until killed.

use std::io::Write;
use std::time::Duration;

use idgen_sqlx::hilo::{HiLo, PgSequence};
use idgen_sqlx::lease::{WorkerLease, create_lease_table};
use idgen_sqlx::{Error, Layout, Snowflake};
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;

use crate::Line;

/// The hi-lo counter the instances share.
pub const COUNTER: &str = "fault_hilo";
/// The Snowflake layout the instances use.
pub const LAYOUT: Layout = Layout::TWITTER;

/// What an instance is told through its environment (`IDGEN_FAULT_*`, times in milliseconds).
///
/// ```
/// let config = idgen_faults::node::Config::default();
/// assert_eq!(config.capacity, 2);
/// assert!(config.renew_every < config.ttl - config.safety_margin);
/// ```
#[derive(Debug, Clone)]
pub struct Config {
    /// `IDGEN_FAULT_DB_URL`: the PostgreSQL URL.
    pub db_url: String,
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
            db_url: String::new(),
            ttl: Duration::from_millis(3000),
            renew_every: Duration::from_millis(500),
            safety_margin: Duration::from_millis(1000),
            store_timeout: Duration::from_millis(800),
            capacity: 2,
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
        Ok(Config {
            db_url: std::env::var("IDGEN_FAULT_DB_URL")
                .map_err(|_| "IDGEN_FAULT_DB_URL is not set".to_owned())?,
            ttl: ms("IDGEN_FAULT_TTL_MS", d.ttl)?,
            renew_every: ms("IDGEN_FAULT_RENEW_MS", d.renew_every)?,
            safety_margin: ms("IDGEN_FAULT_MARGIN_MS", d.safety_margin)?,
            store_timeout: ms("IDGEN_FAULT_STORE_TIMEOUT_MS", d.store_timeout)?,
            capacity: number("IDGEN_FAULT_CAPACITY", d.capacity)?,
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
    let kind = match err {
        Error::Fenced { .. } => "fenced",
        Error::HiLoUnavailable { .. } => "unavailable",
        _ => "other",
    };
    format!("{kind} {err}")
}

/// Runs an instance until the process is killed; returns only on a set-up error.
///
/// ```no_run
/// # async fn demo() -> Result<(), String> {
/// idgen_faults::node::run(idgen_faults::node::Config::from_env()?).await
/// # }
/// ```
pub async fn run(config: Config) -> Result<(), String> {
    let pool = connect(&config).await?;
    retry("create the lease table", || async {
        create_lease_table(&pool).await.map_err(|e| e.to_string())
    })
    .await;
    retry("create the hi-lo sequence", || async {
        let sequence = PgSequence::new(&pool, COUNTER).map_err(|e| e.to_string())?;
        sequence
            .create(config.block)
            .await
            .map_err(|e| e.to_string())
    })
    .await;

    let lease = loop {
        let attempt = WorkerLease::options()
            .ttl(config.ttl)
            .renew_every(config.renew_every)
            .safety_margin(config.safety_margin)
            .store_timeout(config.store_timeout)
            .capacity(config.capacity)
            .acquire(&pool, &LAYOUT)
            .await;
        match attempt {
            Ok(lease) => break lease,
            Err(err) => {
                emit(Line::LeaseWait(err.to_string()));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    emit(Line::Lease(lease.handle().node()));
    let ids = Snowflake::builder()
        .layout(LAYOUT)
        .lease(lease)
        .build()
        .map_err(|e| e.to_string())?;
    let hilo = retry("start hi-lo", || async {
        HiLo::builder(pool.clone())
            .counter(COUNTER)
            .block(config.block)
            .timeout(config.hilo_timeout)
            .min_low_water(config.min_low_water)
            .build()
            .await
            .map_err(|e| e.to_string())
    })
    .await;

    let interval = config.interval;
    tokio::spawn(async move {
        let mut failing = false;
        loop {
            match hilo.next_id().await {
                Ok(id) => {
                    failing = false;
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

    let mut failing = false;
    loop {
        match ids.next_id() {
            Ok(id) => {
                failing = false;
                emit(Line::Snowflake(id.get()));
            }
            Err(err) => {
                if !failing {
                    emit(Line::SnowflakeError(describe(&err)));
                }
                failing = true;
            }
        }
        tokio::time::sleep(interval).await;
    }
}

async fn connect(config: &Config) -> Result<PgPool, String> {
    let options = PgPoolOptions::new()
        .max_connections(4)
        .acquire_timeout(Duration::from_secs(1));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        match options.clone().connect(&config.db_url).await {
            Ok(pool) => return Ok(pool),
            Err(err) if tokio::time::Instant::now() > deadline => {
                return Err(format!("cannot connect to {}: {err}", config.db_url));
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
