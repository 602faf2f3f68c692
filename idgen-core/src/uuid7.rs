//! Monotonic UUIDv7 ([RFC 9562](https://www.rfc-editor.org/rfc/rfc9562) §5.7): [`Uuid7Generator`]
//! and [`timestamp_ms`].
//!
//! A UUIDv7 starts with a 48-bit Unix timestamp in milliseconds, so UUIDs made later sort later
//! **where the database compares UUIDs byte by byte**: PostgreSQL's `uuid` type, MySQL/MariaDB
//! `BINARY(16)`, SQLite `BLOB`, and the text form everywhere. Not SQL Server: its
//! `uniqueidentifier` compares the last 6 bytes first, so UUIDv7 values are **not** in time order
//! there (store them as `BINARY(16)` if you need that). A UUIDv7 also reveals its creation time
//! to the millisecond: show the world a [`PublicId`](crate::public_id::PublicId), not a UUIDv7 key.

#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering};
use std::fmt;
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, Ordering};

use uuid::{Uuid, Variant};

use crate::clock::{Clock, SystemClock};
use crate::error::Error;
use crate::public_id::random;

pub(crate) mod limits;

use limits::MAX_UNIX_MS;

/// Counter bits: the 12 bits of `rand_a` and the 4 top bits of `rand_b`.
const COUNTER_BITS: u32 = 16;
const COUNTER_MASK: u64 = (1 << COUNTER_BITS) - 1;
/// A new millisecond's counter starts at a random value below 2¹⁵ (its top bit 0), so at least
/// 32 768 UUIDs fit in each millisecond before the counter overflows.
const SEED_MASK: u64 = (1 << (COUNTER_BITS - 1)) - 1;
/// The random bits at the end of `rand_b`: 62 − 4.
const RANDOM_BITS: u32 = 58;

/// A generator of UUIDv7 that are strictly increasing within the process, across threads.
///
/// RFC 9562 method 1 ("fixed-length dedicated counter"): after the 48-bit millisecond timestamp
/// come a 16-bit counter (the 12 bits of `rand_a` and the top 4 of `rand_b`) and 58 fresh
/// random bits from a per-thread CSPRNG keyed by the OS, with no system call per UUID (the
/// generator of [`PublicId::try_new`](crate::public_id::PublicId::try_new), which says how it is seeded and
/// reseeded, in forked children too). In a new millisecond the counter starts at a random value
/// below 2¹⁵; within a millisecond it counts up. Timestamp and counter live together in one
/// `AtomicU64` (`ms << 16 | counter`) advanced by compare-and-swap, so the generator is lock-free,
/// `Send + Sync`, and every UUID is greater than every UUID it returned before, whichever thread
/// asked:
///
/// * **Counter overflow** (more than ~32 768 UUIDs in one millisecond) carries into the
///   timestamp: the UUID borrows the next millisecond, ahead of the clock, until the clock
///   catches up. Order is kept; the timestamp runs at most as far ahead as needed.
/// * **Clock steps back**: the generator keeps counting from its last timestamp, so order is
///   kept and timestamps stand still until the clock passes them again.
/// * A clock before 1970 or after year 10889, or a counter carried past that, is an
///   [`Error::Uuid7TimeOutOfRange`], never a wrap-around.
///
/// The clock is a [`Clock`]; tests pass a [`ManualClock`](crate::clock::ManualClock).
///
/// ```
/// use idgen_core::Uuid7Generator;
///
/// let ids = Uuid7Generator::new();
/// let a = ids.next_uuid()?;
/// let b = ids.next_uuid()?;
/// assert!(b > a);
/// assert!(b.to_string() > a.to_string());
/// assert_eq!(a.get_version_num(), 7);
/// # Ok::<(), idgen_core::Error>(())
/// ```
pub struct Uuid7Generator<C: Clock = SystemClock> {
    clock: C,
    /// `ms << 16 | counter` of the last UUID issued.
    last: AtomicU64,
}

impl Uuid7Generator<SystemClock> {
    /// A generator on the [`SystemClock`].
    ///
    /// ```
    /// use idgen_core::Uuid7Generator;
    /// let id = Uuid7Generator::new().next_uuid()?;
    /// assert_eq!(id.get_variant(), uuid::Variant::RFC4122);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn new() -> Self {
        Self::with_clock(SystemClock::new())
    }
}

impl Default for Uuid7Generator<SystemClock> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Clock> Uuid7Generator<C> {
    /// A generator reading `clock`.
    ///
    /// ```
    /// use idgen_core::{ManualClock, Uuid7Generator, uuid7};
    ///
    /// let ids = Uuid7Generator::with_clock(ManualClock::new(1_700_000_000_000));
    /// let id = ids.next_uuid()?;
    /// assert_eq!(uuid7::timestamp_ms(id)?, 1_700_000_000_000);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn with_clock(clock: C) -> Self {
        Self {
            clock,
            last: AtomicU64::new(0),
        }
    }

    /// The next UUIDv7: greater than every UUID this generator returned before.
    ///
    /// # Errors
    ///
    /// [`Error::Uuid7TimeOutOfRange`] for a clock outside 1970 to year 10889 (or a
    /// counter carried past it), [`Error::RandomSource`] if the OS random number generator fails
    /// (only possible when this thread's generator is keyed).
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_core::{Error, ManualClock, Uuid7Generator};
    ///
    /// let ids = Uuid7Generator::with_clock(ManualClock::new(-1));
    /// assert!(matches!(ids.next_uuid(), Err(Error::Uuid7TimeOutOfRange { unix_ms: -1 })));
    /// ```
    pub fn next_uuid(&self) -> Result<Uuid, Error> {
        let now = self.clock.now_ms();
        if !(0..=MAX_UNIX_MS).contains(&now) {
            return Err(Error::Uuid7TimeOutOfRange { unix_ms: now });
        }
        let now = now as u64;
        // 58 of these 64 bits fill the tail; a new millisecond's counter seed is drawn apart,
        // only when one is needed.
        let tail = random::u64()?;
        let mut seed = None;
        let mut last = self.last.load(Ordering::Acquire);
        let next = loop {
            let next = if now > last >> COUNTER_BITS {
                let seed = match seed {
                    Some(seed) => seed,
                    None => *seed.insert(random::u64()? & SEED_MASK),
                };
                now << COUNTER_BITS | seed
            } else {
                // Same or earlier millisecond: count on; an overflow carries into the ms.
                match last.checked_add(1) {
                    Some(n) if n >> COUNTER_BITS <= MAX_UNIX_MS as u64 => n,
                    _ => {
                        return Err(Error::Uuid7TimeOutOfRange {
                            unix_ms: MAX_UNIX_MS + 1,
                        });
                    }
                }
            };
            match self
                .last
                .compare_exchange_weak(last, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break next,
                Err(current) => last = current,
            }
        };
        Ok(layout(next >> COUNTER_BITS, next & COUNTER_MASK, tail))
    }
}

/// The UUID for millisecond `ms`, counter `counter` and the low 58 bits of `random`.
fn layout(ms: u64, counter: u64, random: u64) -> Uuid {
    let v = u128::from(ms) << 80
        | 0x7 << 76 // ver
        | u128::from(counter >> 4) << 64 // rand_a: counter bits 15..4
        | 0b10 << 62 // var
        | u128::from(counter & 0xf) << RANDOM_BITS // rand_b's top: counter bits 3..0
        | u128::from(random) & ((1 << RANDOM_BITS) - 1);
    Uuid::from_u128(v)
}

impl<C: Clock> fmt::Debug for Uuid7Generator<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let last = self.last.load(Ordering::Relaxed);
        f.debug_struct("Uuid7Generator")
            .field("last_unix_ms", &(last >> COUNTER_BITS))
            .field("last_counter", &(last & COUNTER_MASK))
            .finish_non_exhaustive()
    }
}

/// The creation time of a UUIDv7, in milliseconds since the Unix epoch.
///
/// [`Error::NotUuid7`] for any other UUID (version ≠ 7, or not the RFC 9562 variant).
///
/// ```
/// use idgen_core::uuid7;
///
/// let id: uuid::Uuid = "01890a5d-ac96-774b-bcce-b302099a8057".parse().unwrap();
/// assert_eq!(uuid7::timestamp_ms(id)?, 1_688_096_058_518); // 2023-06-30T03:34:18.518Z
/// assert!(uuid7::timestamp_ms(uuid::Uuid::nil()).is_err());
/// # Ok::<(), idgen_core::Error>(())
/// ```
pub fn timestamp_ms(uuid: Uuid) -> Result<i64, Error> {
    if uuid.get_version_num() != 7 || uuid.get_variant() != Variant::RFC4122 {
        return Err(Error::NotUuid7 {
            uuid,
            version: uuid.get_version_num() as u8,
            variant: format!("{:?}", uuid.get_variant()),
        });
    }
    Ok((uuid.as_u128() >> 80) as i64)
}

#[cfg(all(test, not(loom)))]
mod tests;

/// Model checks of the compare-and-swap under every interleaving loom explores:
/// `RUSTFLAGS="--cfg loom" cargo test -p idgen-core --release --lib uuid7::loom_model`.
#[cfg(all(test, loom))]
mod loom_model;
