//! The operator view of `idgen web --database-url …` (or `--etcd …`, `--redis …`: the stores
//! of `idgen leases`, through the same code): the lease table, refreshed by the page every few
//! seconds, with the layout the namespace recorded, and the free of a node ID (the rule of
//! `idgen leases free`: a live lease only with force; only the holder the page showed).

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
use crate::leases::AnyStore;
use crate::web::compose::InputError;
use crate::web::free_body::FreeBody;
use crate::web::recorded::RecordedLayout;

/// How often the page reads the table again.
const REFRESH_MS: u64 = 2000;

struct Operator {
    store: AnyStore,
    namespace: String,
    layout: LayoutArg,
    counters: Vec<String>,
    counter_table: String,
}

/// Whether the arguments ask for an operator view (a database, etcd or Redis).
fn wanted(web: &super::WebArgs) -> bool {
    #[cfg(feature = "leases-etcd")]
    if web.kv.etcd.is_some() {
        return true;
    }
    #[cfg(feature = "leases-redis")]
    if web.kv.redis.is_some() {
        return true;
    }
    web.store.database_url.is_some()
}

/// Adds the operator routes when a lease store is given; `/api/config` tells the page.
pub(crate) async fn routes(
    router: Router,
    web: &super::WebArgs,
    guard: &super::guard::SharedGuard,
) -> Result<Router, CliError> {
    let layout = &web.layout.layout;
    if !wanted(web) {
        return Ok(super::without_operator(router, layout));
    }
    let store = AnyStore::connect(&web.store, &web.kv).await?;
    let describe = format!(
        "{}, namespace {:?}, layout {layout}",
        store.describe(),
        web.store.namespace
    );
    let state = Arc::new(Operator {
        store,
        namespace: web.store.namespace.clone(),
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
    /// Whether the lease is live (not expired).
    live: bool,
    expires_in: String,
    last_timestamp: String,
}

/// `GET /api/leases`.
async fn leases(State(op): State<Arc<Operator>>) -> Response {
    let unavailable =
        |e: CliError| failure(StatusCode::SERVICE_UNAVAILABLE, "store", e.to_string());
    let table = match op.store.leases(&op.namespace).await {
        Ok(t) => t,
        Err(e) => return unavailable(e),
    };
    let recorded = match op.store.recorded_layout(&op.namespace).await {
        Ok(r) => RecordedLayout::new(r, &op.layout),
        Err(e) => return unavailable(e),
    };
    let rows: Vec<LeaseView> = table
        .leases
        .iter()
        .map(|l| LeaseView {
            node: l.node.to_string(),
            holder: l.holder.clone(),
            live: l.live,
            expires_in: l.expires_in(),
            last_timestamp: l
                .last_timestamp_utc
                .clone()
                .unwrap_or_else(|| "none stored yet".into()),
        })
        .collect();
    let mut counters = Vec::new();
    if let Some(sql) = op.store.sql() {
        for name in &op.counters {
            match sql.counter(name, &op.counter_table).await {
                Ok(c) => counters.push(c),
                Err(e) => return unavailable(e),
            }
        }
    }
    Json(json!({
        "read_at": table.now_utc,
        "leases": rows,
        "layout": recorded,
        "counters": counters,
    }))
    .into_response()
}

/// `POST /api/leases/free`: 200 when freed; 409 when refused, with `reason` `live` (and the
/// `holder` and the time it has left: force frees it) or `changed` (the row is no longer what
/// the page showed: another holder, or none).
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
            format!(
                "{} is not a node ID",
                super::api::shown(&body.node, super::api::ECHO_MAX)
            ),
        );
    };
    let req = FreeRequest {
        namespace: &op.namespace,
        node,
        holder: body.holder.as_deref(),
        force: body.force,
    };
    match op.store.free_or_refusal(req).await {
        Ok(Ok(freed)) => Json(json!({ "message": freed.to_string() })).into_response(),
        Ok(Err(not)) => refusal(&not),
        Err(e) => failure(StatusCode::SERVICE_UNAVAILABLE, "store", e.to_string()),
    }
}

/// A 409 for a free the store refused.
fn refusal(not: &NotFreed) -> Response {
    let errors = vec![InputError {
        input: "free".into(),
        message: not.to_string(),
    }];
    let body = match not {
        NotFreed::Live {
            holder,
            remaining_ms,
            ..
        } => json!({
            "errors": errors,
            "reason": "live",
            "holder": holder,
            "remaining": format!("{:.1} s", *remaining_ms as f64 / 1000.0),
        }),
        _ => json!({ "errors": errors, "reason": "changed" }),
    };
    (StatusCode::CONFLICT, Json(body)).into_response()
}
