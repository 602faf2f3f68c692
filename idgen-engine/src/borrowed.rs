//! [`Borrowed`]: `WorkerLease::acquire(&pool, …)` and `HiLo::new(&pool, …)` for every pool an
//! adapter crate takes by value, written once here instead of once per adapter and pool.
//!
//! A reference to a pool that is [`IntoLeaseStore`](crate::lease::IntoLeaseStore) or
//! [`IntoHiLoSource`](crate::hilo::IntoHiLoSource) (and `Clone`, as every pool handle is)
//! becomes the store or source of a clone of the pool: the same connections, shared.

use std::marker::PhantomData;

#[cfg(feature = "hilo")]
use crate::hilo::IntoHiLoSource;
#[cfg(feature = "lease")]
use crate::lease::IntoLeaseStore;

/// The marker of the `IntoLeaseStore` and `IntoHiLoSource` implementations for `&P`, where `P`
/// has them with the marker `M`; callers never name it (inference picks it, as it picks the
/// adapter's own marker for `P`). A marker of its own keeps these implementations apart from
/// the ones for stores and sources themselves (marker `()`).
///
/// ```
/// # #[cfg(feature = "hilo")] {
/// use idgen_engine::hilo::{HiLo, IntoHiLoSource, MemorySource};
///
/// /// Stands in for a connection pool owned by another crate.
/// #[derive(Clone)]
/// struct Pool;
/// struct PoolMarker;
///
/// impl IntoHiLoSource<PoolMarker> for Pool {
///     type Source = MemorySource;
///     fn into_hilo_source(self, counter: &str) -> MemorySource {
///         MemorySource::named(counter)
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let pool = Pool;
/// let ids = HiLo::new(&pool, 1000).await?; // by reference, through `Borrowed<PoolMarker>`
/// assert_eq!(ids.stats().counter, "hilo");
/// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
/// # }
/// ```
pub struct Borrowed<M>(PhantomData<M>);

#[cfg(feature = "lease")]
impl<M, P: IntoLeaseStore<M> + Clone> IntoLeaseStore<Borrowed<M>> for &P {
    type Store = P::Store;
    /// The store of a clone of the pool.
    fn into_lease_store(self, table: &str) -> P::Store {
        self.clone().into_lease_store(table)
    }
}

#[cfg(feature = "hilo")]
impl<M, P: IntoHiLoSource<M> + Clone> IntoHiLoSource<Borrowed<M>> for &P {
    type Source = P::Source;
    /// The source of a clone of the pool.
    fn into_hilo_source(self, counter: &str) -> P::Source {
        self.clone().into_hilo_source(counter)
    }
}
