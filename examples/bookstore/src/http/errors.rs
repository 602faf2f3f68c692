//! Error answers: every one a JSON body `{"error": "…"}` ([`ErrorBody`]).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::bodies::ErrorBody;

/// The one body of every "no such order for you" answer, and of unknown routes.
pub const NOT_FOUND_BODY: &str = r#"{"error":"not found"}"#;

pub(super) fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        [("content-type", "application/json")],
        NOT_FOUND_BODY,
    )
        .into_response()
}

pub(super) fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (
        status,
        Json(ErrorBody {
            error: message.into(),
        }),
    )
        .into_response()
}

pub(super) fn internal(e: impl std::fmt::Display) -> Response {
    eprintln!("bookstore: request failed: {e}");
    error(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
}

pub(super) fn unauthorized(message: String) -> Response {
    error(StatusCode::UNAUTHORIZED, message)
}

pub(super) async fn unknown_route() -> Response {
    not_found()
}

pub(super) async fn method_not_allowed() -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        "method not allowed on this path (see the Allow header)",
    )
}
