//! The operator suite: what `idgen leases list|free` relies on of every store that offers an
//! operator's view (`rows`, the store's clock, `free`), checked on a real server. The rule of
//! the free is the SQL stores' (`idgen_sql::procedure::free`), kept by etcd and Redis too: an
//! expired lease is freed at once, a live one only with `force`, and only the holder asked for.
//!
//! What a store keeps of an ended lease differs (an SQL row keeps its end; etcd and Redis
//! delete the holder key and keep no time), so the cases check [`HeldLease::is_live`] rather
//! than `expires_at_ms` itself.

use std::time::{Duration, Instant};

use idgen_core::Layout;
use idgen_engine::lease::{
    ClaimRequest, FREED_HOLDER, FreeRequest, Freed, HeldLease, LeaseOperator, LeaseStore, NotFreed,
    RenewRequest, WorkerLease,
};

use super::lease::setup;
use super::{DbKind, LeaseSubject};

/// The namespace of the cases.
pub const NS: &str = "orders";
/// The TTL of the leases the cases hold.
pub const TTL: Duration = Duration::from_secs(2);

/// A lease subject whose store offers an operator's view: one whose store implements
/// [`LeaseOperator`] (every store of idgen does: the SQL stores, etcd's, Redis's and the memory
/// store). Implemented for every such subject, so `operator_suite!` takes any of them.
///
/// ```
/// use idgen_engine::lease::{BoxError, MemoryLeaseStore};
/// use idgen_testkit::conformance::{DbKind, LeaseSubject};
///
/// /// (A real subject opens its store on `url`; this one only shows the shape.)
/// struct Memory;
/// impl LeaseSubject for Memory {
///     type Store = MemoryLeaseStore; // a `LeaseOperator`
///     const DATABASE: DbKind = DbKind::Redis;
///     async fn store(_url: &str, _table: &str) -> Result<MemoryLeaseStore, BoxError> {
///         Ok(MemoryLeaseStore::new())
///     }
/// }
///
/// // tests memory_operator::nothing_is_listed_or_freed_before_the_first_claim, …
/// idgen_testkit::operator_suite!(memory_operator, Memory);
/// # fn main() {}
/// ```
pub trait OperatorSubject: LeaseSubject<Store: LeaseOperator> {}

impl<S: LeaseSubject<Store: LeaseOperator>> OperatorSubject for S {}

/// Claims a node ID of [`NS`] for `holder` (capacity 8, TTL [`TTL`]) straight on `store`, as
/// a process with no heartbeat would (it never renews or releases by itself), and stores
/// `bound` as its first renewal does. For the cases here, and for tests of what an operator's
/// tool shows of such leases (`idgen leases` on etcd and Redis).
///
/// ```
/// use idgen_engine::lease::MemoryLeaseStore;
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = MemoryLeaseStore::new();
/// assert_eq!(idgen_testkit::conformance::operator::hold(&store, "web-1", 1_000).await, 0);
/// assert_eq!(idgen_testkit::conformance::operator::hold(&store, "web-2", 1_000).await, 1);
/// # })
/// ```
///
/// # Panics
///
/// When the store fails, has no free node ID, or refuses the renewal.
pub async fn hold<St: LeaseStore>(store: &St, holder: &str, bound: i64) -> u64 {
    let claim = store
        .claim(ClaimRequest {
            namespace: NS,
            capacity: 8,
            holder,
            ttl: TTL,
        })
        .await
        .expect("claim")
        .expect("a free node ID");
    let renewed = store
        .renew(RenewRequest {
            namespace: NS,
            node: claim.node,
            holder,
            ttl: TTL,
            last_timestamp_ms: Some(bound),
        })
        .await
        .expect("renew");
    assert!(renewed, "the first renewal of {holder}");
    claim.node
}

async fn held<S: OperatorSubject>(store: &S::Store) -> Vec<HeldLease> {
    store.held_leases(NS).await.expect("held leases")
}

async fn store_now<S: OperatorSubject>(store: &S::Store) -> i64 {
    LeaseOperator::now_ms(store)
        .await
        .expect("the store's clock")
}

async fn free<S: OperatorSubject>(
    store: &S::Store,
    node: u64,
    holder: Option<&str>,
    force: bool,
) -> Result<Freed, NotFreed> {
    let req = FreeRequest {
        namespace: NS,
        node,
        holder,
        force,
    };
    LeaseOperator::free(store, req).await.expect("free")
}

/// What a first renewal stores: its fence deadline (TTL - 500 ms from now).
async fn bound<S: OperatorSubject>(store: &S::Store) -> i64 {
    store_now::<S>(store).await + 1_500
}

/// Waits until `node`'s lease has ended on the store's clock (at most 15 s).
async fn wait_until_ended<S: OperatorSubject>(store: &S::Store, node: u64) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let now = store_now::<S>(store).await;
        if !held::<S>(store)
            .await
            .iter()
            .any(|r| r.node == node && r.is_live(now))
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the lease of node {node} never ended"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Before anything was claimed, nothing is listed, and a free finds no record.
pub async fn nothing_is_listed_or_freed_before_the_first_claim<S: OperatorSubject>() {
    let (_db, store) = setup::<S>().await;
    assert!(held::<S>(&store).await.is_empty());
    assert_eq!(
        free::<S>(&store, 0, None, false).await,
        Err(NotFreed::NoRow { node: 0 })
    );
    assert_eq!(
        NotFreed::NoRow { node: 0 }.to_string(),
        "node 0 has no lease row or keys: it was never claimed"
    );
}

/// Live leases are listed by node ID, each with its holder, its end (on the store's clock,
/// within a TTL from now) and the bound its renewal stored.
pub async fn held_leases_are_listed_with_holder_end_and_bound<S: OperatorSubject>() {
    let (_db, store) = setup::<S>().await;
    let bound_a = bound::<S>(&store).await;
    let bound_b = bound_a + 1;
    let a = hold(&store, "holder-a", bound_a).await;
    let b = hold(&store, "holder-b", bound_b).await;
    assert_eq!((a, b), (0, 1));
    let rows = held::<S>(&store).await;
    let now = store_now::<S>(&store).await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!((rows[0].node, rows[0].holder.as_str()), (0, "holder-a"));
    assert_eq!((rows[1].node, rows[1].holder.as_str()), (1, "holder-b"));
    assert!(rows.iter().all(|r| r.is_live(now)), "{rows:?}");
    assert_eq!(rows[0].last_timestamp_ms, Some(bound_a));
    assert_eq!(rows[1].last_timestamp_ms, Some(bound_b));
    let left = rows[0].expires_at_ms.expect("a live lease's end") - now;
    assert!((0..=3_000).contains(&left), "{left} ms left");
}

/// A free naming a holder that no longer holds the node ID (the one an operator saw before
/// another process claimed it) is refused, even with force, naming who holds it now.
pub async fn a_free_naming_another_holder_is_refused_naming_the_holder_now<S: OperatorSubject>() {
    let (_db, store) = setup::<S>().await;
    let b = hold(&store, "holder-b", bound::<S>(&store).await).await;
    assert_eq!(
        free::<S>(&store, b, Some("holder-x"), true).await,
        Err(NotFreed::OtherHolder {
            node: b,
            expected: "holder-x".into(),
            actual: "holder-b".into()
        })
    );
    let now = store_now::<S>(&store).await;
    assert!(held::<S>(&store).await[0].is_live(now), "still held");
}

/// A live lease is refused without force, saying what forcing risks; with force it is freed
/// and listed as ended, its holder and bound kept; the next claim of the node ID is a
/// takeover, which returns at once with a bound at least one TTL + its clock allowance after
/// the claim began (issue 37: it issues above that bound rather than waiting for the clock)
/// and above the old bound, and the old holder's renewal fails from then on.
pub async fn a_live_lease_is_freed_only_with_force_and_then_taken_over_after_a_ttl<
    S: OperatorSubject,
>() {
    let (_db, store) = setup::<S>().await;
    let bound_a = bound::<S>(&store).await;
    let a = hold(&store, "holder-a", bound_a).await;

    let live = free::<S>(&store, a, None, false).await.unwrap_err();
    assert!(matches!(&live, NotFreed::Live { holder, .. } if holder == "holder-a"));
    assert!(
        live.to_string().contains(
            "two processes issue with the same node ID until the old holder's fence deadline"
        ),
        "{live}"
    );
    let now = store_now::<S>(&store).await;
    assert!(held::<S>(&store).await[0].is_live(now));

    let forced = free::<S>(&store, a, Some("holder-a"), true).await;
    assert!(
        matches!(&forced, Ok(Freed::Forced { node, holder, .. }) if *node == a && holder == "holder-a"),
        "{forced:?}"
    );
    let rows = held::<S>(&store).await;
    let now = store_now::<S>(&store).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].holder, "holder-a");
    assert!(!rows[0].is_live(now), "{rows:?}");
    if matches!(S::DATABASE, DbKind::Etcd | DbKind::Redis) {
        // The holder key is gone, and with it the lease's end.
        assert_eq!(rows[0].expires_at_ms, None);
    }
    assert_eq!(rows[0].last_timestamp_ms, Some(bound_a));

    let started = Instant::now();
    let began_ms = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_millis(),
    )
    .expect("in range");
    let c = WorkerLease::options()
        .namespace(NS)
        .holder("holder-c")
        .ttl(TTL)
        .renew_every(Duration::from_millis(500))
        .safety_margin(Duration::from_millis(500))
        .clock_allowance(Duration::from_millis(200))
        .capacity(8)
        .acquire(store.clone(), &Layout::TWITTER)
        .await
        .expect("the takeover");
    let waited = started.elapsed();
    assert_eq!(c.node(), a);
    assert!(waited < TTL, "the takeover waited {waited:?} for the clock");
    let floor = c.previous_timestamp_ms().expect("a takeover bound");
    let wait_ms = i64::try_from((TTL + Duration::from_millis(200)).as_millis()).expect("small");
    assert!(
        floor >= began_ms + wait_ms,
        "the takeover's bound {floor} is less than TTL + allowance ({wait_ms} ms) after the claim began ({began_ms})"
    );
    assert!(
        floor >= bound_a,
        "bound {floor} below the old bound {bound_a}"
    );
    let renewed = store
        .renew(RenewRequest {
            namespace: NS,
            node: a,
            holder: "holder-a",
            ttl: TTL,
            last_timestamp_ms: Some(bound_a),
        })
        .await
        .expect("renew");
    assert!(
        !renewed,
        "the old holder renewed a node ID another process holds"
    );
    c.handle().release().await.expect("release");
}

/// Once a lease has ended, it is freed without force. The store may have come back from an
/// older backup that shows a lease as ended whose holder still runs, which the operator cannot
/// tell: so the free must stop that holder from taking the node ID back, and must not vouch
/// for the bound as a release does. After the free: the old holder's renewal fails (it
/// fences), the node ID is no longer listed, a second free finds it free already, and the
/// next claim is a takeover (not exact: it issues no tick before claim time + one TTL + its
/// clock allowance) above the bound.
pub async fn an_expired_lease_is_freed_without_force_and_then_taken_over_not_exact<
    S: OperatorSubject,
>() {
    let (_db, store) = setup::<S>().await;
    let bound_b = bound::<S>(&store).await;
    let b = hold(&store, "holder-b", bound_b).await;
    wait_until_ended::<S>(&store, b).await;
    // etcd reports the time to live in whole seconds, rounded down, and its leader revokes
    // expired leases every 500 ms: a lease listed as ended may keep its key a while longer, and
    // a free then answers that it is live (or that the key changed under it). Rightly: the
    // lease has not ended yet. Ask again until the store has ended it too (at most 15 s).
    let deadline = Instant::now() + Duration::from_secs(15);
    let freed = loop {
        let req = FreeRequest {
            namespace: NS,
            node: b,
            holder: None,
            force: false,
        };
        match LeaseOperator::free(&store, req).await {
            Ok(Err(NotFreed::Live { .. })) | Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Ok(outcome) => break outcome,
            Err(e) => panic!("free: {e}"),
        }
    };
    assert_eq!(
        freed,
        Ok(Freed::Expired {
            node: b,
            holder: "holder-b".into()
        })
    );
    let said = freed.as_ref().map(ToString::to_string).unwrap_or_default();
    assert!(
        said.contains("holder-b can no longer renew it; the next claim is a takeover"),
        "{said}"
    );
    let renew_b = || {
        store.renew(RenewRequest {
            namespace: NS,
            node: b,
            holder: "holder-b",
            ttl: TTL,
            last_timestamp_ms: Some(bound_b),
        })
    };
    // (a) The old holder (alive after all) cannot take the node ID back.
    assert!(
        !renew_b().await.expect("renew"),
        "the old holder took back a node ID an operator freed"
    );
    assert!(held::<S>(&store).await.iter().all(|r| r.node != b));
    assert_eq!(
        free::<S>(&store, b, None, false).await,
        Err(NotFreed::NotHeld { node: b })
    );
    assert_eq!(
        free::<S>(&store, b, Some(FREED_HOLDER), true).await,
        Err(NotFreed::NotHeld { node: b })
    );
    // (b) The next claim is a takeover: the free vouches for nothing.
    let d = store
        .claim(ClaimRequest {
            namespace: NS,
            capacity: 8,
            holder: "holder-d",
            ttl: TTL,
        })
        .await
        .expect("claim")
        .expect("a free node ID");
    assert_eq!(
        (d.node, d.exact, d.last_timestamp_ms),
        (b, false, Some(bound_b)),
        "an operator's free made the next claim exact"
    );
    assert!(!renew_b().await.expect("renew"), "renewed under holder-d");
    let rows = held::<S>(&store).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].holder, "holder-d");
}

/// A node ID its holder released is not held: a free finds nothing to free and leaves it as
/// the release left it, so the next claim is exact, right above the timestamp the release
/// stored (only the holder itself can vouch for what it issued).
pub async fn a_released_node_id_is_not_freed_and_its_next_claim_is_exact<S: OperatorSubject>() {
    let (_db, store) = setup::<S>().await;
    let bound_a = bound::<S>(&store).await;
    let a = hold(&store, "holder-a", bound_a).await;
    let released = bound_a - 500;
    store
        .release(RenewRequest {
            namespace: NS,
            node: a,
            holder: "holder-a",
            ttl: Duration::ZERO,
            last_timestamp_ms: Some(released),
        })
        .await
        .expect("release");
    assert!(held::<S>(&store).await.is_empty());
    assert_eq!(
        free::<S>(&store, a, None, true).await,
        Err(NotFreed::NotHeld { node: a })
    );
    let c = store
        .claim(ClaimRequest {
            namespace: NS,
            capacity: 8,
            holder: "holder-c",
            ttl: TTL,
        })
        .await
        .expect("claim")
        .expect("a free node ID");
    assert_eq!(
        (c.node, c.exact, c.last_timestamp_ms),
        (a, true, Some(released))
    );
}
