//! Every ID in the API's JSON reaches a real JavaScript engine (`node`) unchanged; the same IDs
//! sent as JSON numbers would not.

mod common;

use common::{Server, node, request};
use idgen_sqlx::SnowflakeId;
use serde_json::Value;

/// Prints, one per line, every value under a key named `id`, `public_id` or `customer_id`, as
/// JavaScript sees it after `JSON.parse` (keys in sorted order, as `serde_json::Value` keeps them).
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

#[tokio::test(flavor = "multi_thread")]
async fn ids_in_the_json_reach_javascript_unchanged() {
    let server = Server::start().await;
    for _ in 0..20 {
        let body = r#"{"customer_id":"42","lines":[{"title":"Dune","quantity":1,"price_cents":1250},{"title":"Beloved","quantity":2,"price_cents":1099}]}"#;
        let created = request(server.addr, "POST", "/orders", Some("42"), Some(body)).await;
        assert_eq!(created.status, 201, "{}", created.body);
    }
    let list = request(server.addr, "GET", "/customers/42/orders", Some("42"), None).await;
    assert_eq!(list.status, 200);

    // As the API sends it: strings. JavaScript prints back exactly what Rust sent.
    let mut sent = Vec::new();
    ids(&list.json(), &mut sent);
    assert_eq!(
        sent.len(),
        1 + 20 * 5,
        "the customer, then per order: id, public_id, customer_id, 2 line IDs"
    );
    let seen: Vec<String> = node(PRINT_IDS, &list.body)
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(seen, sent);

    // The same document with the integer IDs as JSON numbers: JavaScript rounds every one
    // above 2^53 that a double cannot hold exactly. Add one ID that certainly is such a number
    // (sequence 1: not a multiple of 512).
    let mut doc = list.json();
    let odd = SnowflakeId::new(2127133461507477505).unwrap();
    doc["orders"][0]["id"] = Value::String(odd.to_string());
    let numbers = serde_json::to_string(&as_numbers(&doc)).unwrap();
    let mut expected = Vec::new();
    ids(&doc, &mut expected);
    let seen: Vec<String> = node(PRINT_IDS, &numbers)
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(seen.len(), expected.len());
    const MAX_SAFE: i64 = (1 << 53) - 1; // Number.MAX_SAFE_INTEGER
    let mut changed = Vec::new();
    for (js, rust) in seen.iter().zip(&expected) {
        match rust.parse::<i64>() {
            Ok(n) if n > MAX_SAFE => {
                // JavaScript holds the nearest double, not the integer.
                assert_eq!(js.parse::<f64>().unwrap(), n as f64, "{rust}");
                if js != rust {
                    changed.push((rust.clone(), js.clone()));
                }
            }
            _ => assert_eq!(js, rust, "small IDs survive either way"),
        }
    }
    assert!(
        changed.iter().any(|(rust, _)| *rust == odd.to_string()),
        "{changed:?}"
    );
    assert!(
        changed.len() > 1,
        "Snowflake IDs as numbers are mangled: {changed:?}"
    );
}
