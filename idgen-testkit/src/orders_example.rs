//! The tests of the adapters' orders examples (`idgen-sqlx/examples/sqlx_orders.rs`, …), written
//! once: [`orders_example_suite!`](crate::orders_example_suite).

/// Tests that run an adapter's orders example on SQLite, PostgreSQL and MySQL/MariaDB, so it
/// cannot rot. `$example` is the example file included as a module (`#[path =
/// "../examples/sqlx_orders.rs"] mod orders;`); it has `async fn run(url: &str) -> Result<Run,
/// Box<dyn Error>>`, whose `Run` has `node`, `orders` (`id`, `public_id`, `customer`), `lines`
/// (`id`), `found` and `orders_in_table`.
///
/// The failures: a port nothing listens on (PostgreSQL and MySQL URLs) and a database that does
/// not exist (on each server) make `run` fail within 10 s with one paragraph that names what was
/// tried (kind, host, port, database, user; not the password) and what to do.
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

        /// The example's error for `url`, which must come within 10 s.
        async fn failure(url: &str) -> String {
            let started = ::std::time::Instant::now();
            let err = $example::run(url).await.expect_err("a run on a database it cannot reach");
            assert!(
                started.elapsed() < ::std::time::Duration::from_secs(10),
                "gave up after {:?}",
                started.elapsed()
            );
            let text = err.to_string();
            assert!(!text.contains('\n'), "one paragraph: {text}");
            text
        }

        #[tokio::test]
        async fn orders_example_names_a_refused_port() {
            for (scheme, kind) in [("postgres", "PostgreSQL"), ("mysql", "MariaDB/MySQL")] {
                let port = $crate::orders_example::closed_port();
                let url = format!("{scheme}://shopper:secret@127.0.0.1:{port}/shop");
                let text = failure(&url).await;
                let tried = format!(
                    "cannot connect to {kind} at 127.0.0.1:{port} (database \"shop\", user \"shopper\"): "
                );
                assert!(text.starts_with(&tried), "{text}");
                assert!(text.contains("Is the server running, and listening on port"), "{text}");
                assert!(!text.contains("secret"), "{text}");
            }
        }

        /// The example's error for the database `idgen_no_such_db` on the server of `url`.
        async fn missing_database(url: &str, kind: &str, create: &str) {
            let text = failure(&$crate::orders_example::missing_database(url)).await;
            assert!(text.starts_with(&format!("cannot connect to {kind} at ")), "{text}");
            assert!(text.contains("database \"idgen_no_such_db\""), "{text}");
            assert!(text.contains(&format!("Create it (`{create} ")), "{text}");
        }

        #[tokio::test]
        async fn orders_example_names_a_missing_database_on_postgres() {
            let db = $crate::__idgen_testdb::postgres().await.unwrap();
            missing_database(db.url(), "PostgreSQL", "createdb").await;
        }

        #[tokio::test]
        async fn orders_example_names_a_missing_database_on_mysql() {
            let db = $crate::__idgen_testdb::mysql().await.unwrap();
            missing_database(db.url(), "MariaDB/MySQL", "mysql").await;
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

/// A TCP port on 127.0.0.1 that nothing listens on (bound, then closed).
#[doc(hidden)]
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

/// `url` naming the database `idgen_no_such_db` instead of its own (no test creates it).
#[doc(hidden)]
pub fn missing_database(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a server URL");
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let query = path
        .split_once('?')
        .map(|(_, q)| format!("?{q}"))
        .unwrap_or_default();
    format!("{scheme}://{authority}/idgen_no_such_db{query}")
}
