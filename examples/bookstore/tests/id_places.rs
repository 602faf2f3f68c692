//! Every ID-typed place of `GET /openapi.json`, read as a client generator reads it: the
//! place's `pattern` (and `minLength`/`maxLength`) decides which of a few hundred generated
//! strings are IDs, each string is sent in that place, and the server must accept exactly those.
//!
//! The places are found by walking the document (parameters and request bodies whose schema is,
//! or refers to, a string schema with an ID `format` and a `pattern`), not listed here; the walk
//! must find at least the known ones. What "accepted" looks like depends on where the string
//! goes, so each kind of place has a probe:
//!
//! * header (`X-Customer-Id`): refused is the 401 naming the header; anything else accepted.
//! * query parameter: refused is a 400 naming the parameter; 200 or 404 accepted.
//! * body property: refused is a 422 naming the property; 201, or 403 (another customer's ID
//!   than the caller's), accepted.
//! * path parameter: by design a text that is no ID gets the same 404 as an ID of nothing
//!   yours, so only "found" is visible: the probe sends values that would find something if the
//!   server read them leniently (a customer ID's digits as the caller; variants of the caller's
//!   real order IDs), and expects 200 exactly for the pattern's texts that name a real resource.
//!
//! Seeded: `IDGEN_ID_PLACES_SEED=N` for another seed (the default is printed).

mod common;

use std::collections::BTreeSet;
use std::fmt::Write as _;

use axum::body::Bytes;
use axum::http::HeaderValue;
use common::{Server, request};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use regex::Regex;
use serde_json::{Value, json};

/// The `format`s of idgen's ID schemas: `Id<T>`, `SnowflakeId`, `PublicId<T>`.
const ID_FORMATS: &[&str] = &["int64", "snowflake-id", "typeid"];
/// Strings generated per place (plus the fixed edge cases).
const GENERATED: usize = 300;
/// The caller of every request whose place under test is not the caller.
const CALLER: &str = "7";

/// Where a place is.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum In {
    Header,
    Path,
    Query,
    /// A property of the JSON body, by its path of property names.
    Body(Vec<String>),
}

/// A string schema of an ID, as the document states it.
#[derive(Clone, Debug)]
struct IdSchema {
    /// The component name (or `inline`).
    name: String,
    format: String,
    pattern: String,
    min_length: Option<usize>,
    max_length: Option<usize>,
    example: Option<String>,
}

impl IdSchema {
    /// Whether a client reading the schema takes `s` as valid (JSON Schema: `pattern` is an
    /// ECMA-262 regex, unanchored; lengths count code points).
    fn admits(&self, re: &Regex, s: &str) -> bool {
        let n = s.chars().count();
        re.is_match(s)
            && self.min_length.is_none_or(|m| n >= m)
            && self.max_length.is_none_or(|m| n <= m)
    }
}

/// One ID-typed place of one operation.
#[derive(Clone, Debug)]
struct Place {
    method: String,
    path: String,
    location: In,
    name: String,
    schema: IdSchema,
}

impl Place {
    fn key(&self) -> (String, String, In, String) {
        (
            self.method.clone(),
            self.path.clone(),
            self.location.clone(),
            self.name.clone(),
        )
    }

    fn label(&self) -> String {
        let location = match &self.location {
            In::Header => "header",
            In::Path => "path",
            In::Query => "query",
            In::Body(_) => "body",
        };
        format!(
            "{} {} {location} {} ({})",
            self.method.to_uppercase(),
            self.path,
            self.name,
            self.schema.name
        )
    }
}

/// The ID schema `schema` is or refers to (through `$ref`, or a member of `oneOf`/`anyOf`/
/// `allOf`, as `Option<T>` is written), if any.
fn id_schema(doc: &Value, schema: &Value) -> Option<IdSchema> {
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.strip_prefix("#/components/schemas/")?;
        let mut found = id_schema(doc, &doc["components"]["schemas"][name])?;
        if found.name == "inline" {
            found.name = name.to_owned();
        }
        return Some(found);
    }
    for combinator in ["oneOf", "anyOf", "allOf"] {
        if let Some(members) = schema[combinator].as_array()
            && let Some(found) = members.iter().find_map(|m| id_schema(doc, m))
        {
            return Some(found);
        }
    }
    let format = schema["format"].as_str()?;
    let is_string = schema["type"] == "string"
        || schema["type"]
            .as_array()
            .is_some_and(|t| t.contains(&json!("string")));
    if !is_string || !ID_FORMATS.contains(&format) {
        return None;
    }
    let length = |k: &str| schema[k].as_u64().map(|n| n as usize);
    Some(IdSchema {
        name: "inline".into(),
        format: format.into(),
        pattern: schema["pattern"]
            .as_str()
            .unwrap_or_else(|| panic!("an ID schema without a pattern: {schema}"))
            .into(),
        min_length: length("minLength"),
        max_length: length("maxLength"),
        example: schema["examples"][0].as_str().map(str::to_owned),
    })
}

/// The ID places in a request body schema, below the property path `at`.
fn body_places(doc: &Value, schema: &Value, at: &[String], out: &mut Vec<(Vec<String>, IdSchema)>) {
    if let Some(found) = id_schema(doc, schema) {
        if !at.is_empty() {
            out.push((at.to_vec(), found));
        }
        return;
    }
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.trim_start_matches("#/components/schemas/");
        return body_places(doc, &doc["components"]["schemas"][name], at, out);
    }
    if let Some(properties) = schema["properties"].as_object() {
        for (name, property) in properties {
            let mut path = at.to_vec();
            path.push(name.clone());
            body_places(doc, property, &path, out);
        }
    }
    // An ID inside an array item would need an index in the probe's body; none yet.
    assert!(
        schema.get("items").is_none_or(|items| {
            let mut inner = Vec::new();
            body_places(doc, items, &["[]".into()], &mut inner);
            inner.is_empty()
        }),
        "an ID inside an array of a request body: teach the body probe indices"
    );
}

/// Every ID-typed place of every operation in the document.
fn places(doc: &Value) -> Vec<Place> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let place = |location, name: &str, schema| Place {
                method: method.clone(),
                path: path.clone(),
                location,
                name: name.to_owned(),
                schema,
            };
            for parameter in operation["parameters"].as_array().into_iter().flatten() {
                let Some(schema) = id_schema(doc, &parameter["schema"]) else {
                    continue;
                };
                let location = match parameter["in"].as_str().unwrap() {
                    "header" => In::Header,
                    "path" => In::Path,
                    "query" => In::Query,
                    other => panic!("a parameter in {other}"),
                };
                out.push(place(location, parameter["name"].as_str().unwrap(), schema));
            }
            for (media, content) in operation["requestBody"]["content"]
                .as_object()
                .into_iter()
                .flatten()
            {
                assert_eq!(media, "application/json");
                let mut found = Vec::new();
                body_places(doc, &content["schema"], &[], &mut found);
                for (at, schema) in found {
                    out.push(place(In::Body(at.clone()), &at.join("."), schema));
                }
            }
        }
    }
    out
}

/// xorshift64*: a small seeded generator, so a failure replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Characters a mutation puts in: signs, whitespace, separators, letters of both cases, and
/// digits of other scripts (full-width, Arabic-Indic, Devanagari, mathematical bold).
const ODD: &[&str] = &[
    "+", "-", " ", "\t", "\n", "_", ".", ",", "e", "E", "x", "a", "z", "i", "l", "o", "u", "A",
    "Z", "O", "%", "/", "\u{0}", "７", "٧", "७", "𝟕", "٠", "é", "\u{200b}",
];

/// Fixed edge cases of a decimal ID, then random ones.
fn decimal_strings(rng: &mut Rng, n: usize) -> Vec<String> {
    let mut out: Vec<String> = [
        "0",
        "1",
        "7",
        "9",
        "10",
        "00",
        "01",
        "007",
        "+7",
        "-7",
        "-0",
        "+0",
        " 7",
        "7 ",
        "\t7",
        "7\n",
        "\n7",
        "7\r\n",
        "",
        " ",
        "1_000",
        "1e3",
        "7.0",
        "7.",
        ".7",
        "0x7",
        "７",
        "٧",
        "७",
        "𝟕",
        "1 2",
        "1,000",
        "abc",
        "NaN",
        "null",
        "true",
        "\"7\"",
        "9223372036854775806",
        "9223372036854775807",
        "9223372036854775808",
        "9223372036854775817",
        "9223372036854775810",
        "10000000000000000000",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999",
        "09223372036854775807",
        "1000000000000000000",
        "999999999999999999",
        "9007199254740993",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    while out.len() < n {
        let s = match rng.below(4) {
            // Random digits, 1 to 21 of them (leading zeros and overflow included).
            0 => (0..1 + rng.below(21))
                .map(|_| char::from(b'0' + rng.below(10) as u8))
                .collect(),
            // A valid value anywhere in range.
            1 => (1 + rng.next() % (i64::MAX as u64)).to_string(),
            // A small value.
            2 => (rng.next() % 1000).to_string(),
            // A valid value with one odd character inserted or substituted, or a 0 in front.
            _ => {
                let mut chars: Vec<String> = (1 + rng.next() % (i64::MAX as u64))
                    .to_string()
                    .chars()
                    .map(String::from)
                    .collect();
                let at = rng.below(chars.len() + 1);
                match rng.below(3) {
                    0 => chars.insert(at, rng.pick(ODD).to_string()),
                    1 if at < chars.len() => chars[at] = rng.pick(ODD).to_string(),
                    _ => chars.insert(0, "0".into()),
                }
                chars.concat()
            }
        };
        out.push(s);
    }
    out
}

/// The TypeID body alphabet (Crockford base32, lower case).
const BASE32: &[u8] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// Fixed edge cases of a public ID around `valid` (`prefix_` and 26 characters), then random
/// ones: valid bodies, and valid ones changed in one place.
fn public_id_strings(rng: &mut Rng, n: usize, valid: &[String]) -> Vec<String> {
    let v = &valid[0];
    let (prefix, body) = v.split_at(v.find('_').map_or(0, |i| i + 1));
    let mut out: Vec<String> = vec![
        v.clone(),
        v.to_uppercase(),
        format!("{}{body}", prefix.to_uppercase()),
        format!("{prefix}{}", body.to_uppercase()),
        format!(" {v}"),
        format!("{v} "),
        format!("{v}\n"),
        format!("+{v}"),
        format!("{v}0"),
        v[..v.len() - 1].to_owned(),
        body.to_owned(),
        format!("usr_{body}"),
        format!("{prefix}_{body}"),
        format!("{}{body}", prefix.trim_end_matches('_')),
        format!("{prefix}8{}", &body[1..]),
        format!("{prefix}7zzzzzzzzzzzzzzzzzzzzzzzzz"),
        format!("{prefix}80000000000000000000000000"),
        format!("{prefix}00000000000000000000000000"),
        format!("{prefix}{}", "0".repeat(25)),
        format!("{prefix}{}", "0".repeat(27)),
        format!("{prefix}0{}", "i".repeat(25)),
        format!("{prefix}0{}", "u".repeat(25)),
        format!("{prefix}0{}", "７".repeat(25)),
        prefix.to_owned(),
        String::new(),
        "ord_123".into(),
        "7".into(),
        "112719806108546862".into(),
    ];
    out.extend(valid.iter().cloned());
    while out.len() < n {
        let mut chars: Vec<String> = if rng.below(4) == 0 {
            // A real ID, so a lenient reading of a variant would find something.
            rng.pick(valid).chars().map(String::from).collect()
        } else {
            let first = char::from(b'0' + rng.below(8) as u8);
            let rest: String = (0..25).map(|_| char::from(*rng.pick(BASE32))).collect();
            format!("{prefix}{first}{rest}")
                .chars()
                .map(String::from)
                .collect()
        };
        let at = rng.below(chars.len());
        match rng.below(6) {
            0 | 1 => {}
            2 => chars[at] = rng.pick(ODD).to_string(),
            3 => chars[at] = chars[at].to_uppercase(),
            4 => chars.insert(at, char::from(*rng.pick(BASE32)).to_string()),
            _ => {
                chars.remove(at);
            }
        }
        out.push(chars.concat());
    }
    out
}

/// A client that keeps its connections.
type HttpClient = Client<HttpConnector, Full<Bytes>>;

/// An answer: status and body.
struct Answer {
    status: u16,
    body: String,
}

impl Answer {
    fn error(&self) -> String {
        serde_json::from_str::<Value>(&self.body)
            .ok()
            .and_then(|v| v["error"].as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("an answer without a JSON error: {}", self.body))
    }
}

/// Percent-encodes every byte but the unreserved ones (RFC 3986), for a path segment or query
/// value.
fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            write!(out, "%{b:02X}").unwrap();
        }
    }
    out
}

/// The customer a lenient reader would take `s` for: its digits of any script, without
/// leading zeros, if that is a customer ID (1 to `i64::MAX`).
fn lenient_customer(s: &str) -> Option<String> {
    let digits: String = s
        .chars()
        .filter_map(|c| {
            let zero = [
                '0',
                '０',
                '\u{660}',
                '\u{966}',
                '\u{1d7ce}',
                '\u{1d7d8}',
                '\u{1d7e2}',
            ]
            .into_iter()
            .find(|&z| (z..=char::from_u32(z as u32 + 9).unwrap()).contains(&c))?;
            char::from_digit(c as u32 - zero as u32, 10)
        })
        .collect();
    let value: u128 = digits.trim_start_matches('0').parse().ok()?;
    (1..=i64::MAX as u128)
        .contains(&value)
        .then(|| value.to_string())
}

/// The test's fixture: the server, its client, the caller's real orders.
struct Fixture {
    server: Server,
    client: HttpClient,
    /// The public IDs of `CALLER`'s orders.
    orders: Vec<String>,
}

/// A valid `POST /orders` body for customer `customer`.
fn order_body(customer: &str) -> Value {
    json!({"customer_id": customer, "lines": [{"title": "Dune", "quantity": 1, "price_cents": 1250}]})
}

impl Fixture {
    async fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, HeaderValue)],
        body: Option<&Value>,
    ) -> Answer {
        let mut req = axum::http::Request::builder()
            .method(method.to_uppercase().as_str())
            .uri(format!("http://{}{path}", self.server.addr));
        for (name, value) in headers {
            req = req.header(*name, value.clone());
        }
        if body.is_some() {
            req = req.header("content-type", "application/json");
        }
        let body = body.map(Value::to_string).unwrap_or_default();
        let res = self
            .client
            .request(req.body(Full::new(Bytes::from(body))).unwrap())
            .await
            .unwrap();
        let status = res.status().as_u16();
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        Answer {
            status,
            body: String::from_utf8(bytes.to_vec()).unwrap(),
        }
    }

    /// Sends `s` in `place`, every other input valid. `None`: `s` cannot be sent there (a
    /// header value with control characters, or with leading or trailing whitespace, which
    /// HTTP strips). `Some(true)`: the server accepted `s` there.
    async fn probe(&self, place: &Place, s: &str, schema_says: bool) -> Option<bool> {
        let caller = HeaderValue::from_static(CALLER);
        let mut path = place
            .path
            .replace("{id}", CALLER)
            .replace("{public_id}", &self.orders[0]);
        let mut headers = vec![("x-customer-id", caller)];
        let mut body = (place.method == "post").then(|| order_body(CALLER));
        let label = place.label();
        match &place.location {
            In::Header => {
                assert_eq!(place.name.to_lowercase(), "x-customer-id", "{label}");
                let trimmed = s.trim_matches([' ', '\t']);
                let value = HeaderValue::from_bytes(s.as_bytes()).ok()?;
                if trimmed != s {
                    return None;
                }
                headers[0].1 = value;
                // The body's customer must be the caller.
                if let Some(body) = &mut body {
                    body["customer_id"] = json!(s);
                }
                let a = self
                    .send(&place.method, &path, &headers, body.as_ref())
                    .await;
                if a.status == 401 {
                    let e = a.error();
                    assert!(e.contains("X-Customer-Id"), "{label} {s:?}: {e}");
                    return Some(false);
                }
                assert!(
                    [200, 201, 404].contains(&a.status),
                    "{label} {s:?}: {} {}",
                    a.status,
                    a.body
                );
                Some(true)
            }
            In::Query => {
                path = format!("{path}?{}={}", place.name, encode(s));
                let a = self
                    .send(&place.method, &path, &headers, body.as_ref())
                    .await;
                match a.status {
                    400 => {
                        let e = a.error();
                        assert!(e.contains(&place.name), "{label} {s:?}: {e}");
                        Some(false)
                    }
                    200 | 404 => Some(true),
                    other => panic!("{label} {s:?}: {other} {}", a.body),
                }
            }
            In::Body(at) => {
                let body = body.as_mut().expect("a body on a POST");
                let mut slot = &mut *body;
                for key in at {
                    slot = &mut slot[key.as_str()];
                }
                *slot = json!(s);
                let a = self.send(&place.method, &path, &headers, Some(body)).await;
                match a.status {
                    422 => {
                        let e = a.error();
                        assert!(e.contains(&place.name), "{label} {s:?}: {e}");
                        Some(false)
                    }
                    201 | 403 => Some(true),
                    other => panic!("{label} {s:?}: {other} {}", a.body),
                }
            }
            In::Path => {
                let template = format!("{{{}}}", place.name);
                path = place.path.replace(&template, &encode(s));
                path = path
                    .replace("{id}", CALLER)
                    .replace("{public_id}", &self.orders[0]);
                // Only 200 (found) tells acceptance apart; make every value one that would
                // find something if read leniently.
                let real = match place.schema.format.as_str() {
                    "typeid" => self.orders.contains(&s.to_owned()),
                    _ => {
                        let caller = lenient_customer(s).unwrap_or(CALLER.into());
                        let real = caller == s;
                        headers[0].1 = HeaderValue::from_str(&caller).unwrap();
                        real
                    }
                };
                let a = self
                    .send(&place.method, &path, &headers, body.as_ref())
                    .await;
                match a.status {
                    200 => Some(true),
                    404 => {
                        assert_eq!(a.body, bookstore::http::NOT_FOUND_BODY, "{label} {s:?}");
                        // A text the schema takes that names nothing real is an ID of
                        // nothing: accepted, and not found.
                        Some(schema_says && !real)
                    }
                    other => panic!("{label} {s:?}: {other} {}", a.body),
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_server_accepts_exactly_what_each_id_place_of_the_document_admits() {
    let started = std::time::Instant::now();
    let server = Server::start().await;
    let client: HttpClient = Client::builder(TokioExecutor::new()).build_http();
    let doc = request(server.addr, "GET", "/openapi.json", None, None)
        .await
        .json();
    let mut orders = Vec::new();
    for _ in 0..3 {
        let body = order_body(CALLER).to_string();
        let a = request(server.addr, "POST", "/orders", Some(CALLER), Some(&body)).await;
        assert_eq!(a.status, 201, "{}", a.body);
        orders.push(a.json()["public_id"].as_str().unwrap().to_owned());
    }
    let fixture = Fixture {
        server,
        client,
        orders,
    };

    let found = places(&doc);
    let keys: BTreeSet<_> = found.iter().map(Place::key).collect();
    let known = [
        ("post", "/orders", In::Header, "X-Customer-Id"),
        (
            "post",
            "/orders",
            In::Body(vec!["customer_id".into()]),
            "customer_id",
        ),
        ("get", "/orders/{public_id}", In::Header, "X-Customer-Id"),
        ("get", "/orders/{public_id}", In::Path, "public_id"),
        ("get", "/customers/{id}/orders", In::Header, "X-Customer-Id"),
        ("get", "/customers/{id}/orders", In::Path, "id"),
        ("get", "/customers/{id}/orders", In::Query, "after"),
    ];
    for (method, path, location, name) in known {
        let key = (method.into(), path.into(), location, name.into());
        assert!(
            keys.contains(&key),
            "the walk missed {key:?}; found {keys:?}"
        );
    }
    assert_eq!(keys.len(), found.len(), "a place twice: {found:?}");

    let seed = std::env::var("IDGEN_ID_PLACES_SEED")
        .ok()
        .map_or(0x1d6e_2026, |s| {
            s.parse().expect("IDGEN_ID_PLACES_SEED: a number")
        });
    println!("seed {seed} (IDGEN_ID_PLACES_SEED)");
    let mut rng = Rng(seed | 1);
    let mut mismatches = Vec::new();
    for place in &found {
        let re = Regex::new(&place.schema.pattern)
            .unwrap_or_else(|e| panic!("{}: the pattern is no regex: {e}", place.label()));
        let strings = match place.schema.format.as_str() {
            "typeid" => public_id_strings(&mut rng, GENERATED, &fixture.orders),
            _ => decimal_strings(&mut rng, GENERATED),
        };
        // The document's own example is one of them.
        let strings = place.schema.example.iter().cloned().chain(strings);
        let (mut accepted, mut refused, mut unsendable) = (0, 0, 0);
        for s in strings {
            let schema_says = place.schema.admits(&re, &s);
            let Some(server_says) = fixture.probe(place, &s, schema_says).await else {
                unsendable += 1;
                continue;
            };
            if server_says != schema_says {
                mismatches.push(format!(
                    "{}: {s:?}: the schema {} it, the server {} it",
                    place.label(),
                    if schema_says { "admits" } else { "refuses" },
                    if server_says { "accepted" } else { "refused" },
                ));
            }
            if server_says {
                accepted += 1;
            } else {
                refused += 1;
            }
        }
        println!(
            "{}: {} strings: {accepted} accepted, {refused} refused, {unsendable} not sendable there",
            place.label(),
            accepted + refused + unsendable,
        );
        assert!(
            accepted >= 10 && refused >= 10,
            "{}: too one-sided",
            place.label()
        );
    }
    println!("{} places in {:.1?}", found.len(), started.elapsed());
    assert!(
        mismatches.is_empty(),
        "{} disagreements:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
