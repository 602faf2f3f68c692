//! The `sqlx_orders` example (examples/sqlx_orders.rs) runs twice on each database, from an
//! empty one and again on what its first run left, so it cannot rot.

#[allow(dead_code, unreachable_pub)] // `main` is not called here; `pub` is for the example binary
#[path = "../examples/sqlx_orders.rs"]
mod orders;

idgen_testkit::orders_example_suite!(orders);
