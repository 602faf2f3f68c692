//! The tests of the adapters' orders examples (`idgen-sqlx/examples/sqlx_orders.rs`, …), written
//! once: [`orders_example_suite!`](crate::orders_example_suite).

/// Tests that run an adapter's orders example on SQLite, PostgreSQL and MySQL/MariaDB, so it
/// cannot rot. `$example` is the example file included as a module (`#[path =
/// "../examples/sqlx_orders.rs"] mod orders;`); it has `async fn run(url: &str) -> Result<Run,
/// Box<dyn Error>>`, whose `Run` has `node`, `orders` (`id`, `public_id`, `customer`), `lines`
/// (`id`), `found` and `orders_in_table`.
///
/// Each test runs the example twice on one new, empty database: both runs start up (the second
/// on the tables, counter and lease rows the first left), insert three orders with two lines
/// each, find the second order by its public ID, and release their node ID, so the second run
/// leases the same one; every order and line ID of both runs is distinct, the orders are from
/// the leased node, and the second run's keys sort after the first's.
///
/// ```text
/// #[path = "../examples/sqlx_orders.rs"]
/// mod orders;
/// idgen_testkit::orders_example_suite!(orders);
/// ```
#[macro_export]
macro_rules! orders_example_suite {
    ($example:ident) => {
        async fn runs_twice(url: &str) {
            use ::std::collections::HashSet;
            use $crate::__idgen_core::Layout;

            let first = $example::run(url).await.expect("first run");
            let second = $example::run(url)
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

            let distinct = |ids: Vec<i64>| ids.into_iter().collect::<HashSet<i64>>().len();
            let order_ids = first
                .orders
                .iter()
                .chain(&second.orders)
                .map(|o| o.id.get());
            assert_eq!(
                distinct(order_ids.collect()),
                6,
                "order IDs are unique across runs"
            );
            let line_ids = first.lines.iter().chain(&second.lines).map(|l| l.id.get());
            assert_eq!(
                distinct(line_ids.collect()),
                12,
                "line IDs are unique across runs"
            );
            let newest_first = first.orders.iter().map(|o| o.id).max().unwrap();
            assert!(
                second.orders.iter().all(|o| o.id > newest_first),
                "Snowflake keys sort by time"
            );
        }

        #[tokio::test]
        async fn orders_example_runs_on_sqlite() {
            let db = $crate::__idgen_testdb::sqlite().await.unwrap();
            runs_twice(db.url()).await;
        }

        #[tokio::test]
        async fn orders_example_runs_on_postgres() {
            let db = $crate::__idgen_testdb::postgres().await.unwrap();
            runs_twice(db.url()).await;
        }

        #[tokio::test]
        async fn orders_example_runs_on_mysql() {
            let db = $crate::__idgen_testdb::mysql().await.unwrap();
            runs_twice(db.url()).await;
        }
    };
}
