//! The hi-lo generator handing out typed IDs: `HiLo::next_typed_id::<T>()`.

use crate::error::Result;
use idgen_core::Id;

use super::generator::HiLo;

impl HiLo {
    /// The next ID as an [`Id<T>`]: [`next_id`](Self::next_id), typed. Hi-lo IDs lie in
    /// `1..=i64::MAX`, so every one is an `Id<T>`.
    ///
    /// ```
    /// use idgen_core::Id;
    /// use idgen_engine::hilo::{HiLo, MemorySource};
    ///
    /// struct OrderLine;
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ids = HiLo::new(MemorySource::new(), 1000).await?;
    /// let a: Id<OrderLine> = ids.next_typed_id().await?;
    /// let b = ids.next_typed_id::<OrderLine>().await?;
    /// assert_eq!((a.get(), b.get()), (1, 2));
    /// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
    /// ```
    pub async fn next_typed_id<T: ?Sized>(&self) -> Result<Id<T>> {
        Ok(Id::try_from(self.next_id().await?)?)
    }

    /// The next ID as an [`Id<T>`] if one is buffered, else `Ok(None)` at once:
    /// [`try_next_id`](Self::try_next_id), typed.
    ///
    /// ```
    /// use idgen_core::Id;
    /// use idgen_engine::hilo::{HiLo, MemorySource};
    ///
    /// struct OrderLine;
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ids = HiLo::builder(MemorySource::new()).block(2).prefetch(false).build().await?;
    /// assert_eq!(ids.try_next_typed_id::<OrderLine>()?, Id::new(1));
    /// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
    /// ```
    pub fn try_next_typed_id<T: ?Sized>(&self) -> Result<Option<Id<T>>> {
        Ok(self.try_next_id()?.map(Id::try_from).transpose()?)
    }
}
