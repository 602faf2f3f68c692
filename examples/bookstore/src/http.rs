//! The JSON API (`--serve`): orders are addressed by public ID only, and only their owner sees
//! them.
//!
//! * `POST /orders` with `{"customer_id": "42", "lines": [{"title", "quantity", "price_cents"}]}`
//! * `GET /orders/{public_id}`
//! * `GET /customers/{id}/orders`
//! * `GET /metrics`: idgen's metrics in Prometheus text (`idgen_snowflake_*`, `idgen_hilo_*`,
//!   `idgen_lease_*`; see `idgen_core::observe`)
//!
//! The caller names itself in the `X-Customer-Id` header (a stand-in for real authentication).
//! A wrong owner, an unknown public ID and a malformed or tampered one all get the same 404
//! response, so the API reveals nothing about orders the caller does not own.

use std::sync::Arc;

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use idgen_sqlx::PublicId;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::instance::Instance;
use crate::model::{NewLine, Order, id_string};

/// The header naming the caller.
pub const CUSTOMER_HEADER: &str = "x-customer-id";

/// The one body of every "no such order for you" answer.
pub const NOT_FOUND_BODY: &str = r#"{"error":"not found"}"#;

/// The API's routes over one app instance.
pub fn router(instance: Arc<Instance>) -> Router {
    Router::new()
        .route("/orders", post(create_order))
        .route("/orders/{public_id}", get(get_order))
        .route("/customers/{id}/orders", get(customer_orders))
        .route("/metrics", get(metrics_text))
        .with_state(instance)
}

/// The Prometheus recorder of this process: installed as the global `metrics` recorder on first
/// use (unless the program installed another one), rendered by `GET /metrics`.
fn prometheus() -> &'static metrics_exporter_prometheus::PrometheusHandle {
    static HANDLE: std::sync::OnceLock<metrics_exporter_prometheus::PrometheusHandle> =
        std::sync::OnceLock::new();
    HANDLE.get_or_init(|| {
        let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        let _ = metrics::set_global_recorder(recorder);
        handle
    })
}

/// `GET /metrics`: exports the instance's snapshots, then renders them.
async fn metrics_text(State(instance): State<Arc<Instance>>) -> String {
    let handle = prometheus();
    instance.export_metrics();
    handle.render()
}

/// The body of `POST /orders`.
#[derive(Debug, Deserialize, Serialize)]
pub struct CreateOrder {
    /// Must be the caller.
    #[serde(with = "id_string")]
    pub customer_id: i64,
    /// 1 to 50 lines.
    pub lines: Vec<NewLine>,
}

/// A customer's orders, newest first.
#[derive(Debug, Serialize)]
struct CustomerOrders {
    #[serde(with = "id_string")]
    customer_id: i64,
    orders: Vec<Order>,
}

fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        [("content-type", "application/json")],
        NOT_FOUND_BODY,
    )
        .into_response()
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "error": message.into() }))).into_response()
}

fn internal(e: impl std::fmt::Display) -> Response {
    eprintln!("bookstore: request failed: {e}");
    error(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
}

/// The caller from `X-Customer-Id`: a positive integer.
fn caller(headers: &HeaderMap) -> Option<i64> {
    headers
        .get(CUSTOMER_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok())
        .filter(|&id| id > 0)
}

fn unauthorized() -> Response {
    error(
        StatusCode::UNAUTHORIZED,
        "send your customer ID in the X-Customer-Id header",
    )
}

fn check_lines(lines: &[NewLine]) -> Result<(), String> {
    if lines.is_empty() || lines.len() > 50 {
        return Err(format!("an order has 1 to 50 lines, not {}", lines.len()));
    }
    for (n, line) in lines.iter().enumerate() {
        if line.title.trim().is_empty() || line.title.chars().count() > 200 {
            return Err(format!("line {n}: the title has 1 to 200 characters"));
        }
        if !(1..=100).contains(&line.quantity) {
            return Err(format!(
                "line {n}: quantity {} is not between 1 and 100",
                line.quantity
            ));
        }
        if !(0..=1_000_000).contains(&line.price_cents) {
            return Err(format!(
                "line {n}: price_cents {} is not between 0 and 1000000",
                line.price_cents
            ));
        }
    }
    Ok(())
}

async fn create_order(
    State(app): State<Arc<Instance>>,
    headers: HeaderMap,
    body: Result<Json<CreateOrder>, JsonRejection>,
) -> Response {
    let Some(customer) = caller(&headers) else {
        return unauthorized();
    };
    let Json(body) = match body {
        Ok(b) => b,
        Err(e) => return error(StatusCode::BAD_REQUEST, e.body_text()),
    };
    if body.customer_id != customer {
        return error(
            StatusCode::FORBIDDEN,
            "customer_id must be the caller's own (X-Customer-Id)",
        );
    }
    if let Err(message) = check_lines(&body.lines) {
        return error(StatusCode::UNPROCESSABLE_ENTITY, message);
    }
    match app.create_order(customer, &body.lines).await {
        Ok(order) => {
            let location = format!("/orders/{}", order.public_id);
            (StatusCode::CREATED, [("location", location)], Json(order)).into_response()
        }
        Err(e) => internal(e),
    }
}

async fn get_order(
    State(app): State<Arc<Instance>>,
    headers: HeaderMap,
    Path(public_id): Path<String>,
) -> Response {
    let Some(customer) = caller(&headers) else {
        return unauthorized();
    };
    // A malformed or tampered ID is answered exactly like an unknown one.
    let Ok(public_id) = public_id.parse::<PublicId<Order>>() else {
        return not_found();
    };
    match app.shards().find_for_customer(public_id, customer).await {
        Ok(Some(order)) => Json(order).into_response(),
        Ok(None) => not_found(),
        Err(e) => internal(e),
    }
}

async fn customer_orders(
    State(app): State<Arc<Instance>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let Some(customer) = caller(&headers) else {
        return unauthorized();
    };
    if id.parse::<i64>().ok() != Some(customer) {
        return not_found();
    }
    match app.shards().orders_of(customer, 50).await {
        Ok(orders) => Json(CustomerOrders {
            customer_id: customer,
            orders,
        })
        .into_response(),
        Err(e) => internal(e),
    }
}
