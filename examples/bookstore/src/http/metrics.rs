//! `GET /metrics`: idgen's metrics in Prometheus text (`idgen_snowflake_*`, `idgen_hilo_*`,
//! `idgen_lease_*`; the names are listed in `idgen_core::observe`). Not part of the OpenAPI
//! document: it is for the operator's scraper, not the API's clients.

use std::sync::{Arc, OnceLock};

use axum::extract::State;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

use crate::instance::Instance;

/// The Prometheus recorder of this process: installed as the global `metrics` recorder on first
/// use (unless the program installed another one).
fn prometheus() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        let _ = metrics::set_global_recorder(recorder);
        handle
    })
}

/// Exports the instance's `stats()` snapshots, then renders every metric.
pub(super) async fn text(State(instance): State<Arc<Instance>>) -> String {
    let handle = prometheus();
    instance.export_metrics();
    handle.render()
}
