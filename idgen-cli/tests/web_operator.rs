//! The operator view of `idgen web --database-url …` in a real browser, over a real PostgreSQL
//! lease table (idgen-testkit) with two leasing processes' leases.

mod browser;

use std::time::{Duration, Instant};

use browser::{Browser, Server};
use fantoccini::Locator;
use idgen_core::Layout;
use idgen_sqlx::lease::{WorkerLease, create_lease_table};
use serde_json::{Value, json};

/// The rows of the lease table on the page: node → holder.
async fn rows(b: &Browser) -> Value {
    b.client
        .execute(
            "return Object.fromEntries([...document.querySelectorAll('#lease-table tbody tr')]
                 .map(tr => [tr.dataset.node, tr.querySelector('.holder').textContent]))",
            vec![],
        )
        .await
        .expect("script runs")
}

async fn refreshes(b: &Browser) -> u64 {
    let v = b
        .client
        .execute(
            "return Number(document.getElementById('lease-table').dataset.refreshed || '0')",
            vec![],
        )
        .await
        .expect("script runs");
    v.as_u64().unwrap_or(0)
}

/// Waits for a `confirm()` dialog and returns its text.
async fn dialog(b: &Browser) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(text) = b.client.get_alert_text().await {
            return text;
        }
        assert!(Instant::now() < deadline, "no dialog appeared");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Clicks node `node`'s Free button. The table is rendered again at every refresh, so a
/// button found just before one is gone when clicked ("stale element"): find it again then.
async fn click_free(b: &Browser, node: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let found = b
            .client
            .find(Locator::Css(&format!("button[data-node='{node}']")))
            .await;
        match found {
            Ok(button) => match button.click().await {
                Ok(()) => return,
                Err(e) if e.is_stale_element_reference() && Instant::now() < deadline => {}
                Err(e) => panic!("clicking the Free button of node {node}: {e}"),
            },
            Err(e) if Instant::now() < deadline => {
                eprintln!("Free button of node {node} not found yet: {e}")
            }
            Err(e) => panic!("no Free button for node {node}: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A pool of its own, as another process would have.
async fn pool(url: &str) -> sqlx::PgPool {
    sqlx::PgPool::connect(url).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_view_lists_both_holders_and_drops_a_released_node_within_one_refresh() {
    let db = idgen_testkit::postgres()
        .await
        .expect("a PostgreSQL test database");
    // Two leasing processes: each its own pool, as two application instances would have.
    let (pool_a, pool_b) = (pool(db.url()).await, pool(db.url()).await);
    create_lease_table(&pool_a).await.unwrap();
    let acquire = |pool: sqlx::PgPool, name: &'static str| async move {
        WorkerLease::options()
            .holder(name)
            .ttl(Duration::from_secs(60))
            // Not within the test: a renewal of orders-b before its lease is freed without
            // force (below) would take the node ID back after the forced free.
            .renew_every(Duration::from_secs(45))
            .skip_takeover_wait_for_tests_and_development(true)
            .acquire(pool, &Layout::TWITTER)
            .await
            .unwrap()
    };
    let a = acquire(pool_a, "orders-a").await;
    let b_lease = acquire(pool_b, "orders-b").await;
    let (node_a, node_b) = (a.node().to_string(), b_lease.node().to_string());
    let (holder_a, holder_b) = (a.holder().to_owned(), b_lease.holder().to_owned());
    assert!(holder_a.starts_with("orders-a") && holder_b.starts_with("orders-b"));

    // A hi-lo counter in use, and one that does not exist.
    let hilo = idgen_sqlx::hilo::HiLo::builder(pool(db.url()).await)
        .block(1000)
        .create_if_missing(true)
        .build()
        .await
        .unwrap();
    for _ in 0..3 {
        hilo.next_id().await.unwrap();
    }
    drop(hilo);
    let next: i64 = sqlx::query_scalar(
        "SELECT CASE WHEN is_called THEN last_value + 1000 ELSE last_value END FROM hilo",
    )
    .fetch_one(&pool(db.url()).await)
    .await
    .unwrap();
    assert!(next > 1 && next % 1000 == 1, "{next}");

    let server = Server::start(&[
        "--database-url",
        db.url(),
        "--counter",
        "hilo",
        "--counter",
        "nothere",
    ]);
    let b = Browser::start().await;
    b.open(&server.url).await;
    b.by_id("tab-operator").await.click().await.unwrap();
    b.wait_for_js("return document.querySelectorAll('#lease-table tbody tr').length === 2")
        .await;
    assert_eq!(
        rows(&b).await,
        json!({ node_a.clone(): holder_a, node_b.clone(): holder_b.clone() })
    );
    let counters = b
        .client
        .execute(
            "return Object.fromEntries([...document.querySelectorAll('#counter-table tbody tr')]
                 .map(tr => [tr.dataset.counter, tr.querySelector('.value').textContent]))",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        counters,
        json!({ "hilo": next.to_string(), "nothere": "(missing)" })
    );
    b.screenshot("web-operator").await;

    // A live lease: freeing asks first, then refuses unless forced, saying what forcing risks.
    click_free(&b, &node_b).await;
    let ask = dialog(&b).await;
    assert!(ask.contains(&format!("Free node {node_b}")), "{ask}");
    b.client.accept_alert().await.unwrap();
    let refusal = dialog(&b).await;
    assert!(
        refusal.contains(
            "two processes issue with the same node ID until the old holder's fence deadline"
        ),
        "{refusal}"
    );
    b.client.dismiss_alert().await.unwrap();
    b.wait_for_js(
        "return document.getElementById('free-status').textContent.includes('was not freed')",
    )
    .await;

    // Confirmed twice, the force goes through: the lease ends now, its holder's name stays.
    click_free(&b, &node_b).await;
    dialog(&b).await;
    b.client.accept_alert().await.unwrap();
    dialog(&b).await;
    b.client.accept_alert().await.unwrap();
    b.wait_for_js(&format!(
        "return document.getElementById('free-status').textContent.startsWith('node {node_b} freed by force')"
    ))
    .await;

    // The lease has ended now: Free frees it without force, saying that the old holder cannot
    // renew it and that the next claim is a takeover (not at once), and the node ID is no
    // longer listed as held.
    click_free(&b, &node_b).await;
    let ask = dialog(&b).await;
    assert!(ask.contains(&format!("Free node {node_b}")), "{ask}");
    b.client.accept_alert().await.unwrap();
    b.wait_for_js(&format!(
        "return document.getElementById('free-status').textContent.startsWith('node {node_b} freed: the lease of {holder_b} had expired')"
    ))
    .await;
    let said = b
        .client
        .execute(
            "return document.getElementById('free-status').textContent",
            vec![],
        )
        .await
        .unwrap();
    let said = said.as_str().unwrap_or_default();
    assert!(
        said.contains(&format!(
            "{holder_b} can no longer renew it; the next claim is a takeover"
        )) && !said.contains("at once"),
        "{said}"
    );

    // A released node disappears at the first refresh that starts after the release.
    a.handle().release().await.unwrap();
    let seen = refreshes(&b).await;
    let start = Instant::now();
    b.wait_for_js(&format!(
        "return Number(document.getElementById('lease-table').dataset.refreshed) >= {}",
        seen + 2
    ))
    .await;
    // Two refreshes of 2 s each, with room for a loaded machine.
    assert!(
        start.elapsed() < Duration::from_secs(12),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(rows(&b).await, json!({}));
    b.client.clone().close().await.unwrap();
    drop((a, b_lease));
}

/// `GET path` on the server, as JSON (plain HTTP/1.1 over a socket).
fn get_json(base: &str, path: &str) -> Value {
    use std::io::{Read, Write};
    let addr = base.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
    serde_json::from_str(body).unwrap()
}

/// A counter used by `HiLo` on `pool` shows where its next block starts.
async fn counter_is_read<DB>(db: idgen_testkit::TestDb<DB>)
where
    DB: idgen_sqlx::SqlxDatabase,
    sqlx::Pool<DB>: idgen_sqlx::hilo::IntoHiLoSource<idgen_sqlx::SqlxMarker>,
{
    let hilo = idgen_sqlx::hilo::HiLo::builder(db.pool().clone())
        .block(100)
        .create_if_missing(true)
        .build()
        .await
        .unwrap();
    for _ in 0..3 {
        hilo.next_id().await.unwrap();
    }
    drop(hilo);
    create_lease_table(db.pool()).await.unwrap();
    let server = Server::start(&["--database-url", db.url(), "--counter", "hilo"]);
    let answer = get_json(&server.url, "/api/leases");
    let counter = &answer["counters"][0];
    let next: i64 = counter["next_value"].as_str().unwrap().parse().unwrap();
    assert!(next > 1 && next % 100 == 1, "{answer}");
    assert_ne!(counter["kind"], "missing", "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_counter_is_read_on_sqlite() {
    counter_is_read(idgen_testkit::sqlite().await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_counter_is_read_on_mysql() {
    counter_is_read(idgen_testkit::mysql().await.unwrap()).await;
}
