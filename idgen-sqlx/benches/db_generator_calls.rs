//! Where the time of a MariaDB `idgen_next_id()` call goes (issue 42): the installed function
//! against stored functions that each do one part of it, called `N` times in one
//! `SELECT COUNT(f()) FROM seq_1_to_<N>` on one connection (no INSERT, no client round trip
//! per call), so that the differences are the parts' own costs:
//!
//! | function | body |
//! |---|---|
//! | `bench_empty()` | `RETURN 1`: the cost of calling a stored function |
//! | `bench_floor()` | `RETURN NEXTVAL(bench_s)`: the routine floor of `benches/db_generator.rs` |
//! | `bench_uservars()` | the block's fast path on four user variables, without the clock check, never refilling |
//! | `bench_clock()` | the same with the clock check (`SYSDATE(6) + 0 BETWEEN …`), never refilling |
//! | `bench_no_clock()` | the installed function's own body without the clock check: the fast path and the real refill every block |
//! | `idgen_next_id()` | the installed function |
//!
//! ```text
//! IDGEN_TESTKIT_ROUTE=containers cargo bench -p idgen-sqlx --features mysql,lease --bench db_generator_calls
//! ```
//!
//! Environment: `IDGEN_BENCH_CALLS` (calls per cell, default 200000), `IDGEN_BENCH_ROUNDS`
//! (rounds, the median shown; default 5). The server comes from idgen-testkit's discovery
//! (`IDGEN_MYSQL_URL`, containers, or local binaries); MariaDB 10.3 or newer (sequences and the
//! Sequence engine).

use std::time::Instant;

use idgen_sqlx::Layout;
use idgen_sqlx::db_generator::{self, DbGenerator};
use sqlx::{AssertSqlSafe, MySqlConnection};

/// The functions measured, and what each does.
const FUNCTIONS: [(&str, &str); 6] = [
    ("bench_empty", "a stored function's call"),
    ("bench_floor", "`RETURN NEXTVAL(seq)` (the routine floor)"),
    (
        "bench_uservars",
        "the block's fast path on user variables, never refilling",
    ),
    ("bench_clock", "the same with the clock check"),
    (
        "bench_no_clock",
        "idgen's body without the clock check: its fast path and its refill",
    ),
    ("idgen_next_id", "idgen's function as installed"),
];

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn run(conn: &mut MySqlConnection, sql: &str) {
    sqlx::raw_sql(AssertSqlSafe(sql.to_owned()))
        .execute(conn)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// The installed function's body with its fast path's clock check taken out, as
/// `bench_no_clock()`; the four session variables it keeps its block in.
fn without_clock_check(body: &str) -> (String, [String; 2]) {
    let (head, rest) = body
        .split_once(" AND SYSDATE(6) + 0 BETWEEN ")
        .expect("the fast path's clock check");
    let (_, tail) = rest.split_once(" THEN").expect("the check's THEN");
    let condition = head.rsplit_once("IF ").expect("the fast path's IF").1;
    let (next, last) = condition.split_once(" < ").expect("`next < last`");
    (
        format!(
            "CREATE FUNCTION bench_no_clock() RETURNS BIGINT NOT DETERMINISTIC MODIFIES SQL DATA \
             {head} THEN{tail}"
        ),
        [next.trim().to_owned(), last.trim().to_owned()],
    )
}

/// Sets the variables `bench_uservars()` and `bench_clock()` read: a block that never ends, a
/// clock window around now.
const SET_PROBE_BLOCK: &str = "SET @p_n = 0, @p_e = 9000000000000000000, \
     @p_s = SYSDATE(6) + 0 - 1000000, @p_x = SYSDATE(6) + 0 + 100000000";

fn main() {
    let calls = env_or("IDGEN_BENCH_CALLS", 200_000);
    let rounds = env_or("IDGEN_BENCH_ROUNDS", 5).max(1) as usize;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let db = idgen_testkit::mysql().await.expect("a MariaDB server");
        let pool = db.pool_of(2).await.expect("a pool");
        let version: String = sqlx::query_scalar("SELECT VERSION()")
            .fetch_one(&pool)
            .await
            .expect("the version");
        let generator =
            DbGenerator::new(Layout::TWITTER).skip_takeover_wait_for_tests_and_development(true);
        db_generator::install(&pool, &generator)
            .await
            .expect("installing idgen_next_id()");
        // The installed body: its session variables are named after the install's holder.
        let body: String = sqlx::query_scalar(
            "SELECT ROUTINE_DEFINITION FROM information_schema.ROUTINES \
             WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME = ?",
        )
        .bind(generator.function_name())
        .fetch_one(&pool)
        .await
        .expect("the installed function's body");
        let (no_clock, [next, last]) = without_clock_check(&body);
        let mut conn = pool.acquire().await.expect("a connection");
        for sql in [
            "CREATE SEQUENCE bench_s",
            "CREATE FUNCTION bench_empty() RETURNS BIGINT NOT DETERMINISTIC MODIFIES SQL DATA RETURN 1",
            "CREATE FUNCTION bench_floor() RETURNS BIGINT NOT DETERMINISTIC MODIFIES SQL DATA \
             RETURN NEXTVAL(bench_s)",
            "CREATE FUNCTION bench_uservars() RETURNS BIGINT NOT DETERMINISTIC MODIFIES SQL DATA \
             BEGIN IF @p_n < @p_e THEN RETURN (@p_n := @p_n + 1); END IF; RETURN 0; END",
            "CREATE FUNCTION bench_clock() RETURNS BIGINT NOT DETERMINISTIC MODIFIES SQL DATA \
             BEGIN IF @p_n < @p_e AND SYSDATE(6) + 0 BETWEEN @p_s AND @p_x THEN \
             RETURN (@p_n := @p_n + 1); END IF; RETURN 0; END",
            &no_clock,
        ] {
            run(&mut conn, sql).await;
        }
        let mut seconds = vec![Vec::new(); FUNCTIONS.len()];
        for round in 0..rounds {
            // The functions rotate, so that the machine's noise hits them alike.
            for k in 0..FUNCTIONS.len() {
                let i = (k + round) % FUNCTIONS.len();
                let name = FUNCTIONS[i].0;
                run(&mut conn, SET_PROBE_BLOCK).await;
                let sql = format!("SELECT COUNT({name}()) FROM seq_1_to_{calls}");
                let began = Instant::now();
                let counted: i64 = sqlx::query_scalar(AssertSqlSafe(sql))
                    .fetch_one(&mut *conn)
                    .await
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                seconds[i].push(began.elapsed().as_secs_f64());
                assert_eq!(counted, calls as i64, "{name}");
            }
            // The premise of the `bench_no_clock` row: it kept a block (its variables are
            // the installed function's), not refilling at every call.
            let kept: i64 = sqlx::query_scalar(AssertSqlSafe(format!(
                "SELECT CAST({last} IS NOT NULL AND {next} IS NOT NULL AS SIGNED)"
            )))
            .fetch_one(&mut *conn)
            .await
            .expect("the session's block");
            assert_eq!(
                kept, 1,
                "the session holds no block in {next}, {last}: the variant measured a refill per call"
            );
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let per_call: Vec<f64> = seconds
            .iter_mut()
            .map(|v| median(v) / calls as f64 * 1e6)
            .collect();
        let floor = per_call[1];
        println!(
            "\n## A MariaDB call, part by part\n\n{version}; {calls} calls in one SELECT per cell, median of {rounds} rounds; \
             load average at the end {}.\n",
            std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim()
        );
        println!("| function | what it does | µs per call | ÷ floor |");
        println!("|---|---|---:|---:|");
        for (i, (name, what)) in FUNCTIONS.iter().enumerate() {
            println!(
                "| `{name}()` | {what} | {:.2} | {:.2}× |",
                per_call[i],
                per_call[i] / floor
            );
        }
        let part = |a: usize, b: usize| per_call[a] - per_call[b];
        println!(
            "\nParts (µs per call): the call {:.2}; NEXTVAL {:.2}; the user-variable fast path \
             {:.2}; the installed body's without its clock check over that fast path (its refill, once \
             per block, and the rest) {:.2}; the clock check {:.2} \
             (alone) and {:.2} (in the installed function).",
            per_call[0],
            part(1, 0),
            part(2, 0),
            part(4, 2),
            part(3, 2),
            part(5, 4)
        );
        drop(conn);
        db_generator::uninstall(&pool, &generator)
            .await
            .expect("uninstalling");
    });
}
