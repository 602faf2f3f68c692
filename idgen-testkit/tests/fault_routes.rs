//! The kit's cut (`Database::reachable_until_cut`, behind every fault case of the conformance
//! suites) reaches the store on every route the kit offers: a URL from the environment, a
//! container, a throwaway local server. For each route this binary runs itself again with
//! `IDGEN_TESTKIT_ROUTE` naming it, and the child checks, for every database and for each
//! driver the adapters use on it, that a query through the cut URL works, fails once cut (on
//! the connection already open, not only on new ones) and works again once restored.
//!
//! The driver that can switch transport is checked where it can: mysql_async (under
//! diesel-async) reconnects through the server's Unix socket when the server is on this host,
//! past the proxy. The kit turns that off (`prefer_socket=false`), and the check runs on the
//! connection mysql_async opened before the cut. The same drivers connected around the proxy
//! keep answering through the cut: the check would catch a driver that went around it.
//!
//! The URL route is given the local servers' URLs, the case where a user points the kit at the
//! server on their own machine.

use std::process::Command;
use std::time::Duration;

use idgen_testkit::conformance::{Database, DbKind};

const ROLE: &str = "IDGEN_FAULT_ROUTES_CHILD";
const DEADLINE: Duration = Duration::from_secs(5);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cut_reaches_every_driver_on_every_route() {
    if std::env::var(ROLE).is_ok() {
        return;
    }
    // The URL route: the servers a user runs on their own machine, here throwaway local ones.
    let postgres = idgen_testdb::local_server::postgres()
        .await
        .expect("a local PostgreSQL server");
    let mysql = idgen_testdb::local_server::mysql()
        .await
        .expect("a local MariaDB server");
    let url_route = [
        ("IDGEN_POSTGRES_URL", postgres.url().to_owned()),
        ("IDGEN_MYSQL_URL", mysql.url().to_owned()),
    ];
    for route in ["containers", "local", "url"] {
        let mut child = Command::new(std::env::current_exe().expect("this test binary"));
        child
            .args(["--exact", "the_cut_on_this_route", "--nocapture"])
            .env(ROLE, route)
            .env("IDGEN_TESTKIT_ROUTE", route);
        for var in [
            "IDGEN_POSTGRES_URL",
            "IDGEN_MYSQL_URL",
            "IDGEN_ETCD_ENDPOINTS",
            "IDGEN_REDIS_URL",
        ] {
            child.env_remove(var);
        }
        if route == "url" {
            child.envs(url_route.iter().map(|(k, v)| (k, v)));
        }
        let output = tokio::task::spawn_blocking(move || child.output())
            .await
            .unwrap()
            .expect("run this test binary again");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success() && stdout.contains("test result: ok. 1 passed"),
            "the cut on the {route} route:\n{stdout}\n{stderr}"
        );
        for kind in kinds(route) {
            assert!(
                stderr.contains(&format!("cut reaches {} on the {route} route", kind.name())),
                "{} not checked on the {route} route:\n{stderr}",
                kind.name()
            );
        }
    }
}

/// The databases checked on `route`: the URL route has the SQL servers (etcd's and Redis's
/// URL routes take the same URLs through the same proxy).
fn kinds(route: &str) -> Vec<DbKind> {
    let mut kinds = vec![DbKind::Postgres, DbKind::MySql];
    if route != "url" {
        #[cfg(feature = "etcd")]
        kinds.push(DbKind::Etcd);
        #[cfg(feature = "redis")]
        kinds.push(DbKind::Redis);
    }
    kinds
}

/// The child: every database of its route (a no-op in a normal run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cut_on_this_route() {
    let Ok(route) = std::env::var(ROLE) else {
        return;
    };
    for kind in kinds(&route) {
        let db = Database::fresh(kind).await;
        let (url, mut outage) = db.reachable_until_cut().await;
        let mut drivers = Drivers::open(kind, &url).await;
        // The same drivers straight to the server, around the proxy: what a driver that
        // switched transport would be. They keep answering through the cut, so the check
        // below would catch a bypass, and the server itself stays up.
        let mut around = Drivers::open(kind, db.url()).await;
        drivers
            .all_answer(&format!("{} before the cut", kind.name()))
            .await;
        outage.cut().await;
        drivers.none_answers(kind).await;
        around
            .all_answer(&format!("{} around the cut", kind.name()))
            .await;
        outage.restore().await;
        drivers
            .all_answer(&format!("{} after the restore", kind.name()))
            .await;
        eprintln!("cut reaches {} on the {route} route", kind.name());
    }
}

/// One client of each driver the adapters use on a database, connected through `url`.
enum Drivers {
    /// sqlx (idgen-sqlx, idgen-seaorm).
    Postgres(sqlx::PgPool),
    /// sqlx and mysql_async (diesel-async).
    MySql(sqlx::MySqlPool, mysql_async::Pool),
    #[cfg(feature = "etcd")]
    Etcd(Box<etcd_client::Client>),
    #[cfg(feature = "redis")]
    Redis(redis::Client),
}

impl Drivers {
    async fn open(kind: DbKind, url: &str) -> Drivers {
        match kind {
            DbKind::Postgres => Drivers::Postgres(one().connect(url).await.expect("sqlx")),
            DbKind::MySql => Drivers::MySql(
                one().connect(url).await.expect("sqlx"),
                mysql_async::Pool::new(url),
            ),
            #[cfg(feature = "etcd")]
            DbKind::Etcd => {
                let (server, _) = idgen_testdb::key_value::split_url(url);
                let options = etcd_client::ConnectOptions::new()
                    .with_connect_timeout(DEADLINE)
                    .with_timeout(DEADLINE);
                Drivers::Etcd(Box::new(
                    etcd_client::Client::connect([server], Some(options))
                        .await
                        .expect("etcd-client"),
                ))
            }
            #[cfg(feature = "redis")]
            DbKind::Redis => {
                let (server, _) = idgen_testdb::key_value::split_url(url);
                Drivers::Redis(redis::Client::open(server).expect("redis"))
            }
            other => panic!("no drivers for {other:?} here"),
        }
    }

    /// Each driver's answer to one trivial request within the deadline.
    async fn answers(&mut self) -> Vec<(&'static str, Result<(), String>)> {
        let text = |e: &dyn std::fmt::Display| e.to_string();
        match self {
            Drivers::Postgres(pool) => {
                let q = async { sqlx::query("SELECT 1").execute(&*pool).await.map(drop) };
                vec![within("sqlx", async { q.await.map_err(|e| text(&e)) }).await]
            }
            Drivers::MySql(pool, pooled) => {
                let q = async { sqlx::query("SELECT 1").execute(&*pool).await.map(drop) };
                let sqlx = within("sqlx", async { q.await.map_err(|e| text(&e)) }).await;
                let q = async { mysql_query(pooled).await.map_err(|e| text(&e)) };
                vec![sqlx, within("mysql_async", q).await]
            }
            #[cfg(feature = "etcd")]
            Drivers::Etcd(client) => {
                let q = async {
                    let key = "idgen-testkit/fault-routes";
                    client.get(key, None).await.map(drop).map_err(|e| text(&e))
                };
                vec![within("etcd-client", q).await]
            }
            #[cfg(feature = "redis")]
            Drivers::Redis(client) => {
                let q = async {
                    let mut conn = client
                        .get_multiplexed_async_connection()
                        .await
                        .map_err(|e| text(&e))?;
                    redis::cmd("PING")
                        .query_async::<String>(&mut conn)
                        .await
                        .map(drop)
                        .map_err(|e| text(&e))
                };
                vec![within("redis", q).await]
            }
        }
    }

    /// Every driver answers, within a few tries: after a restore, the first request on a
    /// connection the cut dropped may fail before the driver reconnects (as the stores retry).
    async fn all_answer(&mut self, when: &str) {
        let started = std::time::Instant::now();
        loop {
            let failed: Vec<_> = self
                .answers()
                .await
                .into_iter()
                .filter(|(_, answer)| answer.is_err())
                .collect();
            if failed.is_empty() {
                return;
            }
            assert!(started.elapsed() < 2 * DEADLINE, "{when}: {failed:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn none_answers(&mut self, kind: DbKind) {
        for (driver, answer) in self.answers().await {
            assert!(
                answer.is_err(),
                "{driver} still reached {} after the cut: the cut missed the store",
                kind.name()
            );
        }
    }
}

/// A one-connection pool, so the check after the cut uses the connection opened before it.
fn one<DB: sqlx::Database>() -> sqlx::pool::PoolOptions<DB> {
    sqlx::pool::PoolOptions::new()
        .max_connections(1)
        .acquire_timeout(DEADLINE)
}

/// `request`'s outcome, named, or an error when it takes longer than [`DEADLINE`].
async fn within(
    driver: &'static str,
    request: impl std::future::Future<Output = Result<(), String>>,
) -> (&'static str, Result<(), String>) {
    let answer = tokio::time::timeout(DEADLINE, request)
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {DEADLINE:?}")));
    (driver, answer)
}

async fn mysql_query(pool: &mysql_async::Pool) -> Result<(), mysql_async::Error> {
    use mysql_async::prelude::Queryable;
    let mut conn = pool.get_conn().await?;
    conn.query_drop("SELECT 1").await
}
