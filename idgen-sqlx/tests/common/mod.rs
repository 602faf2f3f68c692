//! What the database tests share: ID generators, the row types and the checks.

#![allow(dead_code, unreachable_pub)]

pub mod orders;
pub mod public_id_cases;
pub mod snowflake_cases;
pub mod sql;

/// A fresh test database from `db` (`idgen_testkit::postgres()`, `mysql()` or `sqlite()`) with
/// `ddl` run on it.
pub async fn with_tables<DB>(
    db: impl std::future::Future<Output = Result<idgen_testkit::TestDb<DB>, idgen_testkit::Error>>,
    ddl: impl sqlx::SqlSafeStr,
) -> idgen_testkit::TestDb<DB>
where
    DB: sqlx::Database,
    for<'c> &'c sqlx::Pool<DB>: sqlx::Executor<'c, Database = DB>,
{
    with_sql(db.await.expect("a test database"), ddl).await
}

/// `db` after `sql` ran on it: the test's tables, or rows written by other code (behind the ID
/// types' back).
pub async fn with_sql<DB>(
    db: idgen_testkit::TestDb<DB>,
    sql: impl sqlx::SqlSafeStr,
) -> idgen_testkit::TestDb<DB>
where
    DB: sqlx::Database,
    for<'c> &'c sqlx::Pool<DB>: sqlx::Executor<'c, Database = DB>,
{
    sqlx::raw_sql(sql)
        .execute(db.pool())
        .await
        .expect("the test's SQL");
    db
}

/// `wanted` bound as one PostgreSQL array: `any_sql` (`… = ANY($1)`) finds exactly those values,
/// in any order, and `echo_sql` (`SELECT $1::…[]`) returns the array as bound.
pub async fn check_pg_arrays<T>(
    pool: &sqlx::PgPool,
    any_sql: &'static str,
    echo_sql: &'static str,
    wanted: &[T],
) where
    T: for<'q> sqlx::Encode<'q, sqlx::Postgres>
        + for<'r> sqlx::Decode<'r, sqlx::Postgres>
        + sqlx::Type<sqlx::Postgres>
        + sqlx::postgres::PgHasArrayType
        + Ord
        + Clone
        + std::fmt::Debug
        + Send
        + Sync
        + Unpin
        + 'static,
{
    let mut found: Vec<T> = sqlx::query_scalar(any_sql)
        .bind(wanted)
        .fetch_all(pool)
        .await
        .unwrap();
    found.sort();
    let mut expected = wanted.to_vec();
    expected.sort();
    assert_eq!(found, expected);

    let echoed: Vec<T> = sqlx::query_scalar(echo_sql)
        .bind(wanted)
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(echoed, wanted);
}

/// `err` is a column decode error whose message contains each of `needles`.
pub fn check_decode_error(err: &sqlx::Error, needles: &[&str]) {
    assert!(matches!(err, sqlx::Error::ColumnDecode { .. }), "{err:?}");
    let text = err.to_string();
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} not in {text}");
    }
}

/// Every row of `ids` in ID order.
pub const SELECT_IDS: &str = "SELECT id, generator, seq, parent FROM ids ORDER BY id";

use idgen_sqlx::{Layout, Snowflake, SnowflakeId};

/// Generators that run at once, one task each.
pub const GENERATORS: i32 = 8;
/// Rows each generator's task inserts (8 × 1,250 = 10,000).
pub const ROWS_PER_GENERATOR: i32 = 1_250;
/// Rows per multi-row `INSERT`.
pub const BATCH: usize = 125;

/// The generator of node `node` (Twitter layout, system clock).
pub fn generator(node: i32) -> Snowflake {
    Snowflake::new(Layout::TWITTER, u64::try_from(node).expect("node >= 0")).expect("a valid node")
}

/// One row of the `ids` table.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct IdRow {
    pub id: SnowflakeId,
    /// Which generator made `id`.
    pub generator: i32,
    /// The position of `id` in its generator's creation order.
    pub seq: i32,
    /// The generator's previous ID, or NULL for every third row.
    pub parent: Option<SnowflakeId>,
}

/// The next `BATCH` rows of a generator, in creation order.
pub fn next_batch(
    ids: &Snowflake,
    generator: i32,
    first_seq: i32,
    previous: &mut Option<SnowflakeId>,
) -> Vec<IdRow> {
    (first_seq..(first_seq + BATCH as i32).min(ROWS_PER_GENERATOR))
        .map(|seq| {
            let id = ids.next_id().expect("the generator issues an ID");
            let parent = if seq % 3 == 0 { None } else { *previous };
            *previous = Some(id);
            IdRow {
                id,
                generator,
                seq,
                parent,
            }
        })
        .collect()
}

/// Checks the rows read back `ORDER BY id` against what the tasks inserted.
pub fn check_read_back(mut inserted: Vec<IdRow>, read_in_id_order: &[IdRow]) {
    assert_eq!(inserted.len(), (GENERATORS * ROWS_PER_GENERATOR) as usize);
    assert_eq!(read_in_id_order.len(), inserted.len(), "rows lost or added");
    inserted.sort_by_key(|row| row.id);
    // Nothing lost or changed: every column of every row is what was written.
    assert!(
        inserted == read_in_id_order,
        "rows read back differ from the rows inserted"
    );
    assert!(read_in_id_order.iter().any(|r| r.parent.is_none()));
    assert!(read_in_id_order.iter().any(|r| r.parent.is_some()));
    // ORDER BY id is each generator's creation order.
    for generator in 0..GENERATORS {
        let seqs: Vec<i32> = read_in_id_order
            .iter()
            .filter(|r| r.generator == generator)
            .map(|r| r.seq)
            .collect();
        let creation_order: Vec<i32> = (0..ROWS_PER_GENERATOR).collect();
        assert_eq!(
            seqs, creation_order,
            "generator {generator}: ORDER BY id is not creation order"
        );
    }
}

/// Inserts `GENERATORS × ROWS_PER_GENERATOR` rows into `ids` from one task per generator, each
/// making its IDs as it goes, and returns what was inserted.
#[macro_export]
macro_rules! insert_concurrently {
    ($db:ty, $pool:expr) => {{
        let mut tasks = Vec::new();
        for generator in 0..common::GENERATORS {
            let pool = $pool.clone();
            tasks.push(tokio::spawn(async move {
                let ids = common::generator(generator);
                let mut previous = None;
                let mut inserted = Vec::new();
                let mut seq = 0;
                while seq < common::ROWS_PER_GENERATOR {
                    let batch = common::next_batch(&ids, generator, seq, &mut previous);
                    seq += batch.len() as i32;
                    let mut insert = sqlx::QueryBuilder::<$db>::new(
                        "INSERT INTO ids (id, generator, seq, parent) ",
                    );
                    insert.push_values(&batch, |mut row, r| {
                        row.push_bind(r.id)
                            .push_bind(r.generator)
                            .push_bind(r.seq)
                            .push_bind(r.parent);
                    });
                    insert.build().execute(&pool).await.expect("insert a batch");
                    inserted.extend(batch);
                }
                inserted
            }));
        }
        let mut inserted = Vec::new();
        for task in tasks {
            inserted.extend(task.await.expect("an insert task panicked"));
        }
        inserted
    }};
}
