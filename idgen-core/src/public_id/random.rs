//! The random numbers behind [`PublicId::new`](crate::public_id::PublicId::new) and
//! [`Uuid7Generator`](crate::Uuid7Generator): a cryptographically secure generator per thread,
//! so taking an ID costs no system call.
//!
//! * **Generator:** ChaCha with 12 rounds (`chacha20::ChaCha12Rng`, RustCrypto), the algorithm
//!   of `rand`'s `ThreadRng` and `StdRng`, and so of uuid's `fast-rng`. The best published
//!   attacks reach 7 of ChaCha's rounds; 12 leave a wide margin, and an observer of any number
//!   of outputs cannot predict the next one or recover earlier ones without breaking ChaCha.
//! * **Seeding:** each thread's generator is keyed with 32 bytes from the operating system's
//!   CSPRNG (`getrandom`) on its first use.
//! * **Reseeding:** with a fresh key from the OS after every 64 KiB of output (as `ThreadRng`
//!   does), and in a **forked child** before its first value: a `pthread_atfork` child handler
//!   counts forks, and a generator seeded before the current fork count reseeds. `rand` 0.9 and
//!   0.10 dropped that fork protection from `ThreadRng` (their docs ask the caller to reseed
//!   after `fork`), so the parent and a child would otherwise hand out the same "random" IDs.
//!   Processes made by `posix_spawn`, or `vfork` followed by `exec`, start afresh anyway; a raw
//!   `clone` system call that skips the C library's fork handlers is not covered.
//!
//! Why that is enough for IDs that must not be guessed: every value is 122 (public ID) or 58
//! (UUIDv7 tail) bits of a CSPRNG keyed from the OS, so guessing one means guessing those bits
//! or the 256-bit key; seeing other IDs does not help, and no two processes share a key.

use std::cell::RefCell;

use chacha20::ChaCha12Rng;
use chacha20::rand_core::{Rng, SeedableRng};

use crate::error::Error;

/// Output after which a thread's generator takes a fresh key from the OS.
const RESEED_AFTER_BYTES: u64 = 64 * 1024;

#[cfg(test)]
thread_local! {
    /// How many times this thread keyed its generator (tests check reseeding with it).
    static SEEDINGS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

struct Local {
    rng: ChaCha12Rng,
    /// The fork count (`crate::fork::count`) when this key was drawn.
    forks: u64,
    /// Bytes left before the next reseed.
    left: u64,
}

impl Local {
    fn seeded(forks: u64) -> Result<Local, Error> {
        crate::fork::protected()?;
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| Error::RandomSource {
            reason: e.to_string(),
        })?;
        #[cfg(test)]
        SEEDINGS.with(|n| n.set(n.get() + 1));
        Ok(Local {
            rng: ChaCha12Rng::from_seed(seed),
            forks,
            left: RESEED_AFTER_BYTES,
        })
    }
}

thread_local! {
    static LOCAL: RefCell<Option<Local>> = const { RefCell::new(None) };
}

/// 128 random bits.
#[inline]
pub(crate) fn u128() -> Result<u128, Error> {
    draw(16, |rng| {
        u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64())
    })
}

/// 64 random bits.
#[inline]
pub(crate) fn u64() -> Result<u64, Error> {
    draw(8, |rng| rng.next_u64())
}

/// Runs `f` on this thread's generator, (re)seeding it first when it is new, used up, or was
/// keyed before a fork. `bytes` is what `f` draws.
#[inline]
fn draw<T>(bytes: u64, f: impl Fn(&mut ChaCha12Rng) -> T) -> Result<T, Error> {
    let drawn = LOCAL.try_with(|cell| {
        // Nothing in here calls back into this module, so the borrow never fails; if it did,
        // the caller gets a freshly keyed one-off generator below instead of a panic.
        let mut slot = cell.try_borrow_mut().ok()?;
        let forks = crate::fork::count();
        if let Some(local) = slot.as_mut()
            && local.forks == forks
            && local.left >= bytes
        {
            local.left -= bytes;
            return Some(Ok(f(&mut local.rng)));
        }
        Some(Local::seeded(forks).map(|mut local| {
            local.left -= bytes;
            let value = f(&mut local.rng);
            *slot = Some(local);
            value
        }))
    });
    match drawn {
        Ok(Some(result)) => result,
        // This thread's storage is being torn down (a call from another thread-local's
        // destructor): key a generator for this one call.
        _ => Local::seeded(crate::fork::count()).map(|mut local| f(&mut local.rng)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seedings() -> u64 {
        SEEDINGS.with(std::cell::Cell::get)
    }

    /// Runs `test` on a thread of its own (the seeding counts are per thread), to its end.
    fn on_a_new_thread(test: impl FnOnce() + Send + 'static) {
        std::thread::spawn(test).join().unwrap();
    }

    #[test]
    fn draws_differ_and_use_all_bits() {
        let draws: Vec<u128> = (0..1000).map(|_| u128().unwrap()).collect();
        let mut distinct = draws.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), draws.len());
        let ones = draws.iter().fold(0u128, |acc, d| acc | d);
        let zeros = draws.iter().fold(0u128, |acc, d| acc | !d);
        assert_eq!((ones, zeros), (u128::MAX, u128::MAX), "a stuck bit");
    }

    #[test]
    fn a_thread_is_seeded_once_then_reseeded_from_the_os_after_64_kib() {
        on_a_new_thread(|| {
            assert_eq!(seedings(), 0);
            u64().unwrap();
            assert_eq!(seedings(), 1, "seeded on first use");
            for _ in 0..RESEED_AFTER_BYTES / 8 - 1 {
                u64().unwrap();
            }
            assert_eq!(seedings(), 1, "64 KiB from one key");
            u64().unwrap();
            assert_eq!(seedings(), 2, "a fresh key after 64 KiB");
            u128().unwrap();
            assert_eq!(seedings(), 2);
        });
    }

    #[test]
    fn a_thread_keyed_before_a_fork_reseeds_before_its_next_value() {
        on_a_new_thread(|| {
            u64().unwrap();
            assert_eq!(seedings(), 1);
            // What the child handler does in a forked child (tests/fork.rs forks for real).
            crate::fork::count_a_fork_for_tests();
            u64().unwrap();
            assert_eq!(seedings(), 2, "did not reseed after the fork count moved");
            u64().unwrap();
            assert_eq!(seedings(), 2);
        });
    }
}
