//! The JSON API over real HTTP: create, fetch by public ID, and the one 404 for a wrong owner,
//! an unknown ID and a malformed or tampered one.

mod common;

use common::{Server, request};

const ORDER: &str = r#"{"customer_id":"7","lines":[{"title":"Dune","quantity":2,"price_cents":1250},{"title":"Kindred","quantity":1,"price_cents":1199}]}"#;

#[tokio::test(flavor = "multi_thread")]
async fn create_then_fetch_by_public_id() {
    let server = Server::start().await;
    let created = request(server.addr, "POST", "/orders", Some("7"), Some(ORDER)).await;
    assert_eq!(created.status, 201, "{}", created.body);
    let order = created.json();
    let public_id = order["public_id"].as_str().unwrap().to_owned();
    let id = order["id"]
        .as_str()
        .expect("the internal ID is a JSON string")
        .to_owned();
    assert!(
        public_id.starts_with("ord_") && public_id.len() == 30,
        "{public_id}"
    );
    assert_eq!(order["customer_id"], "7");
    assert_eq!(order["total_cents"], 2 * 1250 + 1199);
    let lines = order["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 2);
    assert!(lines.iter().all(|l| l["id"].is_string()));

    // The URL carries the public ID, never the internal one.
    let location = created.location.unwrap();
    assert_eq!(location, format!("/orders/{public_id}"));
    assert!(!location.contains(&id));

    let fetched = request(server.addr, "GET", &location, Some("7"), None).await;
    assert_eq!(fetched.status, 200, "{}", fetched.body);
    assert_eq!(fetched.json(), order);

    let mine = request(server.addr, "GET", "/customers/7/orders", Some("7"), None).await;
    assert_eq!(mine.status, 200);
    assert_eq!(mine.json()["orders"][0], order);
    assert_eq!(mine.json()["customer_id"], "7");
}

#[tokio::test(flavor = "multi_thread")]
async fn wrong_owner_unknown_and_tampered_ids_get_the_same_404() {
    let server = Server::start().await;
    let created = request(server.addr, "POST", "/orders", Some("7"), Some(ORDER)).await;
    assert_eq!(created.status, 201);
    let order = created.json();
    let public_id = order["public_id"].as_str().unwrap();
    let internal_id = order["id"].as_str().unwrap();

    // Tampered: one character of the body changed, still well-formed.
    let mut tampered = public_id.to_owned();
    let last = tampered.pop().unwrap();
    tampered.push(if last == '0' { '1' } else { '0' });

    let customer_8_same_shard = "11"; // 11 % 4 == 7 % 4: the same shard, another owner
    let attempts = [
        (customer_8_same_shard, format!("/orders/{public_id}")), // wrong owner, same shard
        ("8", format!("/orders/{public_id}")),                   // wrong owner, other shard
        ("7", format!("/orders/{tampered}")),                    // tampered
        (
            "7",
            format!(
                "/orders/{}",
                idgen_sqlx::PublicId::<bookstore::model::Order>::new()
            ),
        ), // unknown
        ("7", "/orders/ord_123".to_owned()),                     // malformed
        ("7", format!("/orders/{internal_id}")),                 // an internal ID
        ("7", format!("/orders/usr_{}", &public_id[4..])),       // another type's prefix
        ("7", format!("/orders/{}", public_id.to_uppercase())),  // not the canonical spelling
        ("8", "/customers/7/orders".to_owned()),                 // someone else's list
    ];
    let mut answers = Vec::new();
    for (caller, path) in &attempts {
        let a = request(server.addr, "GET", path, Some(caller), None).await;
        answers.push((path.clone(), a.status, a.content_type, a.body));
    }
    for (path, status, content_type, body) in &answers {
        assert_eq!(*status, 404, "{path}");
        assert_eq!(body, bookstore::http::NOT_FOUND_BODY, "{path}");
        assert_eq!(content_type.as_deref(), Some("application/json"), "{path}");
    }
    // The owner still sees it.
    let own = request(
        server.addr,
        "GET",
        &format!("/orders/{public_id}"),
        Some("7"),
        None,
    )
    .await;
    assert_eq!(own.status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_requests_are_refused_with_a_reason() {
    let server = Server::start().await;
    let no_caller = request(server.addr, "POST", "/orders", None, Some(ORDER)).await;
    assert_eq!(no_caller.status, 401);
    let someone_else = request(server.addr, "POST", "/orders", Some("8"), Some(ORDER)).await;
    assert_eq!(someone_else.status, 403);
    let no_lines = r#"{"customer_id":"7","lines":[]}"#;
    let empty = request(server.addr, "POST", "/orders", Some("7"), Some(no_lines)).await;
    assert_eq!(empty.status, 422);
    assert!(
        empty.json()["error"]
            .as_str()
            .unwrap()
            .contains("1 to 50 lines, not 0")
    );
    let broken = request(server.addr, "POST", "/orders", Some("7"), Some("{")).await;
    assert_eq!(broken.status, 400);
    let numeric = ORDER.replace(r#""customer_id":"7""#, r#""customer_id":7"#);
    let accepted = request(server.addr, "POST", "/orders", Some("7"), Some(&numeric)).await;
    assert_eq!(
        accepted.status, 201,
        "an integer customer_id is accepted too"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_binary_serves_the_orders_of_its_report() {
    use tokio::io::{AsyncBufReadExt, BufReader};

    let dir = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_bookstore"))
        .arg("--data-dir")
        .arg(dir.path())
        .args(["--orders", "40", "--serve", "--port", "0"])
        .env_remove("DATABASE_URL")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // The first curl example: `curl -H 'X-Customer-Id: C' http://ADDR/orders/ord_…`.
    let example = loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("the server printed no example");
        if line.trim_start().starts_with("curl -H 'X-Customer-Id: ")
            && line.contains("/orders/ord_")
        {
            break line;
        }
    };
    let customer = example
        .split("X-Customer-Id: ")
        .nth(1)
        .unwrap()
        .split('\'')
        .next()
        .unwrap();
    let url = example.split_whitespace().last().unwrap();
    let addr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let path = &url[url.find("/orders/").unwrap()..];

    let own = request(addr, "GET", path, Some(customer), None).await;
    assert_eq!(own.status, 200, "{}", own.body);
    assert_eq!(own.json()["customer_id"], customer);
    let other = (customer.parse::<i64>().unwrap() + 1).to_string();
    let foreign = request(addr, "GET", path, Some(&other), None).await;
    assert_eq!(
        (foreign.status, foreign.body.as_str()),
        (404, bookstore::http::NOT_FOUND_BODY)
    );
    child.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_show_the_ids_issued_and_the_lease() {
    let server = Server::start().await;
    let created = request(server.addr, "POST", "/orders", Some("7"), Some(ORDER)).await;
    assert_eq!(created.status, 201, "{}", created.body);
    let text = request(server.addr, "GET", "/metrics", None, None)
        .await
        .body;
    for line in [
        "idgen_snowflake_ids_issued_total{generator=\"orders\"} 1",
        "idgen_lease_fenced{",
        "idgen_lease_renewals_total{",
        "idgen_hilo_blocks_fetched_total{",
    ] {
        assert!(text.contains(line), "{line:?} missing from:\n{text}");
    }
    let lines_issued = text
        .lines()
        .find(|l| l.starts_with("idgen_hilo_ids_issued_total"))
        .expect("hi-lo IDs issued");
    assert!(lines_issued.ends_with(" 2"), "{lines_issued}");
}
