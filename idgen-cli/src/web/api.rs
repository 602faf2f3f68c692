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

/// The most characters of a typed value that an error repeats.
pub(crate) const ECHO_MAX: usize = 40;

/// The longest error message the page shows whole (longer ones lose their middle).
const MESSAGE_MAX: usize = 400;

/// `value` quoted, cut after `max` characters, saying how long it was.
pub(crate) fn shown(value: &str, max: usize) -> String {
    match value.char_indices().nth(max) {
        Some((at, _)) => format!("{:?}… ({} characters)", &value[..at], value.chars().count()),
        None => format!("{value:?}"),
    }
}

/// A 422 with the errors, none repeating a long input whole: each copy of a typed value
/// longer than [`ECHO_MAX`] (as typed or quoted, trimmed or not) is cut, and a message still
/// longer than [`MESSAGE_MAX`] loses its middle.
fn refused_typed(errors: Vec<InputError>, typed: &[&str]) -> Response {
    let errors = errors
        .into_iter()
        .map(|e| InputError {
            message: cut_echoes(e.message, typed),
            ..e
        })
        .collect();
    refused(errors)
}

fn cut_echoes(mut message: String, typed: &[&str]) -> String {
    for value in typed.iter().flat_map(|v| [*v, v.trim()]) {
        if value.chars().count() <= ECHO_MAX {
            continue;
        }
        let short = shown(value, ECHO_MAX);
        message = message.replace(&format!("{value:?}"), &short);
        message = message.replace(value, &short);
    }
    let count = message.chars().count();
    if count <= MESSAGE_MAX {
        return message;
    }
    let head: String = message.chars().take(MESSAGE_MAX * 2 / 3).collect();
    let tail: String = message.chars().skip(count - MESSAGE_MAX / 4).collect();
    format!(
        "{head}… ({} characters cut) …{tail}",
        count - head.chars().count() - tail.chars().count()
    )
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
        Err(e) => refused_typed(vec![e], &[&q.layout]),
    }
}

/// `POST /api/compose`: the ID of the inputs, or an error per refused input.
pub(crate) async fn compose(req: Result<Json<ComposeRequest>, JsonRejection>) -> Response {
    let req = match req {
        Ok(Json(r)) => r,
        Err(e) => return unreadable(e.status(), e.body_text()),
    };
    let mut typed = vec![req.layout.as_str(), &req.time, &req.sequence];
    typed.extend(req.node.values().map(String::as_str));
    let layout = match compose::layout(&req.layout) {
        Ok(l) => l,
        Err(e) => return refused_typed(vec![e], &typed),
    };
    match compose::compose(&layout, &req, compose::now_ms()) {
        Ok(view) => Json(view).into_response(),
        Err(errors) => refused_typed(errors, &typed),
    }
}

/// `POST /api/inspect`: the pasted ID taken apart, or the library's error.
pub(crate) async fn inspect(req: Result<Json<InspectRequest>, JsonRejection>) -> Response {
    let req = match req {
        Ok(Json(r)) => r,
        Err(e) => return unreadable(e.status(), e.body_text()),
    };
    let typed = [req.layout.as_str(), &req.text];
    let layout = match compose::layout(&req.layout) {
        Ok(l) => l,
        Err(e) => return refused_typed(vec![e], &typed),
    };
    match inspect::inspect(&layout, &req.text) {
        Ok(view) => Json(view).into_response(),
        Err(message) => refused_typed(
            vec![InputError {
                input: "text".into(),
                message,
            }],
            &typed,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn messages(response: Response) -> Vec<String> {
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
        let bytes = axum::body::to_bytes(response.into_body(), 1_000_000)
            .await
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        json["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["message"].as_str().unwrap().to_owned())
            .collect()
    }

    #[tokio::test]
    async fn a_long_input_is_not_repeated_whole() {
        let long = "9".repeat(5000);
        let junk = "x".repeat(5000);
        let node = [("datacenter", &long), ("worker", &junk)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.clone()))
            .collect();
        let req = ComposeRequest {
            layout: "twitter".into(),
            time: format!(" {junk} "),
            node,
            sequence: long.clone(),
        };
        let got = messages(compose(Ok(Json(req))).await).await;
        assert_eq!(got.len(), 4, "{got:?}");
        for m in &got {
            assert!(m.chars().count() < MESSAGE_MAX + 60, "{} chars", m.len());
            assert!(m.contains("… (5000 characters)"), "{m}");
        }
        let inspect_req = InspectRequest {
            layout: String::new(),
            text: junk.clone(),
        };
        for m in messages(inspect(Ok(Json(inspect_req))).await).await {
            assert!(m.chars().count() < MESSAGE_MAX + 60, "{m}");
        }
        let custom = format!("custom:epoch=0,{junk}");
        let layout_req = InspectRequest {
            layout: custom,
            text: "1".into(),
        };
        for m in messages(inspect(Ok(Json(layout_req))).await).await {
            assert!(m.chars().count() < MESSAGE_MAX + 60, "{m}");
        }
    }

    #[test]
    fn short_inputs_and_messages_stay_whole() {
        let m = "datacenter 32 does not fit in 5 bits: the largest datacenter is 31";
        assert_eq!(cut_echoes(m.to_owned(), &["32"]), m);
        assert_eq!(shown("abc", 40), "\"abc\"");
        let cut = cut_echoes("x".repeat(1000), &[]);
        assert!(cut.contains("characters cut") && cut.chars().count() < MESSAGE_MAX + 40);
    }

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
