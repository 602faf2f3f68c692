//! Generators handing out typed IDs: `Snowflake::next_typed_id::<T>()` and
//! `HiLo::next_typed_id::<T>()`.

use crate::{Clock, Id, Result, Snowflake};

impl<C: Clock> Snowflake<C> {
    /// The next ID as an [`Id<T>`]: [`next_id`](Self::next_id), typed.
    ///
    /// ```
    /// use idgen_core::{Id, Layout, Snowflake};
    ///
    /// struct Order;
    /// let ids = Snowflake::new(Layout::TWITTER, 7)?;
    /// let a: Id<Order> = ids.next_typed_id()?;
    /// let b = ids.next_typed_id::<Order>()?;
    /// assert!(b > a);
    /// assert_eq!(Layout::TWITTER.decompose(b.to_snowflake())?.node, 7);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn next_typed_id<T: ?Sized>(&self) -> Result<Id<T>> {
        self.next_id().map(Id::from_snowflake)
    }

    /// The next ID as an [`Id<T>`] without blocking a runtime thread:
    /// [`next_id_async`](Self::next_id_async), typed (feature `tokio`).
    ///
    /// ```
    /// use idgen_core::{Id, Layout, Snowflake};
    ///
    /// struct Order;
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ids = Snowflake::new(Layout::TWITTER, 7)?;
    /// let id: Id<Order> = ids.next_typed_id_async().await?;
    /// assert!(id.get() > 0);
    /// # Ok::<(), idgen_core::Error>(()) }).unwrap();
    /// ```
    #[cfg(feature = "tokio")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
    pub async fn next_typed_id_async<T: ?Sized>(&self) -> Result<Id<T>> {
        self.next_id_async().await.map(Id::from_snowflake)
    }
}

#[cfg(feature = "hilo")]
impl crate::HiLo {
    /// The next ID as an [`Id<T>`]: [`next_id`](Self::next_id), typed. Hi-lo IDs lie in
    /// `1..=i64::MAX`, so every one is an `Id<T>`.
    ///
    /// ```
    /// use idgen_core::Id;
    /// use idgen_core::hilo::{HiLo, MemorySource};
    ///
    /// struct OrderLine;
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ids = HiLo::new(MemorySource::new(), 1000).await?;
    /// let a: Id<OrderLine> = ids.next_typed_id().await?;
    /// let b = ids.next_typed_id::<OrderLine>().await?;
    /// assert_eq!((a.get(), b.get()), (1, 2));
    /// # Ok::<(), idgen_core::Error>(()) }).unwrap();
    /// ```
    pub async fn next_typed_id<T: ?Sized>(&self) -> Result<Id<T>> {
        Id::try_from(self.next_id().await?)
    }

    /// The next ID as an [`Id<T>`] if one is buffered, else `Ok(None)` at once:
    /// [`try_next_id`](Self::try_next_id), typed.
    ///
    /// ```
    /// use idgen_core::Id;
    /// use idgen_core::hilo::{HiLo, MemorySource};
    ///
    /// struct OrderLine;
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ids = HiLo::builder(MemorySource::new()).block(2).prefetch(false).build().await?;
    /// assert_eq!(ids.try_next_typed_id::<OrderLine>()?, Id::new(1));
    /// # Ok::<(), idgen_core::Error>(()) }).unwrap();
    /// ```
    pub fn try_next_typed_id<T: ?Sized>(&self) -> Result<Option<Id<T>>> {
        self.try_next_id()?.map(Id::try_from).transpose()
    }
}
