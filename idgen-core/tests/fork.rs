//! A forked child never repeats the random values its parent issues after the fork: public IDs
//! and the random tails of UUIDv7, tested with a real `fork()`.
//!
//! Its own test binary without the libtest harness (`harness = false` in Cargo.toml), so the
//! process is single-threaded when it forks, as a forking server's parent usually is.
//!
//! The control run shows the check can fail: a ChaCha generator keyed before the fork, without
//! the fork handler, gives the child exactly the parent's values.
// `fork` and `waitpid` have no safe wrapper in std; each call says why it is sound.
#![allow(unsafe_code)]

use std::collections::HashSet;
use std::io::{Read, Write};

use idgen_core::{PublicId, Uuid7Generator};

const N: usize = 2_000;

/// What one side of the fork draws: public IDs, UUIDv7 tails (the 58 random bits), and values
/// of a generator keyed before the fork (the control).
fn draw(uuid7: &Uuid7Generator, control: &mut chacha20::ChaCha12Rng) -> Vec<u128> {
    use chacha20::rand_core::Rng;
    let mut out = Vec::with_capacity(3 * N);
    for _ in 0..N {
        out.push(PublicId::<()>::new().uuid().as_u128());
    }
    for _ in 0..N {
        let id = uuid7.next_uuid().expect("uuid7");
        out.push(id.as_u128() & ((1 << 58) - 1));
    }
    for _ in 0..N {
        out.push(u128::from(control.next_u64()));
    }
    out
}

fn to_bytes(values: &[u128]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn from_bytes(bytes: &[u8]) -> Vec<u128> {
    bytes
        .chunks_exact(16)
        .map(|c| u128::from_le_bytes(c.try_into().expect("16 bytes")))
        .collect()
}

#[cfg(not(unix))]
fn main() {}

#[cfg(unix)]
fn main() {
    use chacha20::rand_core::SeedableRng;
    // Key this thread's generator and the UUIDv7 state before the fork, as a server does.
    let uuid7 = Uuid7Generator::new();
    let _ = (PublicId::<()>::new(), uuid7.next_uuid().expect("uuid7"));
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).expect("seed");
    let mut control = chacha20::ChaCha12Rng::from_seed(seed);

    let (mut reader, mut writer) = std::io::pipe().expect("pipe");
    // SAFETY: this process has one thread (no libtest harness), so the child is a complete copy
    // and may run ordinary code; it leaves with `exit` without returning from `main`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        drop(reader);
        let values = draw(&uuid7, &mut control);
        writer.write_all(&to_bytes(&values)).expect("write");
        drop(writer);
        std::process::exit(0);
    }
    drop(writer);
    let parent = draw(&uuid7, &mut control);
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).expect("read");
    let mut status = 0;
    // SAFETY: `pid` is our child; `status` is a valid place for its exit status.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(waited, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child failed: {status}"
    );
    let child = from_bytes(&bytes);
    assert_eq!(child.len(), parent.len());

    let (ids, tails, control_values) = (0..N, N..2 * N, 2 * N..3 * N);
    let repeated = |range: std::ops::Range<usize>| {
        let mine: HashSet<u128> = parent[range.clone()].iter().copied().collect();
        child[range].iter().filter(|v| mine.contains(v)).count()
    };
    // The control: without a reseed the child repeats the parent value for value.
    assert_eq!(
        repeated(control_values),
        N,
        "the control should repeat every value"
    );
    assert_eq!(
        repeated(ids),
        0,
        "the child repeated a public ID of its parent"
    );
    assert_eq!(
        repeated(tails),
        0,
        "the child repeated a UUIDv7 random tail of its parent"
    );
    println!(
        "fork: parent and child drew {N} public IDs and {N} UUIDv7 tails each after the fork, none repeated; the un-reseeded control repeated all {N}"
    );
}
