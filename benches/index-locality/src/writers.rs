//! The insert workload: concurrent writers, each sending batched multi-row `INSERT`s.

use std::sync::Arc;
use std::time::Instant;

use crate::database::{Bench, Dialect};
use crate::error::BoxResult;
use crate::keys::{KeyKind, KeySource};

/// The shape of the workload, the same for every key kind.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Workload {
    /// Rows in all.
    pub(crate) rows: u64,
    /// Concurrent writers (application instances), one connection each.
    pub(crate) writers: usize,
    /// Rows per `INSERT` statement.
    pub(crate) batch: usize,
    /// Bytes of payload text per row.
    pub(crate) payload_bytes: usize,
    /// One generator for all writers (one application instance with several tasks) instead of
    /// one per writer (several instances).
    pub(crate) shared_generator: bool,
}

/// `payload_bytes` of lowercase letters from a per-writer xorshift, so pages hold realistic,
/// non-repeating text.
fn payload(state: &mut u64, bytes: usize) -> String {
    (0..bytes)
        .map(|_| {
            *state ^= *state << 13;
            *state ^= *state >> 7;
            *state ^= *state << 17;
            char::from(b'a' + (*state % 26) as u8)
        })
        .collect()
}

/// Inserts `workload.rows` rows into `kind`'s table and returns the rows per second.
pub(crate) async fn insert_all<DB: Dialect>(
    db: &Arc<Bench<DB>>,
    kind: KeyKind,
    workload: Workload,
) -> BoxResult<f64> {
    let mut sources: Vec<Arc<KeySource>> = Vec::with_capacity(workload.writers);
    for writer in 0..workload.writers {
        if workload.shared_generator && writer > 0 {
            sources.push(Arc::clone(&sources[0]));
            continue;
        }
        let hilo = if kind == KeyKind::HiLo {
            Some(db.hilo().await?)
        } else {
            None
        };
        sources.push(Arc::new(KeySource::new(kind, writer, hilo)?));
    }
    let writers = workload.writers as u64;
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(workload.writers);
    for (writer, source) in sources.into_iter().enumerate() {
        let db = Arc::clone(db);
        let writer_u64 = writer as u64;
        // An equal share each; the remainder goes to the first writers.
        let rows = workload.rows / writers + u64::from(writer_u64 < workload.rows % writers);
        tasks.push(tokio::spawn(async move {
            let mut seed = 0x9E37_79B9_7F4A_7C15 ^ (writer_u64 + 1);
            let mut left = rows;
            let mut batch = Vec::with_capacity(workload.batch);
            while left > 0 {
                let n = left.min(workload.batch as u64);
                batch.clear();
                for _ in 0..n {
                    batch.push((
                        source.next_key().await?,
                        payload(&mut seed, workload.payload_bytes),
                    ));
                }
                db.insert(kind, &batch).await?;
                left -= n;
            }
            BoxResult::Ok(())
        }));
    }
    for task in tasks {
        task.await??;
    }
    Ok(workload.rows as f64 / started.elapsed().as_secs_f64())
}
