//! How writers read their new row's key back, and which of those ways a Snowflake adoption
//! with the database-side generator keeps, per database and key source ([`KeyReadback`]).

use idgen_sql::{Dialect, Server, Session};

use crate::error::AdoptError;
use crate::facts::KeySource;
use crate::options::{AdoptOptions, Target};

/// One way writers read the key of the row they just inserted, and whether it still gives
/// the row's key once the database-side generator makes the keys: part of an
/// [`AdoptionPlan`](super::AdoptionPlan). `apply` refuses a plan with a means not kept unless
/// [`AdoptOptions::accept_lost_key_readback`] acknowledges it.
///
/// ```
/// # fn show(plan: &idgen_adopt::AdoptionPlan) {
/// for r in &plan.key_readback {
///     println!("{}: {} ({})", r.means, if r.kept { "kept" } else { "NOT kept" }, r.how);
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeyReadback {
    /// The means (`INSERT … RETURNING`, `lastval()`, `LAST_INSERT_ID()`, …).
    pub means: String,
    /// Whether it gives the row's key after the switch.
    pub kept: bool,
    /// How it is kept, or what it gives instead.
    pub how: String,
}

fn means(means: &str, kept: bool, how: &str) -> KeyReadback {
    KeyReadback {
        means: means.to_owned(),
        kept,
        how: how.to_owned(),
    }
}

/// The server's name and version, for the plan and the refusal (`PostgreSQL 15.18`,
/// `MariaDB 10.11.19`).
pub(super) async fn server<S: Session>(session: &mut S) -> Result<String, AdoptError> {
    Server::read(session)
        .await
        .map(|server| server.describe())
        .map_err(|e| AdoptError::Database {
            table: String::new(),
            operation: "read the server's version".into(),
            source: std::sync::Arc::new(e),
        })
}

/// The means writers may use today and what the adoption does to each (empty when the
/// adoption leaves the key's default alone: hi-lo, keys kept, or keys the application gives).
pub(super) fn analyse(
    dialect: Dialect,
    options: &AdoptOptions,
    source: &KeySource,
    column: &str,
) -> Vec<KeyReadback> {
    let Target::Snowflake {
        generator: Some(_), ..
    } = &options.target
    else {
        return Vec::new();
    };
    let table = options.table.as_str();
    let returning = means(
        "INSERT … RETURNING",
        true,
        "the default (or trigger) sets the key before the row is written",
    );
    match (dialect, source) {
        (Dialect::Postgres, _) => {
            let mut all = vec![
                returning,
                means(
                    "lastval()",
                    true,
                    "the default records each key in the column's key sequence after the generator ran, so it is the session's last nextval",
                ),
                means(
                    &format!("currval(pg_get_serial_sequence('{table}', '{column}'))"),
                    true,
                    "the key sequence is owned by the column, so pg_get_serial_sequence names it, and the default sets it to each key",
                ),
            ];
            if let KeySource::SequenceDefault(s) = source {
                all.push(means(
                    &format!("currval('{s}') by the old sequence's name"),
                    false,
                    "the old sequence is kept (and no longer owned by the column) but gives no new key; read currval(pg_get_serial_sequence(…)) or use RETURNING",
                ));
            }
            all
        }
        (Dialect::MySql, KeySource::AutoIncrement) => vec![
            returning,
            means(
                "the OK packet's insert id (sqlx last_insert_id(), sea-orm insert, JDBC getGeneratedKeys)",
                true,
                "AUTO_INCREMENT stays; the trigger gives the statement's first row its key as the generated value (SET insert_id)",
            ),
            means(
                "SELECT LAST_INSERT_ID() (diesel, PHP, hand-written SQL)",
                true,
                "the same generated value; after a multi-row insert, the first row's key",
            ),
            means(
                "consecutive keys of a multi-row INSERT (LAST_INSERT_ID() + n, as GORM computes them)",
                false,
                "rows after a statement's first get their own IDs from the generator, not the next integers",
            ),
            means(
                "LAST_INSERT_ID() in a session with a fixed timestamp (SET timestamp = …)",
                false,
                "a statement at the same fixed time after a failed or another table's insert gets its key directly, and LAST_INSERT_ID() is left as it was",
            ),
        ],
        (Dialect::MySql, KeySource::SequenceDefault(s)) => vec![
            returning,
            means(
                &format!("LASTVAL({s}) / PREVIOUS VALUE FOR {s}"),
                false,
                "the trigger sets the key; the sequence is no longer read, so it gives the session's last value of it",
            ),
        ],
        (Dialect::MySql, _) => vec![returning],
        (Dialect::Sqlite, _) => Vec::new(),
    }
}
