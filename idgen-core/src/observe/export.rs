//! Exporting `stats()` snapshots through the `metrics` facade (feature `metrics`).

use std::sync::Once;

use metrics::{Unit, counter, describe_counter, describe_gauge, gauge};

use crate::clock::Clock;
use crate::snowflake::Snowflake;

/// Sets the `idgen_snowflake_*` metrics of `ids` (label `generator` = `name`) from its
/// [`stats`](Snowflake::stats). Call it when metrics are read (a scrape) or on a timer; it
/// never touches the per-ID path.
///
/// ```
/// use idgen_core::{Layout, Snowflake};
///
/// let ids = Snowflake::new(Layout::TWITTER, 7)?;
/// ids.next_id()?;
/// // With a recorder installed (e.g. metrics-exporter-prometheus), this sets
/// // idgen_snowflake_ids_issued_total{generator="orders"} 1, and the others.
/// idgen_core::observe::export_snowflake("orders", &ids);
/// # Ok::<(), idgen_core::Error>(())
/// ```
pub fn export_snowflake<C: Clock>(name: &str, ids: &Snowflake<C>) {
    describe_snowflake_metrics();
    let stats = ids.stats();
    let labels = [("generator", name.to_owned())];
    counter!("idgen_snowflake_ids_issued_total", &labels).absolute(stats.ids_issued);
    counter!("idgen_snowflake_exhaustion_waits_total", &labels).absolute(stats.exhaustion_waits);
    counter!("idgen_snowflake_clock_backwards_total", &labels).absolute(stats.backwards_steps);
    gauge!("idgen_snowflake_clock_backwards_max_seconds", &labels)
        .set(stats.max_backwards.as_secs_f64());
    gauge!("idgen_snowflake_waited_seconds", &labels).set(stats.waited.as_secs_f64());
}

/// Describes the `idgen_snowflake_*` metrics (meaning and unit: a Prometheus exporter writes them
/// as `# HELP` lines), once per process; [`export_snowflake`] calls it. Descriptions go to the
/// recorder installed at the time of the first call.
///
/// ```
/// idgen_core::observe::describe_snowflake_metrics();
/// ```
pub fn describe_snowflake_metrics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        describe_counter!(
            "idgen_snowflake_ids_issued_total",
            Unit::Count,
            "Snowflake IDs issued by the generator since it was made."
        );
        describe_counter!(
            "idgen_snowflake_exhaustion_waits_total",
            Unit::Count,
            "Times a caller waited for the next tick because the tick's sequence numbers were used up."
        );
        describe_counter!(
            "idgen_snowflake_clock_backwards_total",
            Unit::Count,
            "Times the clock was found behind the last tick issued (a step back of the wall clock)."
        );
        describe_gauge!(
            "idgen_snowflake_clock_backwards_max_seconds",
            Unit::Seconds,
            "The largest step back of the clock seen, in seconds."
        );
        describe_gauge!(
            "idgen_snowflake_waited_seconds",
            Unit::Seconds,
            "Total time callers waited (used-up ticks, or a clock behind under the Wait policy), in seconds."
        );
    });
}
