//! Hi-lo over diesel (feature `hilo`): blocks of IDs from one central database counter, handed
//! out from memory. The engine is [`idgen_engine::hilo`] (re-exported here); this module gives
//! it [`DieselCounter`], a counter over an r2d2 pool of diesel connections with **idgen-sqlx's
//! SQL and semantics**, so diesel and sqlx processes can share one counter.
//!
//! `HiLo::new(&pool, 1000)` reads as with sqlx: the counter `hilo`
//! ([`DEFAULT_COUNTER`]); `HiLo::builder(&pool).counter("orders")` names another.
//!
//! # Semantics
//!
//! **pooled-lo**: a counter value `v` is the block `[v, v + block)`. IDs are unique across
//! every process sharing the counter, increase within one `HiLo`, and interleave with gaps
//! across processes and restarts. At start-up the sequence's increment is read from the catalog
//! and a sequence whose increment differs from the block size is refused with
//! [`ErrorKind::HiLoIncrementMismatch`](idgen_engine::ErrorKind::HiLoIncrementMismatch) naming both numbers.
//! Every allocation is one statement on the counter's own connection (on MySQL/MariaDB in an
//! explicit transaction of its own, so it commits whatever the connection's autocommit
//! setting, which idgen does not change).
//!
//! | database | counter | one allocation | increment read from |
//! |---|---|---|---|
//! | PostgreSQL | `SEQUENCE` *name* `INCREMENT BY` block | `SELECT nextval('name')` | `pg_catalog.pg_sequence` |
//! | MariaDB ≥ 10.3 | `SEQUENCE` *name* `INCREMENT BY` block | `SELECT NEXTVAL(name)` | `SELECT increment FROM name` |
//! | MySQL, older MariaDB | row *name* of `idgen_hilo` | `UPDATE idgen_hilo SET next_val = LAST_INSERT_ID(next_val + ?) WHERE name = ?` | any step per call |
//! | SQLite | row *name* of `idgen_hilo` | `UPDATE idgen_hilo SET next_val = next_val + ?1 WHERE name = ?2 RETURNING next_val - ?1` | any step per call |
//!
//! # Migrations
//!
//! [`DieselCounter::create`] runs idempotent DDL, safe for instances that start together (on
//! PostgreSQL after idgen's advisory lock); for diesel migrations put the SQL in an `up.sql`
//! ([`DieselCounter::migration_sql`] returns it). For the counter `orders`, block 1000:
//!
//! PostgreSQL:
//! ```sql
//! CREATE SEQUENCE IF NOT EXISTS orders AS BIGINT INCREMENT BY 1000 MINVALUE 1 START WITH 1 CACHE 1 NO CYCLE
//! ```
//! MariaDB ≥ 10.3:
//! ```sql
//! CREATE SEQUENCE IF NOT EXISTS orders START WITH 1 MINVALUE 1 INCREMENT BY 1000 NOCACHE NOCYCLE
//! ```
//! MySQL:
//! ```sql
//! CREATE TABLE IF NOT EXISTS idgen_hilo (
//!     name     VARCHAR(255) NOT NULL PRIMARY KEY,
//!     next_val BIGINT       NOT NULL
//! ) ENGINE = InnoDB;
//! INSERT IGNORE INTO idgen_hilo (name, next_val) VALUES ('orders', 1);
//! ```
//! SQLite:
//! ```sql
//! CREATE TABLE IF NOT EXISTS idgen_hilo (
//!     name     TEXT    NOT NULL PRIMARY KEY,
//!     next_val INTEGER NOT NULL
//! );
//! INSERT OR IGNORE INTO idgen_hilo (name, next_val) VALUES ('orders', 1);
//! ```

#[cfg(feature = "async")]
mod async_source;
mod source;

pub use crate::markers::*;
#[cfg(feature = "async")]
#[cfg_attr(docsrs, doc(cfg(feature = "async")))]
pub use async_source::{AsyncCounterConnection, AsyncDieselCounter};
pub use idgen_engine::hilo::*;
pub use idgen_sql::{CounterMode, block_on};
pub use source::{CounterConnection, DEFAULT_TABLE, DieselCounter};
