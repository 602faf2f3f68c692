//! The `diesel_orders` example (examples/diesel_orders.rs) runs twice on each database, from an
//! empty one and again on what its first run left, so it cannot rot.

#[allow(dead_code, unreachable_pub)] // `main` is not called here; `pub` is for the example binary
#[path = "../examples/diesel_orders.rs"]
mod orders;

idgen_testkit::orders_example_suite!(orders);
