//! A forked child cannot reissue its parent's IDs, nor renew or release its parent's lease:
//! tested with a real `fork()` of a process holding a leased `Snowflake`, a `HiLo` with a
//! buffered block, and the lease's handle.
//!
//! Its own test binary without the libtest harness (`harness = false` in Cargo.toml), so the
//! process is single-threaded when it forks (a current-thread tokio runtime, no other threads),
//! as a forking server's parent usually is. The child issues, tries to release, drives its copy
//! of the runtime (where its copy of the lease's renewal task lives) and drops everything, then
//! reports on a pipe and leaves with `_exit`: it never returns into this program's `main`.
//!
//! The lease store is the in-memory one, wrapped so every call is appended to a file with the
//! calling process's ID: the parent checks afterwards that its child made no call at all (an
//! in-memory store copied into the child could not show a release of the parent's row
//! otherwise).
// `fork`, `waitpid` and `_exit` have no safe wrapper in std; each call says why it is sound.
#![allow(unsafe_code)]

#[cfg(unix)]
use std::collections::HashSet;
#[cfg(unix)]
use std::io::{Read, Write};
#[cfg(unix)]
use std::path::PathBuf;
#[cfg(unix)]
use std::time::Duration;

#[cfg(unix)]
use idgen_core::{Layout, Snowflake};
#[cfg(unix)]
use idgen_engine::hilo::{HiLo, MemorySource};
#[cfg(unix)]
use idgen_engine::lease::{
    BoxError, Claim, ClaimRequest, LeaseStore, MemoryLeaseStore, RenewRequest, WorkerLease,
};
use idgen_engine::{Error, ErrorKind};

/// IDs each side tries to issue after the fork, from each generator.
#[cfg(unix)]
const N: usize = 10_000;

/// The in-memory store, with every call appended to `log` as `pid call`.
#[cfg(unix)]
#[derive(Clone)]
struct Recording {
    inner: MemoryLeaseStore,
    log: PathBuf,
}

#[cfg(unix)]
impl Recording {
    fn note(&self, call: &str) {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("open the call log");
        // One short `write` in append mode: lines of the two processes never interleave.
        file.write_all(format!("{} {call}\n", std::process::id()).as_bytes())
            .expect("log a call");
    }
}

#[cfg(unix)]
impl LeaseStore for Recording {
    async fn create_if_missing(&self) -> Result<(), BoxError> {
        Ok(())
    }
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, BoxError> {
        self.note("claim");
        self.inner.claim(req).await
    }
    async fn renew(&self, req: RenewRequest<'_>) -> Result<bool, BoxError> {
        self.note("renew");
        self.inner.renew(req).await
    }
    async fn release(&self, req: RenewRequest<'_>) -> Result<(), BoxError> {
        self.note("release");
        self.inner.release(req).await
    }
    fn detached(&self) -> Option<Self> {
        Some(self.clone())
    }
}

/// What an error says, for the child's report: `Forked <what>` for the fork error.
#[cfg(unix)]
fn describe(err: &Error) -> String {
    match err.kind() {
        ErrorKind::Id(idgen_engine::CoreError::Forked { what }) => format!("Forked {what}"),
        other => format!("other {other}"),
    }
}

#[cfg(not(unix))]
fn main() {}

#[cfg(unix)]
fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime");
    let log = std::env::temp_dir().join(format!("idgen-fork-calls-{}", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let store = Recording {
        inner: MemoryLeaseStore::new(),
        log: log.clone(),
    };
    // Two node IDs, capacity 1: while the parent holds node 0, nobody else gets a node.
    let tiny = Layout::builder().node_bits(1).build().expect("a layout");
    let options = || {
        WorkerLease::options()
            .capacity(1)
            .ttl(Duration::from_secs(10))
            .renew_every(Duration::from_millis(200))
            .safety_margin(Duration::from_secs(2))
            .store_timeout(Duration::from_secs(1))
    };
    let lease = runtime
        .block_on(options().acquire(store.clone(), &tiny))
        .expect("a lease");
    let handle = lease.handle();
    let ids = Snowflake::builder()
        .layout(tiny)
        .lease(lease)
        .build()
        .expect("a leased generator");
    // One block big enough for everything, fetched only when used up: the child inherits a
    // buffer with most of it left.
    let hilo = runtime
        .block_on(
            HiLo::builder(MemorySource::new())
                .block(1_000_000)
                .prefetch(false)
                .build(),
        )
        .expect("a hi-lo generator");
    for _ in 0..1_000 {
        ids.next_id().expect("an ID before the fork");
        hilo.try_next_id()
            .expect("a hi-lo ID before the fork")
            .expect("buffered");
    }
    let renewals_at_fork = handle.status().renewals;

    let (mut reader, mut writer) = std::io::pipe().expect("pipe");
    // SAFETY: this process has one thread (no libtest harness, a current-thread runtime, no
    // blocking-pool thread started), so the child is a complete copy and may run ordinary
    // code; it leaves with `_exit` and never returns from this block.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        drop(reader);
        let mut report = String::new();
        let mut errors = HashSet::new();
        for _ in 0..N {
            match ids.next_id() {
                Ok(id) => report.push_str(&format!("snowflake {}\n", id.get())),
                Err(err) => {
                    errors.insert(format!("snowflake-error {}\n", describe(&err.into())));
                }
            }
            match hilo.try_next_id() {
                Ok(Some(id)) => report.push_str(&format!("hilo {id}\n")),
                Ok(None) => {
                    errors.insert("hilo-error none\n".to_owned());
                }
                Err(err) => {
                    errors.insert(format!("hilo-error {}\n", describe(&err)));
                }
            }
        }
        match runtime.block_on(hilo.next_id()) {
            Ok(id) => report.push_str(&format!("hilo {id}\n")),
            Err(err) => {
                errors.insert(format!("hilo-error {}\n", describe(&err)));
            }
        }
        // The child's copy of the runtime runs its copy of the renewal task: it must not renew.
        runtime.block_on(async { tokio::time::sleep(Duration::from_millis(700)).await });
        match runtime.block_on(handle.release()) {
            Ok(()) => report.push_str("release ok\n"),
            Err(err) => report.push_str(&format!("release-error {}\n", describe(&err))),
        }
        // Dropping the generator drops the child's copy of the lease: it must not release.
        runtime.block_on(async {
            drop(ids);
            drop(hilo);
            tokio::time::sleep(Duration::from_millis(300)).await;
        });
        // The child may build generators of its own (on a counter of its own here).
        let own = runtime.block_on(async {
            let own = HiLo::new(MemorySource::named("child"), 10).await?;
            own.next_id().await
        });
        report.push_str(&format!("own-hilo {}\n", own.is_ok()));
        for line in errors {
            report.push_str(&line);
        }
        let written = writer.write_all(report.as_bytes()).is_ok();
        drop(writer);
        // SAFETY: `_exit` ends the child at once, without running the parent's exit handlers
        // or destructors a second time.
        unsafe { libc::_exit(if written { 0 } else { 1 }) };
    }
    drop(writer);

    // The parent issues as usual meanwhile.
    let mut parent_snowflake = HashSet::with_capacity(N);
    let mut parent_hilo = HashSet::with_capacity(N);
    for _ in 0..N {
        parent_snowflake.insert(ids.next_id().expect("the parent issues").get());
        parent_hilo.insert(
            hilo.try_next_id()
                .expect("the parent's hi-lo issues")
                .expect("buffered"),
        );
    }
    let mut text = String::new();
    reader.read_to_string(&mut text).expect("read the report");
    let mut status = 0;
    // SAFETY: `pid` is our child; `status` is a valid place for its exit status.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(waited, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child failed: {status}"
    );

    let lines: Vec<&str> = text.lines().collect();
    let values = |kind: &str| -> Vec<i64> {
        lines
            .iter()
            .filter_map(|l| l.strip_prefix(kind))
            .map(|v| v.trim().parse().expect("an ID"))
            .collect()
    };
    let child_snowflake = values("snowflake ");
    let child_hilo = values("hilo ");
    let repeated_snowflake = child_snowflake
        .iter()
        .filter(|id| parent_snowflake.contains(id))
        .count();
    let repeated_hilo = child_hilo
        .iter()
        .filter(|id| parent_hilo.contains(id))
        .count();
    assert_eq!(
        (repeated_snowflake, repeated_hilo),
        (0, 0),
        "the child issued its parent's IDs (Snowflake, hi-lo); report:\n{}",
        lines
            .iter()
            .filter(|l| !l.starts_with("snowflake ") && !l.starts_with("hilo "))
            .copied()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        child_snowflake.is_empty() && child_hilo.is_empty(),
        "the child issued {} Snowflake and {} hi-lo IDs from copies",
        child_snowflake.len(),
        child_hilo.len()
    );
    for expected in [
        "snowflake-error Forked Snowflake generator",
        "hilo-error Forked hi-lo buffer",
        "release-error Forked node ID lease",
        "own-hilo true",
    ] {
        assert!(
            lines.contains(&expected),
            "the child's report lacks {expected:?}:\n{text}"
        );
    }
    assert!(
        !lines.iter().any(|l| l.contains("error other")),
        "the child met another error:\n{text}"
    );

    // The child made no call to the lease store: no renewal, no release of the parent's node.
    let calls = std::fs::read_to_string(&log).expect("the call log");
    let child_calls: Vec<&str> = calls
        .lines()
        .filter(|l| l.split(' ').next() == Some(&pid.to_string()))
        .collect();
    assert!(
        child_calls.is_empty(),
        "the child called the parent's lease store: {child_calls:?}"
    );

    // The parent keeps its lease: renewals go on, it issues, and its node ID is still held.
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(30), async {
            while handle.status().renewals < renewals_at_fork + 3 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("the parent's renewals continue after the fork");
    });
    let after = handle.status();
    assert!(!after.lost && after.failed_renewals == 0, "{after:?}");
    let last = ids.next_id().expect("the parent still issues");
    assert!(parent_snowflake.iter().all(|&id| id < last.get()));
    let taken = runtime.block_on(options().acquire(store.clone(), &tiny));
    assert!(
        matches!(
            taken.as_ref().map_err(Error::kind),
            Err(ErrorKind::NoFreeNode { .. })
        ),
        "the parent's node ID was given away: {taken:?}"
    );
    runtime
        .block_on(handle.release())
        .expect("the parent releases");
    let _ = std::fs::remove_file(&log);
    println!(
        "fork: the child's {N} Snowflake and {N} hi-lo attempts after the fork all met Error::Forked, it made no lease-store call; the parent issued {N} of each, renewed {} times since and kept its node ID",
        after.renewals - renewals_at_fork
    );
}
