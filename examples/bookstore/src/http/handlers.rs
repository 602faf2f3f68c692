//! The handlers, each with its OpenAPI description (`#[utoipa::path]`).

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use idgen_sqlx::PublicId;

use super::bodies::{CreateOrder, CustomerOrders, ErrorBody, MAX_PAGE, PageQuery};
use super::errors::{error, internal, not_found, unauthorized};
use crate::instance::Instance;
use crate::model::{CustomerId, NewLine, Order, OrderPublicId, OrderView};

/// The header naming the caller.
pub const CUSTOMER_HEADER: &str = "x-customer-id";

/// The caller, from `X-Customer-Id`. A handler that takes one answers 401, before looking at
/// anything else, when the header is missing or not a customer ID.
pub(super) struct Caller(CustomerId);

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Caller, Response> {
        caller(&parts.headers).map(Caller).map_err(unauthorized)
    }
}

/// The caller from `X-Customer-Id`: a [`CustomerId`] (from 1, the texts its schema's pattern
/// matches); else what is wrong with the header (answered with 401).
fn caller(headers: &HeaderMap) -> Result<CustomerId, String> {
    let Some(value) = headers.get(CUSTOMER_HEADER) else {
        return Err("send your customer ID in the X-Customer-Id header".into());
    };
    let text = value
        .to_str()
        .map_err(|_| "the X-Customer-Id header is not ASCII text; send your customer ID")?;
    text.parse().map_err(|e| format!("X-Customer-Id: {e}"))
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

/// Creates an order for the caller; its public ID is in the body and the `Location` header.
#[utoipa::path(
    post,
    path = "/orders",
    tag = "orders",
    params(
        ("X-Customer-Id" = CustomerId, Header, description = "The caller's customer ID (from 1)")
    ),
    request_body(content = CreateOrder, content_type = "application/json"),
    responses(
        (status = 201, description = "The order, as stored", body = OrderView,
            headers(("location" = String, description = "/orders/{public_id}"))),
        (status = 400, description = "The body is not JSON", body = ErrorBody),
        (status = 401, description = "X-Customer-Id is missing or not a customer ID", body = ErrorBody),
        (status = 403, description = "customer_id is not the caller", body = ErrorBody),
        (status = 413, description = "The body is too large", body = ErrorBody),
        (status = 415, description = "The body is not declared as application/json", body = ErrorBody),
        (status = 422, description = "The JSON does not fit CreateOrder, or a line is out of range", body = ErrorBody),
        (status = 500, description = "A database failed", body = ErrorBody),
    )
)]
pub(super) async fn create_order(
    State(app): State<Arc<Instance>>,
    Caller(customer): Caller,
    body: Result<Json<CreateOrder>, JsonRejection>,
) -> Response {
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
    match app.create_order(customer.get(), &body.lines).await {
        Ok(order) => {
            let location = format!("/orders/{}", order.public_id);
            let view = OrderView::from(&order);
            (StatusCode::CREATED, [("location", location)], Json(view)).into_response()
        }
        Err(e) => internal(e),
    }
}

/// One of the caller's orders, by public ID.
#[utoipa::path(
    get,
    path = "/orders/{public_id}",
    tag = "orders",
    params(
        ("public_id" = OrderPublicId, Path, description = "The order's public ID"),
        ("X-Customer-Id" = CustomerId, Header, description = "The caller's customer ID (from 1)")
    ),
    responses(
        (status = 200, description = "The order", body = OrderView),
        (status = 401, description = "X-Customer-Id is missing or not a customer ID", body = ErrorBody),
        (status = 404, description = "No such order of the caller's, or not a public ID of an order (one answer for all)", body = ErrorBody),
        (status = 500, description = "A database failed", body = ErrorBody),
    )
)]
pub(super) async fn get_order(
    State(app): State<Arc<Instance>>,
    Caller(customer): Caller,
    path: Result<Path<String>, PathRejection>,
) -> Response {
    // A malformed or tampered ID is answered exactly like an unknown one.
    let Some(public_id) = path
        .ok()
        .and_then(|Path(text)| text.parse::<PublicId<Order>>().ok())
    else {
        return not_found();
    };
    match app
        .shards()
        .find_for_customer(public_id, customer.get())
        .await
    {
        Ok(Some(order)) => Json(OrderView::from(&order)).into_response(),
        Ok(None) => not_found(),
        Err(e) => internal(e),
    }
}

/// The caller's orders, newest first, a page at a time.
#[utoipa::path(
    get,
    path = "/customers/{id}/orders",
    tag = "orders",
    params(
        ("id" = CustomerId, Path, description = "The caller's own customer ID"),
        ("X-Customer-Id" = CustomerId, Header, description = "The caller's customer ID (from 1)"),
        PageQuery
    ),
    responses(
        (status = 200, description = "A page of orders", body = CustomerOrders),
        (status = 400, description = "A query parameter is malformed, out of range or unknown", body = ErrorBody),
        (status = 401, description = "X-Customer-Id is missing or not a customer ID", body = ErrorBody),
        (status = 404, description = "Not the caller's own list, or `after` is not one of the caller's orders (one answer for all)", body = ErrorBody),
        (status = 500, description = "A database failed", body = ErrorBody),
    )
)]
pub(super) async fn customer_orders(
    State(app): State<Arc<Instance>>,
    Caller(customer): Caller,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<PageQuery>, QueryRejection>,
) -> Response {
    // Someone else's list, or not a customer ID (the texts `CustomerId`'s pattern refuses, 0
    // among them): the same 404.
    let own = path
        .ok()
        .and_then(|Path(text)| text.parse::<CustomerId>().ok())
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
        Some(cursor) => match app.shards().key_of(cursor, customer.get()).await {
            Ok(Some(key)) => Some(key),
            // Not one of the caller's orders: the same answer as any order not theirs.
            Ok(None) => return not_found(),
            Err(e) => return internal(e),
        },
    };
    // One more than asked for tells whether another page follows.
    let mut orders = match app
        .shards()
        .orders_of(customer.get(), before, limit + 1)
        .await
    {
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
