//! The lease store forgets (issue 24): a claim the store cannot prove free issues only above its
//! claim time + one TTL + the clock allowance, at once by default and after waiting for the clock
//! with the takeover wait (issue 37); a released node ID is taken at once; a holder whose row or
//! key is gone, or held by another, fences at its next renewal.
//!
//! The faults are made by hand on the store's own table or keys (rows deleted: a database back
//! empty, Redis restarted without persistence; a row overwritten: a claim the holder never
//! saw), without the store under test. The container tests of whole faults (restores,
//! failovers) live in `tests/faults`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use idgen_core::{Snowflake, SnowflakeId};
use idgen_engine::lease::{LeaseOptions, LeaseStore, RenewRequest};
use idgen_engine::{Error, ErrorKind};

use super::gate::GatedStore;
use super::lease::{LeaseSubject, TABLE, claim, generator, layout, now_ms, renewal, setup, short};

/// The TTL of these cases: a few seconds, so each wait stays short.
const TTL_MS: u64 = 4_000;
/// The clock allowance of these cases.
const ALLOWANCE_MS: u64 = 300;

/// Short options with the takeover bound (as in production: issued at once, ahead of the
/// clock) and a small allowance.
fn leading() -> LeaseOptions {
    short(TTL_MS)
        .skip_takeover_wait_for_tests_and_development(false)
        .clock_allowance(Duration::from_millis(ALLOWANCE_MS))
}

/// [`leading`] with the takeover wait: `acquire` waits for the clock to pass the bound.
fn waiting() -> LeaseOptions {
    leading().takeover_wait(true)
}

/// What "at once" allows a claim and its first ID on a loaded two-core machine: a quarter of
/// the TTL, far below the TTL + allowance a wait would take.
const AT_ONCE: Duration = Duration::from_millis(TTL_MS / 4);

fn wait_ms() -> i64 {
    (TTL_MS + ALLOWANCE_MS) as i64
}

/// With the takeover wait, a claim of a new row (a fresh table, as after a database came back
/// empty) issues only after the claim time + TTL + allowance: `acquire` returns after it, and the bound it carries
/// (`previous_timestamp_ms`) is at least that far after the claim began. The node ID given
/// back with `release` is then taken at once, with the exact last timestamp as its bound.
pub async fn a_new_row_waits_one_ttl_and_the_allowance_a_released_one_does_not<S: LeaseSubject>() {
    let (_db, store) = setup::<S>().await;
    let one = layout(0);
    let began = now_ms();
    let lease = waiting().acquire(store.clone(), &one).await.unwrap();
    let returned = now_ms();
    let bound = lease.previous_timestamp_ms().expect("a takeover bound");
    assert!(
        bound >= began + wait_ms(),
        "the bound {bound} is less than TTL + allowance ({} ms) after the claim began ({began})",
        wait_ms()
    );
    assert!(
        returned > bound,
        "acquire returned at {returned}, before its bound {bound}"
    );
    let (ids, handle) = generator(lease, one);
    let first = ids.next_id().unwrap();
    assert!(one.decompose(first).unwrap().unix_ms > bound);
    let last = ids.next_id().unwrap();
    handle.release().await.unwrap();

    // Released: exact, free at once. The bound is the last issued tick, not a wait.
    let began = now_ms();
    let next = waiting().acquire(store.clone(), &one).await.unwrap();
    let returned = now_ms();
    let bound = next
        .previous_timestamp_ms()
        .expect("the released last timestamp");
    assert_eq!(bound, one.decompose(last).unwrap().unix_ms);
    // The last ID may have been issued in the very millisecond this claim began.
    assert!(
        bound <= began,
        "a released node ID must not wait: bound {bound}, claim began {began}"
    );
    assert!(
        returned < began + TTL_MS as i64,
        "a released node ID was taken only after {} ms (the TTL is {TTL_MS} ms)",
        returned - began
    );
    let (ids, handle) = generator(next, one);
    assert!(ids.next_id().unwrap() > last);
    handle.release().await.unwrap();
}

/// A lease taken over after it expired (its holder crashed, or the row came back from an older
/// backup) may hide a holder that still issues: with the takeover wait, the claim waits one TTL
/// and the allowance, and keeps the row's stored last timestamp as well.
pub async fn a_lease_taken_over_after_expiry_waits_one_ttl_and_the_allowance<S: LeaseSubject>() {
    let (_db, store) = setup::<S>().await;
    let one = layout(0);
    let previous = store.claim(claim("previous", 1)).await.unwrap().unwrap();
    assert_eq!(previous.node, 0);
    assert!(!previous.exact, "a new row proves nothing");
    let stored = now_ms();
    let crashed = RenewRequest {
        ttl: Duration::ZERO, // expired now, never released
        ..renewal(0, "previous", Some(stored))
    };
    assert!(store.renew(crashed).await.unwrap());

    let began = now_ms();
    let lease = waiting().acquire(store.clone(), &one).await.unwrap();
    let returned = now_ms();
    let bound = lease.previous_timestamp_ms().unwrap();
    assert!(
        bound >= began + wait_ms(),
        "bound {bound}, claim began {began}"
    );
    assert!(returned > bound);
    lease.handle().release().await.unwrap();
}

/// A new process claims the node ID of a holder the store forgot (its rows deleted, as a
/// database back empty or a Redis restarted without persistence has none) while that holder
/// still issues: the old holder's renewals are held at a gate, so it issues until its fence
/// deadline, and the test lets them through only once the new holder has issued its first ID
/// and the old one has issued after that or stopped. With the defaults, the new holder issues
/// at once (issue 37), above its claim time + TTL + allowance: every ID of the old holder,
/// issued before or after, is below the new holder's first.
pub async fn a_holder_the_store_forgot_never_issues_at_or_above_the_new_holders_first_id<
    S: LeaseSubject,
>() {
    let (db, store) = setup::<S>().await;
    let gated = GatedStore::new(store.clone());
    let one = layout(0);
    let old = short(TTL_MS).acquire(gated.clone(), &one).await.unwrap();
    let (ids, _old_handle) = generator(old, one);
    let issued = Arc::new(Mutex::new(Vec::<(Instant, SnowflakeId)>::new()));
    let issuer = tokio::spawn(issue_until_refused(ids, Arc::clone(&issued)));
    while issued.lock().unwrap().len() < 10 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    gated.arm();
    gated.renewal_waiting().await;

    let fault_at = Instant::now();
    db.forget_lease_rows(TABLE, "default").await;
    let new = leading().acquire(store.clone(), &one).await.unwrap();
    assert_eq!(new.node(), 0);
    let bound = new.previous_timestamp_ms().expect("a takeover bound");
    let (new_ids, handle) = generator(new, one);
    let first = new_ids.next_id().unwrap();
    let first_at = Instant::now();
    assert!(
        first_at.duration_since(fault_at) < AT_ONCE,
        "the new holder's first ID came {:?} after the fault",
        first_at.duration_since(fault_at)
    );
    assert!(one.decompose(first).unwrap().unix_ms > bound);
    println!(
        "{}: the new holder issued its first ID {} ms after the rows were forgotten",
        S::DATABASE.name(),
        first_at.duration_since(fault_at).as_millis()
    );
    // The old holder issues after the new one's first ID, or has stopped already.
    while !issuer.is_finished()
        && issued
            .lock()
            .unwrap()
            .last()
            .is_none_or(|(at, _)| *at <= first_at)
    {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    gated.open();
    let _ = issuer.await.unwrap();
    let issued = std::mem::take(&mut *issued.lock().unwrap());
    let (last_at, last_id) = *issued.last().unwrap();
    println!(
        "{}: the old holder issued its last ID {} ms after the fault",
        S::DATABASE.name(),
        last_at.saturating_duration_since(fault_at).as_millis()
    );
    assert!(
        first > last_id,
        "the new holder issued {first} at or below the old holder's {last_id}: two holders of node 0"
    );
    handle.release().await.unwrap();
}

/// Issue 37, item 1: a claim of a new row (a fresh deployment, a database back empty) returns
/// at once and its generator issues at once, in the ticks after the claim time + TTL +
/// allowance (ahead of the clock); its renewals store a bound that covers them, so the next
/// holder after a crash starts above every ID it issued.
pub async fn a_new_row_issues_at_once_above_one_ttl_and_the_allowance<S: LeaseSubject>() {
    let (db, store) = setup::<S>().await;
    let one = layout(0);
    let began_at = Instant::now();
    let began = now_ms();
    let lease = leading().acquire(store.clone(), &one).await.unwrap();
    let bound = lease.previous_timestamp_ms().expect("a takeover bound");
    assert!(
        bound >= began + wait_ms(),
        "the bound {bound} is less than TTL + allowance ({} ms) after the claim began ({began})",
        wait_ms()
    );
    let (ids, handle) = generator(lease, one);
    let first = ids.next_id().unwrap();
    let elapsed = began_at.elapsed();
    assert!(
        elapsed < AT_ONCE,
        "the first ID came {elapsed:?} after the claim began"
    );
    let first_ms = one.decompose(first).unwrap().unix_ms;
    assert!(first_ms > bound, "first tick {first_ms}, bound {bound}");
    println!(
        "{}: first ID {elapsed:?} after the claim began, its time field {} ms ahead of the clock",
        S::DATABASE.name(),
        first_ms - now_ms()
    );
    // Ahead of the clock for a while: every renewal stores a bound above every tick issued.
    let mut last = first;
    let renewals = handle.status().renewals;
    while handle.status().renewals < renewals + 2 {
        let id = ids.next_id().unwrap();
        assert!(id > last);
        last = id;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let last_ms = one.decompose(last).unwrap().unix_ms;
    let rows = db.lease_rows(TABLE, "default").await;
    let stored = rows[0].last_timestamp_ms.expect("a stored bound");
    assert!(
        stored >= last_ms,
        "the row's bound {stored} is below the tick {last_ms} issued ahead"
    );
    handle.release().await.unwrap();
}

/// Issue 37, item 1: a lease taken over after it expired returns at once and issues at once,
/// above both the claim time + TTL + allowance and the row's stored last timestamp.
pub async fn a_lease_taken_over_after_expiry_issues_at_once_above_its_bound<S: LeaseSubject>() {
    let (_db, store) = setup::<S>().await;
    let one = layout(0);
    let previous = store.claim(claim("previous", 1)).await.unwrap().unwrap();
    assert_eq!(previous.node, 0);
    let stored = now_ms() + 6_000; // a previous holder whose bound lies ahead
    let crashed = RenewRequest {
        ttl: Duration::ZERO, // expired now, never released
        ..renewal(0, "previous", Some(stored))
    };
    assert!(store.renew(crashed).await.unwrap());

    let began_at = Instant::now();
    let began = now_ms();
    let lease = leading().acquire(store.clone(), &one).await.unwrap();
    let bound = lease.previous_timestamp_ms().unwrap();
    assert!(
        bound >= began + wait_ms() && bound >= stored,
        "bound {bound}, claim began {began}"
    );
    let (ids, handle) = generator(lease, one);
    let first = ids.next_id().unwrap();
    assert!(
        began_at.elapsed() < AT_ONCE,
        "first ID after {:?}",
        began_at.elapsed()
    );
    assert!(one.decompose(first).unwrap().unix_ms > bound);
    handle.release().await.unwrap();
}

/// Issue 37, item 2: a node ID released before the clock reached its bound (a holder that gave
/// up at once after a takeover) carries that bound, ahead of the clock, as its exact last
/// timestamp. The next holder takes it at once and issues above it at once, where it used to
/// get `ClockMovedBackwards` until the clock got there.
pub async fn a_node_id_released_before_its_bound_is_issued_above_it_at_once<S: LeaseSubject>() {
    let (_db, store) = setup::<S>().await;
    let one = layout(0);
    // P gives up quickly: a lease that waited for its bound would be dropped here, and give
    // the node ID back with its bound in the background.
    let p = tokio::time::timeout(AT_ONCE, leading().acquire(store.clone(), &one)).await;
    if let Ok(p) = p {
        p.unwrap().handle().release().await.unwrap();
    }
    let began_at = Instant::now();
    let q = loop {
        match leading().acquire(store.clone(), &one).await {
            Ok(q) => break q,
            // P's background release has not landed yet.
            Err(e) if matches!(e.kind(), ErrorKind::NoFreeNode { .. }) => {
                tokio::time::sleep(Duration::from_millis(10)).await
            }
            Err(e) => panic!("{e}"),
        }
    };
    let bound = q.previous_timestamp_ms().expect("P's bound");
    assert!(
        bound > now_ms(),
        "the released bound {bound} is not ahead of the clock"
    );
    let (ids, handle) = generator(q, one);
    let id = ids
        .next_id()
        .expect("the next holder issues at once above the released bound");
    assert!(one.decompose(id).unwrap().unix_ms > bound);
    assert!(
        began_at.elapsed() < AT_ONCE,
        "Q's first ID after {:?}",
        began_at.elapsed()
    );
    handle.release().await.unwrap();
}

/// What a fault does to the holder's row or key.
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Deleted, as a database back empty or a Redis restarted without persistence has none.
    Forgotten,
    /// Taken by another holder behind this one's back.
    Overwritten,
    /// The whole lease table dropped by an operator (on etcd and Redis: every key of the
    /// store's prefix deleted, as the store back empty).
    TableDropped,
}

/// A holder's row or key is deleted while it issues: its next renewal finds nothing and fences
/// at once (the fence revoked, not run out). Reports how long it issued after the fault, and
/// the time from the renewal's answer to its last ID.
pub async fn a_holder_whose_row_is_forgotten_fences_at_its_next_renewal<S: LeaseSubject>() {
    old_holder_fences::<S>(Fault::Forgotten).await;
}

/// A holder's row or key is taken by another holder while it issues: its next renewal fences at
/// once (the fence revoked, not run out).
pub async fn a_holder_whose_row_is_taken_by_another_fences_at_its_next_renewal<S: LeaseSubject>() {
    old_holder_fences::<S>(Fault::Overwritten).await;
}

/// The lease table is dropped under a holder (an operator's `DROP TABLE`; on etcd and Redis
/// every key deleted): its next renewal finds no table, so no lease, and fences at once (the
/// lease lost, not a store error retried until the deadline and after it); acquiring again
/// creates the table and claims under the takeover bound of a store that forgot, above every
/// ID the old holder issued.
pub async fn a_holder_whose_lease_table_is_dropped_fences_and_a_new_claim_creates_it<
    S: LeaseSubject,
>() {
    old_holder_fences::<S>(Fault::TableDropped).await;
}

async fn old_holder_fences<S: LeaseSubject>(fault: Fault) {
    let (db, store) = setup::<S>().await;
    let one = layout(0);
    // Renewals every 500 ms, each granting 3 s: the renewal after the fault comes long before
    // the deadline, even on a loaded machine.
    let old = short(4_000)
        .renew_every(Duration::from_millis(500))
        .acquire(store.clone(), &one)
        .await
        .unwrap();
    let status = old.handle();
    let (ids, _handle) = generator(old, one);
    let issued = Arc::new(Mutex::new(Vec::<(Instant, SnowflakeId)>::new()));
    let issuer = tokio::spawn(issue_until_refused(ids, Arc::clone(&issued)));
    while issued.lock().unwrap().len() < 10 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let fault_at = Instant::now();
    match fault {
        Fault::Forgotten => db.forget_lease_rows(TABLE, "default").await,
        Fault::Overwritten => db.hold_lease_rows(TABLE, "default", 0..1).await,
        Fault::TableDropped => db.drop_lease_table(TABLE).await,
    }
    let deadline = status.status().valid_until_ms;
    let (refused_at, refusal) = issuer.await.unwrap();
    match refusal {
        idgen_core::Error::Fenced { valid_until_ms, .. } => assert_eq!(
            valid_until_ms,
            i64::MIN,
            "{fault:?}: the generator stopped at its deadline, not at the renewal's answer"
        ),
        other => panic!("{fault:?}: expected Fenced, got {other:?}"),
    }
    let refused_ms = now_ms();
    assert!(status.status().lost, "{fault:?}: the lease is not lost");
    assert!(
        refused_ms < deadline,
        "{fault:?}: refused at {refused_ms}, after the deadline {deadline}"
    );
    let issued = std::mem::take(&mut *issued.lock().unwrap());
    let (last_at, last_id) = *issued.last().unwrap();
    if let Fault::TableDropped = fault {
        let next = leading()
            .acquire(store.clone(), &one)
            .await
            .expect("acquire creates the dropped table again and claims");
        // The old holder may issue up to its fence deadline (as far as this claim can know:
        // it saw no renewal fail): the new holder's bound lies beyond it.
        let bound = next
            .previous_timestamp_ms()
            .expect("a claim on a table created anew carries the takeover bound");
        assert!(
            bound >= deadline,
            "the takeover bound {bound} is below the old holder's fence deadline {deadline}"
        );
        let (ids, handle) = generator(next, one);
        let first = ids.next_id().expect("the new holder issues");
        assert!(one.decompose(first).unwrap().unix_ms > bound);
        assert!(
            first > last_id,
            "the new holder's first ID {first} is not above the old holder's last {last_id}"
        );
        handle.release().await.unwrap();
    }
    println!(
        "{} {fault:?}: the old holder issued for {} ms after the fault; its last ID came {} ms before its first refusal (the renewal's answer revokes the fence at once)",
        S::DATABASE.name(),
        last_at.saturating_duration_since(fault_at).as_millis(),
        refused_at.saturating_duration_since(last_at).as_millis(),
    );
}

/// Issues IDs (about one a millisecond) until the generator refuses: when, and why.
async fn issue_until_refused(
    ids: Snowflake,
    issued: Arc<Mutex<Vec<(Instant, SnowflakeId)>>>,
) -> (Instant, idgen_core::Error) {
    loop {
        match ids.next_id() {
            Ok(id) => issued.lock().unwrap().push((Instant::now(), id)),
            Err(e) => return (Instant::now(), e),
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Issue 40, the soak's seed 7, deterministically: a process whose clock was stepped far ahead
/// (here 3 s, twelve times the allowance; 38.3 s in the soak) claims a node ID on a store that
/// then forgets it (its keys or rows deleted: Redis restarted without persistence), and a
/// process with a right clock takes the node ID and issues through the milliseconds the first
/// one issued in: no ID may be issued by both.
///
/// Before the clock check the first process issued at its claim time (by its clock) + TTL +
/// allowance, 3 s ahead of where the second one's takeover bound (its own claim time + TTL +
/// allowance) put it, and the second one reached those milliseconds as its clock caught up: the
/// soak's 1.8 M duplicates. With the check, the first process is refused before it claims
/// (`ClockSkew`). Not part of the suite: on etcd (no clock to check) this fault still breaks
/// uniqueness, as documented.
pub async fn a_leading_clock_a_store_that_forgets_and_a_new_holder_issue_no_id_twice<
    S: LeaseSubject,
>() {
    const LEAD_MS: i64 = 3_000;
    const ALLOWANCE: Duration = Duration::from_millis(250);
    const TTL: Duration = Duration::from_secs(1);
    const OLD_IDS: usize = 20_000;
    let options = || {
        LeaseOptions::default()
            .ttl(TTL)
            .renew_every(Duration::from_millis(200))
            .safety_margin(Duration::from_millis(300))
            .store_timeout(Duration::from_millis(700))
            .clock_allowance(ALLOWANCE)
    };
    let (db, store) = setup::<S>().await;
    let one = layout(0);

    // The process restarted with its clock stepped ahead.
    let stepped = super::lease::OffsetClock::new(LEAD_MS);
    let claimed_at = now_ms();
    let old = options()
        .clock(stepped.clone())
        .acquire(store.clone(), &one)
        .await;
    let mut old_ids = std::collections::HashSet::new();
    let (refusal, _old_generator) = match old {
        Ok(lease) => {
            let ids = Snowflake::builder()
                .layout(one)
                .clock(stepped.clone())
                .lease(lease)
                .build()
                .unwrap();
            while old_ids.len() < OLD_IDS {
                match ids.try_next_id() {
                    Ok(Some(id)) => {
                        old_ids.insert(id);
                    }
                    Ok(None) => tokio::time::sleep(Duration::from_millis(1)).await,
                    Err(e) => panic!("the stepped process: {e}"),
                }
            }
            (None, Some(ids))
        }
        Err(e) => (Some(e), None),
    };
    let old_last_ms = old_ids
        .iter()
        .map(|id| one.decompose(*id).unwrap().unix_ms)
        .max();

    // The store forgets; a process with a right clock takes node 0.
    db.forget_lease_rows(TABLE, "default").await;
    let new = options().acquire(store.clone(), &one).await.unwrap();
    assert_eq!(new.node(), 0);
    let (new_ids, handle) = generator(new, one);
    // Through every millisecond the stepped process issued in, or would have (its claim
    // time + the step + TTL + twice the allowance, and some).
    let through = (claimed_at + LEAD_MS + millis(TTL) + 2 * millis(ALLOWANCE) + 100)
        .max(old_last_ms.unwrap_or(i64::MIN));
    let (mut issued, mut twice, mut first_twice) = (0u64, 0u64, None);
    let started = Instant::now();
    loop {
        match new_ids.try_next_id() {
            Ok(Some(id)) => {
                issued += 1;
                if old_ids.contains(&id) {
                    twice += 1;
                    first_twice.get_or_insert(id);
                }
                if one.decompose(id).unwrap().unix_ms > through {
                    break;
                }
                if issued % 4096 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            Ok(None) => tokio::time::sleep(Duration::from_millis(1)).await,
            Err(e) => panic!("the new holder: {e}"),
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the new holder did not reach {through} in a minute"
        );
    }
    println!(
        "{}: the stepped process issued {} IDs (refused: {}); the new holder issued {issued} through {through}",
        S::DATABASE.name(),
        old_ids.len(),
        refusal
            .as_ref()
            .map_or("no".to_owned(), ToString::to_string)
    );
    assert_eq!(
        twice,
        0,
        "{twice} IDs issued by both holders of node 0 (the first: {first_twice:?}): the stepped process issued {} IDs up to {old_last_ms:?}",
        old_ids.len()
    );
    let Some(ErrorKind::ClockSkew {
        operation: "claim",
        lead_ms,
        ..
    }) = refusal.as_ref().map(Error::kind)
    else {
        panic!("the stepped process was not refused for its clock: {refusal:?}");
    };
    assert!(*lead_ms >= LEAD_MS - 1_000, "measured lead {lead_ms} ms");
    handle.release().await.unwrap();
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
