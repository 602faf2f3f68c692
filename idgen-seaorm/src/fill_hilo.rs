//! `i64` IDs filled on insert from a process-wide [`HiLo`] (feature `hilo`).

use std::sync::OnceLock;

use idgen_engine::hilo::HiLo;

use crate::error::Error;

static HILO: OnceLock<HiLo> = OnceLock::new();

/// Sets the process-wide [`HiLo`] that `i64` fields named in
/// [`fill_ids_on_insert!`](crate::fill_ids_on_insert) take their IDs from. Call it once at
/// start-up; a second call is [`Error::HiLoAlreadySet`]. (One counter for every such entity;
/// for a counter per entity, write the hook by hand with [`fill_from_hilo`].)
///
/// `new()` takes an ID from the blocks already in memory without waiting (`try_next_id`) and
/// leaves the field `NotSet` if none is buffered; `before_save` waits for one (`next_id`), so
/// the ActiveModel path always gets an ID, and `Entity::insert`/`insert_many` gets one whenever
/// the buffer had it (the engine refills ahead of need).
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_seaorm::hilo::{HiLo, SeaOrmCounter};
/// use idgen_seaorm::GeneratedId;
///
/// let db = sea_orm::Database::connect("sqlite::memory:").await?;
/// SeaOrmCounter::new(&db, "hilo")?.create(100).await?;
/// idgen_seaorm::set_hilo(HiLo::new(&db, 100).await?)?;
/// assert_eq!(i64::generate()?, 1);
/// assert_eq!(i64::generate_async().await?, 2);
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub fn set_hilo(ids: HiLo) -> Result<(), Error> {
    HILO.set(ids).map_err(|_| Error::HiLoAlreadySet)
}

pub(crate) fn hilo() -> Result<&'static HiLo, Error> {
    HILO.get().ok_or(Error::NoHiLo)
}

/// Sets `value` to the next ID of `ids` when it is `NotSet` (waiting for a block if need be),
/// for hand-written `before_save` hooks with a counter per entity.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_seaorm::hilo::{HiLo, SeaOrmCounter};
/// use sea_orm::ActiveValue;
///
/// let db = sea_orm::Database::connect("sqlite::memory:").await?;
/// SeaOrmCounter::new(&db, "orders")?.create(100).await?;
/// let orders = HiLo::builder(&db).counter("orders").block(100).build().await?;
/// let mut id = ActiveValue::<i64>::NotSet;
/// idgen_seaorm::fill_from_hilo(&mut id, &orders).await?;
/// assert_eq!(id, ActiveValue::Set(1));
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub async fn fill_from_hilo(
    value: &mut sea_orm::ActiveValue<i64>,
    ids: &HiLo,
) -> Result<(), Error> {
    if value.is_not_set() {
        *value = sea_orm::ActiveValue::Set(ids.next_id().await?);
    }
    Ok(())
}
