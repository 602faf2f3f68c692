//! [`install`] and [`uninstall`]: the installer, once, over any adapter's [`Session`], on one
//! connection (a pool of one is enough).

use std::sync::Arc;

use idgen_engine::Error;
use idgen_engine::lease::{BoxError, ClaimRequest, RenewRequest};

use super::{DATABASE_LEASE_TTL, DbGenerator, Host, StateRow, mysql, postgres};
use crate::dialect::Dialect;
use crate::lease::LeaseSql;
use crate::procedure;
use crate::session::Session;
use crate::statement::{Statement, Value};

/// The installers' session lock on PostgreSQL, `"idgenGEN"` in ASCII.
const PG_LOCK_KEY: i64 = 0x6964_6765_6e47_454e;
/// The installers' named lock on MariaDB, and how long an installer waits for it (seconds).
const MARIADB_LOCK: &str = "idgen_db_generator";
const MARIADB_LOCK_WAIT_S: i64 = 60;
/// Separates the state row's columns in the one text the installer reads.
const UNIT_SEPARATOR: char = '\u{1f}';

/// Installs `generator`'s function on the session's database (idempotent), on that one
/// connection: creates the lease table, the state table, the function's sequences and helpers
/// if missing, gives the database a node ID from the lease table (keeping the one it holds on a
/// second install), and creates or replaces the function and its fence. Returns the node ID.
///
/// Installs from several processes at once are serialised by a lock (`pg_advisory_lock`,
/// `GET_LOCK`) and end with one node ID. The lock belongs to the connection: an adapter closes
/// the connection if the install is cancelled, so the lock never goes back to a pool. On MariaDB
/// a fresh install recreates the sequences: install at deployment, not under load.
///
/// # Errors
///
/// [`Error::InvalidOptions`] when the function was installed with another layout, lease table
/// or namespace (naming both; uninstall it with its old options first), or for SQLite;
/// [`Error::NoFreeNode`] when every node ID is leased; [`Error::LeaseStore`] when the claim
/// failed; [`Error::DbGenerator`] with the database's error.
///
/// # Examples
///
/// Adapters call it on a connection of their pool (`idgen_sqlx::db_generator::install`); the
/// test suites run it against real servers.
///
/// ```no_run
/// # async fn demo<S: idgen_sql::Session>(session: &mut S) -> Result<(), idgen_engine::Error> {
/// use idgen_sql::db_generator::{install, DbGenerator};
/// let node = install(session, &DbGenerator::new(idgen_core::Layout::TWITTER)).await?;
/// # let _ = node; Ok(()) }
/// ```
pub async fn install<S: Session>(session: &mut S, generator: &DbGenerator) -> Result<u64, Error> {
    let host = Host::of(session.dialect())?;
    let run = Runner { generator, host };
    let lease_sql = LeaseSql::new(session.dialect(), generator.lease_table.as_str())?;
    procedure::create_table(session, &lease_sql)
        .await
        .map_err(|e| store_error("create", e))?;
    run.lock(session).await?;
    let node = run.install_locked(session, &lease_sql).await?;
    run.unlock(session).await?;
    Ok(node)
}

/// Gives `generator`'s node ID back to the lease table with the last timestamp it issued (so
/// the next holder never issues at or below it), then drops the function, its fence, helpers
/// and sequences, and deletes its state row, on that one connection. Nothing to do if it is
/// not installed. On PostgreSQL, drop column defaults that call the function first.
///
/// The node ID is given back first: if that fails, nothing has changed; once it is given back,
/// the fence stops the function at once, whatever happens to the rest.
///
/// # Errors
///
/// [`Error::LeaseStore`] when the lease could not be released; [`Error::DbGenerator`] with the
/// database's error; [`Error::InvalidOptions`] for SQLite.
///
/// # Examples
///
/// ```no_run
/// # async fn demo<S: idgen_sql::Session>(session: &mut S) -> Result<(), idgen_engine::Error> {
/// use idgen_sql::db_generator::{uninstall, DbGenerator};
/// uninstall(session, &DbGenerator::new(idgen_core::Layout::TWITTER)).await?;
/// # Ok(()) }
/// ```
pub async fn uninstall<S: Session>(session: &mut S, generator: &DbGenerator) -> Result<(), Error> {
    let host = Host::of(session.dialect())?;
    let run = Runner { generator, host };
    run.lock(session).await?;
    // The state table may not exist (never installed): create it, so the read finds no row.
    run.execute(session, generator.state_table_sql(host), "uninstall")
        .await?;
    if let Some(upgrade) = generator.state_table_upgrade_sql(host) {
        run.execute(session, upgrade, "uninstall").await?;
    }
    if let Some(state) = run.read_state(session).await? {
        let table = state
            .lease_table
            .clone()
            .unwrap_or_else(|| generator.lease_table_name());
        let lease_sql = LeaseSql::new(session.dialect(), &table)?;
        let last_word = run.last_word(session).await?;
        procedure::release(
            session,
            &lease_sql,
            RenewRequest {
                namespace: &state.namespace,
                node: state.node,
                holder: &state.holder,
                ttl: std::time::Duration::ZERO,
                last_timestamp_ms: last_word.and_then(|w| generator.last_timestamp_ms(w)),
            },
        )
        .await
        .map_err(|e| store_error("release", e))?;
    }
    for statement in generator.drop_sql(session.dialect())? {
        run.execute(session, statement, "uninstall").await?;
    }
    let delete = format!(
        "DELETE FROM {} WHERE name = {}",
        generator.state_table.quoted_with(host.quote()),
        session.dialect().param(1)
    );
    run.execute_with(
        session,
        delete,
        vec![Value::Text(generator.function.as_str())],
        "uninstall",
    )
    .await?;
    run.unlock(session).await
}

/// The installer's steps on one session.
struct Runner<'g> {
    generator: &'g DbGenerator,
    host: Host,
}

impl Runner<'_> {
    fn failed<E: std::error::Error + Send + Sync + 'static>(
        &self,
        operation: &'static str,
    ) -> impl Fn(E) -> Error + '_ {
        move |err| Error::DbGenerator {
            function: self.generator.function_name(),
            operation,
            source: Arc::new(err),
        }
    }

    async fn execute<S: Session>(
        &self,
        session: &mut S,
        sql: String,
        operation: &'static str,
    ) -> Result<(), Error> {
        self.execute_with(session, sql, Vec::new(), operation).await
    }

    async fn execute_with<S: Session>(
        &self,
        session: &mut S,
        sql: String,
        params: Vec<Value<'_>>,
        operation: &'static str,
    ) -> Result<(), Error> {
        session
            .execute(Statement::new(sql, params))
            .await
            .map(drop)
            .map_err(self.failed(operation))
    }

    async fn lock<S: Session>(&self, session: &mut S) -> Result<(), Error> {
        match self.host {
            Host::Postgres => {
                let sql = format!("SELECT pg_advisory_lock({PG_LOCK_KEY})");
                self.execute(session, sql, "take the installers' lock")
                    .await
            }
            Host::MariaDb => {
                let sql = format!("SELECT GET_LOCK('{MARIADB_LOCK}', {MARIADB_LOCK_WAIT_S})");
                let got = session
                    .fetch_i64(Statement::new(sql, Vec::new()))
                    .await
                    .map_err(self.failed("take the installers' lock"))?;
                match got {
                    Some(1) => Ok(()),
                    _ => Err(Error::InvalidOptions {
                        reason: format!(
                            "GET_LOCK('{MARIADB_LOCK}') was not granted within {MARIADB_LOCK_WAIT_S} s: another installer holds it"
                        ),
                    }),
                }
            }
        }
    }

    async fn unlock<S: Session>(&self, session: &mut S) -> Result<(), Error> {
        let sql = match self.host {
            Host::Postgres => format!("SELECT pg_advisory_unlock({PG_LOCK_KEY})"),
            Host::MariaDb => format!("SELECT RELEASE_LOCK('{MARIADB_LOCK}')"),
        };
        self.execute(session, sql, "give the installers' lock back")
            .await
    }

    /// The function's state row, if any.
    async fn read_state<S: Session>(&self, session: &mut S) -> Result<Option<StateRow>, Error> {
        let dialect = session.dialect();
        let table = self.generator.state_table.quoted_with(self.host.quote());
        let columns = match self.host {
            Host::Postgres => {
                "concat_ws(chr(31), layout, namespace, node::text, holder, coalesce(lease_table, ''))"
            }
            Host::MariaDb => {
                "CONCAT_WS(CHAR(31), layout, namespace, node, holder, COALESCE(lease_table, ''))"
            }
        };
        let sql = format!(
            "SELECT {columns} FROM {table} WHERE name = {}",
            dialect.param(1)
        );
        let text = session
            .fetch_text(Statement::new(
                sql,
                vec![Value::Text(self.generator.function.as_str())],
            ))
            .await
            .map_err(self.failed("read its state"))?;
        let Some(text) = text else { return Ok(None) };
        let parts: Vec<&str> = text.split(UNIT_SEPARATOR).collect();
        match parts[..] {
            [layout, namespace, node, holder, lease_table] => Ok(Some(StateRow {
                layout: layout.to_owned(),
                lease_table: (!lease_table.is_empty()).then(|| lease_table.to_owned()),
                namespace: namespace.to_owned(),
                node: node.parse().map_err(|_| Error::InvalidOptions {
                    reason: format!("node ID {node:?} in the state table {table} is not a node ID"),
                })?,
                holder: holder.to_owned(),
            })),
            _ => Err(Error::InvalidOptions {
                reason: format!(
                    "the state row of {} in {table} is damaged: {text:?}",
                    self.generator.function_name()
                ),
            }),
        }
    }

    /// The last word the function drew, `None` when it never did or is fenced.
    async fn last_word<S: Session>(&self, session: &mut S) -> Result<Option<i64>, Error> {
        let sql = match self.host {
            Host::Postgres => postgres::last_word_sql(self.generator),
            Host::MariaDb => mysql::last_word_sql(self.generator),
        };
        session
            .fetch_i64(Statement::new(sql, Vec::new()))
            .await
            .map_err(self.failed("read its sequences"))
    }

    /// Makes the next word drawn `word` or above, and above every word drawn so far.
    async fn start_at<S: Session>(&self, session: &mut S, word: i64) -> Result<(), Error> {
        let g = self.generator;
        let word = word.max(recent_word(g));
        match self.host {
            Host::Postgres => {
                self.execute(session, postgres::start_at_sql(g, word), "install")
                    .await
            }
            Host::MariaDb => {
                // Fence first, so no call draws while the sequences are read and recreated.
                self.execute(session, mysql::fence_now_sql(g), "install")
                    .await?;
                let bound = session
                    .fetch_i64(Statement::new(mysql::bound_sql(g), Vec::new()))
                    .await
                    .map_err(self.failed("read its sequences"))?;
                let word = bound.map_or(word, |b| word.max(b.saturating_add(1)));
                for sql in mysql::start_at_sql(g, word) {
                    self.execute(session, sql, "install").await?;
                }
                Ok(())
            }
        }
    }

    async fn install_locked<S: Session>(
        &self,
        session: &mut S,
        lease_sql: &LeaseSql,
    ) -> Result<u64, Error> {
        let g = self.generator;
        let dialect: Dialect = session.dialect();
        for sql in g.migration_sql(dialect)? {
            self.execute(session, sql, "install").await?;
        }
        let key = g.function_name();
        let holder = g.holder();
        let namespace = g.lease_namespace();
        let table = g.lease_table_name();
        let state = self.read_state(session).await?;
        if let Some(s) = &state {
            let theirs = (
                &s.layout,
                s.lease_table.as_deref().unwrap_or(&table),
                s.namespace.as_str(),
            );
            let ours = (&g.layout_key(), table.as_str(), namespace);
            if theirs != ours {
                return Err(Error::InvalidOptions {
                    reason: format!(
                        "the database generator {key} is installed with layout {:?}, lease table {:?}, namespace {:?} (node ID {}), \
                         not layout {:?}, lease table {:?}, namespace {:?}: uninstall it with its own options first",
                        theirs.0, theirs.1, theirs.2, s.node, ours.0, ours.1, ours.2
                    ),
                });
            }
        }
        // The namespace keeps the layout it was first used with, by applications or by us.
        let requested = g.layout_key();
        let recorded = procedure::record_layout(session, lease_sql, namespace, &requested)
            .await
            .map_err(|e| store_error("record the layout", e))?;
        if let Some(recorded) = recorded.filter(|recorded| *recorded != requested) {
            return Err(Error::LayoutMismatch {
                namespace: namespace.to_owned(),
                recorded,
                requested,
            });
        }
        let rows = procedure::rows(session, lease_sql, namespace)
            .await
            .map_err(|e| store_error("read rows", e))?;
        let held = |node: Option<u64>| {
            rows.iter().find(|r| {
                r.holder.as_deref() == Some(holder.as_str()) && node.is_none_or(|n| n == r.node)
            })
        };
        let last_word = self.last_word(session).await?;
        let node = match state.as_ref().and_then(|s| held(Some(s.node))) {
            // Installed, and its lease is still held: keep node and sequences (calls may be
            // running), unless they are fenced or new (an upgrade from the row-locking design).
            Some(row) => {
                if last_word.is_none() {
                    self.start_at(
                        session,
                        g.initial_word(row.last_timestamp_ms)?.saturating_add(1),
                    )
                    .await?;
                }
                row.node
            }
            None => {
                // A lease row left under our label (an install that failed after its claim) is
                // taken back; otherwise the claim procedure of every WorkerLease.
                let (node, last_timestamp_ms) = match held(None) {
                    Some(row) => (row.node, row.last_timestamp_ms),
                    None => {
                        let claim = procedure::claim(
                            session,
                            lease_sql,
                            ClaimRequest {
                                namespace,
                                capacity: g.layout().node_capacity(),
                                holder: &holder,
                                ttl: DATABASE_LEASE_TTL,
                            },
                        )
                        .await
                        .map_err(|e| store_error("claim", e))?
                        .ok_or_else(|| Error::NoFreeNode {
                            namespace: namespace.to_owned(),
                            capacity: g.layout().node_capacity(),
                        })?;
                        (claim.node, claim.last_timestamp_ms)
                    }
                };
                self.start_at(
                    session,
                    g.initial_word(last_timestamp_ms)?.saturating_add(1),
                )
                .await?;
                let upsert = self.upsert_state_sql(dialect);
                let layout_key = g.layout_key();
                let params = vec![
                    Value::Text(g.function.as_str()),
                    Value::Text(&layout_key),
                    Value::Text(namespace),
                    Value::BigInt(i64::try_from(node).unwrap_or(i64::MAX)),
                    Value::Text(&holder),
                    Value::Text(&table),
                ];
                self.execute_with(session, upsert, params, "install")
                    .await?;
                node
            }
        };
        let mut statements = vec![g.function_sql(dialect, node)?];
        statements.extend(g.fence_sql(dialect, node)?);
        for sql in statements {
            self.execute(session, sql, "install").await?;
        }
        Ok(node)
    }

    /// Writes the state row. Parameters: name, layout, namespace, node, holder, lease table.
    fn upsert_state_sql(&self, dialect: Dialect) -> String {
        let t = self.generator.state_table.quoted_with(self.host.quote());
        let p: Vec<String> = (1..=6).map(|n| dialect.param(n)).collect();
        let cols = ["layout", "namespace", "node", "holder", "lease_table"];
        let update = match self.host {
            Host::Postgres => format!(
                "ON CONFLICT (name) DO UPDATE SET {}",
                cols.map(|c| format!("{c} = EXCLUDED.{c}")).join(", ")
            ),
            Host::MariaDb => format!(
                "ON DUPLICATE KEY UPDATE {}",
                cols.map(|c| format!("{c} = VALUES({c})")).join(", ")
            ),
        };
        format!(
            "INSERT INTO {t} (name, layout, namespace, node, holder, lease_table, last_word) VALUES ({}, 0) {update}",
            p.join(", ")
        )
    }
}

/// How far behind this host's clock a new generator starts: a little, so that a database clock
/// a little behind this host's is not behind the first word; its first call then jumps over
/// at most this gap (on MariaDB, about one `NEXTVAL` per tick of it).
const START_BEHIND_MS: i64 = 20_000;

/// The first word of the tick [`START_BEHIND_MS`] before now on this host's clock, or 0 (before
/// the layout's epoch, or a clock before 1970). Starting there instead of at tick 0 spares the
/// first call a jump over the whole time since the epoch. Any start is safe: words only need to
/// be above the earlier holders' (`start_at` takes the larger).
fn recent_word(g: &DbGenerator) -> i64 {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    g.layout()
        .ticks_at(now_ms.saturating_sub(START_BEHIND_MS))
        .ok()
        .and_then(|tick| i64::try_from(tick << g.layout().sequence_bits()).ok())
        .unwrap_or(0)
}

fn store_error(operation: &'static str, err: BoxError) -> Error {
    Error::LeaseStore {
        operation,
        message: err.to_string(),
        source: Some(Arc::from(err)),
    }
}
