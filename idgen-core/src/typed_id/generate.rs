//! The Snowflake generator handing out typed IDs: `Snowflake::next_typed_id::<T>()`
//! (`HiLo::next_typed_id::<T>()` is in idgen-engine).

use crate::Result;
use crate::clock::Clock;
use crate::snowflake::Snowflake;
use crate::typed_id::Id;

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
