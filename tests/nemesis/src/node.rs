//! The issuing process, `idgen-nemesis-node`: the same set-up as `idgen-fault-node`
//! ([`idgen_faults::node`]: `IDGEN_FAULT_*`), but it issues in batches and records its IDs as
//! runs ([`crate::record`]), so that millions of IDs a second cost a few lines.
//!
//! More environment:
//! - `IDGEN_NEMESIS_ROLE`: `app` (default: a Snowflake generator on a leased node ID and hi-lo),
//!   `dbgen` (the database-side generator installed in the store's database, PostgreSQL or
//!   MariaDB, its IDs taken through the key default by `INSERT … RETURNING`) or `operator`
//!   (nothing but a container on the network to run `idgen leases` in: it waits);
//! - `IDGEN_NEMESIS_HILO_ROWS` (`postgres:TABLE` or `mariadb:TABLE`): the largest hi-lo ID of
//!   each round goes into that table before the round counts as issued, and hi-lo is built
//!   above a floor read from it
//!   (its largest key plus `IDGEN_FAULT_HILO_FLOOR_MARGIN`) at start and when it fails;
//! - `IDGEN_NEMESIS_BATCH` (500): Snowflake IDs (or database rows) per round,
//!   `IDGEN_NEMESIS_HILO_BATCH` (the batch, at most 200): hi-lo IDs per round;
//!   `IDGEN_FAULT_INTERVAL_MS` the pause between rounds;
//! - `SIGUSR2`: a burst, Snowflake IDs issued flat out for [`BURST`] (past the layout's cap of
//!   4096 a millisecond, so the generator waits for the next one);
//! - the file [`CLOCK_STEP_FILE`], read (and removed) at start: a step of this process's wall
//!   clock in ms (± up to 60 s), applied through idgen-core's test hook before the process's
//!   clock is anchored; the record's times stay on the host's true clock.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use idgen_faults::node::{Backend, Config, connect};
use idgen_sqlx::db_generator::{self, DbGenerator};
use idgen_sqlx::hilo::HiLo;
use idgen_sqlx::{Dialect, Snowflake};
use sqlx::{MySqlPool, PgPool};
use tokio::signal::unix::{SignalKind, signal};

use crate::record::{Event, Kind, Runs};

/// Where a clock step waits for the process's next start.
pub const CLOCK_STEP_FILE: &str = "/tmp/nemesis-clock-step";
/// How long a burst lasts.
pub const BURST: Duration = Duration::from_millis(250);
/// The table the database-side generator fills.
pub const DB_ROWS: &str = "nemesis_rows";

/// The host's wall clock in Unix ms (not the stepped one).
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn emit(event: Event, at_ms: i64) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", event.to_text(at_ms));
    let _ = out.flush();
}

fn emit_now(event: Event) {
    emit(event, now_ms());
}

fn sink() -> impl FnMut(Event, i64) {
    |event, at| emit(event, at)
}

/// Reads and removes [`CLOCK_STEP_FILE`], and anchors this process's clock with that step.
/// Returns the step in ms.
fn apply_clock_step() -> i64 {
    let step: i64 = std::fs::read_to_string(CLOCK_STEP_FILE)
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(0);
    let _ = std::fs::remove_file(CLOCK_STEP_FILE);
    let guard =
        idgen_core::wall_clock_step::step(step >= 0, Duration::from_millis(step.unsigned_abs()));
    // The first `SystemClock` of the process reads the wall clock once, on this thread, with the
    // step: every later one (the lease's, the generator's) shares that anchor.
    let _ = idgen_core::SystemClock::new();
    drop(guard);
    step
}

fn number(name: &str, default: u64) -> Result<u64, String> {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .map_err(|_| format!("{name}={v:?} is not a number")),
        Err(_) => Ok(default),
    }
}

/// Runs the process until it is killed; returns only on a set-up error.
///
/// ```no_run
/// # async fn demo() -> Result<(), String> {
/// idgen_nemesis::node::run().await
/// # }
/// ```
pub async fn run() -> Result<(), String> {
    let step = apply_clock_step();
    emit_now(Event::Start {
        clock_step_ms: step,
    });
    let config = Config::from_env()?;
    let batch = number("IDGEN_NEMESIS_BATCH", 500)?;
    let hilo_batch = number("IDGEN_NEMESIS_HILO_BATCH", batch.min(200))?;
    let role = std::env::var("IDGEN_NEMESIS_ROLE").unwrap_or_default();
    if role == "operator" {
        loop {
            tokio::time::sleep(Duration::from_secs(3_600)).await;
        }
    }
    if role == "dbgen" {
        return run_dbgen(&config, batch).await;
    }
    let burst = Arc::new(AtomicBool::new(false));
    let mut usr2 =
        signal(SignalKind::user_defined2()).map_err(|e| format!("cannot wait for SIGUSR2: {e}"))?;
    let flag = burst.clone();
    tokio::spawn(async move {
        while usr2.recv().await.is_some() {
            flag.store(true, Ordering::SeqCst);
        }
    });
    let backend = Backend::connect(&config).await?;
    backend.prepare(&config).await;
    let rows = Rows::from_env(&config).await?;
    if let Some(rows) = &rows {
        retry("create the rows table", || rows.create()).await;
    }
    let hilo_backend = backend.clone();
    let hilo_config = config.clone();
    tokio::spawn(async move { issue_hilo(hilo_backend, hilo_config, rows, hilo_batch).await });
    issue_snowflakes(&backend, &config, batch, &burst).await
}

/// Leases a node ID and issues Snowflake IDs in rounds of `batch` (flat out for [`BURST`]
/// after `SIGUSR2`); leases anew when the lease is lost.
async fn issue_snowflakes(
    backend: &Backend,
    config: &Config,
    batch: u64,
    burst: &AtomicBool,
) -> Result<(), String> {
    loop {
        let lease = loop {
            match backend.acquire(config).await {
                Ok(lease) => break lease,
                Err(err) => {
                    emit_now(Event::Error(format!("lease: {err}")));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        };
        let handle = lease.handle();
        emit_now(Event::Lease(handle.node()));
        let ids = Snowflake::builder()
            .layout(idgen_faults::node::LAYOUT)
            .lease(lease)
            .build()
            .map_err(|e| e.to_string())?;
        let mut runs = Runs::new(Kind::Snowflake);
        let mut failing = false;
        loop {
            let bursting = burst.swap(false, Ordering::SeqCst);
            let until = Instant::now() + if bursting { BURST } else { Duration::ZERO };
            let mut issued = 0;
            let refused = tokio::task::block_in_place(|| {
                loop {
                    match ids.next_id() {
                        Ok(id) => runs.push(id.get(), now_ms, &mut sink()),
                        Err(err) => return Some(err),
                    }
                    issued += 1;
                    if issued >= batch && Instant::now() >= until {
                        return None;
                    }
                }
            });
            runs.flush(now_ms(), &mut sink());
            match refused {
                None => failing = false,
                Some(err) => {
                    if !failing {
                        let err = idgen_sqlx::Error::from(err);
                        let fenced = matches!(
                            err.kind(),
                            idgen_sqlx::ErrorKind::Id(idgen_sqlx::CoreError::Fenced { .. })
                        );
                        emit_now(match fenced {
                            true => Event::Fenced(err.to_string()),
                            false => Event::Error(format!("snowflake: {err}")),
                        });
                    }
                    failing = true;
                    if handle.status().lost {
                        break;
                    }
                }
            }
            tokio::time::sleep(config.interval).await;
        }
    }
}

/// Where a process's hi-lo IDs go before they count as issued (`IDGEN_NEMESIS_HILO_ROWS`): a
/// table in PostgreSQL or MariaDB, the one the floor is read from.
enum Rows {
    /// A PostgreSQL table.
    Postgres(PgPool, String),
    /// A MariaDB table.
    MariaDb(MySqlPool, String),
}

impl Rows {
    /// The rows of `IDGEN_NEMESIS_HILO_ROWS`, if set, connected.
    async fn from_env(config: &Config) -> Result<Option<Rows>, String> {
        let Ok(spec) = std::env::var("IDGEN_NEMESIS_HILO_ROWS") else {
            return Ok(None);
        };
        let (store, table) = spec
            .split_once(':')
            .filter(|(_, t)| {
                !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
            .ok_or_else(|| format!("IDGEN_NEMESIS_HILO_ROWS={spec:?}: not STORE:TABLE"))?;
        match store {
            "postgres" => Ok(Some(Rows::Postgres(connect(config).await?, table.into()))),
            // Named with its database: a restore of that database (`DROP DATABASE`, `CREATE
            // DATABASE`) leaves the pool's open sessions with no current database.
            "mariadb" => Ok(Some(Rows::MariaDb(
                idgen_faults::node::connect_mariadb(config).await?,
                format!("{}.{table}", idgen_faults::cluster::DATABASE),
            ))),
            _ => Err(format!(
                "IDGEN_NEMESIS_HILO_ROWS={spec:?}: not postgres or mariadb"
            )),
        }
    }

    /// Creates the table when missing.
    async fn create(&self) -> Result<(), String> {
        match self {
            Rows::Postgres(pool, table) => {
                execute(
                    pool,
                    format!("CREATE TABLE IF NOT EXISTS {table} (id BIGINT PRIMARY KEY)"),
                )
                .await
            }
            Rows::MariaDb(pool, table) => {
                execute(
                    pool,
                    format!("CREATE TABLE IF NOT EXISTS {table} (id BIGINT PRIMARY KEY)"),
                )
                .await
            }
        }
    }

    /// The largest key stored (0 when none).
    async fn max(&self) -> Result<i64, String> {
        let result: Result<i64, sqlx::Error> = match self {
            Rows::Postgres(pool, table) => {
                sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                    "SELECT COALESCE(MAX(id), 0) FROM {table}"
                )))
                .fetch_one(pool)
                .await
            }
            Rows::MariaDb(pool, table) => {
                sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                    "SELECT CAST(COALESCE(MAX(id), 0) AS SIGNED) FROM {table}"
                )))
                .fetch_one(pool)
                .await
            }
        };
        result.map_err(|e| e.to_string())
    }

    /// Inserts `ids` (an ID already there is left alone: the checker finds it in the records).
    async fn insert(&self, ids: &[i64]) -> Result<(), String> {
        match self {
            Rows::Postgres(pool, table) => sqlx::query(sqlx::AssertSqlSafe(format!(
                "INSERT INTO {table} (id) SELECT unnest($1::bigint[]) ON CONFLICT DO NOTHING"
            )))
            .bind(ids)
            .execute(pool)
            .await
            .map(drop)
            .map_err(|e| e.to_string()),
            Rows::MariaDb(pool, table) => {
                let values: Vec<String> = ids.iter().map(|id| format!("({id})")).collect();
                execute(
                    pool,
                    format!(
                        "INSERT IGNORE INTO {table} (id) VALUES {}",
                        values.join(",")
                    ),
                )
                .await
            }
        }
    }
}

/// Builds hi-lo: with `rows`, above a floor read from them now (the largest stored key plus
/// `IDGEN_FAULT_HILO_FLOOR_MARGIN`, what running generators may hold in memory unstored).
async fn build_hilo(backend: &Backend, config: &Config, rows: Option<&Rows>) -> HiLo {
    retry("start hi-lo", || async {
        match rows {
            None => backend.hilo(config, None).await.map_err(|e| e.to_string()),
            Some(rows) => {
                let floor = rows.max().await? + config.hilo_floor_margin.unwrap_or(0);
                backend
                    .hilo_above(config, floor)
                    .await
                    .map_err(|e| e.to_string())
            }
        }
    })
    .await
}

/// Takes hi-lo IDs in rounds of `batch`; with `rows`, stores the largest of each round there
/// before they count as issued (as an application stores the IDs it takes), and builds hi-lo again (above a new
/// floor, with `rows`) when the counter went backwards or after 2 s of failures.
async fn issue_hilo(backend: Backend, config: Config, rows: Option<Rows>, batch: u64) {
    let mut hilo = build_hilo(&backend, &config, rows.as_ref()).await;
    let mut failing = false;
    let mut failing_since = Instant::now();
    let mut taken = Vec::with_capacity(batch as usize);
    loop {
        taken.clear();
        let mut rebuild = false;
        for _ in 0..batch {
            match hilo.next_id().await {
                Ok(id) => taken.push((id, now_ms())),
                Err(err) => {
                    if !failing {
                        emit_now(Event::Error(format!("hi-lo: {err}")));
                        failing_since = Instant::now();
                    }
                    failing = true;
                    // A counter that went backwards fails hi-lo closed, and one the store
                    // forgot stays missing: after 2 s of failures the application restarts
                    // its generator (which creates a missing counter).
                    rebuild = matches!(
                        err.kind(),
                        idgen_sqlx::ErrorKind::HiLoCounterWentBackwards { .. }
                    ) || failing_since.elapsed() > Duration::from_secs(2);
                    break;
                }
            }
        }
        if !taken.is_empty() {
            failing = false;
        }
        if let (Some(rows), Some(&(largest, _))) = (&rows, taken.iter().max()) {
            // The floor needs only the largest ID of each round (a table of every ID would
            // make a restore's dump and load take longer than the soak).
            store_rows(rows, &[largest]).await;
        }
        let mut runs = Runs::new(Kind::HiLo);
        let mut last = 0;
        for &(id, at) in &taken {
            runs.push(id, || at, &mut sink());
            last = at;
        }
        runs.flush(last, &mut sink());
        if rebuild {
            // Above a new floor where it has one.
            hilo = build_hilo(&backend, &config, rows.as_ref()).await;
            emit_now(Event::Error("hi-lo: built again".into()));
            failing = false;
        }
        tokio::time::sleep(config.interval).await;
    }
}

/// Inserts `ids` into `rows`, retrying while the database fails.
async fn store_rows(rows: &Rows, ids: &[i64]) {
    if ids.is_empty() {
        return;
    }
    let mut failing = false;
    loop {
        match rows.insert(ids).await {
            Ok(()) => return,
            Err(err) => {
                if !failing {
                    emit_now(Event::Error(format!("rows: {err}")));
                }
                failing = true;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// The database-side generator: installs `idgen_next_id()` in the process's database
/// (`IDGEN_FAULT_STORE`: PostgreSQL or MariaDB, on a node ID from the applications' lease table
/// there), makes it [`DB_ROWS`]'s key default, and inserts `batch` rows a round, recording the
/// keys `RETURNING` gives; installs again when the function is fenced.
async fn run_dbgen(config: &Config, batch: u64) -> Result<(), String> {
    // The applications' TTL and margin: a takeover waits for them, not the 30 s default.
    let generator = DbGenerator::new(idgen_faults::node::LAYOUT)
        .takeover_wait(config.ttl, config.safety_margin);
    match Backend::connect(config).await? {
        Backend::Postgres(pool) => run_dbgen_postgres(config, &pool, &generator, batch).await,
        Backend::MariaDb(pool) => run_dbgen_mariadb(config, &pool, &generator, batch).await,
        _ => Err(format!(
            "the database generator runs on PostgreSQL or MariaDB, not {}",
            config.store.name()
        )),
    }
}

/// PostgreSQL: the key default is the column's `DEFAULT` (through its key sequence).
async fn run_dbgen_postgres(
    config: &Config,
    pool: &PgPool,
    generator: &DbGenerator,
    batch: u64,
) -> Result<(), String> {
    loop {
        let node = retry("install the database generator", || async {
            let node = install(pool, generator, "id BIGINT PRIMARY KEY, n INT").await?;
            let default = generator
                .column_default_sql(Dialect::Postgres, DB_ROWS, "id")
                .map_err(|e| e.to_string())?;
            execute(pool, default).await?;
            Ok(node)
        })
        .await;
        emit_now(Event::Lease(node));
        let insert = format!(
            "INSERT INTO {DB_ROWS} (n) SELECT g FROM generate_series(1, $1::int) g RETURNING id"
        );
        issue_rows(config, || {
            sqlx::query_scalar(sqlx::AssertSqlSafe(insert.clone()))
                .bind(batch as i32)
                .fetch_all(pool)
        })
        .await;
    }
}

/// MariaDB: the key default is a `BEFORE INSERT` trigger (MariaDB allows no stored function in
/// a `DEFAULT`) on a `BIGINT NOT NULL DEFAULT 0` key; the rows come from MariaDB's sequence
/// engine (`seq_1_to_N`) and their keys back through `INSERT … RETURNING` (MariaDB 10.5+).
async fn run_dbgen_mariadb(
    config: &Config,
    pool: &MySqlPool,
    generator: &DbGenerator,
    batch: u64,
) -> Result<(), String> {
    loop {
        let node = retry("install the database generator", || async {
            let columns = "id BIGINT NOT NULL DEFAULT 0 PRIMARY KEY, n INT";
            let node = install(pool, generator, columns).await?;
            // `CREATE TRIGGER` once: a re-install keeps the trigger, which calls the function
            // by name.
            let triggers: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM information_schema.TRIGGERS \
                 WHERE TRIGGER_SCHEMA = DATABASE() AND EVENT_OBJECT_TABLE = ?",
            )
            .bind(DB_ROWS)
            .fetch_one(pool)
            .await
            .map_err(|e| e.to_string())?;
            if triggers == 0 {
                let trigger = generator
                    .column_default_sql(Dialect::MySql, DB_ROWS, "id")
                    .map_err(|e| e.to_string())?;
                execute(pool, trigger).await?;
            }
            Ok(node)
        })
        .await;
        emit_now(Event::Lease(node));
        let insert =
            format!("INSERT INTO {DB_ROWS} (n) SELECT seq FROM seq_1_to_{batch} RETURNING id");
        issue_rows(config, || {
            sqlx::query_scalar(sqlx::AssertSqlSafe(insert.clone())).fetch_all(pool)
        })
        .await;
    }
}

/// Installs the generator (keeping its node ID when installed already) and creates [`DB_ROWS`]
/// with `columns` when missing; returns the node ID.
async fn install<DB>(
    pool: &sqlx::Pool<DB>,
    generator: &DbGenerator,
    columns: &str,
) -> Result<u64, String>
where
    DB: db_generator::DbGeneratorDialect,
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
{
    let node = db_generator::install(pool, generator)
        .await
        .map_err(|e| e.to_string())?;
    execute(
        pool,
        format!("CREATE TABLE IF NOT EXISTS {DB_ROWS} ({columns})"),
    )
    .await?;
    Ok(node)
}

/// Runs `sql`, statements this harness writes itself, on `pool`.
async fn execute<DB>(pool: &sqlx::Pool<DB>, sql: String) -> Result<(), String>
where
    DB: sqlx::Database,
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
{
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
        .execute(pool)
        .await
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Inserts rows round after round through `insert` (which answers with their keys), recording
/// the keys; returns when the function is fenced (its `IDG02` / `IDG06` signal), for the caller
/// to install it again.
async fn issue_rows<F, Fut>(config: &Config, mut insert: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Vec<i64>, sqlx::Error>>,
{
    let mut failing = false;
    loop {
        let answer = insert().await;
        let at = now_ms();
        match answer {
            Ok(mut ids) => {
                failing = false;
                ids.sort_unstable();
                let mut runs = Runs::new(Kind::Database);
                for id in ids {
                    runs.push(id, || at, &mut sink());
                }
                runs.flush(at, &mut sink());
            }
            Err(err) => {
                let fenced = matches!(&err, sqlx::Error::Database(e)
                    if matches!(e.code().as_deref(), Some("IDG02") | Some("IDG06")));
                if !failing || fenced {
                    emit_now(match fenced {
                        true => Event::Fenced(err.to_string()),
                        false => Event::Error(format!("insert: {err}")),
                    });
                }
                failing = true;
                if fenced {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        tokio::time::sleep(config.interval).await;
    }
}

/// Runs `step` until it succeeds, recording the first failure of a run of them.
async fn retry<T, F, Fut>(what: &str, mut step: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let mut failing = false;
    loop {
        match step().await {
            Ok(value) => return value,
            Err(err) => {
                if !failing {
                    emit_now(Event::Error(format!("{what}: {err}")));
                }
                failing = true;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}
