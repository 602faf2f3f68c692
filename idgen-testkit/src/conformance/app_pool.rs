//! The application's pool of a case ([`AppPool`]), as an adapter's test opens it, and how it
//! is made ([`AppPoolSpec`]).

use std::future::Future;
use std::pin::Pin;

use idgen_engine::hilo::BoxError;

/// A boxed future of an [`AppPool`] method.
pub type AppFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, BoxError>> + Send + 'a>>;

/// How the application's pool of a case is made: `size` connections at most, each running
/// `on_connect` (one statement) when it is opened, as an `after_connect` hook (sqlx), a
/// connection customizer (r2d2) or a custom setup (diesel-async) would.
///
/// ```
/// use idgen_testkit::conformance::AppPoolSpec;
/// let spec = AppPoolSpec { size: 2, on_connect: Some("SET autocommit = 0") };
/// assert_eq!(spec.size, 2);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct AppPoolSpec {
    /// The pool's size.
    pub size: u32,
    /// A statement run on each new connection.
    pub on_connect: Option<&'static str>,
}

/// The application's pool a store or source was made on, as an adapter's test opens it: what
/// the cases run on each of its connections.
pub trait AppPool: Send + Sync {
    /// Takes every connection of the pool at once (so each is a different one; the pool is
    /// filled up to its size), runs `sql` on each, and gives them back: the `BIGINT` column
    /// `value` of the first row per connection (`None` without a row).
    fn scalar_each<'a>(&'a self, sql: &'a str) -> AppFuture<'a, Vec<Option<i64>>>;
    /// Takes every connection at once and runs `sql` (one statement without a result) on each.
    fn execute_each<'a>(&'a self, sql: &'a str) -> AppFuture<'a, ()>;
}
