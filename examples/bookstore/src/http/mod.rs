//! The JSON API (`--serve`): orders are addressed by public ID only, and only their owner sees
//! them.
//!
//! * `POST /orders` with `{"customer_id": "42", "lines": [{"title", "quantity", "price_cents"}]}`
//! * `GET /orders/{public_id}`
//! * `GET /customers/{id}/orders?limit=N&after=ord_…`: newest first, keyset-paged on the
//!   orders' Snowflake keys; `next_cursor` (the last order's public ID) fetches the next page.
//! * `GET /openapi.json`: this API's OpenAPI 3.1 document, generated from the handlers and
//!   types below (utoipa), so it cannot drift from them.
//! * `GET /metrics`: idgen's metrics in Prometheus text, for the operator (not in the document).
//!
//! The caller names itself in the `X-Customer-Id` header (a stand-in for real authentication).
//! Every ID in a request is a string, and each place that takes one accepts exactly the texts its
//! schema's `pattern` admits (customer IDs from `"1"`: [`CustomerId`](crate::model::CustomerId);
//! public IDs `ord_…`), which `tests/id_places.rs` checks from the served document.
//! A wrong owner, an unknown public ID and a malformed or tampered one all get the same 404
//! response, so the API reveals nothing about orders the caller does not own. No internal key
//! (an order's Snowflake ID, a line's hi-lo ID) ever leaves the server. Every error, the
//! framework's rejections and unknown routes included, is a JSON body `{"error": "…"}`.

mod bodies;
mod errors;
mod handlers;
mod metrics;

use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::response::{IntoResponse, Response};
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub use bodies::{CreateOrder, CustomerOrders, ErrorBody, MAX_PAGE, PageQuery};
pub use errors::NOT_FOUND_BODY;
pub use handlers::CUSTOMER_HEADER;

use crate::instance::Instance;

/// The document's fixed parts; the paths and schemas come from the handlers.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Bookstore",
        description = "idgen's example API: orders split over 4 shards, addressed by public ID \
                       (`ord_…`) only, visible only to their owner. IDs are strings. Every error \
                       is a JSON body `{\"error\": \"…\"}`."
    ),
    tags(
        (name = "orders", description = "Creating and reading orders"),
        (name = "meta", description = "This document")
    )
)]
struct ApiDoc;

/// The routes with their OpenAPI descriptions.
fn documented() -> OpenApiRouter<Arc<Instance>> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(handlers::create_order))
        .routes(routes!(handlers::get_order))
        .routes(routes!(handlers::customer_orders))
        .routes(routes!(openapi_json))
}

/// The API's OpenAPI document: every route, request and response body, and error shape.
pub fn openapi() -> utoipa::openapi::OpenApi {
    documented().split_for_parts().1
}

/// The API's routes over one app instance; anything else is a JSON 404 (unknown path) or 405
/// (known path, other method).
pub fn router(instance: Arc<Instance>) -> Router {
    let (router, _) = documented().split_for_parts();
    router
        .route("/metrics", axum::routing::get(metrics::text))
        .fallback(errors::unknown_route)
        .method_not_allowed_fallback(errors::method_not_allowed)
        .with_state(instance)
}

/// The OpenAPI document as JSON.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "meta",
    responses((status = 200, description = "This API's OpenAPI 3.1 document", body = Object))
)]
async fn openapi_json() -> Response {
    static DOCUMENT: OnceLock<String> = OnceLock::new();
    let text = DOCUMENT.get_or_init(|| {
        openapi()
            .to_json()
            .unwrap_or_else(|e| format!(r#"{{"error":"the document failed to serialize: {e}"}}"#))
    });
    ([("content-type", "application/json")], text.as_str()).into_response()
}
