//! [`install`] and [`uninstall`]: the installer, once, over any adapter's [`Session`], on one
//! connection (a pool of one is enough).

use std::sync::Arc;

use idgen_engine::lease::{ClaimRequest, RenewRequest};
use idgen_engine::{Error, ErrorKind};
use idgen_sql::{Dialect, LeaseSql, Session, Statement, Value, procedure};

use super::{DATABASE_LEASE_TTL, DbGenerator, Host, StateRow, mysql, postgres, random_install_id};

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
/// The install has an identity of its own (see [`DbGenerator::install_id`]) and names every
/// object with the schema it resolves from the session (see the [crate
/// documentation](crate)). When its claim cannot prove that the node ID was given back (a
/// fresh row, or a lease taken over after it expired), it follows the applications' takeover
/// rule: it returns once the database's clock has passed the claim time + TTL + allowance
/// ([`DbGenerator::takeover_wait`], default 31 s), and the function issues nothing below that.
///
/// Installs from several processes at once are serialised by a lock (`pg_advisory_lock`,
/// `GET_LOCK`) and end with one node ID. The lock belongs to the connection: an adapter closes
/// the connection if the install is cancelled, so the lock never goes back to a pool. On MariaDB
/// a fresh install recreates the sequences: install at deployment, not under load.
///
/// # Errors
///
/// [`ErrorKind::InvalidOptions`] when the function was installed with another layout, lease table
/// or namespace (naming both; uninstall it with its old options first), or for SQLite;
/// [`ErrorKind::NoFreeNode`] when every node ID is leased; [`ErrorKind::LeaseStore`] when the claim
/// failed; [`ErrorKind::DbGenerator`] with the database's error.
///
/// # Examples
///
/// Adapters call it on a connection of their pool (`idgen_sqlx::db_generator::install`); the
/// test suites run it against real servers.
///
/// ```no_run
/// # async fn demo<S: idgen_sql::Session>(session: &mut S) -> Result<(), idgen_engine::Error> {
/// use idgen_db_generator::{install, DbGenerator};
/// let node = install(session, &DbGenerator::new(idgen_core::Layout::TWITTER)).await?;
/// # let _ = node; Ok(()) }
/// ```
pub async fn install<S: Session>(session: &mut S, generator: &DbGenerator) -> Result<u64, Error> {
    let host = Host::of(session.dialect())?;
    let key = generator.function_name();
    let generator = &resolve(session, generator, host).await?;
    let run = Runner {
        generator,
        host,
        key: &key,
    };
    let lease_sql = LeaseSql::new(session.dialect(), generator.lease_table.as_str())?;
    procedure::create_table(session, &lease_sql)
        .await
        .map_err(|e| Error::lease_store("create", e))?;
    run.lock(session).await?;
    let node = run.install_locked(session, &lease_sql).await?;
    run.unlock(session).await?;
    Ok(node)
}

/// Gives `generator`'s node ID back to the lease table with the last timestamp it issued (so
/// the next holder never issues at or below it), then drops the function, its fence, helpers
/// and sequences, and deletes its state row, on that one connection. Nothing to do if it is
/// not installed. On PostgreSQL, drop column defaults that call the function first: while one
/// does, the uninstall fails before it changes anything (its drops are tried first in a
/// transaction that is rolled back), and the function goes on issuing.
///
/// The node ID is given back before the drops: if that fails, nothing has changed; once it is
/// given back, the fence stops the function at once, whatever happens to the rest.
///
/// # Errors
///
/// [`ErrorKind::LeaseStore`] when the lease could not be released; [`ErrorKind::DbGenerator`] with the
/// database's error; [`ErrorKind::InvalidOptions`] for SQLite.
///
/// # Examples
///
/// ```no_run
/// # async fn demo<S: idgen_sql::Session>(session: &mut S) -> Result<(), idgen_engine::Error> {
/// use idgen_db_generator::{uninstall, DbGenerator};
/// uninstall(session, &DbGenerator::new(idgen_core::Layout::TWITTER)).await?;
/// # Ok(()) }
/// ```
pub async fn uninstall<S: Session>(session: &mut S, generator: &DbGenerator) -> Result<(), Error> {
    let host = Host::of(session.dialect())?;
    let key = generator.function_name();
    let resolved = resolve(session, generator, host).await?;
    let mut generator = &resolved;
    let mut run = Runner {
        generator,
        host,
        key: &key,
    };
    run.lock(session).await?;
    // The state table may not exist (never installed): create it, so the read finds no row.
    run.execute(session, generator.state_table_sql(host), "uninstall")
        .await?;
    if let Some(upgrade) = generator.state_table_upgrade_sql(host) {
        run.execute(session, upgrade, "uninstall").await?;
    }
    let identified;
    if let Some(state) = run.read_state(session).await? {
        if let Some(id) = &state.install_id {
            identified = resolved.clone().install_id(id)?;
            generator = &identified;
            run = Runner {
                generator,
                host,
                key: &key,
            };
        }
        // Nothing may change when the drop would be refused: try it first and roll it back.
        run.try_drop(session).await?;
        let table = state
            .lease_table
            .clone()
            .unwrap_or_else(|| generator.lease_table_name());
        let lease_sql = LeaseSql::new(session.dialect(), &table)?;
        // A lease table dropped meanwhile (the function then stopped itself): recreated
        // empty, as the first application would, so that the read below finds no row.
        procedure::create_table(session, &lease_sql)
            .await
            .map_err(|e| Error::lease_store("create", e))?;
        let last_word = run.last_word(session).await?;
        // Only our own row: a pending install's label may be on any node.
        let rows = procedure::rows(session, &lease_sql, &state.namespace)
            .await
            .map_err(|e| Error::lease_store("read rows", e))?;
        for row in rows
            .iter()
            .filter(|r| r.holder.as_deref() == Some(state.holder.as_str()))
        {
            procedure::release(
                session,
                &lease_sql,
                RenewRequest {
                    namespace: &state.namespace,
                    node: row.node,
                    holder: &state.holder,
                    ttl: std::time::Duration::ZERO,
                    last_timestamp_ms: last_word.and_then(|w| generator.last_timestamp_ms(w)),
                },
            )
            .await
            .map_err(|e| Error::lease_store("release", e))?;
        }
    }
    for statement in generator.drop_sql(session.dialect())? {
        run.execute(session, statement, "uninstall").await?;
    }
    let delete = format!(
        "DELETE FROM {} WHERE name = {}",
        generator.state_table.quoted_with(host.quote()),
        session.dialect().param(1)
    );
    run.execute_with(session, delete, vec![Value::Text(&key)], "uninstall")
        .await?;
    run.unlock(session).await
}

/// The installer's steps on one session.
struct Runner<'g> {
    /// With its names resolved (see [`resolve`]).
    generator: &'g DbGenerator,
    host: Host,
    /// The function's name as the caller gave it: the key of its state row.
    key: &'g str,
}

impl Runner<'_> {
    fn state_key(&self) -> String {
        self.key.to_owned()
    }

    fn failed<E: std::error::Error + Send + Sync + 'static>(
        &self,
        operation: &'static str,
    ) -> impl Fn(E) -> Error + '_ {
        move |err| {
            ErrorKind::DbGenerator {
                function: self.generator.function_name(),
                operation,
                source: Arc::new(err),
            }
            .into()
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

    /// On PostgreSQL, runs the drop statements in a transaction that is rolled back: fails
    /// (changing nothing) when objects outside the install still depend on the function or
    /// its helpers, a column default or a view, which `DROP FUNCTION` refuses to drop. So an
    /// uninstall that cannot finish fails before the node ID is given back. MariaDB tracks no
    /// such dependencies: its drops are never refused.
    async fn try_drop<S: Session>(&self, session: &mut S) -> Result<(), Error> {
        if self.host != Host::Postgres {
            return Ok(());
        }
        let rollback = || Statement::new("ROLLBACK".to_owned(), Vec::new());
        self.execute(session, "BEGIN".to_owned(), "uninstall")
            .await?;
        for statement in self.generator.drop_sql(Dialect::Postgres)? {
            if let Err(err) = session.execute(Statement::new(statement, Vec::new())).await {
                let _ = session.execute(rollback()).await;
                return Err(ErrorKind::DbGenerator {
                    function: self.generator.function_name(),
                    operation: "uninstall (refused before anything changed: drop the column defaults, views or other objects that call the function or its helpers first)",
                    source: Arc::new(err),
                }.into());
            }
        }
        session
            .execute(rollback())
            .await
            .map(drop)
            .map_err(self.failed("uninstall"))
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
                    _ => Err(ErrorKind::InvalidOptions {
                        reason: format!(
                            "GET_LOCK('{MARIADB_LOCK}') was not granted within {MARIADB_LOCK_WAIT_S} s: another installer holds it"
                        ),
                    }.into()),
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
            .fetch_text(Statement::new(sql, vec![Value::Text(&self.state_key())]))
            .await
            .map_err(self.failed("read its state"))?;
        let Some(text) = text else { return Ok(None) };
        let parts: Vec<&str> = text.split(UNIT_SEPARATOR).collect();
        match parts[..] {
            [layout, namespace, node, holder, lease_table] => Ok(Some(StateRow {
                layout: layout.to_owned(),
                lease_table: (!lease_table.is_empty()).then(|| lease_table.to_owned()),
                namespace: namespace.to_owned(),
                node: match node.parse::<i64>() {
                    Ok(PENDING) => None,
                    Ok(n) if n >= 0 => Some(n as u64),
                    _ => {
                        return Err(ErrorKind::InvalidOptions {
                            reason: format!(
                                "node ID {node:?} in the state table {table} is not a node ID"
                            ),
                        }
                        .into());
                    }
                },
                holder: holder.to_owned(),
                install_id: DbGenerator::install_id_of(holder),
            })),
            _ => Err(ErrorKind::InvalidOptions {
                reason: format!(
                    "the state row of {} in {table} is damaged: {text:?}",
                    self.generator.function_name()
                ),
            }
            .into()),
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
        self.set_increments(session).await?;
        let key = g.function_name();
        let namespace = g.lease_namespace();
        let table = g.lease_table_name();
        let state = self.read_state(session).await?;
        if let Some(s) = &state {
            // Rows written before names were resolved hold the lease table's name as given.
            let theirs = s.lease_table.as_deref().unwrap_or(&table);
            let same_table = theirs == table || table.ends_with(&format!(".{theirs}"));
            if s.layout != g.layout_key() || !same_table || s.namespace != namespace {
                return Err(ErrorKind::InvalidOptions {
                    reason: format!(
                        "the database generator {key} is installed with layout {:?}, lease table {:?}, namespace {:?} (node ID {}), \
                         not layout {:?}, lease table {:?}, namespace {:?}: uninstall it with its own options first",
                        s.layout,
                        theirs,
                        s.namespace,
                        s.node
                            .map_or_else(|| "none yet".to_owned(), |n| n.to_string()),
                        g.layout_key(),
                        table,
                        namespace
                    ),
                }.into());
            }
        }
        // The namespace keeps the layout it was first used with, by applications or by us.
        let requested = g.layout_key();
        let recorded = procedure::record_layout(session, lease_sql, namespace, &requested)
            .await
            .map_err(|e| Error::lease_store("record the layout", e))?;
        if let Some(recorded) = recorded.filter(|recorded| *recorded != requested) {
            return Err(ErrorKind::LayoutMismatch {
                namespace: namespace.to_owned(),
                recorded,
                requested,
            }
            .into());
        }
        let rows = procedure::rows(session, lease_sql, namespace)
            .await
            .map_err(|e| Error::lease_store("read rows", e))?;
        let held = |holder: &str, node: Option<u64>| {
            rows.iter()
                .find(|r| r.holder.as_deref() == Some(holder) && node.is_none_or(|n| n == r.node))
                .cloned()
        };
        let last_word = self.last_word(session).await?;
        // The install's identity: the state row's, or a new one. An install made before
        // identities keeps its label while it holds its row.
        let legacy_held = state.as_ref().is_some_and(|s| {
            s.install_id.is_none() && s.node.is_some() && held(&s.holder, s.node).is_some()
        });
        let identified;
        let g = match state.as_ref().and_then(|s| s.install_id.clone()) {
            Some(id) => {
                identified = g.clone().install_id(&id)?;
                &identified
            }
            None if legacy_held => {
                identified = g.with_legacy_holder(state.as_ref().map(|s| s.holder.clone()));
                &identified
            }
            None => {
                if state.is_some() {
                    // The old label's fence triggers go: ours are named after the new identity.
                    for sql in g.fence_drop_sql(dialect)? {
                        self.execute(session, sql, "install").await?;
                    }
                }
                identified = g.clone().install_id(&random_install_id())?;
                &identified
            }
        };
        let holder = g.holder();
        let keep = state
            .as_ref()
            .filter(|s| s.holder == holder)
            .and_then(|s| s.node.and_then(|n| held(&holder, Some(n))));
        let node = match keep {
            // Installed, and its lease is still held: keep node and sequences (calls may be
            // running), unless they are fenced (the function stopped itself: what happened to
            // the row meanwhile is unknown, so the takeover rule applies).
            Some(row) => {
                if last_word.is_none() {
                    let floor = self
                        .takeover_floor(session, lease_sql, row.last_timestamp_ms)
                        .await?;
                    self.start_at(session, g.initial_word(floor)?.saturating_add(1))
                        .await?;
                }
                row.node
            }
            None => {
                // The identity is written before the claim, so that an install that fails
                // after its claim finds its row again (and only its own).
                self.write_state(session, g, PENDING).await?;
                let (node, floor) = match held(&holder, None) {
                    Some(row) => (
                        row.node,
                        self.takeover_floor(session, lease_sql, row.last_timestamp_ms)
                            .await?,
                    ),
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
                        .map_err(|e| Error::lease_store("claim", e))?
                        .ok_or_else(|| ErrorKind::NoFreeNode {
                            namespace: namespace.to_owned(),
                            capacity: g.layout().node_capacity(),
                        })?;
                        let floor = if claim.exact {
                            claim.last_timestamp_ms
                        } else {
                            self.takeover_floor(session, lease_sql, claim.last_timestamp_ms)
                                .await?
                        };
                        (claim.node, floor)
                    }
                };
                self.start_at(session, g.initial_word(floor)?.saturating_add(1))
                    .await?;
                // Recorded once the floor is passed: an install cancelled in its wait is
                // pending, and the next one waits again.
                self.write_state(session, g, i64::try_from(node).unwrap_or(i64::MAX))
                    .await?;
                node
            }
        };
        let mut statements = g.routine_sql(dialect, node)?;
        statements.extend(g.fence_sql(dialect, node)?);
        for sql in statements {
            self.execute(session, sql, "install").await?;
        }
        Ok(node)
    }

    /// Makes the count sequence step by one block, and on MariaDB the base sequences by the
    /// jump's step (sequences kept from an install made before blocks step by 1 and by whole
    /// ticks), before the function that reserves blocks replaces the old one. The function it
    /// replaces works with any steps (its words are further apart, never repeated).
    async fn set_increments<S: Session>(&self, session: &mut S) -> Result<(), Error> {
        let (read, expected, alter) = match self.host {
            Host::Postgres => {
                let (read, expected, alter) = postgres::increment_sql(self.generator);
                (read, expected, vec![alter])
            }
            Host::MariaDb => mysql::increments_sql(self.generator),
        };
        let increments = session
            .fetch_text(Statement::new(read, Vec::new()))
            .await
            .map_err(self.failed("read its sequences"))?;
        if increments.as_deref() != Some(expected.as_str()) {
            for sql in alter {
                self.execute(session, sql, "install").await?;
            }
        }
        Ok(())
    }

    /// The takeover rule of application claims (see [`DbGenerator::takeover_wait`]): the floor
    /// below which the function must not issue, after waiting until the database's clock has
    /// passed it.
    async fn takeover_floor<S: Session>(
        &self,
        session: &mut S,
        lease_sql: &LeaseSql,
        last_timestamp_ms: Option<i64>,
    ) -> Result<Option<i64>, Error> {
        let now = procedure::now_ms(session, lease_sql)
            .await
            .map_err(|e| Error::lease_store("read the clock", e))?;
        let floor = self.generator.takeover_floor_ms(now, last_timestamp_ms);
        if let Some(floor) = floor {
            let mut now = now;
            while now <= floor {
                let left = u64::try_from(floor - now + 1).unwrap_or(1).min(1_000);
                session.pause(std::time::Duration::from_millis(left)).await;
                now = procedure::now_ms(session, lease_sql)
                    .await
                    .map_err(|e| Error::lease_store("read the clock", e))?;
            }
        }
        Ok(floor)
    }

    /// Writes the state row of `g` with `node` ([`PENDING`] before the claim).
    async fn write_state<S: Session>(
        &self,
        session: &mut S,
        g: &DbGenerator,
        node: i64,
    ) -> Result<(), Error> {
        let upsert = self.upsert_state_sql(session.dialect());
        let layout_key = g.layout_key();
        let holder = g.holder();
        let table = g.lease_table_name();
        let params = vec![
            Value::Text(self.key),
            Value::Text(&layout_key),
            Value::Text(g.lease_namespace()),
            Value::BigInt(node),
            Value::Text(&holder),
            Value::Text(&table),
        ];
        self.execute_with(session, upsert, params, "install").await
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

/// The state row's node while an install has written its identity but not finished its claim.
const PENDING: i64 = -1;

/// `generator` with every unqualified name given its schema, so that the function and its
/// triggers read the same objects from any session, whatever its search path:
///
/// - PostgreSQL: the function, its sequences, helpers and the state table go to the session's
///   `current_schema()` (where `CREATE` would put them); the lease table is the one the search
///   path finds, or, when there is none yet, `public.<name>` (where applications on the default
///   search path create and find it; `current_schema()` only without a `public` schema). A
///   shard's install under `search_path = shard_a, public` so shares `public`'s table.
/// - MariaDB: everything unqualified goes to the session's current database (`DATABASE()`).
async fn resolve<S: Session>(
    session: &mut S,
    generator: &DbGenerator,
    host: Host,
) -> Result<DbGenerator, Error> {
    let failed = |err: S::Error| ErrorKind::DbGenerator {
        function: generator.function_name(),
        operation: "resolve its schema",
        source: Arc::new(err),
    };
    let quoted_lease = generator.lease_table.quoted_with('"');
    let (sql, params) = match host {
        Host::Postgres => (
            "SELECT concat_ws(chr(31), current_schema(), coalesce(\
             (SELECT n.nspname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
              WHERE c.oid = to_regclass($1)), \
             (SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname = 'public'), current_schema()))"
                .to_owned(),
            vec![Value::Text(&quoted_lease)],
        ),
        Host::MariaDb => (
            "SELECT CONCAT_WS(CHAR(31), DATABASE(), DATABASE())".to_owned(),
            Vec::new(),
        ),
    };
    let text = session
        .fetch_text(Statement::new(sql, params))
        .await
        .map_err(failed)?
        .unwrap_or_default();
    match text.split(UNIT_SEPARATOR).collect::<Vec<_>>()[..] {
        [schema, lease_schema] if !schema.is_empty() && !lease_schema.is_empty() => {
            generator.qualified(schema, lease_schema)
        }
        _ => Err(ErrorKind::InvalidOptions {
            reason: format!(
                "the session has no current schema or database to install {} in: set the search path (PostgreSQL) or choose a database (MariaDB), or name it with its schema",
                generator.function_name()
            ),
        }.into()),
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
