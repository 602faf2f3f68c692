//! `GET /openapi.json`: the API's OpenAPI document, generated from the code, with every route,
//! request and response body, and the error shape. (scripts/api-fuzz then lets schemathesis
//! exercise the API from this document.)

mod common;

use std::collections::BTreeSet;

use common::{Server, request};
use serde_json::Value;

/// The routes the API serves: (method, path).
const ROUTES: &[(&str, &str)] = &[
    ("get", "/customers/{id}/orders"),
    ("get", "/openapi.json"),
    ("get", "/orders/{public_id}"),
    ("post", "/orders"),
];

async fn document(server: &Server) -> Value {
    let a = request(server.addr, "GET", "/openapi.json", None, None).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.content_type.as_deref(), Some("application/json"));
    a.json()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_served_document_is_the_generated_one_with_every_route() {
    let server = Server::start().await;
    let doc = document(&server).await;
    assert_eq!(
        doc,
        serde_json::to_value(bookstore::http::openapi()).unwrap()
    );
    assert_eq!(doc["openapi"], "3.1.0");
    let documented: BTreeSet<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .keys()
                .map(move |method| (method.clone(), path.clone()))
        })
        .collect();
    let expected: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    assert_eq!(documented, expected);

    // Each documented path is routed, with exactly the documented methods: another method
    // gets the router's 405 and its Allow header.
    for (method, path) in ROUTES {
        let concrete = path
            .replace("{id}", "7")
            .replace("{public_id}", "ord_01h455vb4pex5vsknk084sn02q");
        let a = request(server.addr, "PATCH", &concrete, Some("7"), None).await;
        assert_eq!(a.status, 405, "PATCH {concrete}");
        let allow = a.allow.unwrap().to_lowercase();
        assert!(allow.split(',').any(|m| m == *method), "{allow} for {path}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_error_response_is_documented_as_the_json_error_body() {
    let server = Server::start().await;
    let doc = document(&server).await;
    let error_ref = "#/components/schemas/ErrorBody";
    let mut errors = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            for (status, response) in operation["responses"].as_object().unwrap() {
                let schema = &response["content"]["application/json"]["schema"];
                assert!(
                    schema.is_object(),
                    "{method} {path} {status} has no JSON body"
                );
                if status.starts_with('4') || status.starts_with('5') {
                    assert_eq!(schema["$ref"], error_ref, "{method} {path} {status}");
                    errors += 1;
                }
            }
        }
    }
    // POST /orders: 400 401 403 413 415 422 500; GET /orders/{id}: 401 404 500; the list: 400 401 404 500.
    assert_eq!(errors, 14);
    let error = &doc["components"]["schemas"]["ErrorBody"];
    assert_eq!(error["required"], serde_json::json!(["error"]));
    assert_eq!(error["properties"]["error"]["type"], "string");

    // The request body and its lines: the limits the handler enforces.
    let schemas = &doc["components"]["schemas"];
    let create = &schemas["CreateOrder"];
    assert_eq!(create["additionalProperties"], false);
    assert_eq!(create["properties"]["lines"]["minItems"], 1);
    assert_eq!(create["properties"]["lines"]["maxItems"], 50);
    let line = &schemas["NewLine"];
    assert_eq!(line["additionalProperties"], false);
    assert_eq!(line["properties"]["quantity"]["minimum"], 1);
    assert_eq!(line["properties"]["quantity"]["maximum"], 100);
    assert_eq!(line["properties"]["price_cents"]["maximum"], 1_000_000);
    assert_eq!(line["properties"]["title"]["maxLength"], 200);
    // No internal key in any response body.
    for view in ["OrderView", "LineView", "CustomerOrders"] {
        let props = schemas[view]["properties"].as_object().unwrap();
        assert!(!props.contains_key("id"), "{view}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_id_schemas_come_from_idgen() {
    use bookstore::model::{CustomerId, OrderPublicId};
    use utoipa::PartialSchema;

    let server = Server::start().await;
    let doc = document(&server).await;
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        schemas["CustomerId"],
        serde_json::to_value(CustomerId::schema()).unwrap()
    );
    assert_eq!(
        schemas["OrderPublicId"],
        serde_json::to_value(OrderPublicId::schema()).unwrap()
    );
    assert_eq!(
        schemas["OrderPublicId"]["pattern"],
        "^ord_[0-7][0-9a-hjkmnp-tv-z]{25}$"
    );
    // Every example in the document parses.
    let example = schemas["OrderPublicId"]["examples"][0].as_str().unwrap();
    assert!(example.parse::<OrderPublicId>().is_ok());
    let example = schemas["CustomerId"]["examples"][0].as_str().unwrap();
    assert!(example.parse::<CustomerId>().is_ok());

    // A customer ID is idgen's `Id<Customer>` from 1: its pattern without the alternative 0,
    // everything else idgen's (tests/id_places.rs checks it against the server).
    let idgen =
        serde_json::to_value(idgen_sqlx::Id::<bookstore::model::Customer>::schema()).unwrap();
    let ours = &schemas["CustomerId"];
    let idgen_pattern = idgen["pattern"].as_str().unwrap();
    let pattern = ours["pattern"].as_str().unwrap();
    assert_eq!(pattern.replacen("^(", "^(0|", 1), idgen_pattern);
    for key in ["type", "format", "minLength", "maxLength", "examples"] {
        assert_eq!(ours[key], idgen[key], "{key}");
    }
    let (idgen, ours) = (
        regex::Regex::new(idgen_pattern).unwrap(),
        regex::Regex::new(pattern).unwrap(),
    );
    assert!(idgen.is_match("0") && !ours.is_match("0"));
    for text in ["1", "9", "10", "9223372036854775807"] {
        assert!(ours.is_match(text), "{text}");
    }
}
