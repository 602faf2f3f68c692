//! The edges of a lease's life on a real store: a release while a renewal is in flight, a
//! runtime that stopped, a database that went away, a server without autocommit.

use std::time::{Duration, Instant};

use idgen_engine::lease::{ClaimRequest, LeaseStore, RenewRequest};

use super::gate::GatedStore;
use super::lease::{
    LeaseSubject, TABLE, claim, generator, layout, no_wait, now_ms, open_store, renewal, setup,
    short,
};
use super::{Database, DbKind};

/// A renewal the heartbeat sent before `release()` is held at a gate and answered after it:
/// the node ID stays free, and a new holder with `capacity(1)` gets it at once.
pub async fn a_renewal_in_flight_during_release_leaves_the_node_id_free<S: LeaseSubject>() {
    let (db, store) = setup::<S>().await;
    let gated = GatedStore::new(store.clone());
    let one = layout(0);
    // A TTL long enough that the release's store timeout (a quarter) holds on a loaded machine;
    // the gate, not the TTL, decides when the renewal runs.
    let lease = short(12_000)
        .holder("first")
        .acquire(gated.clone(), &one)
        .await
        .unwrap();
    gated.arm();
    gated.renewal_waiting().await;
    lease.handle().release().await.unwrap();
    gated.open();
    assert!(
        !gated.answer().await,
        "the renewal answered after the release re-held the node ID"
    );
    let rows = db.lease_rows(TABLE, "default").await;
    assert_eq!(rows[0].holder, None, "{rows:?}");

    let next = short(12_000)
        .holder("second")
        .capacity(1)
        .acquire(store.clone(), &one)
        .await
        .expect("the released node ID is free for the next holder");
    assert_eq!(next.node(), lease.node());
    next.handle().release().await.unwrap();
}

/// A store made on a runtime that has stopped (the end of `#[tokio::main]`): its
/// [`detached`](LeaseStore::detached) copy, used on a runtime of its own, still releases the
/// node ID, so the next holder gets it at once.
pub async fn a_detached_store_releases_after_the_runtime_stopped<S: LeaseSubject>() {
    let (db, store_now) = setup::<S>().await;
    let url = db.url().to_owned();
    let request = |holder| ClaimRequest {
        ttl: Duration::from_secs(600),
        ..claim(holder, 1)
    };
    // On a runtime that then stops, as `#[tokio::main]`'s does when `main` returns.
    let (store_then, node) = std::thread::spawn(move || {
        let runtime = current_thread();
        let store = runtime.block_on(open_store::<S>(&url, TABLE));
        let claim = runtime
            .block_on(store.claim(request("gone")))
            .unwrap()
            .expect("a free node ID");
        drop(runtime);
        (store, claim.node)
    })
    .join()
    .expect("the first runtime's thread");

    let released = std::thread::spawn(move || {
        current_thread().block_on(async move {
            let detached = store_then
                .detached()
                .expect("the store gives a copy that does not depend on its runtime");
            let released = detached
                .release(RenewRequest {
                    ttl: Duration::ZERO,
                    ..renewal(node, "gone", Some(5))
                })
                .await;
            drop((detached, store_then));
            released
        })
    })
    .join()
    .expect("the second runtime's thread");
    released.expect("the detached copy releases");

    let rows = db.lease_rows(TABLE, "default").await;
    assert_eq!(
        (rows[0].holder.clone(), rows[0].last_timestamp_ms),
        (None, Some(5))
    );
    let next = store_now.claim(request("next")).await.unwrap();
    assert_eq!(next.map(|c| c.node), Some(node));
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// The database becomes unreachable: the generator stops (`Fenced`) before the lease expires
/// in the database, issues nothing after that expiry, and resumes once the database is back.
pub async fn a_generator_stops_before_its_lease_expires_when_the_database_is_unreachable<
    S: LeaseSubject,
>() {
    let (db, _direct) = setup::<S>().await;
    let (url, mut outage) = db.reachable_until_cut().await;
    let store = open_store::<S>(&url, TABLE).await;
    // Connections through the proxy are opened before the timed calls begin.
    S::create_table(&store)
        .await
        .expect("the table, through the proxy");
    let one = layout(0);
    let lease = short(3_000).acquire(store, &one).await.unwrap();
    let (ids, handle) = generator(lease, one);
    let started = Instant::now();
    while handle.status().renewals == 0 {
        assert!(started.elapsed() < Duration::from_secs(30), "never renewed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    ids.next_id().unwrap();

    outage.cut().await;
    let cut_at = Instant::now();
    let mut issued_after_cut = Vec::new();
    let fenced_until = loop {
        match ids.next_id() {
            Ok(id) => issued_after_cut.push(one.decompose(id).unwrap().unix_ms),
            Err(idgen_core::Error::Fenced { valid_until_ms, .. }) => break valid_until_ms,
            Err(e) => panic!("unexpected error: {e}"),
        }
        assert!(
            cut_at.elapsed() < Duration::from_secs(60),
            "never fenced: {:?}",
            handle.status()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let fenced_after = cut_at.elapsed();

    // The database's view: the lease lasts until the last successful renewal + TTL.
    let row = db.lease_rows(TABLE, "default").await.remove(0);
    assert!(
        fenced_until < row.expires_at_ms,
        "the generator was open until {fenced_until}, the lease expired at {}",
        row.expires_at_ms
    );
    assert!(
        issued_after_cut.iter().all(|&ms| ms < row.expires_at_ms),
        "an ID was issued after the lease expired"
    );
    let status = handle.status();
    assert!(status.failed_renewals > 0, "{status:?}");
    assert!(!status.lost, "{status:?}");

    outage.restore().await;
    let restored_at = Instant::now();
    loop {
        match ids.next_id() {
            Ok(_) => break,
            Err(idgen_core::Error::Fenced { .. })
                if restored_at.elapsed() < Duration::from_secs(60) =>
            {
                tokio::time::sleep(Duration::from_millis(20)).await
            }
            Err(e) => panic!("did not resume: {e}; {:?}", handle.status()),
        }
    }
    assert!(!handle.status().lost);
    eprintln!(
        "{}: fenced {} ms before the lease's expiry in the database ({} ms after the cut); \
         issuing again {} ms after the restore",
        std::any::type_name::<S>(),
        row.expires_at_ms - fenced_until,
        fenced_after.as_millis(),
        restored_at.elapsed().as_millis()
    );
    handle.release().await.unwrap();
}

/// On a MariaDB server whose sessions start with autocommit off, what the store writes is
/// committed at once: another connection sees the claim, the renewal and the release, and the
/// next holder gets the released node ID.
pub async fn every_write_is_committed_on_a_server_without_autocommit<S: LeaseSubject>() {
    assert_eq!(S::DATABASE, DbKind::MySql);
    let db = Database::fresh_with_autocommit_off().await;
    assert_eq!(db.scalar("SELECT @@GLOBAL.autocommit").await, Some(0));
    let store = open_store::<S>(db.url(), TABLE).await;
    S::create_table(&store).await.unwrap();
    let one = layout(0);
    let lease = no_wait()
        .holder("first")
        .acquire(store.clone(), &one)
        .await
        .unwrap();
    let rows = db.lease_rows(TABLE, "default").await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].holder.as_deref(), Some(lease.holder()), "{rows:?}");
    assert!(rows[0].expires_at_ms > now_ms(), "{rows:?}");
    assert!(
        rows[0].last_timestamp_ms.is_some(),
        "the renewal is not committed: {rows:?}"
    );

    let (ids, handle) = generator(lease, one);
    let last_ms = one.decompose(ids.next_id().unwrap()).unwrap().unix_ms;
    handle.release().await.unwrap();
    let rows = db.lease_rows(TABLE, "default").await;
    assert_eq!(
        (rows[0].holder.clone(), rows[0].last_timestamp_ms),
        (None, Some(last_ms)),
        "the release is not committed"
    );

    let other = open_store::<S>(db.url(), TABLE).await;
    let next = no_wait()
        .holder("second")
        .capacity(1)
        .acquire(other, &one)
        .await
        .expect("the released node ID is free");
    assert_eq!(next.previous_timestamp_ms(), Some(last_ms));
    next.handle().release().await.unwrap();
}
