//! `RedisLeaseStore::rows` and `RedisLeaseStore::free` on a real Redis server (`idgen-testkit`):
//! the rule of the SQL stores' free, and a claim after a forced free that waits the takeover.

use std::time::{Duration, Instant};

use idgen_redis::Layout;
use idgen_redis::lease::{
    ClaimRequest, Freed, LeaseStore, NotFreed, RedisLeaseStore, RenewRequest, WorkerLease,
};
use idgen_testkit::key_value::split_url;

const NS: &str = "orders";
const TTL: Duration = Duration::from_secs(2);

/// Claims a node ID for `holder` straight on the store (a process with no heartbeat: it never
/// renews or releases by itself) and stores a bound as its first renewal does.
async fn hold(store: &RedisLeaseStore, holder: &str, bound: i64) -> u64 {
    let claim = store
        .claim(ClaimRequest {
            namespace: NS,
            capacity: 8,
            holder,
            ttl: TTL,
        })
        .await
        .unwrap()
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
        .unwrap();
    assert!(renewed);
    claim.node
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_are_listed_and_freed_with_the_sql_stores_rule() {
    let keys = idgen_testkit::redis().await.expect("an Redis server");
    let (server, prefix) = split_url(keys.url());
    let client = redis::Client::open(server).unwrap();
    let table = format!("{prefix}leases");
    let store = RedisLeaseStore::new(client).with_prefix(&table).unwrap();
    let now = store.now_ms().await.unwrap();
    // What a first renewal stores: its fence deadline (here TTL - 500 ms from now).
    let (bound_a, bound_b) = (now + 1_500, now + 1_501);

    // Nothing yet.
    assert!(store.rows(NS).await.unwrap().is_empty());
    assert_eq!(
        store.free(NS, 0, None, false).await.unwrap(),
        Err(NotFreed::NoRow { node: 0 })
    );

    // Two holders, both live, each with its bound.
    let a = hold(&store, "holder-a", bound_a).await;
    let b = hold(&store, "holder-b", bound_b).await;
    assert_eq!((a, b), (0, 1));
    let rows = store.rows(NS).await.unwrap();
    let now = store.now_ms().await.unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!((rows[0].node, rows[0].holder.as_str()), (0, "holder-a"));
    assert_eq!((rows[1].node, rows[1].holder.as_str()), (1, "holder-b"));
    assert!(rows.iter().all(|r| r.is_live(now)), "{rows:?}");
    assert_eq!(rows[0].last_timestamp_ms, Some(bound_a));
    assert_eq!(rows[1].last_timestamp_ms, Some(bound_b));
    let left = rows[0].expires_at_ms.unwrap() - now;
    assert!((0..=3_000).contains(&left), "{left} ms left");

    // A stale holder is refused, naming who holds it now.
    let stale = store.free(NS, b, Some("holder-x"), true).await.unwrap();
    assert_eq!(
        stale,
        Err(NotFreed::OtherHolder {
            node: b,
            expected: "holder-x".into(),
            actual: "holder-b".into()
        })
    );

    // Live: refused without force, saying what forcing risks.
    let live = store.free(NS, a, None, false).await.unwrap().unwrap_err();
    assert!(matches!(&live, NotFreed::Live { holder, .. } if holder == "holder-a"));
    assert!(
        live.to_string().contains(
            "two processes issue with the same node ID until the old holder's fence deadline"
        ),
        "{live}"
    );
    assert!(store.rows(NS).await.unwrap()[0].is_live(store.now_ms().await.unwrap()));

    // Forced: freed; listed as ended, its holder and bound kept.
    let forced = store.free(NS, a, Some("holder-a"), true).await.unwrap();
    assert!(
        matches!(&forced, Ok(Freed::Forced { node: 0, holder, .. }) if holder == "holder-a"),
        "{forced:?}"
    );
    let rows = store.rows(NS).await.unwrap();
    assert_eq!(rows[0].holder, "holder-a");
    assert_eq!(rows[0].expires_at_ms, None);
    assert_eq!(rows[0].last_timestamp_ms, Some(bound_a));

    // The next claim of that node ID is a takeover: it waits one TTL (and the allowance)
    // before it returns, and issues above the old holder's bound.
    let started = Instant::now();
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
        .unwrap();
    let waited = started.elapsed();
    assert_eq!(c.node(), a);
    assert!(waited >= TTL, "the claim returned after {waited:?}");
    assert!(c.previous_timestamp_ms() >= Some(bound_a));
    // The old holder's renewal fails now that another process holds the node ID.
    let renewed = store
        .renew(RenewRequest {
            namespace: NS,
            node: a,
            holder: "holder-a",
            ttl: TTL,
            last_timestamp_ms: Some(bound_a),
        })
        .await
        .unwrap();
    assert!(!renewed);

    // Expired: once Redis ended b's lease, it is freed at once, without force, and the next
    // claim takes it at once (exact) above its bound.
    let deadline = Instant::now() + Duration::from_secs(15);
    while store
        .rows(NS)
        .await
        .unwrap()
        .iter()
        .any(|r| r.node == b && r.expires_at_ms.is_some())
    {
        assert!(Instant::now() < deadline, "b's lease never ended");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let expired = store.free(NS, b, None, false).await.unwrap();
    assert_eq!(
        expired,
        Ok(Freed::Expired {
            node: b,
            holder: "holder-b".into()
        })
    );
    assert!(store.rows(NS).await.unwrap().iter().all(|r| r.node != b));
    assert_eq!(
        store.free(NS, b, None, false).await.unwrap(),
        Err(NotFreed::NotHeld { node: b })
    );
    let d = store
        .claim(ClaimRequest {
            namespace: NS,
            capacity: 8,
            holder: "holder-d",
            ttl: TTL,
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (d.node, d.exact, d.last_timestamp_ms),
        (b, true, Some(bound_b))
    );
    c.handle().release().await.unwrap();
}
