//! The JSON API of `idgen web`: the page's only source of numbers. Errors are the library's
//! messages, with HTTP 422 (an input was refused) and the input each belongs to.

use axum::Json;
use axum::extract::Query;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use crate::web::compose::{self, ComposeRequest, InputError};
use crate::web::inspect::{self, InspectRequest};
use crate::web::view::LayoutView;

/// The body of a refusal: one error per refused input.
#[derive(Debug, Serialize)]
pub(crate) struct Refused {
    errors: Vec<InputError>,
}

/// A 422 with the errors.
pub(crate) fn refused(errors: Vec<InputError>) -> Response {
    (StatusCode::UNPROCESSABLE_ENTITY, Json(Refused { errors })).into_response()
}

/// A request the API could not read (not JSON, a field of the wrong type), as a 4xx with the
/// same JSON shape as a refused input.
pub(crate) fn unreadable(status: StatusCode, message: String) -> Response {
    let errors = vec![InputError {
        input: "request".into(),
        message,
    }];
    (status, Json(Refused { errors })).into_response()
}

/// `?layout=…`.
#[derive(Debug, Deserialize)]
pub(crate) struct LayoutQuery {
    #[serde(default)]
    layout: String,
}

/// `GET /api/layout?layout=…`: the layout's fields and ranges, for the form's inputs.
pub(crate) async fn layout(q: Result<Query<LayoutQuery>, QueryRejection>) -> Response {
    let q = match q {
        Ok(Query(q)) => q,
        Err(e) => return unreadable(e.status(), e.body_text()),
    };
    match compose::layout(&q.layout) {
        Ok(l) => Json(LayoutView::new(&l)).into_response(),
        Err(e) => refused(vec![e]),
    }
}

/// `POST /api/compose`: the ID of the inputs, or an error per refused input.
pub(crate) async fn compose(req: Result<Json<ComposeRequest>, JsonRejection>) -> Response {
    let req = match req {
        Ok(Json(r)) => r,
        Err(e) => return unreadable(e.status(), e.body_text()),
    };
    let layout = match compose::layout(&req.layout) {
        Ok(l) => l,
        Err(e) => return refused(vec![e]),
    };
    match compose::compose(&layout, &req, compose::now_ms()) {
        Ok(view) => Json(view).into_response(),
        Err(errors) => refused(errors),
    }
}

/// `POST /api/inspect`: the pasted ID taken apart, or the library's error.
pub(crate) async fn inspect(req: Result<Json<InspectRequest>, JsonRejection>) -> Response {
    let req = match req {
        Ok(Json(r)) => r,
        Err(e) => return unreadable(e.status(), e.body_text()),
    };
    let layout = match compose::layout(&req.layout) {
        Ok(l) => l,
        Err(e) => return refused(vec![e]),
    };
    match inspect::inspect(&layout, &req.text) {
        Ok(view) => Json(view).into_response(),
        Err(message) => refused(vec![InputError {
            input: "text".into(),
            message,
        }]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_unreadable_request_is_answered_in_json() {
        let rejected: Result<Json<ComposeRequest>, JsonRejection> =
            Err(JsonRejection::MissingJsonContentType(Default::default()));
        let response = compose(rejected).await;
        assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let bytes = axum::body::to_bytes(response.into_body(), 10_000)
            .await
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(json["errors"][0]["input"], "request");
        assert!(
            json["errors"][0]["message"]
                .as_str()
                .unwrap()
                .contains("Content-Type")
        );
    }
}
