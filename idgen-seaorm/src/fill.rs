//! Filling IDs on insert from a process-wide generator (see the crate docs for the paths covered).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use idgen_core::{Clock, PublicId, Snowflake, SnowflakeId};
use sea_orm::{ActiveValue, Value};

use crate::error::Error;

/// An ID being waited for on the runtime.
type PendingId<'a> = Pin<Box<dyn Future<Output = idgen_core::Result<SnowflakeId>> + Send + 'a>>;

/// A generator, without its clock type.
trait IssueIds: Send + Sync {
    fn next_id(&self) -> idgen_core::Result<SnowflakeId>;
    fn next_id_async(&self) -> PendingId<'_>;
    fn node(&self) -> u64;
}

impl<C: Clock + 'static> IssueIds for Snowflake<C> {
    fn next_id(&self) -> idgen_core::Result<SnowflakeId> {
        Snowflake::next_id(self)
    }
    fn next_id_async(&self) -> PendingId<'_> {
        Box::pin(Snowflake::next_id_async(self))
    }
    fn node(&self) -> u64 {
        Snowflake::node(self)
    }
}

static GENERATOR: OnceLock<Arc<dyn IssueIds>> = OnceLock::new();

/// Sets the process-wide generator that [`next_id`], [`preset`] and [`fill`] take IDs from.
/// Call it once at start-up, before the first insert; a second call is
/// [`Error::GeneratorAlreadySet`].
///
/// Pass the generator, or an `Arc` of it to keep using it (e.g. for `stats()`).
///
/// ```
/// use idgen_seaorm::{Layout, Snowflake};
///
/// idgen_seaorm::set_generator(Snowflake::new(Layout::TWITTER, 7)?)?;
/// assert_eq!(Layout::TWITTER.decompose(idgen_seaorm::next_id()?)?.node, 7);
///
/// let again = idgen_seaorm::set_generator(Snowflake::new(Layout::TWITTER, 8)?);
/// assert!(matches!(again, Err(idgen_seaorm::Error::GeneratorAlreadySet { node: 7 })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn set_generator<C: Clock + 'static>(
    generator: impl Into<Arc<Snowflake<C>>>,
) -> Result<(), Error> {
    let generator: Arc<Snowflake<C>> = generator.into();
    GENERATOR
        .set(generator)
        .map_err(|_| Error::GeneratorAlreadySet {
            node: GENERATOR.get().map_or(u64::MAX, |set| set.node()),
        })
}

/// The next ID of the process-wide generator set by [`set_generator`].
///
/// ```
/// use idgen_seaorm::{Layout, Snowflake};
///
/// assert!(matches!(idgen_seaorm::next_id(), Err(idgen_seaorm::Error::NoGenerator)));
/// idgen_seaorm::set_generator(Snowflake::new(Layout::TWITTER, 1)?)?;
/// assert!(idgen_seaorm::next_id()? < idgen_seaorm::next_id()?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn next_id() -> Result<SnowflakeId, Error> {
    Ok(GENERATOR.get().ok_or(Error::NoGenerator)?.next_id()?)
}

/// [`next_id`], waiting on the tokio runtime instead of blocking the thread when the generator
/// must wait (its tick's sequence used up, or the clock behind within its
/// [`ClockPolicy`](idgen_core::ClockPolicy)): the other tasks of the runtime keep running.
///
/// ```
/// use idgen_seaorm::{Layout, Snowflake};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// idgen_seaorm::set_generator(Snowflake::new(Layout::SONYFLAKE, 6)?)?;
/// let mut last = idgen_seaorm::next_id_async().await?;
/// for _ in 0..600 { // more than two ticks' worth: waits without blocking the runtime
///     let id = idgen_seaorm::next_id_async().await?;
///     assert!(id > last);
///     last = id;
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
/// ```
pub async fn next_id_async() -> Result<SnowflakeId, Error> {
    Ok(GENERATOR
        .get()
        .ok_or(Error::NoGenerator)?
        .next_id_async()
        .await?)
}

/// An ID type that can be generated for a new row, without arguments.
///
/// Implemented for [`SnowflakeId`] (from the process-wide generator, [`next_id`]) and for
/// [`PublicId`] (128 random bits from the operating system, [`PublicId::try_new`]).
pub trait GeneratedId: Into<Value> + Sized + Send {
    /// A fresh ID.
    ///
    /// ```
    /// use idgen_seaorm::{GeneratedId, Layout, Snowflake, SnowflakeId};
    ///
    /// idgen_seaorm::set_generator(Snowflake::new(Layout::TWITTER, 2)?)?;
    /// let id = SnowflakeId::generate()?;
    /// assert_eq!(Layout::TWITTER.decompose(id)?.node, 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn generate() -> Result<Self, Error>;

    /// A fresh ID, waiting for one on the runtime if the source needs to (a Snowflake
    /// generator whose tick is used up or whose clock is behind, hi-lo refilling its blocks),
    /// never blocking the thread; a public ID answers at once.
    ///
    /// ```
    /// use idgen_seaorm::{GeneratedId, PublicId};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let id = PublicId::<()>::generate_async().await?;
    /// assert_eq!(id.uuid().get_version_num(), 4);
    /// # Ok::<(), idgen_seaorm::Error>(()) }).unwrap();
    /// ```
    fn generate_async() -> impl std::future::Future<Output = Result<Self, Error>> + Send {
        std::future::ready(Self::generate())
    }
}

impl GeneratedId for SnowflakeId {
    fn generate() -> Result<Self, Error> {
        next_id()
    }

    async fn generate_async() -> Result<Self, Error> {
        next_id_async().await
    }
}

/// From the process-wide [`HiLo`](idgen_engine::hilo::HiLo) set by
/// [`set_hilo`](crate::set_hilo): without waiting in `generate` (an error if no ID is buffered),
/// waiting for a block in `generate_async`.
#[cfg(feature = "hilo")]
impl GeneratedId for i64 {
    fn generate() -> Result<Self, Error> {
        crate::fill_hilo::hilo()?
            .try_next_id()?
            .ok_or(Error::HiLoBufferEmpty)
    }

    async fn generate_async() -> Result<Self, Error> {
        Ok(crate::fill_hilo::hilo()?.next_id().await?)
    }
}

impl<T: ?Sized> GeneratedId for PublicId<T> {
    fn generate() -> Result<Self, Error> {
        Ok(PublicId::try_new()?)
    }
}

/// A fresh ID as an `ActiveValue`, for `ActiveModelBehavior::new()`: `Set(id)`, or `NotSet` if
/// no ID could be made (no generator yet, a fenced lease, …); [`fill`] in `before_save` then
/// retries and reports the error, and `Entity::insert` fails on the missing primary key.
///
/// ```
/// use idgen_seaorm::{Layout, Snowflake, SnowflakeId};
/// use sea_orm::ActiveValue;
///
/// assert_eq!(idgen_seaorm::preset::<SnowflakeId>(), ActiveValue::NotSet);
/// idgen_seaorm::set_generator(Snowflake::new(Layout::TWITTER, 3)?)?;
/// assert!(idgen_seaorm::preset::<SnowflakeId>().is_set());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn preset<T: GeneratedId>() -> ActiveValue<T> {
    match T::generate() {
        Ok(id) => ActiveValue::Set(id),
        Err(_) => ActiveValue::NotSet,
    }
}

/// Sets `value` to a fresh ID when it is `NotSet`, for `ActiveModelBehavior::before_save`; an ID
/// already set (by [`preset`] or by hand) is kept.
///
/// ```
/// use idgen_seaorm::{Layout, Snowflake, SnowflakeId};
/// use sea_orm::ActiveValue;
///
/// let mut id = ActiveValue::<SnowflakeId>::NotSet;
/// assert!(matches!(idgen_seaorm::fill(&mut id), Err(idgen_seaorm::Error::NoGenerator)));
///
/// idgen_seaorm::set_generator(Snowflake::new(Layout::TWITTER, 4)?)?;
/// idgen_seaorm::fill(&mut id)?;
/// assert!(id.is_set());
///
/// let mut mine = ActiveValue::Set(SnowflakeId::new(42).unwrap());
/// idgen_seaorm::fill(&mut mine)?;
/// assert_eq!(mine, ActiveValue::Set(SnowflakeId::new(42).unwrap()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fill<T: GeneratedId>(value: &mut ActiveValue<T>) -> Result<(), Error> {
    if value.is_not_set() {
        *value = ActiveValue::Set(T::generate()?);
    }
    Ok(())
}

/// [`fill`], waiting for an ID if the source needs to ([`GeneratedId::generate_async`]): what
/// [`fill_ids_on_insert!`](crate::fill_ids_on_insert) calls in `before_save`.
///
/// ```
/// use idgen_seaorm::PublicId;
/// use sea_orm::ActiveValue;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut id = ActiveValue::<PublicId>::NotSet;
/// idgen_seaorm::fill_async(&mut id).await?;
/// assert!(id.is_set());
/// # Ok::<(), idgen_seaorm::Error>(()) }).unwrap();
/// ```
pub async fn fill_async<T: GeneratedId>(value: &mut ActiveValue<T>) -> Result<(), Error> {
    if value.is_not_set() {
        *value = ActiveValue::Set(T::generate_async().await?);
    }
    Ok(())
}
