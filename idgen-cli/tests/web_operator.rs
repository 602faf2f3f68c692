//! The operator view of `idgen web --database-url …` in a real browser, over a real PostgreSQL
//! lease table (idgen-testkit) with two leasing processes' leases; and who may use it (over
//! plain HTTP and in the browser, on SQLite): a foreign `Host` (DNS rebinding), a foreign or
//! missing `Origin`, no token or a wrong one are refused and leave the lease table as it was.

mod browser;

use std::time::{Duration, Instant};

use browser::http::{Answer, get_json, request};
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

/// Waits for the page's dialog (`<dialog>`, modal) and returns its title and its lines.
async fn dialog(b: &Browser) -> [String; 3] {
    b.wait_for_js("return document.getElementById('free-dialog').open")
        .await;
    // The page's own dialog: no native confirm() may be open.
    assert!(b.client.get_alert_text().await.is_err(), "a native dialog");
    let v = b
        .client
        .execute(
            "return ['free-title', 'free-what', 'free-risk']
                 .map(id => document.getElementById(id).textContent)",
            vec![],
        )
        .await
        .expect("script runs");
    let line = |i: usize| v[i].as_str().unwrap_or_default().to_owned();
    [line(0), line(1), line(2)]
}

/// Presses the dialog's button that goes ahead (`true`) or Cancel, and waits until it closes.
///
/// "Closed" is the dialog's `close` event, not its `open` attribute: when the answer leads
/// straight to a second question (a live lease: "free by force?"), the page opens the dialog
/// again as soon as the server answers, which on a quiet machine is sooner than a poll of
/// `open` can see it shut.
async fn answer(b: &Browser, go: bool) {
    b.client
        .execute(
            "window.idgenDialogClosed = false;
             document.getElementById('free-dialog').addEventListener(
                 'close', () => { window.idgenDialogClosed = true; }, { once: true });",
            vec![],
        )
        .await
        .expect("script runs");
    let button = if go { "free-confirm" } else { "free-cancel" };
    b.by_id(button).await.click().await.expect("click");
    b.wait_for_js("return window.idgenDialogClosed === true")
        .await;
}

/// Waits until the free's status line starts with `start`, and returns it.
async fn status_starting(b: &Browser, start: &str) -> String {
    b.wait_for_js(&format!(
        "return document.getElementById('free-status').textContent.startsWith({})",
        json!(start)
    ))
    .await;
    b.text("free-status").await
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

    // The layout column: the layout the namespace recorded (the leases' own), as --layout.
    let layouts = b
        .client
        .execute(
            "return [...document.querySelectorAll('#lease-table td.layout')].map(td => td.textContent)",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(layouts, json!(["twitter", "twitter"]));
    assert_eq!(b.text("layout-warning").await, "");
    b.assert_accessible("operator, the lease table").await;
    for width in browser::audit::WIDTHS {
        b.set_width(width).await;
        b.assert_no_sideways_scroll(&format!("{width} px, operator"))
            .await;
    }

    // A live lease: freeing asks first (on the page, two lines), then refuses unless forced,
    // saying in two lines what forcing does.
    click_free(&b, &node_b).await;
    let [title, what, _] = dialog(&b).await;
    assert_eq!(title, format!("Free node {node_b}?"));
    assert!(
        what.starts_with(&format!("Held by {holder_b}; its lease runs another ")),
        "{what}"
    );
    b.screenshot("web-operator-free-dialog").await;
    b.assert_accessible("operator, the free dialog").await;
    answer(&b, true).await;
    let [title, what, risk] = dialog(&b).await;
    assert_eq!(title, format!("Free node {node_b} by force?"));
    assert!(
        what.starts_with(&format!(
            "{holder_b} may still be issuing IDs with node {node_b}"
        )),
        "{what}"
    );
    assert!(
        risk.starts_with("Forcing ends that lease now") && risk.len() < 200,
        "{risk}"
    );
    answer(&b, false).await;
    status_starting(
        &b,
        &format!("Nothing was freed: node {node_b} is leased by {holder_b}"),
    )
    .await;

    // Confirmed twice, the force goes through: the lease ends now, its holder's name stays.
    click_free(&b, &node_b).await;
    dialog(&b).await;
    answer(&b, true).await;
    dialog(&b).await;
    answer(&b, true).await;
    status_starting(&b, &format!("node {node_b} freed by force")).await;
    b.wait_for_js(&format!(
        "return document.querySelector('#lease-table tr[data-node=\"{node_b}\"] td:nth-child(3)')
             ?.textContent.startsWith('expired') === true"
    ))
    .await;

    // The lease has ended now: Free frees it without force, saying that the old holder cannot
    // renew it and that the next claim is a takeover (not at once), and the node ID is no
    // longer listed as held.
    click_free(&b, &node_b).await;
    let [title, what, risk] = dialog(&b).await;
    assert_eq!(title, format!("Free node {node_b}?"));
    assert!(what.contains("its lease has expired"), "{what}");
    assert!(risk.contains("takes it over"), "{risk}");
    answer(&b, true).await;
    let said = status_starting(
        &b,
        &format!("node {node_b} freed: the lease of {holder_b} had expired"),
    )
    .await;
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
    let answer = get_json(&server, "/api/leases");
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

// ---- Who may use the server: Host, Origin and the token (issue 39, item 1).

/// A SQLite lease table with one live lease (held by this test, as a leasing process would
/// hold it), and `idgen web ARGS… --database-url` over it.
struct Held {
    db: idgen_testkit::TestDb<sqlx::Sqlite>,
    lease: WorkerLease,
    server: Server,
}

impl Held {
    async fn start(args: &[&str]) -> Held {
        let db = idgen_testkit::sqlite()
            .await
            .expect("a SQLite test database");
        create_lease_table(db.pool()).await.unwrap();
        let lease = WorkerLease::options()
            .holder("orders-a")
            .ttl(Duration::from_secs(60))
            .renew_every(Duration::from_secs(20))
            .skip_takeover_wait_for_tests_and_development(true)
            .acquire(
                sqlx::SqlitePool::connect(db.url()).await.unwrap(),
                &Layout::TWITTER,
            )
            .await
            .unwrap();
        let mut all = args.to_vec();
        all.extend(["--database-url", db.url()]);
        let server = Server::start(&all);
        Held { db, lease, server }
    }

    fn node(&self) -> String {
        self.lease.node().to_string()
    }

    /// The lease table as `idgen leases list --json` reads it: node, holder and whether live.
    fn table(&self) -> Value {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_idgen"))
            .args(["leases", "list", "--json", "--database-url", self.db.url()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
        listed["leases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| json!([l["node"], l["holder"], l["live"]]))
            .collect()
    }

    /// The table while the test's lease is live and untouched.
    fn untouched(&self) -> Value {
        json!([[self.lease.node(), self.lease.holder(), true]])
    }

    /// `POST /api/leases/free` by force with these headers (Host included or not).
    fn free(&self, headers: &[(&str, &str)]) -> Answer {
        let body = json!({ "node": self.node(), "force": true }).to_string();
        request(
            &self.server.addr,
            "POST",
            "/api/leases/free",
            headers,
            Some(&body),
        )
    }

    /// The origin of the page, `http://127.0.0.1:PORT`.
    fn origin(&self) -> String {
        format!("http://{}", self.server.addr)
    }
}

/// Asserts a 403 whose reason contains `why`, and that it shows no holder.
fn refused(answer: &Answer, why: &str, holder: &str, what: &str) {
    assert_eq!(answer.status, 403, "{what}: {answer:?}");
    let message = answer.json()["errors"][0]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(message.contains(why), "{what}: {message:?} lacks {why:?}");
    assert!(!answer.body.contains(holder), "{what}: {answer:?}");
}

const COMPOSE: &str = r#"{"layout":"twitter","time":"1288834975657","node":{"datacenter":"1","worker":"1"},"sequence":"0"}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_host_is_refused_on_every_route_and_the_lease_stays() {
    let h = Held::start(&[]).await;
    assert_eq!(h.table(), h.untouched());
    let port = h.server.addr.rsplit_once(':').unwrap().1;
    let free = json!({ "node": h.node(), "force": true }).to_string();
    let routes: [(&str, &str, Option<&str>); 9] = [
        ("GET", "/", None),
        ("GET", "/app.js", None),
        ("GET", "/app.css", None),
        ("GET", "/api/config", None),
        ("GET", "/api/layout?layout=twitter", None),
        ("POST", "/api/compose", Some(COMPOSE)),
        (
            "POST",
            "/api/inspect",
            Some(r#"{"layout":"twitter","text":"4194439168"}"#),
        ),
        ("GET", "/api/leases", None),
        ("POST", "/api/leases/free", Some(&free)),
    ];
    // What a DNS-rebinding page sends: its own name (same origin in the browser), with the
    // port or not, and even with the token.
    for host in ["evil.example".to_owned(), format!("evil.example:{port}")] {
        let origin = format!("http://{host}");
        for (method, path, body) in routes {
            let headers = [
                ("Host", host.as_str()),
                ("Origin", origin.as_str()),
                ("X-Idgen-Token", h.server.token.as_str()),
            ];
            let answer = request(&h.server.addr, method, path, &headers, body);
            refused(
                &answer,
                "is not this server",
                h.lease.holder(),
                &format!("{method} {path} Host {host}"),
            );
        }
    }
    // No Host at all (HTTP/1.0 allows it).
    let answer = h.free(&[("Origin", &h.origin()), ("X-Idgen-Token", &h.server.token)]);
    refused(&answer, "without a Host", h.lease.holder(), "no Host");
    assert_eq!(h.table(), h.untouched());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_or_missing_origin_neither_frees_nor_reads() {
    let h = Held::start(&[]).await;
    let port = h.server.addr.rsplit_once(':').unwrap().1;
    let host = ("Host", h.server.addr.as_str());
    let token = ("X-Idgen-Token", h.server.token.as_str());
    for origin in [
        "http://evil.example".to_owned(),
        format!("http://evil.example:{port}"),
        "null".to_owned(),
        format!("https://{}", h.server.addr),
        format!("http://127.0.0.1:{}", port.parse::<u16>().unwrap() + 1),
    ] {
        let answer = h.free(&[host, ("Origin", &origin), token]);
        refused(&answer, "is not this server", h.lease.holder(), &origin);
        // A page of another site may not read the holders either.
        let answer = request(
            &h.server.addr,
            "GET",
            "/api/leases",
            &[host, ("Origin", &origin), token],
            None,
        );
        refused(&answer, "is not this server", h.lease.holder(), &origin);
    }
    let answer = h.free(&[host, token]);
    refused(&answer, "without an Origin", h.lease.holder(), "no Origin");
    assert_eq!(h.table(), h.untouched());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_this_runs_token_the_leases_are_neither_read_nor_freed() {
    let h = Held::start(&[]).await;
    let origin = h.origin();
    let (host, origin) = (
        ("Host", h.server.addr.as_str()),
        ("Origin", origin.as_str()),
    );
    let token = &h.server.token;
    assert_eq!(token.len(), 48, "{}", h.server.url);
    let mut wrong = token.clone();
    let last = if wrong.ends_with('0') { "1" } else { "0" };
    wrong.replace_range(token.len() - 1.., last);
    let longer = format!("{token}0");
    let answer = h.free(&[host, origin]);
    refused(&answer, "needs the token", h.lease.holder(), "no token");
    for bad in [wrong.as_str(), &token[..token.len() - 1], &longer, ""] {
        let answer = h.free(&[host, origin, ("X-Idgen-Token", bad)]);
        refused(&answer, "not this run's", h.lease.holder(), bad);
    }
    // In the query, as the page's URL has it, the token does not count: only the header does.
    let body = json!({ "node": h.node(), "force": true }).to_string();
    let path = format!("/api/leases/free?token={token}");
    let answer = request(&h.server.addr, "POST", &path, &[host, origin], Some(&body));
    refused(
        &answer,
        "needs the token",
        h.lease.holder(),
        "token in the query",
    );
    let answer = request(&h.server.addr, "GET", "/api/leases", &[host], None);
    refused(
        &answer,
        "needs the token",
        h.lease.holder(),
        "GET /api/leases",
    );
    assert_eq!(h.table(), h.untouched());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_and_the_servers_origin_free_a_lease() {
    let h = Held::start(&[]).await;
    let port = h.server.addr.rsplit_once(':').unwrap().1;
    let token = ("X-Idgen-Token", h.server.token.as_str());
    // The holders, under each name of this server.
    for host in [
        h.server.addr.clone(),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ] {
        let answer = request(
            &h.server.addr,
            "GET",
            "/api/leases",
            &[("Host", &host), token],
            None,
        );
        assert_eq!(answer.status, 200, "{host}: {answer:?}");
        assert_eq!(
            answer.json()["leases"][0]["holder"],
            h.lease.holder(),
            "{host}"
        );
    }
    // Compose and inspect need no token (they compute, and read nothing stored).
    let origin = h.origin();
    let (host, origin) = (
        ("Host", h.server.addr.as_str()),
        ("Origin", origin.as_str()),
    );
    let answer = request(
        &h.server.addr,
        "POST",
        "/api/compose",
        &[host, origin],
        Some(COMPOSE),
    );
    assert_eq!(answer.json()["id"], "4194439168", "{answer:?}");
    // The page loads, and keeps out of other sites' frames.
    let page = request(&h.server.addr, "GET", "/", &[host], None);
    assert_eq!(page.status, 200, "{page:?}");
    assert!(
        page.head
            .to_ascii_lowercase()
            .contains("x-frame-options: deny"),
        "{}",
        page.head
    );

    let answer = h.free(&[host, origin, token]);
    assert_eq!(answer.status, 200, "{answer:?}");
    let message = answer.json()["message"].as_str().unwrap().to_owned();
    assert!(
        message.starts_with(&format!("node {} freed by force", h.node())),
        "{message}"
    );
    assert_ne!(h.table(), h.untouched());
}

/// `idgen web ARGS…`, which must exit within 10 s; its status and stderr.
fn exits(args: &[&str]) -> (std::process::ExitStatus, String) {
    use std::io::Read;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_idgen"))
        .arg("web")
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("idgen web {args:?} started serving instead of refusing");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status, stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_address_than_loopback_needs_allow_remote_and_keeps_the_token() {
    for host in ["0.0.0.0", "::"] {
        let (status, stderr) = exits(&["--port", "0", "--host", host]);
        assert_eq!(status.code(), Some(1), "{host}: {stderr}");
        assert!(
            stderr.contains(&format!("--host {host} is not a loopback address"))
                && stderr.contains("--allow-remote"),
            "{stderr}"
        );
    }
    // Allowed: the URL still carries a token, the operator routes need it, and a name other
    // than localhost is still refused (IP addresses are accepted: a rebinding page sends a name).
    let h = Held::start(&["--host", "0.0.0.0", "--allow-remote"]).await;
    assert!(
        h.server.url.starts_with("http://0.0.0.0:"),
        "{}",
        h.server.url
    );
    assert_eq!(h.server.token.len(), 48, "{}", h.server.url);
    let port = h.server.addr.rsplit_once(':').unwrap().1;
    let answer = request(
        &h.server.addr,
        "GET",
        "/api/leases",
        &[("Host", &h.server.addr)],
        None,
    );
    refused(&answer, "needs the token", h.lease.holder(), "no token");
    let evil = format!("evil.example:{port}");
    let token = ("X-Idgen-Token", h.server.token.as_str());
    let answer = request(
        &h.server.addr,
        "GET",
        "/api/leases",
        &[("Host", &evil), token],
        None,
    );
    refused(&answer, "is not this server", h.lease.holder(), "evil Host");
    let lan = format!("192.0.2.7:{port}");
    let answer = request(
        &h.server.addr,
        "GET",
        "/api/leases",
        &[("Host", &lan), token],
        None,
    );
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(h.table(), h.untouched());
}

// ---- The same in a real browser.

/// `fetch(url, init)` from the page's script: the status, `opaque` for a no-cors answer, or
/// the error when the browser did not let it through.
async fn fetch_in_page(b: &Browser, url: &str, init: Value) -> Value {
    b.client
        .execute_async(
            "const [url, init, done] = arguments;
             fetch(url, init).then(r => done(r.type === 'opaque' ? 'opaque' : r.status),
                                   e => done('error: ' + e))",
            vec![json!(url), init],
        )
        .await
        .expect("script runs")
}

/// The free by force a page's script would send, with `token` in the header.
fn free_init(node: &str, token: &str) -> Value {
    json!({
        "method": "POST",
        "headers": { "content-type": "application/json", "x-idgen-token": token },
        "body": json!({ "node": node, "force": true }).to_string(),
    })
}

/// Chromium resolving `evil.example` to this machine, as after a DNS rebinding.
async fn rebound_browser() -> Browser {
    Browser::start_with(&["--host-resolver-rules=MAP evil.example 127.0.0.1"]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_browser_a_rebinding_page_neither_loads_nor_reads_nor_frees() {
    let h = Held::start(&[]).await;
    let port = h.server.addr.rsplit_once(':').unwrap().1;
    let b = rebound_browser().await;
    // The attacker's name now points here: the browser asks idgen for evil.example's page.
    b.client
        .goto(&format!("http://evil.example:{port}/"))
        .await
        .unwrap();
    // Its script is same-origin with the server for the browser: it frees by force and reads
    // the holders, without the token and even with it.
    for token in ["", h.server.token.as_str()] {
        let freed = fetch_in_page(&b, "/api/leases/free", free_init(&h.node(), token)).await;
        assert_eq!(freed, json!(403), "token {token:?}");
        let init = json!({ "headers": { "x-idgen-token": token } });
        assert_eq!(fetch_in_page(&b, "/api/leases", init).await, json!(403));
    }
    // And the page itself is refused.
    let text = b
        .client
        .execute("return document.body.innerText", vec![])
        .await
        .unwrap();
    assert!(
        text.as_str().unwrap().contains("is not this server"),
        "{text}"
    );
    assert_eq!(h.table(), h.untouched());
    b.client.clone().close().await.unwrap();
}

/// A web server of another site: any page, empty.
fn other_site() -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let page = "<!doctype html><title>another site</title><p>hello";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{page}",
                page.len()
            );
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_browser_another_sites_page_cannot_free_even_with_the_token() {
    let h = Held::start(&[]).await;
    let b = rebound_browser().await;
    b.client
        .goto(&format!("http://evil.example:{}/", other_site()))
        .await
        .unwrap();
    let api = format!("http://{}/api/leases", h.server.addr);
    let free = format!("{api}/free");
    let token = h.server.token.as_str();
    // With the header (a leaked token): the browser asks first (CORS preflight), is refused,
    // and sends nothing.
    let freed = fetch_in_page(&b, &free, free_init(&h.node(), token)).await;
    assert!(
        freed.as_str().is_some_and(|s| s.starts_with("error")),
        "{freed}"
    );
    let read = fetch_in_page(&b, &api, json!({ "headers": { "x-idgen-token": token } })).await;
    assert!(
        read.as_str().is_some_and(|s| s.starts_with("error")),
        "{read}"
    );
    // What a page may send without asking (no-cors, text/plain), it sends blind: refused.
    let body = json!({ "node": h.node(), "force": true }).to_string();
    let blind = json!({ "method": "POST", "mode": "no-cors", "body": body });
    assert_eq!(fetch_in_page(&b, &free, blind).await, json!("opaque"));
    assert_eq!(h.table(), h.untouched());
    b.client.clone().close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_browser_without_the_token_the_operator_view_lists_nothing_and_says_why() {
    let h = Held::start(&[]).await;
    let b = Browser::start().await;
    let rows = "return document.querySelectorAll('#lease-table tbody tr').length";
    b.open(&format!("http://{}/", h.server.addr)).await;
    b.by_id("tab-operator").await.click().await.unwrap();
    b.wait_for_js(
        "return document.getElementById('operator-error').textContent
             .includes('the operator view needs the token')",
    )
    .await;
    assert_eq!(b.client.execute(rows, vec![]).await.unwrap(), json!(0));
    let freed = fetch_in_page(&b, "/api/leases/free", free_init(&h.node(), "")).await;
    assert_eq!(freed, json!(403));
    assert_eq!(h.table(), h.untouched());

    // Opened from the printed URL: the holders; the token leaves the address bar, and the tab
    // keeps it through a reload.
    b.open(&h.server.url).await;
    b.by_id("tab-operator").await.click().await.unwrap();
    b.wait_for_js(&format!("{rows} === 1")).await;
    let search = b.client.execute("return location.search", vec![]).await;
    assert_eq!(search.unwrap(), json!(""));
    b.client.refresh().await.unwrap();
    b.wait_for_js("return document.body.dataset.ready === 'true'")
        .await;
    b.by_id("tab-operator").await.click().await.unwrap();
    b.wait_for_js(&format!("{rows} === 1")).await;
    b.wait_for_js("return document.getElementById('operator-error').textContent === ''")
        .await;
    b.client.clone().close().await.unwrap();
}

// ---- The free sends the holder the page shows (issue 39, item 2).

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_that_changed_under_the_page_is_not_freed_and_the_page_says_so() {
    let h = Held::start(&[]).await;
    let b = Browser::start().await;
    b.open(&h.server.url).await;
    b.by_id("tab-operator").await.click().await.unwrap();
    b.wait_for_js("return document.querySelectorAll('#lease-table tbody tr').length === 1")
        .await;
    let (node, holder_a) = (h.node(), h.lease.holder().to_owned());
    click_free(&b, &node).await;
    let [_, what, _] = dialog(&b).await;
    assert!(what.starts_with(&format!("Held by {holder_a};")), "{what}");

    // While the dialog is open, the holder gives the node ID back and another process claims
    // it: the row the page shows is no longer the row in the table.
    h.lease.handle().release().await.unwrap();
    let other = WorkerLease::options()
        .holder("orders-b")
        .ttl(Duration::from_secs(60))
        .renew_every(Duration::from_secs(20))
        .skip_takeover_wait_for_tests_and_development(true)
        .acquire(
            sqlx::SqlitePool::connect(h.db.url()).await.unwrap(),
            &Layout::TWITTER,
        )
        .await
        .unwrap();
    assert_eq!(other.node().to_string(), node, "the same node ID again");
    let holder_b = other.holder().to_owned();

    answer(&b, true).await;
    let said = status_starting(
        &b,
        &format!("Node {node} changed after the table was read (it showed {holder_a})"),
    )
    .await;
    assert!(
        said.contains(&format!("held by {holder_b} now, not {holder_a}")),
        "{said}"
    );
    // No force was offered, and the new holder keeps its lease.
    assert!(
        !b.client
            .execute("return document.getElementById('free-dialog').open", vec![])
            .await
            .unwrap()
            .as_bool()
            .unwrap()
    );
    assert_eq!(h.table(), json!([[other.node(), holder_b, true]]));
    b.wait_for_js(&format!(
        "return document.querySelector('#lease-table tr[data-node=\"{node}\"] .holder')?.textContent === {}",
        json!(other.holder())
    ))
    .await;
    b.client.clone().close().await.unwrap();
    drop(other);
}
