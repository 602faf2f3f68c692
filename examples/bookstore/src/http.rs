//! The JSON API (`--serve`): orders are addressed by public ID only, and only their owner sees
//! them.
//!
//! * `POST /orders` with `{"customer_id": "42", "lines": [{"title", "quantity", "price_cents"}]}`
//! * `GET /orders/{public_id}`
//! * `GET /customers/{id}/orders?limit=N&after=ord_…`: newest first, keyset-paged on the
//!   orders' Snowflake keys; `next_cursor` (the last order's public ID) fetches the next page.
//!
//! The caller names itself in the `X-Customer-Id` header (a stand-in for real authentication).
//! A wrong owner, an unknown public ID and a malformed or tampered one all get the same 404
//! response, so the API reveals nothing about orders the caller does not own. No internal key
//! (an order's Snowflake ID, a line's hi-lo ID) ever leaves the server. Every error, the
//! framework's rejections and unknown routes included, is a JSON body `{"error": "…"}`.

use std::sync::Arc;

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use idgen_sqlx::{Id, PublicId};
use serde::{Deserialize, Serialize};

use crate::instance::Instance;
use crate::model::{Customer, NewLine, Order, OrderView};

/// The header naming the caller.
pub const CUSTOMER_HEADER: &str = "x-customer-id";

/// The one body of every "no such order for you" answer, and of unknown routes.
pub const NOT_FOUND_BODY: &str = r#"{"error":"not found"}"#;

/// The most orders one page of `GET /customers/{id}/orders` holds, and the default.
pub const MAX_PAGE: u32 = 100;

/// The API's routes over one app instance.
pub fn router(instance: Arc<Instance>) -> Router {
    Router::new()
        .route("/orders", post(create_order))
        .route("/orders/{public_id}", get(get_order))
        .route("/customers/{id}/orders", get(customer_orders))
        .fallback(unknown_route)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(instance)
}

/// The body of `POST /orders`. Unknown fields are refused.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CreateOrder {
    /// Must be the caller. A string (or an integer) of canonical decimal digits.
    pub customer_id: Id<Customer>,
    /// 1 to 50 lines.
    pub lines: Vec<NewLine>,
}

/// The query of `GET /customers/{id}/orders`. Unknown parameters are refused.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PageQuery {
    /// Orders per page, 1 to [`MAX_PAGE`] (default [`MAX_PAGE`]).
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page: that page's last order.
    pub after: Option<PublicId<Order>>,
}

/// A page of a customer's orders, newest first.
#[derive(Debug, Serialize, Deserialize)]
pub struct CustomerOrders {
    /// The customer.
    pub customer_id: Id<Customer>,
    /// At most `limit` orders.
    pub orders: Vec<OrderView>,
    /// The `after` for the next page; `null` on the last page.
    pub next_cursor: Option<PublicId<Order>>,
}

/// The body of every error.
#[derive(Debug, Serialize, Deserialize)]
pub struct ErrorBody {
    /// What went wrong, for people.
    pub error: String,
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
    (
        status,
        Json(ErrorBody {
            error: message.into(),
        }),
    )
        .into_response()
}

fn internal(e: impl std::fmt::Display) -> Response {
    eprintln!("bookstore: request failed: {e}");
    error(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
}

async fn unknown_route() -> Response {
    not_found()
}

async fn method_not_allowed() -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        "method not allowed on this path (see the Allow header)",
    )
}

/// The caller from `X-Customer-Id`: a customer ID, which starts at 1; else what is wrong
/// with the header (answered with 401).
fn caller(headers: &HeaderMap) -> Result<Id<Customer>, String> {
    let Some(value) = headers.get(CUSTOMER_HEADER) else {
        return Err("send your customer ID in the X-Customer-Id header".into());
    };
    let text = value
        .to_str()
        .map_err(|_| "the X-Customer-Id header is not ASCII text; send your customer ID")?;
    match text.parse::<Id<Customer>>() {
        Ok(id) if id.get() == 0 => {
            Err("X-Customer-Id 0 is not a customer: customer IDs start at 1".into())
        }
        Ok(id) => Ok(id),
        Err(e) => Err(format!("X-Customer-Id: {e}")),
    }
}

fn unauthorized(message: String) -> Response {
    error(StatusCode::UNAUTHORIZED, message)
}

/// A JSON body the framework refused (syntax, types, unknown fields, content type, size), as a
/// JSON error with the framework's status.
fn rejected_body(rejection: JsonRejection) -> Response {
    error(rejection.status(), rejection.body_text())
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
    let customer = match caller(&headers) {
        Ok(c) => c,
        Err(message) => return unauthorized(message),
    };
    let Json(body) = match body {
        Ok(b) => b,
        Err(rejection) => return rejected_body(rejection),
    };
    if body.customer_id != customer {
        return error(
            StatusCode::FORBIDDEN,
            format!(
                "customer_id {} is not the caller's own ({customer} from X-Customer-Id)",
                body.customer_id
            ),
        );
    }
    if let Err(message) = check_lines(&body.lines) {
        return error(StatusCode::UNPROCESSABLE_ENTITY, message);
    }
    match app.create_order(customer, &body.lines).await {
        Ok(order) => {
            let location = format!("/orders/{}", order.public_id);
            let view = OrderView::from(&order);
            (StatusCode::CREATED, [("location", location)], Json(view)).into_response()
        }
        Err(e) => internal(e),
    }
}

async fn get_order(
    State(app): State<Arc<Instance>>,
    headers: HeaderMap,
    path: Result<Path<String>, PathRejection>,
) -> Response {
    let customer = match caller(&headers) {
        Ok(c) => c,
        Err(message) => return unauthorized(message),
    };
    // A malformed or tampered ID is answered exactly like an unknown one.
    let Some(public_id) = path
        .ok()
        .and_then(|Path(text)| text.parse::<PublicId<Order>>().ok())
    else {
        return not_found();
    };
    match app.shards().find_for_customer(public_id, customer).await {
        Ok(Some(order)) => Json(OrderView::from(&order)).into_response(),
        Ok(None) => not_found(),
        Err(e) => internal(e),
    }
}

async fn customer_orders(
    State(app): State<Arc<Instance>>,
    headers: HeaderMap,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<PageQuery>, QueryRejection>,
) -> Response {
    let customer = match caller(&headers) {
        Ok(c) => c,
        Err(message) => return unauthorized(message),
    };
    // Someone else's list, or a malformed customer ID: the same 404.
    let own = path
        .ok()
        .and_then(|Path(text)| text.parse::<Id<Customer>>().ok())
        == Some(customer);
    if !own {
        return not_found();
    }
    let Query(page) = match query {
        Ok(q) => q,
        Err(rejection) => return error(StatusCode::BAD_REQUEST, rejection.body_text()),
    };
    let limit = page.limit.unwrap_or(MAX_PAGE);
    if !(1..=MAX_PAGE).contains(&limit) {
        return error(
            StatusCode::BAD_REQUEST,
            format!("limit {limit} is not between 1 and {MAX_PAGE}"),
        );
    }
    let before = match page.after {
        None => None,
        Some(cursor) => match app.shards().key_of(cursor, customer).await {
            Ok(Some(key)) => Some(key),
            Ok(None) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    format!("after: {cursor} is not one of your orders (use a next_cursor)"),
                );
            }
            Err(e) => return internal(e),
        },
    };
    // One more than asked for tells whether another page follows.
    let mut orders = match app.shards().orders_of(customer, before, limit + 1).await {
        Ok(orders) => orders,
        Err(e) => return internal(e),
    };
    let more = orders.len() > limit as usize;
    orders.truncate(limit as usize);
    let next_cursor = if more {
        orders.last().map(|o| o.public_id)
    } else {
        None
    };
    Json(CustomerOrders {
        customer_id: customer,
        orders: orders.iter().map(OrderView::from).collect(),
        next_cursor,
    })
    .into_response()
}
