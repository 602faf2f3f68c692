//! The random numbers behind [`PublicId::new`](crate::public_id::PublicId::new) and
//! [`Uuid7Generator`](crate::Uuid7Generator): a cryptographically secure generator per thread,
//! so taking an ID costs no system call.
//!
//! * **Generator:** ChaCha with 12 rounds (the core of `chacha20::ChaCha12Rng`, RustCrypto,
//!   with the same output for the same key), the algorithm of `rand`'s `ThreadRng` and
//!   `StdRng`, and so of uuid's `fast-rng`. Each refill writes four blocks (256 bytes) into a
//!   per-thread buffer; a draw reads from it after two checks (made after the last fork,
//!   enough left). The best published attacks reach 7 of ChaCha's rounds; 12 leave a wide
//!   margin, and an observer of any number of outputs cannot predict the next one or recover
//!   earlier ones without breaking ChaCha.
//! * **Seeding:** each thread's generator is keyed with 32 bytes from the operating system's
//!   CSPRNG (`getrandom`) on its first use.
//! * **Reseeding:** with a fresh key from the OS after every 64 KiB of output (as `ThreadRng`
//!   does), and in a **forked child** before its first value: a `pthread_atfork` child handler
//!   counts forks, and a generator seeded before the current fork count reseeds (its buffered
//!   output, the parent's too, is dropped unread). `rand` 0.9 and
//!   0.10 dropped that fork protection from `ThreadRng` (their docs ask the caller to reseed
//!   after `fork`), so the parent and a child would otherwise hand out the same "random" IDs.
//!   Processes made by `posix_spawn`, or `vfork` followed by `exec`, start afresh anyway; a raw
//!   `clone` system call that skips the C library's fork handlers is not covered.
//!
//! Why that is enough for IDs that must not be guessed: every value is 122 (public ID) or 58
//! (UUIDv7 tail) bits of a CSPRNG keyed from the OS, so guessing one means guessing those bits
//! or the 256-bit key; seeing other IDs does not help, and no two processes share a key.

use std::cell::{Cell, RefCell};

use chacha20::rand_core::SeedableRng;
use chacha20::rand_core::block::Generator;
use chacha20::variants::Legacy;
use chacha20::{ChaChaCore, R12};

use crate::error::Error;

/// ChaCha12 with a 64-bit block counter and a zero nonce: the core of `chacha20::ChaCha12Rng`
/// (the same key gives the same stream), driven here with a buffer of our own.
type Core = ChaChaCore<R12, Legacy>;

/// 64-bit words per refill of the buffer: four ChaCha blocks (256 bytes), what one call of the
/// core's `generate` writes.
const WORDS: usize = 32;

/// Output after which a thread's generator takes a fresh key from the OS.
const RESEED_AFTER_BYTES: u64 = 64 * 1024;

/// Refills from one key: `RESEED_AFTER_BYTES` of output.
const REFILLS_PER_KEY: u32 = (RESEED_AFTER_BYTES / (WORDS as u64 * 8)) as u32;

/// A fork count no buffer was ever filled under (the count starts at 0 and only a forked child
/// adds one): an empty buffer's mark.
const NEVER: u64 = u64::MAX;

#[cfg(test)]
thread_local! {
    /// How many times this thread keyed its generator (tests check reseeding with it).
    static SEEDINGS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// This thread's unread output. Plain integers in `Cell`s: no borrow flag, no `Option`, no
/// destructor (so no thread-local registration state), and the path of an ID checks two
/// words: the fork count the output was made under, and how much of it is left.
struct Buffer {
    /// The fork count (`crate::fork::count`) when `words` were generated; [`NEVER`] before the
    /// first refill. A buffer made before the current fork count is discarded unread.
    forks: Cell<u64>,
    /// The next unread word; `WORDS` when the buffer is used up.
    at: Cell<usize>,
    words: [Cell<u64>; WORDS],
}

impl Buffer {
    /// The next `N` words, if this buffer has them and was made in this process (after the
    /// last fork). The path of every draw: two compares, `N` loads, one store.
    #[inline(always)]
    fn take<const N: usize>(&self) -> Option<[u64; N]> {
        let at = self.at.get();
        if self.forks.get() != crate::fork::count() || at > WORDS - N {
            return None;
        }
        self.at.set(at + N);
        Some(std::array::from_fn(|i| self.words[at + i].get()))
    }
}

/// The keyed generator behind a thread's [`Buffer`], touched only to refill it.
struct Keyed {
    core: Core,
    /// The fork count when this key was drawn.
    forks: u64,
    /// Refills left before the next reseed.
    refills_left: u32,
}

impl Keyed {
    fn seeded(forks: u64) -> Result<Keyed, Error> {
        crate::fork::protected()?;
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| Error::RandomSource {
            reason: e.to_string(),
        })?;
        #[cfg(test)]
        SEEDINGS.with(|n| n.set(n.get() + 1));
        Ok(Keyed {
            core: Core::from_seed(seed),
            forks,
            refills_left: REFILLS_PER_KEY,
        })
    }

    /// The next 256 bytes of output, as 64-bit words (little-endian pairs of the core's
    /// 32-bit words, as `ChaCha12Rng::next_u64` joins them).
    fn generate(&mut self) -> [u64; WORDS] {
        self.refills_left -= 1;
        let mut out = [0u32; WORDS * 2];
        self.core.generate(&mut out);
        std::array::from_fn(|i| u64::from(out[2 * i + 1]) << 32 | u64::from(out[2 * i]))
    }
}

thread_local! {
    static BUFFER: Buffer = const {
        Buffer {
            forks: Cell::new(NEVER),
            at: Cell::new(WORDS),
            words: [const { Cell::new(0) }; WORDS],
        }
    };
    static KEYED: RefCell<Option<Keyed>> = const { RefCell::new(None) };
}

/// 128 random bits.
#[inline(always)]
pub(crate) fn u128() -> Result<u128, Error> {
    match BUFFER.with(Buffer::take::<2>) {
        Some([high, low]) => Ok(u128::from(high) << 64 | u128::from(low)),
        None => refill_and_take::<2>().map(|[high, low]| u128::from(high) << 64 | u128::from(low)),
    }
}

/// 64 random bits.
#[inline(always)]
pub(crate) fn u64() -> Result<u64, Error> {
    match BUFFER.with(Buffer::take::<1>) {
        Some([word]) => Ok(word),
        None => refill_and_take::<1>().map(|[word]| word),
    }
}

/// The draw of `N` words when the buffer is used up, was never filled, or was filled before a
/// fork: refills it from this thread's generator, (re)keying that first when it is new, has
/// given 64 KiB, or was keyed before a fork; then takes the words. Out of line: once per 256
/// bytes of output.
#[cold]
#[inline(never)]
fn refill_and_take<const N: usize>() -> Result<[u64; N], Error> {
    let forks = crate::fork::count();
    let refilled = KEYED.try_with(|keyed| {
        // Nothing in here calls back into this module, so the borrow never fails; if it did,
        // the caller gets a freshly keyed one-off generator below instead of a panic.
        let mut slot = keyed.try_borrow_mut().ok()?;
        let keyed = match slot.as_mut() {
            Some(keyed) if keyed.forks == forks && keyed.refills_left > 0 => keyed,
            _ => match Keyed::seeded(forks) {
                Ok(fresh) => slot.insert(fresh),
                Err(e) => return Some(Err(e)),
            },
        };
        Some(Ok(keyed.generate()))
    });
    let words = match refilled {
        Ok(Some(words)) => words?,
        // This thread's storage is being torn down (a call from another thread-local's
        // destructor), or the generator is borrowed: a generator keyed for this one call.
        _ => return Keyed::seeded(forks).map(|mut once| first::<N>(&once.generate())),
    };
    BUFFER.with(|buffer| {
        for (cell, word) in buffer.words.iter().zip(words) {
            cell.set(word);
        }
        buffer.at.set(N);
        buffer.forks.set(forks);
    });
    Ok(first::<N>(&words))
}

/// The first `N` of `words`.
fn first<const N: usize>(words: &[u64; WORDS]) -> [u64; N] {
    std::array::from_fn(|i| words[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seedings() -> u64 {
        SEEDINGS.with(std::cell::Cell::get)
    }

    /// Runs `test` on a thread of its own (the seeding counts are per thread), to its end, one
    /// such test at a time: the fork count is process-wide, so a test that moves it would make
    /// a concurrent one reseed more often than it counts.
    fn on_a_new_thread(test: impl FnOnce() + Send + 'static) {
        static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _turn = ONE_AT_A_TIME
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
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

    /// The buffer holds the stream of `chacha20::ChaCha12Rng` under the same key, joined into
    /// 64-bit words as its `next_u64` joins them.
    #[test]
    fn the_buffer_holds_chacha12rng_output_for_the_same_key() {
        use chacha20::ChaCha12Rng;
        use chacha20::rand_core::Rng;
        let seed: [u8; 32] = std::array::from_fn(|i| i as u8 * 7 + 1);
        let mut ours = Keyed {
            core: Core::from_seed(seed),
            forks: 0,
            refills_left: REFILLS_PER_KEY,
        };
        let mut theirs = ChaCha12Rng::from_seed(seed);
        for _ in 0..3 {
            for word in ours.generate() {
                assert_eq!(word, theirs.next_u64());
            }
        }
    }

    /// After a fork the thread reseeds before its next value, and never returns output it
    /// buffered before the fork (the parent returns that).
    #[test]
    fn a_thread_keyed_before_a_fork_reseeds_before_its_next_value() {
        on_a_new_thread(|| {
            u64().unwrap();
            assert_eq!(seedings(), 1);
            let unread: Vec<u64> =
                BUFFER.with(|b| b.words[b.at.get()..].iter().map(Cell::get).collect());
            assert!(!unread.is_empty());
            // What the child handler does in a forked child (tests/fork.rs forks for real).
            crate::fork::count_a_fork_for_tests();
            let after: Vec<u64> = (0..unread.len()).map(|_| u64().unwrap()).collect();
            assert_eq!(seedings(), 2, "did not reseed after the fork count moved");
            assert!(
                after.iter().all(|word| !unread.contains(word)),
                "a value buffered before the fork came out after it"
            );
        });
    }
}
