//! The counter forgets (issue 24): a floor keeps a new process above what was handed out before
//! the counter was set back or re-created; a sequence whose increment changes while a generator
//! runs is caught at the first block off its grid.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use idgen_engine::Error;
use idgen_engine::hilo::HiLo;

use super::DbKind;
use super::hilo::{
    COUNTER, CounterUnderTest, HiLoSubject, open_source, raw_allocate, set_back, setup,
};

/// The block size of these cases.
const BLOCK: u64 = 10;

/// IDs handed out, then the counter set back (a restore from an older backup, a re-created
/// counter, a lagging replica promoted): a new process with a floor (the largest ID the
/// application stored, read by a query at start-up) moves the counter above it before it
/// serves, and never hands out an ID again; on a SQL database the floor query is real SQL on
/// a table of the handed-out IDs.
pub async fn a_floor_keeps_a_new_process_above_a_counter_set_back<H: HiLoSubject>() {
    let (db, source, kind) = setup::<H>(BLOCK).await;
    let first = HiLo::builder(source)
        .block(BLOCK)
        .prefetch(false)
        .build()
        .await
        .unwrap();
    let mut before = Vec::new();
    for _ in 0..35 {
        before.push(first.next_id().await.unwrap());
    }
    drop(first);
    let handed_out = *before.iter().max().unwrap();
    let db = Arc::new(db);
    if db.kind().is_sql() {
        db.execute("CREATE TABLE orders_data (id BIGINT NOT NULL)")
            .await;
        let values: Vec<String> = before.iter().map(|id| format!("({id})")).collect();
        db.execute(&format!(
            "INSERT INTO orders_data (id) VALUES {}",
            values.join(", ")
        ))
        .await;
    }
    set_back(&db, kind).await;

    // A new process right after the fault.
    let source = open_source::<H>(db.url()).await;
    let known = Arc::new(AtomicI64::new(handed_out));
    let (query_db, query_known) = (Arc::clone(&db), Arc::clone(&known));
    let second = HiLo::builder(source)
        .block(BLOCK)
        .prefetch(false)
        .floor_from(move || {
            let (db, known) = (Arc::clone(&query_db), Arc::clone(&query_known));
            async move {
                if db.kind().is_sql() {
                    Ok(db
                        .scalar("SELECT COALESCE(MAX(id), 0) FROM orders_data")
                        .await
                        .unwrap_or(0))
                } else {
                    Ok(known.load(Ordering::SeqCst))
                }
            }
        })
        .build()
        .await
        .unwrap();
    let mut after = Vec::new();
    for _ in 0..35 {
        after.push(second.next_id().await.unwrap());
    }
    let again: Vec<i64> = after
        .iter()
        .copied()
        .filter(|id| *id <= handed_out)
        .collect();
    assert!(
        again.is_empty(),
        "handed out again after the counter was set back: {again:?} (up to {handed_out} was handed out before)"
    );
    let distinct: HashSet<i64> = after.iter().copied().collect();
    assert_eq!(distinct.len(), after.len());

    // A counter that lags behind the floor later (set back again while this one runs) is
    // caught at its next block: the generator fails closed.
    set_back(&db, kind).await;
    let err = loop {
        match second.next_id().await {
            Ok(id) => assert!(id > handed_out, "{id} handed out again"),
            Err(err) => break err,
        }
    };
    assert!(
        matches!(err, Error::HiLoCounterWentBackwards { .. }),
        "{err:?}"
    );
}

/// A sequence's increment is changed (`ALTER SEQUENCE … INCREMENT BY`) while a generator runs
/// and a script takes blocks too: the generator's next block, off the grid its blocks lie on,
/// is refused (the generator fails closed) instead of served over the script's block. Counter
/// tables (any step per call) have no increment to change, and etcd's counter re-reads its
/// increment on every allocation: the case does nothing there.
pub async fn a_sequence_whose_increment_changes_while_it_runs_fails_closed<H: HiLoSubject>() {
    let (db, source, kind) = setup::<H>(BLOCK).await;
    // etcd's counter keeps its increment in a key it re-reads on every allocation: no grid
    // to leave. SQL sequences only.
    if kind != CounterUnderTest::Sequence || !db.kind().is_sql() {
        return;
    }
    let ids = HiLo::builder(source)
        .block(BLOCK)
        .prefetch(false)
        .build()
        .await
        .unwrap();
    let mut seen = vec![ids.next_id().await.unwrap()];
    // Another process (a script) takes the next block.
    let theirs = raw_allocate(&db, kind, BLOCK).await;
    let alter = match db.kind() {
        DbKind::Postgres | DbKind::MySql => format!("ALTER SEQUENCE {COUNTER} INCREMENT BY 5"),
        other => unreachable!("no sequences on {}", other.name()),
    };
    db.execute(&alter).await;
    let err = loop {
        match ids.next_id().await {
            Ok(id) => seen.push(id),
            Err(err) => break err,
        }
        assert!(
            seen.len() < 100,
            "the changed increment went unnoticed: {seen:?}"
        );
    };
    let overlap: Vec<i64> = seen
        .iter()
        .copied()
        .filter(|id| (theirs..theirs + BLOCK as i64).contains(id))
        .collect();
    assert!(
        overlap.is_empty(),
        "handed out IDs of the script's block {theirs}..{}: {overlap:?}",
        theirs + BLOCK as i64
    );
    assert!(
        matches!(
            err,
            Error::HiLoBlockOffGrid { .. } | Error::HiLoCounterWentBackwards { .. }
        ),
        "{err:?}"
    );
}
