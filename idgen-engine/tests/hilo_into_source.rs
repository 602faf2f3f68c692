//! The call shape `HiLo::new(pool, 1000)` for a pool type owned by another crate: an adapter
//! crate implements `IntoHiLoSource<ItsOwnMarker>` for the foreign pool type (allowed by the
//! orphan rule because the marker is local), and inference picks that impl.
#![cfg(feature = "hilo")]

use idgen_engine::hilo::{
    BoxError, HiLo, HiLoSource, Increment, IntoHiLoSource, MemorySource, MissingCounter,
};

/// Stands in for `sqlx::PgPool`: a type this crate does not own.
type ForeignPool = std::collections::BTreeMap<String, i64>;

/// The adapter crate's marker.
struct PoolMarker;

/// The adapter crate's source for a pool and a counter name.
struct PoolSource {
    counter: MemorySource,
}

impl HiLoSource for PoolSource {
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        HiLoSource::allocate(&self.counter, size).await
    }
    async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> {
        Ok(Ok(Increment::Fixed(1000)))
    }
    fn name(&self) -> &str {
        HiLoSource::name(&self.counter)
    }
}

impl IntoHiLoSource<PoolMarker> for ForeignPool {
    type Source = PoolSource;
    fn into_hilo_source(self, counter: &str) -> PoolSource {
        PoolSource {
            counter: MemorySource::named(counter),
        }
    }
}

#[tokio::test]
async fn a_foreign_pool_type_reads_like_hilo_new_pool_1000() {
    let pool = ForeignPool::new();
    let ids = HiLo::new(pool.clone(), 1000).await.unwrap();
    assert_eq!(ids.next_id().await.unwrap(), 1);
    assert_eq!(ids.stats().counter, "hilo");

    let orders = HiLo::builder(pool).counter("orders").build().await.unwrap();
    assert_eq!(orders.stats().counter, "orders");

    // A plain source still works through the blanket impl, in the same crate.
    let plain = HiLo::new(MemorySource::new(), 10).await.unwrap();
    assert_eq!(plain.next_id().await.unwrap(), 1);
}
