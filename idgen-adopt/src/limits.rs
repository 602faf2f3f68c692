//! The numbers an adoption goes by: the defaults of [`AdoptOptions`](crate::AdoptOptions) and
//! the bounds `plan` and `apply` keep.

use std::time::Duration;

/// The default name of the progress table.
///
/// ```
/// assert_eq!(idgen_adopt::DEFAULT_PROGRESS_TABLE, "idgen_adoption");
/// ```
pub const DEFAULT_PROGRESS_TABLE: &str = "idgen_adoption";

/// The default clock allowance of a Snowflake adoption: the key check uses the time this long
/// before now, for a database host or application host whose clock is behind this one's
/// (and the database-side generator, which starts 20 s behind).
///
/// ```
/// assert_eq!(idgen_adopt::DEFAULT_CLOCK_ALLOWANCE.as_secs(), 60);
/// ```
pub const DEFAULT_CLOCK_ALLOWANCE: Duration = Duration::from_secs(60);

/// How long a step keeps trying to get its lock by default (see
/// [`AdoptOptions::lock_wait`](crate::AdoptOptions::lock_wait)).
///
/// ```
/// assert_eq!(idgen_adopt::DEFAULT_LOCK_WAIT.as_secs(), 10);
/// ```
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(10);

/// The default number of rows a backfill batch updates. Small, so that a writer who meets a
/// batch on the server waits little: with 4 writers on a 2-core machine, batches of 100 rows
/// [`DEFAULT_BACKFILL_PAUSE`] apart kept the writers' p99 during the backfill within 0.9–1.3×
/// the p99 before it, where batches of 500 gave 1.3–1.7× (`idgen-sqlx/BENCHMARKS.md`). Raise
/// it (and lower the pause) for a faster backfill when the writers can spare the server.
///
/// ```
/// assert_eq!(idgen_adopt::DEFAULT_BACKFILL_BATCH, 100);
/// ```
pub const DEFAULT_BACKFILL_BATCH: u32 = 100;

/// The default pause between two backfill batches, which leaves the server to the writers:
/// without it the same batches cost them 2× in p99.
///
/// ```
/// assert_eq!(idgen_adopt::DEFAULT_BACKFILL_PAUSE, std::time::Duration::from_millis(10));
/// ```
pub const DEFAULT_BACKFILL_PAUSE: Duration = Duration::from_millis(10);

/// The largest backfill batch: a batch is one transaction, holding its rows' locks until it
/// commits.
///
/// ```
/// assert_eq!(idgen_adopt::MAX_BACKFILL_BATCH, 100_000);
/// ```
pub const MAX_BACKFILL_BATCH: u32 = 100_000;

/// How long one try of a PostgreSQL step waits for its lock (`lock_timeout`), in ms: other
/// sessions' queries queue behind a waiting `ALTER`, so it waits briefly and tries again
/// (MariaDB steps do not wait at all: `lock_wait_timeout = 0`).
pub(crate) const LOCK_TRY_MS: u64 = 100;

/// The fewest values a hi-lo adoption leaves its sequence below the key type's largest value
/// (and at least as many as the largest key so far), unless the user accepts fewer
/// ([`AdoptOptions::accept_key_capacity`](crate::AdoptOptions::accept_key_capacity)): with
/// `INCREMENT BY block` each old writer's row takes one value, a whole block of the key's
/// range, and each hi-lo block one.
///
/// ```
/// assert_eq!(idgen_adopt::MIN_SEQUENCE_VALUES_LEFT, 1_000_000);
/// ```
pub const MIN_SEQUENCE_VALUES_LEFT: i64 = 1_000_000;
