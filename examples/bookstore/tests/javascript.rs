//! Every ID in the API's JSON reaches a real JavaScript engine (`node`) unchanged; the same IDs
//! sent as JSON numbers would not.

mod common;

use common::{Server, node, request};
use serde_json::Value;

/// Prints, one per line, every value under a key named `id`, `public_id` or `customer_id`, as
/// JavaScript sees it after `JSON.parse` (keys in sorted order, as `serde_json::Value` keeps them).
/// (The API shows no internal `id`; the key is kept so one would be caught.)
const PRINT_IDS: &str = r#"
let text = require('fs').readFileSync(0, 'utf8');
const walk = (v) => {
  if (Array.isArray(v)) return v.forEach(walk);
  if (v && typeof v === 'object') for (const k of Object.keys(v).sort()) {
    const x = v[k];
    if (k === 'id' || k === 'public_id' || k === 'customer_id') console.log(String(x));
    else walk(x);
  }
};
walk(JSON.parse(text));
"#;

/// The same walk in Rust over the text as sent.
fn ids(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| ids(x, out)),
        Value::Object(o) => {
            for (k, x) in o {
                if k == "id" || k == "public_id" || k == "customer_id" {
                    out.push(match x {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    });
                } else {
                    ids(x, out);
                }
            }
        }
        _ => {}
    }
}

/// `v` with every integer ID string turned into a JSON number.
fn as_numbers(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.iter().map(as_numbers).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(
                    |(k, x)| match (k.as_str(), x.as_str().and_then(|s| s.parse::<i64>().ok())) {
                        ("id" | "customer_id", Some(n)) => (k.clone(), Value::from(n)),
                        _ => (k.clone(), as_numbers(x)),
                    },
                )
                .collect(),
        ),
        other => other.clone(),
    }
}

/// 2^53 + 1: the smallest positive integer a JavaScript number cannot hold.
const BIG_CUSTOMER: &str = "9007199254740993";

#[tokio::test(flavor = "multi_thread")]
async fn ids_in_the_json_reach_javascript_unchanged() {
    let server = Server::start().await;
    for _ in 0..20 {
        let body = format!(
            r#"{{"customer_id":"{BIG_CUSTOMER}","lines":[{{"title":"Dune","quantity":1,"price_cents":1250}},{{"title":"Beloved","quantity":2,"price_cents":1099}}]}}"#
        );
        let created = request(
            server.addr,
            "POST",
            "/orders",
            Some(BIG_CUSTOMER),
            Some(&body),
        )
        .await;
        assert_eq!(created.status, 201, "{}", created.body);
    }
    let path = format!("/customers/{BIG_CUSTOMER}/orders");
    let list = request(server.addr, "GET", &path, Some(BIG_CUSTOMER), None).await;
    assert_eq!(list.status, 200);

    // As the API sends it: strings. JavaScript prints back exactly what Rust sent.
    let mut sent = Vec::new();
    ids(&list.json(), &mut sent);
    assert_eq!(
        sent.len(),
        1 + 20 * 2,
        "the customer, then per order: public_id, customer_id (no internal IDs)"
    );
    assert!(sent.iter().any(|s| s == BIG_CUSTOMER));
    let seen: Vec<String> = node(PRINT_IDS, &list.body)
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(seen, sent);

    // The same document with the integer IDs as JSON numbers: JavaScript rounds the customer
    // ID, which a double cannot hold exactly.
    let doc = list.json();
    let numbers = serde_json::to_string(&as_numbers(&doc)).unwrap();
    let seen: Vec<String> = node(PRINT_IDS, &numbers)
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(seen.len(), sent.len());
    let changed: Vec<_> = seen
        .iter()
        .zip(&sent)
        .filter(|(js, rust)| js != rust)
        .collect();
    assert_eq!(
        changed.len(),
        21,
        "every customer_id as a number is mangled: {changed:?}"
    );
    for (js, rust) in changed {
        assert_eq!(rust, BIG_CUSTOMER);
        assert_eq!(js, "9007199254740992", "the nearest double");
    }
}
