//! The JSON API of `idgen web`: the page's only source of numbers. Errors are the library's
//! messages, with HTTP 422 (an input was refused) and the input each belongs to.

use axum::Json;
use axum::extract::Query;
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

/// `?layout=…`.
#[derive(Debug, Deserialize)]
pub(crate) struct LayoutQuery {
    #[serde(default)]
    layout: String,
}

/// `GET /api/layout?layout=…`: the layout's fields and ranges, for the form's inputs.
pub(crate) async fn layout(Query(q): Query<LayoutQuery>) -> Response {
    match compose::layout(&q.layout) {
        Ok(l) => Json(LayoutView::new(&l)).into_response(),
        Err(e) => refused(vec![e]),
    }
}

/// `POST /api/compose`: the ID of the inputs, or an error per refused input.
pub(crate) async fn compose(Json(req): Json<ComposeRequest>) -> Response {
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
pub(crate) async fn inspect(Json(req): Json<InspectRequest>) -> Response {
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
