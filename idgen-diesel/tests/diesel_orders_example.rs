//! The `diesel_orders` example (examples/diesel_orders.rs) runs on each database, from an empty one and again
//! on the tables its first run left, so it cannot rot.

#[allow(dead_code, unreachable_pub)] // `main` is not called here; `pub` is for the example binary
#[path = "../examples/diesel_orders.rs"]
mod orders;

use std::collections::HashSet;

use idgen_diesel::Layout;

/// Two runs on one database: both start up (the second on existing tables), insert three orders
/// with two lines each, find an order by its public ID, and give their node ID back.
async fn runs_twice(url: &str) {
    let first = orders::run(url).await.expect("first run");
    let second = orders::run(url)
        .await
        .expect("second run, on the first run's tables");

    for run in [&first, &second] {
        assert_eq!(run.orders.len(), 3);
        assert_eq!(run.lines.len(), 6);
        assert_eq!(run.found.id, run.orders[1].id);
        assert_eq!(run.found.public_id, run.orders[1].public_id);
        assert_eq!(run.found.customer, "grace");
        for order in &run.orders {
            let node = Layout::TWITTER.decompose(order.id.into()).unwrap().node;
            assert_eq!(node, run.node, "order {} from the leased node", order.id);
        }
    }
    assert_eq!(first.orders_in_table, 3);
    assert_eq!(second.orders_in_table, 6);
    // The first run released its node ID, so the second one got the same (the lowest free).
    assert_eq!(second.node, first.node);

    let order_ids: HashSet<i64> = first
        .orders
        .iter()
        .chain(&second.orders)
        .map(|o| o.id.get())
        .collect();
    assert_eq!(order_ids.len(), 6, "order IDs are unique across runs");
    let line_ids: HashSet<i64> = first
        .lines
        .iter()
        .chain(&second.lines)
        .map(|l| l.id.get())
        .collect();
    assert_eq!(line_ids.len(), 12, "line IDs are unique across runs");
    let newest_first = first.orders.iter().map(|o| o.id).max().unwrap();
    assert!(
        second.orders.iter().all(|o| o.id > newest_first),
        "Snowflake keys sort by time"
    );
}

#[tokio::test]
async fn orders_example_runs_on_sqlite() {
    let db = idgen_testkit::sqlite().await.unwrap();
    runs_twice(db.url()).await;
}

#[tokio::test]
async fn orders_example_runs_on_postgres() {
    let db = idgen_testkit::postgres().await.unwrap();
    runs_twice(db.url()).await;
}

#[tokio::test]
async fn orders_example_runs_on_mysql() {
    let db = idgen_testkit::mysql().await.unwrap();
    runs_twice(db.url()).await;
}
