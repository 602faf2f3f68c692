//! # idgen-testkit
//!
//! The conformance suites of idgen: what every lease store and hi-lo source must do, written
//! once. An adapter's test file describes its stores and sources per database and instantiates
//! the suites with [`lease_suite!`], [`hilo_suite!`], [`startup_suite!`] and
//! [`cross_adapter_suite!`]; they run on real servers from `idgen-testdb`, which is re-exported
//! here whole (`idgen_testkit::postgres()`, [`TestDb`], …). (Not published; a dev-dependency of
//! the idgen crates.)
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let db = idgen_testkit::postgres().await?; // a fresh database of its own
//! sqlx::query("CREATE TABLE t (id BIGINT PRIMARY KEY)").execute(db.pool()).await?;
//! # Ok(()) }
//! ```

pub mod conformance;
#[doc(hidden)]
pub mod orders_example;

pub use idgen_testdb::*;

/// idgen-core, for the macros' expansions.
#[doc(hidden)]
pub use idgen_core as __idgen_core;
/// idgen-engine, for the macros' expansions.
#[doc(hidden)]
pub use idgen_engine as __idgen_engine;
/// idgen-testdb, for the macros' expansions.
#[doc(hidden)]
pub use idgen_testdb as __idgen_testdb;
