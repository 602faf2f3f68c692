//! The operator view of `idgen web --database-url …`: the lease table, refreshed by the page
//! every few seconds, and the free of a node ID (the rule of `idgen leases free`, in
//! idgen-sql: a live lease only with force).

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use idgen_sql::procedure::{FreeRequest, NotFreed};
use serde::Serialize;
use serde_json::json;

use crate::error::CliError;
use crate::layout_arg::LayoutArg;
use crate::leases::{Store, StoreArgs};
use crate::web::compose::InputError;
use crate::web::free_body::FreeBody;

/// How often the page reads the table again.
const REFRESH_MS: u64 = 2000;

struct Operator {
    store: Store,
    namespace: String,
    layout: LayoutArg,
    counters: Vec<String>,
    counter_table: String,
}

/// Adds the operator routes when a database is given; `/api/config` tells the page.
pub(crate) async fn routes(
    router: Router,
    web: &super::WebArgs,
    guard: &super::guard::SharedGuard,
) -> Result<Router, CliError> {
    let (args, layout): (&StoreArgs, &LayoutArg) = (&web.store, &web.layout.layout);
    let Some(url) = args.database_url.as_deref() else {
        return Ok(super::without_operator(router, layout));
    };
    let store = Store::connect(url, &args.lease_table).await?;
    let describe = format!(
        "{}, namespace {:?}, layout {layout}",
        store.describe(),
        args.namespace
    );
    let state = Arc::new(Operator {
        store,
        namespace: args.namespace.clone(),
        layout: layout.clone(),
        counters: web.counters.clone(),
        counter_table: web.counter_table.clone(),
    });
    let config = json!({
        "operator": true,
        "store": describe,
        "refresh_ms": REFRESH_MS,
        "layout": layout.to_string(),
    });
    // Holder names and the free: only for the page opened with this run's token.
    let guarded = Router::new()
        .route("/api/leases", get(leases))
        .route("/api/leases/free", post(free))
        .route_layer(axum::middleware::from_fn_with_state(
            guard.clone(),
            super::guard::require_token,
        ))
        .with_state(state);
    Ok(router
        .route("/api/config", get(move || async move { Json(config) }))
        .merge(guarded))
}

fn failure(status: StatusCode, input: &str, message: String) -> Response {
    let errors = vec![InputError {
        input: input.into(),
        message,
    }];
    (status, Json(json!({ "errors": errors }))).into_response()
}

/// One row of the page's table, every value as text.
#[derive(Serialize)]
struct LeaseView {
    node: String,
    holder: String,
    expires_in: String,
    last_timestamp: String,
    layout: String,
}

/// `GET /api/leases`.
async fn leases(State(op): State<Arc<Operator>>) -> Response {
    let table = match op.store.leases(&op.namespace).await {
        Ok(t) => t,
        Err(e) => return failure(StatusCode::SERVICE_UNAVAILABLE, "store", e.to_string()),
    };
    let rows: Vec<LeaseView> = table
        .leases
        .iter()
        .map(|l| LeaseView {
            node: l.node.to_string(),
            holder: l.holder.clone(),
            expires_in: l.expires_in(),
            last_timestamp: l
                .last_timestamp_utc
                .clone()
                .unwrap_or_else(|| "none stored yet".into()),
            layout: op.layout.to_string(),
        })
        .collect();
    let mut counters = Vec::new();
    for name in &op.counters {
        match op.store.counter(name, &op.counter_table).await {
            Ok(c) => counters.push(c),
            Err(e) => return failure(StatusCode::SERVICE_UNAVAILABLE, "store", e.to_string()),
        }
    }
    Json(json!({
        "read_at": table.now_utc,
        "leases": rows,
        "counters": counters,
    }))
    .into_response()
}

/// `POST /api/leases/free`: 200 when freed, 409 when refused (the message says why and what
/// forcing risks).
async fn free(
    State(op): State<Arc<Operator>>,
    body: Result<Json<FreeBody>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let body = match body {
        Ok(Json(b)) => b,
        Err(e) => return super::api::unreadable(e.status(), e.body_text()),
    };
    let Some(node) = body.node() else {
        return failure(
            StatusCode::UNPROCESSABLE_ENTITY,
            "node",
            format!("{:?} is not a node ID", body.node),
        );
    };
    let req = FreeRequest {
        namespace: &op.namespace,
        node,
        holder: body.holder.as_deref(),
        force: body.force,
    };
    match op.store.free(req).await {
        Ok(Ok(freed)) => Json(json!({ "message": freed.to_string() })).into_response(),
        Ok(Err(not @ NotFreed::Live { .. })) => {
            failure(StatusCode::CONFLICT, "force", not.to_string())
        }
        Ok(Err(not)) => failure(StatusCode::CONFLICT, "free", not.to_string()),
        Err(e) => failure(StatusCode::SERVICE_UNAVAILABLE, "store", e.to_string()),
    }
}
