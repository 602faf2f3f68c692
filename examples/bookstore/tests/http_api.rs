//! The JSON API over real HTTP: create, fetch by public ID, the one 404 for a wrong owner, an
//! unknown ID and a malformed or tampered one; no internal key in any answer; keyset paging; a
//! JSON error body, naming what is wrong, for every rejection.

mod common;

use std::collections::HashSet;

use bookstore::model::{Customer, Order};
use common::{Server, request};
use idgen_sqlx::{Id, PublicId};
use serde_json::Value;

const ORDER: &str = r#"{"customer_id":"7","lines":[{"title":"Dune","quantity":2,"price_cents":1250},{"title":"Kindred","quantity":1,"price_cents":1199}]}"#;

/// The names of a JSON object's fields, in order.
fn field_names(object: &Value) -> Vec<&str> {
    object
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

/// Asserts no internal key is in `body`: the order's Snowflake key nowhere (it is long and
/// unique), the line keys (small hi-lo numbers) not as any string value.
fn assert_no_internal_key(body: &str, keys: &[String]) {
    assert!(!body.contains(keys[0].as_str()), "{} in {body}", keys[0]);
    fn strings(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
            Value::Object(o) => o.values().for_each(|x| strings(x, out)),
            _ => {}
        }
    }
    let mut values = Vec::new();
    strings(&serde_json::from_str(body).unwrap(), &mut values);
    for key in &keys[1..] {
        assert!(!values.contains(key), "line key {key} in {body}");
    }
}

/// The internal keys of the order with this public ID (from the shard, as the server has them):
/// the order's Snowflake key, then its lines' hi-lo keys.
async fn internal_keys(server: &Server, public_id: &str, customer: i64) -> Vec<String> {
    let order = server
        .instance
        .shards()
        .find_for_customer(
            public_id.parse::<PublicId<Order>>().unwrap(),
            Id::<Customer>::new(customer).unwrap(),
        )
        .await
        .unwrap()
        .unwrap();
    let mut keys = vec![order.id.to_string()];
    keys.extend(order.lines.iter().map(|l| l.id.to_string()));
    keys
}

#[tokio::test(flavor = "multi_thread")]
async fn create_then_fetch_by_public_id_without_internal_keys() {
    let server = Server::start().await;
    let created = request(server.addr, "POST", "/orders", Some("7"), Some(ORDER)).await;
    assert_eq!(created.status, 201, "{}", created.body);
    let order = created.json();
    let public_id = order["public_id"].as_str().unwrap().to_owned();
    assert!(
        public_id.starts_with("ord_") && public_id.len() == 30,
        "{public_id}"
    );
    assert_eq!(order["customer_id"], "7");
    assert_eq!(order["total_cents"], 2 * 1250 + 1199);
    let created_at: jiff::Timestamp = order["created_at"].as_str().unwrap().parse().unwrap();
    assert!((jiff::Timestamp::now() - created_at).get_seconds().abs() < 60);
    // Exactly these fields: no `id`, and lines without IDs.
    assert_eq!(
        field_names(&order),
        [
            "created_at",
            "customer_id",
            "lines",
            "public_id",
            "total_cents"
        ]
    );
    let lines = order["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 2);
    for line in lines {
        assert_eq!(field_names(line), ["price_cents", "quantity", "title"]);
    }
    // No internal key appears anywhere in the answer.
    let internal = internal_keys(&server, &public_id, 7).await;
    assert_eq!(internal.len(), 3);
    assert_no_internal_key(&created.body, &internal);

    // The URL carries the public ID.
    let location = created.location.unwrap();
    assert_eq!(location, format!("/orders/{public_id}"));

    let fetched = request(server.addr, "GET", &location, Some("7"), None).await;
    assert_eq!(fetched.status, 200, "{}", fetched.body);
    assert_eq!(fetched.json(), order);

    let mine = request(server.addr, "GET", "/customers/7/orders", Some("7"), None).await;
    assert_eq!(mine.status, 200);
    assert_eq!(mine.json()["orders"][0], order);
    assert_eq!(mine.json()["customer_id"], "7");
    assert_eq!(mine.json()["next_cursor"], Value::Null);
    assert_no_internal_key(&mine.body, &internal);
}

#[tokio::test(flavor = "multi_thread")]
async fn wrong_owner_unknown_and_tampered_ids_get_the_same_404() {
    let server = Server::start().await;
    let created = request(server.addr, "POST", "/orders", Some("7"), Some(ORDER)).await;
    assert_eq!(created.status, 201);
    let order = created.json();
    let public_id = order["public_id"].as_str().unwrap();
    let internal_id = internal_keys(&server, public_id, 7).await.remove(0);

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
            format!("/orders/{}", PublicId::<bookstore::model::Order>::new()),
        ), // unknown
        ("7", "/orders/ord_123".to_owned()),                     // malformed
        ("7", format!("/orders/{internal_id}")),                 // an internal ID
        ("7", format!("/orders/usr_{}", &public_id[4..])),       // another type's prefix
        ("7", format!("/orders/{}", public_id.to_uppercase())),  // not the canonical spelling
        ("7", "/orders/%FF%FE".to_owned()),                      // not UTF-8
        ("8", "/customers/7/orders".to_owned()),                 // someone else's list
        ("7", "/customers/007/orders".to_owned()),               // not the canonical spelling
        ("7", "/no/such/route".to_owned()),                      // an unknown route
        ("7", "/orders".to_owned()),                             // only POST there: see below
    ];
    let mut answers = Vec::new();
    for (caller, path) in &attempts[..attempts.len() - 1] {
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
async fn a_wrong_method_is_a_json_405_with_allow() {
    let server = Server::start().await;
    for (method, path, allow) in [
        ("GET", "/orders", "POST"),
        (
            "DELETE",
            "/orders/ord_01h455vb4pex5vsknk084sn02q",
            "GET,HEAD",
        ),
        ("PUT", "/customers/7/orders", "GET,HEAD"),
    ] {
        let a = request(server.addr, method, path, Some("7"), None).await;
        assert_eq!(a.status, 405, "{method} {path}");
        assert_eq!(a.content_type.as_deref(), Some("application/json"));
        assert!(
            a.json()["error"]
                .as_str()
                .unwrap()
                .contains("method not allowed")
        );
        assert_eq!(a.allow.as_deref(), Some(allow), "{method} {path}");
    }
}

/// Every refused request gets a JSON body `{"error": "…"}` naming what is wrong.
async fn refused(server: &Server, customer: Option<&str>, body: Option<&str>) -> (u16, String) {
    let a = request(server.addr, "POST", "/orders", customer, body).await;
    assert_eq!(
        a.content_type.as_deref(),
        Some("application/json"),
        "{}",
        a.body
    );
    let error = a.json()["error"].as_str().unwrap().to_owned();
    assert_eq!(a.json().as_object().unwrap().len(), 1, "{}", a.body);
    (a.status, error)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_caller_header_says_what_is_wrong_with_it() {
    let server = Server::start().await;
    for (header, status, want) in [
        (
            None,
            401,
            "send your customer ID in the X-Customer-Id header",
        ),
        (
            Some("-5"),
            401,
            r#"X-Customer-Id: "-5" is not an ID of type Customer: a sign is not allowed"#,
        ),
        (
            Some("0"),
            401,
            "X-Customer-Id: 0 is not a customer ID: customer IDs start at 1",
        ),
        (
            Some("abc"),
            401,
            r#"X-Customer-Id: "abc" is not an ID of type Customer: only the decimal digits"#,
        ),
        (Some("007"), 401, "a leading zero is not allowed"),
        (
            Some("99999999999999999999"),
            401,
            "larger than 9223372036854775807",
        ),
    ] {
        let (got, error) = refused(&server, header, Some(ORDER)).await;
        assert_eq!(got, status, "{header:?}: {error}");
        assert!(error.contains(want), "{header:?}: {error}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_bodies_are_refused_with_a_reason() {
    let server = Server::start().await;
    let with_customer =
        |value: &str| ORDER.replace(r#""customer_id":"7""#, &format!(r#""customer_id":{value}"#));
    let cases: Vec<(String, u16, &str)> = vec![
        // A customer ID is a JSON string, as the document says: a number is refused, naming it.
        (
            with_customer("7"),
            422,
            "customer_id: invalid type: integer `7`, expected a customer ID as a string",
        ),
        (
            with_customer("7e0"),
            422,
            "customer_id: invalid type: floating point `7.0`, expected a customer ID as a string",
        ),
        (
            with_customer("null"),
            422,
            "customer_id: invalid type: null, expected a customer ID as a string",
        ),
        (
            with_customer("true"),
            422,
            "customer_id: invalid type: boolean `true`, expected a customer ID",
        ),
        (
            with_customer(r#""0""#),
            422,
            "customer_id: 0 is not a customer ID: customer IDs start at 1",
        ),
        (
            with_customer(r#""+7""#),
            422,
            r#"customer_id: "+7" is not an ID of type Customer: a sign is not allowed"#,
        ),
        (
            with_customer(r#""007""#),
            422,
            r#"customer_id: "007" is not an ID of type Customer: a leading zero is not allowed"#,
        ),
        (
            with_customer(r#""8""#),
            403,
            "customer_id 8 is not the caller's own (7 from X-Customer-Id)",
        ),
        (
            ORDER.replace(r#""lines""#, r#""note":"x","lines""#),
            422,
            "unknown field `note`, expected `customer_id` or `lines`",
        ),
        (
            ORDER.replace(r#""quantity":2"#, r#""quantity":2,"gift":true"#),
            422,
            "unknown field `gift`",
        ),
        (
            r#"{"customer_id":"7","lines":[]}"#.into(),
            422,
            "1 to 50 lines, not 0",
        ),
        ("{".into(), 400, "EOF while parsing an object"),
    ];
    for (body, status, want) in &cases {
        let (got, error) = refused(&server, Some("7"), Some(body)).await;
        assert_eq!(got, *status, "{body}: {error}");
        assert!(error.contains(want), "{body}: {error}");
    }
    // JSON Schema's `integer` includes 2.0: a whole quantity or price written with a fraction
    // part is taken; 2.5 is not.
    let whole = ORDER.replace(r#""quantity":2"#, r#""quantity":2.0"#);
    let a = request(server.addr, "POST", "/orders", Some("7"), Some(&whole)).await;
    assert_eq!(a.status, 201, "{}", a.body);
    assert_eq!(a.json()["lines"][0]["quantity"], 2);
    let half = ORDER.replace(r#""quantity":2"#, r#""quantity":2.5"#);
    let (status, error) = refused(&server, Some("7"), Some(&half)).await;
    assert_eq!(status, 422);
    assert!(error.contains("2.5 is not a whole number"), "{error}");
    // No content type: the framework's 415, as JSON.
    let a = common::request_raw(
        server.addr,
        "POST",
        "/orders",
        &[("x-customer-id", "7")],
        ORDER,
    )
    .await;
    assert_eq!(a.status, 415);
    assert!(
        a.json()["error"].as_str().unwrap().contains("Content-Type"),
        "{}",
        a.body
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_customer_list_is_keyset_paged_with_a_cursor() {
    let server = Server::start().await;
    let mut made = Vec::new();
    for _ in 0..25 {
        let a = request(server.addr, "POST", "/orders", Some("7"), Some(ORDER)).await;
        assert_eq!(a.status, 201);
        made.push(a.json()["public_id"].as_str().unwrap().to_owned());
    }
    made.reverse(); // newest first
    let mut seen = Vec::new();
    let mut path = "/customers/7/orders?limit=10".to_owned();
    let mut pages = Vec::new();
    loop {
        let page = request(server.addr, "GET", &path, Some("7"), None).await;
        assert_eq!(page.status, 200, "{}", page.body);
        let json = page.json();
        let orders = json["orders"].as_array().unwrap();
        pages.push(orders.len());
        seen.extend(
            orders
                .iter()
                .map(|o| o["public_id"].as_str().unwrap().to_owned()),
        );
        if pages.len() == 1 {
            // An order made between pages comes first in a new listing, never on page 2.
            let a = request(server.addr, "POST", "/orders", Some("7"), Some(ORDER)).await;
            assert_eq!(a.status, 201);
        }
        match json["next_cursor"].as_str() {
            Some(cursor) => {
                assert_eq!(
                    cursor,
                    seen.last().unwrap(),
                    "the cursor is the last order shown"
                );
                path = format!("/customers/7/orders?limit=10&after={cursor}");
            }
            None => break,
        }
    }
    assert_eq!(pages, [10, 10, 5]);
    assert_eq!(seen, made, "every order once, newest first");
    assert_eq!(seen.iter().collect::<HashSet<_>>().len(), 25);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_paging_parameters_are_json_400s() {
    let server = Server::start().await;
    let mine = request(server.addr, "POST", "/orders", Some("7"), Some(ORDER)).await;
    let theirs = request(
        server.addr,
        "POST",
        "/orders",
        Some("8"),
        Some(&ORDER.replace(r#""7""#, r#""8""#)),
    )
    .await;
    assert_eq!((mine.status, theirs.status), (201, 201));
    let their_order = theirs.json()["public_id"].as_str().unwrap().to_owned();
    for (query, want) in [
        ("limit=0", "limit 0 is not between 1 and 100"),
        ("limit=101", "limit 101 is not between 1 and 100"),
        ("limit=ten", "limit: invalid digit found in string"),
        ("after=ord_123", "after: \"ord_123\" is not a public ID"),
        (
            "after=usr_01h455vb4pex5vsknk084sn02q",
            "expected the prefix \"ord_\"",
        ),
        ("page=2", "unknown field `page`"),
    ] {
        let a = request(
            server.addr,
            "GET",
            &format!("/customers/7/orders?{query}"),
            Some("7"),
            None,
        )
        .await;
        assert_eq!(a.status, 400, "{query}: {}", a.body);
        assert_eq!(a.content_type.as_deref(), Some("application/json"));
        let error = a.json()["error"].as_str().unwrap().to_owned();
        assert!(error.contains(want), "{query}: {error}");
    }
    // Another customer's order as the cursor: the same 404 as any order that is not yours.
    let a = request(
        server.addr,
        "GET",
        &format!("/customers/7/orders?after={their_order}"),
        Some("7"),
        None,
    )
    .await;
    assert_eq!(
        (a.status, a.body.as_str()),
        (404, bookstore::http::NOT_FOUND_BODY)
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
    // Every family is described (meaning and unit), so dashboards show what it is.
    let families: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| name.starts_with("idgen_"))
        .collect();
    assert!(families.len() >= 15, "{families:?}");
    for family in families {
        let help = format!("# HELP {family} ");
        assert!(
            text.lines()
                .any(|l| l.starts_with(&help) && l.len() > help.len() + 10),
            "{family} has no # HELP line:\n{text}"
        );
    }
    let lines_issued = text
        .lines()
        .find(|l| l.starts_with("idgen_hilo_ids_issued_total"))
        .expect("hi-lo IDs issued");
    assert!(lines_issued.ends_with(" 2"), "{lines_issued}");
}
