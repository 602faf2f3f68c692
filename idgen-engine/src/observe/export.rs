//! Exporting `stats()` snapshots through the `metrics` facade (feature `metrics`).

use std::sync::Once;

use metrics::{Unit, counter, describe_counter, describe_gauge, gauge};

/// Sets the `idgen_hilo_*` metrics of `ids` (label `counter` = its counter's name) from its
/// [`stats`](crate::hilo::HiLo::stats).
///
/// ```
/// # #[cfg(feature = "hilo")]
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use idgen_engine::hilo::{HiLo, MemorySource};
///
/// let ids = HiLo::new(MemorySource::named("lines"), 100).await?;
/// ids.next_id().await?;
/// idgen_engine::observe::export_hilo(&ids); // idgen_hilo_ids_issued_total{counter="lines"} 1, …
/// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
/// ```
#[cfg(feature = "hilo")]
pub fn export_hilo(ids: &crate::hilo::HiLo) {
    describe_metrics();
    let stats = ids.stats();
    let labels = [("counter", stats.counter.clone())];
    counter!("idgen_hilo_ids_issued_total", &labels).absolute(stats.ids_issued);
    counter!("idgen_hilo_blocks_fetched_total", &labels).absolute(stats.blocks_fetched);
    counter!("idgen_hilo_fetch_failures_total", &labels).absolute(stats.fetch_failures);
    counter!("idgen_hilo_caller_waits_total", &labels).absolute(stats.caller_waits);
    for (stat, latency) in [
        ("last", stats.fetch_latency_last),
        ("mean", stats.fetch_latency_mean),
        ("max", stats.fetch_latency_max),
    ] {
        let labels = [
            ("counter", stats.counter.clone()),
            ("stat", stat.to_owned()),
        ];
        gauge!("idgen_hilo_fetch_latency_seconds", &labels)
            .set(latency.unwrap_or(std::time::Duration::ZERO).as_secs_f64());
    }
    gauge!("idgen_hilo_buffered_ids", &labels).set(stats.buffered as f64);
    gauge!("idgen_hilo_block_size", &labels).set(stats.block_size as f64);
}

/// Sets the `idgen_lease_*` metrics of a lease (labels `namespace`, `node`) from its
/// [`status`](crate::lease::LeaseHandle::status), measuring validity on the system clock.
///
/// ```
/// # #[cfg(feature = "lease")]
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use idgen_engine::lease::{MemoryLeaseStore, WorkerLease};
///
/// let lease = WorkerLease::acquire(MemoryLeaseStore::new(), &idgen_core::Layout::TWITTER).await?;
/// idgen_engine::observe::export_lease(&lease.handle()); // idgen_lease_fenced{…} 0, …
/// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
/// ```
#[cfg(feature = "lease")]
pub fn export_lease(lease: &crate::lease::LeaseHandle) {
    describe_metrics();
    let status = lease.status();
    let labels = [
        ("namespace", lease.namespace().to_owned()),
        ("node", lease.node().to_string()),
    ];
    counter!("idgen_lease_renewals_total", &labels).absolute(status.renewals);
    counter!("idgen_lease_failed_renewals_total", &labels).absolute(status.failed_renewals);
    let now = idgen_core::Clock::now_ms(&idgen_core::SystemClock::new());
    let valid_for_ms = status.valid_until_ms.saturating_sub(now);
    gauge!("idgen_lease_valid_for_seconds", &labels).set(valid_for_ms as f64 / 1000.0);
    let fenced = status.lost || valid_for_ms <= 0;
    gauge!("idgen_lease_fenced", &labels).set(if fenced { 1.0 } else { 0.0 });
    gauge!("idgen_lease_lost", &labels).set(if status.lost { 1.0 } else { 0.0 });
}

/// Describes every idgen metric (`idgen_snowflake_*`, `idgen_hilo_*`, `idgen_lease_*`: meaning
/// and unit, which a Prometheus exporter writes as `# HELP` lines), once per process; the
/// `export_*` functions call it. Descriptions go to the recorder installed at the time of the
/// first call.
///
/// ```
/// idgen_engine::observe::describe_metrics();
/// ```
pub fn describe_metrics() {
    static ONCE: Once = Once::new();
    idgen_core::observe::describe_snowflake_metrics();
    ONCE.call_once(|| {
        for (name, help) in [
            (
                "idgen_hilo_ids_issued_total",
                "IDs handed out by the hi-lo generator.",
            ),
            (
                "idgen_hilo_blocks_fetched_total",
                "Blocks of IDs fetched from the counter.",
            ),
            (
                "idgen_hilo_fetch_failures_total",
                "Block fetches that failed (each is retried with backoff).",
            ),
            (
                "idgen_hilo_caller_waits_total",
                "Calls that found no ID buffered and waited for a block.",
            ),
            (
                "idgen_lease_renewals_total",
                "Renewals of the node ID lease that the store accepted.",
            ),
            (
                "idgen_lease_failed_renewals_total",
                "Renewals of the node ID lease that failed (store unreachable or erroring).",
            ),
        ] {
            describe_counter!(name, Unit::Count, help);
        }
        describe_gauge!(
            "idgen_hilo_fetch_latency_seconds",
            Unit::Seconds,
            "Time one block fetch took (label stat: last, mean, max), in seconds."
        );
        describe_gauge!(
            "idgen_hilo_buffered_ids",
            Unit::Count,
            "IDs fetched and not handed out yet."
        );
        describe_gauge!(
            "idgen_hilo_block_size",
            Unit::Count,
            "IDs per block fetched from the counter."
        );
        describe_gauge!(
            "idgen_lease_valid_for_seconds",
            Unit::Seconds,
            "Seconds until the lease's fence closes unless it is renewed (0 or less: fenced)."
        );
        describe_gauge!(
            "idgen_lease_fenced",
            "1 when the generator on this lease refuses to issue (expired or lost), else 0."
        );
        describe_gauge!(
            "idgen_lease_lost",
            "1 when the store gave this node ID to another holder, else 0."
        );
    });
}
