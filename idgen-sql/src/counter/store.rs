//! [`SqlCounter`]: the one hi-lo counter of every SQL adapter, over the adapter's
//! [`SqlPool`] (the same pool trait the lease store runs on).
//!
//! An adapter says only how a counter gets connections of its own ([`CounterPool`]: a
//! one-connection pool, a connection it keeps); the counter's names, its kind (sequence or
//! table row, decided once per counter on MySQL/MariaDB), its statements, its procedures and
//! the [`HiLoSource`] methods are written here once.

use std::future::Future;
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

use idgen_core::BoxError;
use idgen_engine::hilo::{HiLoSource, Increment, MissingCounter};
use idgen_engine::{Error, ErrorKind, SqlName};

use super::sql::{CounterSql, detect_mysql_kind};
use crate::DEFAULT_COUNTER_TABLE;
use crate::dialect::CounterKind;
use crate::dialect::Dialect;
use crate::pool::{Call, CallTarget, SqlPool};
use crate::session::Session;

/// Where a [`SqlCounter`] keeps its counter.
///
/// ```
/// use idgen_sql::CounterMode;
/// assert_eq!(CounterMode::default(), CounterMode::Detect);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CounterMode {
    /// The database's own way: a `SEQUENCE` on PostgreSQL, a counter-table row on SQLite, and
    /// on MySQL/MariaDB whatever the server's version allows (`SELECT VERSION()` at start-up:
    /// MariaDB 10.3 or newer a sequence, anything else a table row). The default.
    #[default]
    Detect,
    /// A `SEQUENCE` named after the counter (PostgreSQL, MariaDB ≥ 10.3): `nextval`, the
    /// increment read from the catalog.
    Sequence,
    /// A row named after the counter in a counter table (default `idgen_hilo`; MySQL, MariaDB,
    /// SQLite): any step per call.
    Table,
}

impl From<CounterKind> for CounterMode {
    fn from(kind: CounterKind) -> Self {
        match kind {
            CounterKind::Sequence => CounterMode::Sequence,
            CounterKind::Table => CounterMode::Table,
        }
    }
}

/// How an adapter gives a [`SqlCounter`] connections of its own, made from the application's
/// pool ([`Of`](Self::Of)): allocations never run on a connection the application holds in a
/// transaction, and never wait behind the application's tasks for a slot of its pool.
///
/// ```
/// use std::sync::Arc;
/// use idgen_engine::lease::BoxError;
/// use idgen_sql::{Call, CallTarget};
/// use idgen_sql::{CounterPool, Dialect, SqlCounter, SqlPool};
///
/// enum Mine {}
/// /// The application's pool, and the counter's: neither has a connection to lend.
/// #[derive(Clone)]
/// struct Closed;
///
/// impl SqlPool<Mine> for Closed {
///     type Turn = ();
///     fn dialect(&self) -> Dialect {
///         Dialect::Sqlite
///     }
///     async fn run<K: Call>(&self, _: &(), sql: Arc<K::Sql>, _: K) -> Result<K::Output, BoxError> {
///         Err(format!("no connection for {}", sql.describe()).into())
///     }
///     fn detach(&self, _: &()) -> Option<(Self, ())> {
///         None
///     }
/// }
///
/// impl CounterPool<Mine> for Closed {
///     type Of = Closed;
///     fn for_counter(pool: &Closed) -> Closed {
///         pool.clone()
///     }
/// }
///
/// let orders = SqlCounter::<Mine, Closed>::new(&Closed, "orders")?;
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let err = orders.create(1000).await.unwrap_err().to_string();
/// assert!(err.contains("no connection for hi-lo counter orders"), "{err}");
/// # });
/// # Ok::<(), idgen_engine::Error>(())
/// ```
pub trait CounterPool<M>: SqlPool<M> {
    /// The application's pool the counter's connections are made from.
    type Of: ?Sized;

    /// The counter's own connections, made from `pool` (lazily: no connection is opened here).
    fn for_counter(pool: &Self::Of) -> Self;
}

/// A counter's names, database and kind: what every call of a [`SqlCounter`] works on (its
/// [`Call::Sql`]). Its clones share the kind, decided once.
#[derive(Debug)]
pub struct CounterSpec {
    dialect: Dialect,
    name: String,
    table: String,
    mode: CounterMode,
    decided: OnceLock<CounterKind>,
}

impl CounterSpec {
    /// The kind when known without asking the server: fixed by the database or the mode, or
    /// decided earlier. `None`: a MySQL/MariaDB counter in [`CounterMode::Detect`] that has not
    /// met its server yet.
    fn known_kind(&self) -> Option<CounterKind> {
        match (self.dialect, self.mode) {
            (_, CounterMode::Sequence) | (Dialect::Postgres, CounterMode::Detect) => {
                Some(CounterKind::Sequence)
            }
            (_, CounterMode::Table) | (Dialect::Sqlite, CounterMode::Detect) => {
                Some(CounterKind::Table)
            }
            (Dialect::MySql, CounterMode::Detect) => self.decided.get().copied(),
        }
    }

    /// The counter's SQL as a `kind` counter (its names checked).
    fn sql(&self, kind: CounterKind) -> Result<CounterSql, Error> {
        match kind {
            CounterKind::Sequence => CounterSql::sequence(self.dialect, &self.name),
            CounterKind::Table => CounterSql::table(self.dialect, &self.name, &self.table),
        }
    }

    /// Whether the names and mode can be used on this database.
    fn check(&self) -> Result<(), Error> {
        SqlName::parse("hi-lo counter table", &self.table)?;
        self.sql(self.known_kind().unwrap_or(CounterKind::Table))
            .map(drop)
    }

    /// The counter's SQL on `session`'s server: the kind asked of the server once, if needed.
    async fn sql_on<S: Session>(&self, session: &mut S) -> Result<CounterSql, BoxError> {
        let kind = match self.known_kind() {
            Some(kind) => kind,
            None => {
                let detected = detect_mysql_kind(session).await?;
                *self.decided.get_or_init(|| detected)
            }
        };
        Ok(self.sql(kind)?)
    }
}

impl CallTarget for CounterSpec {
    fn describe(&self) -> String {
        format!("hi-lo counter {}", self.name)
    }
}

/// The hi-lo counter of every SQL adapter: a sequence or a counter-table row ([`CounterMode`])
/// on connections of its own ([`CounterPool`]), with [`CounterSql`]'s statements and
/// procedures, so counters of different adapters share one sequence or row and behave alike.
/// The adapters name it (`idgen_sqlx::hilo::PgSequence`, `idgen_diesel::hilo::DieselCounter`,
/// `idgen_seaorm::hilo::SeaOrmCounter`, …); `HiLo::new(pool, block)` makes one from an
/// application's pool.
///
/// Clones share the counter's connections and its kind.
pub struct SqlCounter<M, P: SqlPool<M>> {
    pool: P,
    turn: P::Turn,
    spec: Arc<CounterSpec>,
    marker: PhantomData<fn() -> M>,
}

impl<M, P: CounterPool<M>> SqlCounter<M, P> {
    /// The counter `name` in [`CounterMode::Detect`] on connections of its own made from
    /// `pool`: a sequence on PostgreSQL, a row of the table `idgen_hilo` on SQLite, either on
    /// MySQL/MariaDB as the server's version allows.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidSqlName`] when `name` is not a plain identifier (`name` or
    /// `schema.name` of ASCII letters, digits and `_`).
    pub fn new(pool: &P::Of, name: &str) -> Result<Self, Error> {
        let counter = Self::named(pool, name);
        counter.spec.check()?;
        Ok(counter)
    }

    /// [`new`](Self::new) as a `SEQUENCE` (PostgreSQL, MariaDB ≥ 10.3).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new); [`ErrorKind::InvalidOptions`] on SQLite, which has no sequences.
    pub fn sequence(pool: &P::Of, name: &str) -> Result<Self, Error> {
        Self::named(pool, name).with_mode(CounterMode::Sequence)
    }

    /// [`new`](Self::new) as a row of the counter table (MySQL, MariaDB, SQLite).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new); [`ErrorKind::InvalidOptions`] on PostgreSQL, where idgen keeps
    /// counters in sequences.
    pub fn table(pool: &P::Of, name: &str) -> Result<Self, Error> {
        Self::named(pool, name).with_mode(CounterMode::Table)
    }

    /// The counter `name` in [`CounterMode::Detect`]; a name that breaks the rule is kept as its
    /// error, returned by every call (start-up then refuses it, naming it): what
    /// `IntoHiLoSource` needs, which cannot fail.
    pub fn named(pool: &P::Of, name: &str) -> Self {
        let pool = P::for_counter(pool);
        let spec = CounterSpec {
            dialect: pool.dialect(),
            name: name.to_owned(),
            table: DEFAULT_COUNTER_TABLE.to_owned(),
            mode: CounterMode::Detect,
            decided: OnceLock::new(),
        };
        SqlCounter {
            pool,
            turn: P::Turn::default(),
            spec: Arc::new(spec),
            marker: PhantomData,
        }
    }
}

impl<M, P: SqlPool<M>> SqlCounter<M, P> {
    /// The same counter kept as `mode` says (its kind decided anew).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidOptions`] for a mode the database does not have (a sequence on
    /// SQLite, a table row on PostgreSQL); [`ErrorKind::InvalidSqlName`] for a refused name.
    pub fn with_mode(self, mode: CounterMode) -> Result<Self, Error> {
        self.respec(|spec| spec.mode = mode)
    }

    /// The same counter kept in the counter table `table` instead of `idgen_hilo` (`name` or
    /// `schema.name`; used by table counters).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidSqlName`] when `table` is not a plain identifier.
    pub fn with_table(self, table: &str) -> Result<Self, Error> {
        self.respec(|spec| table.clone_into(&mut spec.table))
    }

    fn respec(self, change: impl FnOnce(&mut CounterSpec)) -> Result<Self, Error> {
        let mut spec = CounterSpec {
            dialect: self.spec.dialect,
            name: self.spec.name.clone(),
            table: self.spec.table.clone(),
            mode: self.spec.mode,
            decided: OnceLock::new(),
        };
        change(&mut spec);
        spec.check()?;
        Ok(SqlCounter {
            spec: Arc::new(spec),
            ..self
        })
    }

    /// The database.
    pub fn dialect(&self) -> Dialect {
        self.spec.dialect
    }

    /// The counter table's name (used by table counters).
    pub fn counter_table(&self) -> &str {
        &self.spec.table
    }

    /// Sequence or table row, once known: fixed by the database or the mode, or after
    /// [`CounterMode::Detect`] met the server (start-up, [`create`](Self::create),
    /// [`detect_mode`](Self::detect_mode)); `None` before that.
    pub fn mode(&self) -> Option<CounterMode> {
        self.spec.known_kind().map(CounterMode::from)
    }

    /// The mode, asking the server if it is not known yet ([`mode`](Self::mode)); remembered
    /// by the counter and its clones.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::HiLoSource`] naming the counter when the server cannot be asked.
    pub async fn detect_mode(&self) -> Result<CounterMode, Error> {
        if let Some(mode) = self.mode() {
            return Ok(mode);
        }
        self.call(DetectCall).await.map_err(|e| self.failed(e))
    }

    /// The idempotent DDL that [`create`](Self::create) runs, for a migration file (no
    /// connection needed): on MySQL/MariaDB in [`CounterMode::Detect`] the table form until
    /// the counter has met its server.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidSqlName`] when the counter's name was refused.
    pub fn migration_sql(&self, block: u64) -> Result<String, Error> {
        let kind = self.spec.known_kind().unwrap_or(CounterKind::Table);
        Ok(self.spec.sql(kind)?.migration_sql(block))
    }

    /// Creates the sequence (`INCREMENT BY block`) or the counter table and the counter's row
    /// (starting at 1) if they do not exist, safely when other processes do the same at the
    /// same moment; an existing one is left as it is (start-up then checks a sequence's
    /// increment). A table counter takes any step per call: `block` is not stored there.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::HiLoSource`] naming the counter when the database refuses or cannot be
    /// reached; [`ErrorKind::InvalidSqlName`] when the counter's name was refused.
    pub async fn create(&self, block: u64) -> Result<(), Error> {
        self.spec.check()?;
        self.call(CreateCall(block))
            .await
            .map_err(|e| self.failed(e))
    }

    fn failed(&self, source: BoxError) -> Error {
        ErrorKind::HiLoSource {
            counter: self.spec.name.clone(),
            source: source.into(),
        }
        .into()
    }

    fn call<K: Call<Sql = CounterSpec>>(
        &self,
        call: K,
    ) -> impl Future<Output = Result<K::Output, BoxError>> + Send + '_ {
        self.pool.run(&self.turn, Arc::clone(&self.spec), call)
    }
}

impl<M: 'static, P: SqlPool<M>> HiLoSource for SqlCounter<M, P> {
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        self.call(AllocateCall(size)).await
    }

    /// Several blocks in one statement on PostgreSQL (`nextval` over `generate_series`); one
    /// block elsewhere.
    async fn allocate_blocks(&self, size: u64, count: u64) -> Result<Vec<i64>, BoxError> {
        self.call(AllocateBlocksCall { size, count }).await
    }

    /// One forward-only statement ([`CounterSql::raise_on`]).
    async fn raise_above(&self, floor: i64) -> Result<bool, BoxError> {
        self.call(RaiseCall(floor)).await?;
        Ok(true)
    }

    async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> {
        let found = self.call(IncrementCall).await?;
        Ok(found.map(|step| step.map_or(Increment::PerCall, Increment::Fixed)))
    }

    fn name(&self) -> &str {
        &self.spec.name
    }

    /// [`create`](Self::create).
    async fn create_if_missing(&self, block: u64) -> Result<(), BoxError> {
        Ok(self.create(block).await?)
    }

    /// `true`: the counter lives in the database with the rows its IDs key.
    fn create_if_missing_by_default(&self) -> bool {
        true
    }

    /// [`migration_sql`](Self::migration_sql): the detected kind's, once start-up looked.
    fn migration_sql(&self, block: u64) -> Option<String> {
        Self::migration_sql(self, block).ok()
    }
}

impl<M, P: SqlPool<M>> Clone for SqlCounter<M, P> {
    fn clone(&self) -> Self {
        SqlCounter {
            pool: self.pool.clone(),
            turn: self.turn.clone(),
            spec: Arc::clone(&self.spec),
            marker: PhantomData,
        }
    }
}

impl<M, P: SqlPool<M>> std::fmt::Debug for SqlCounter<M, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlCounter")
            .field("database", &self.spec.dialect)
            .field("pool", &std::any::type_name::<P>())
            .field("name", &self.spec.name)
            .field("table", &self.spec.table)
            .field("mode", &self.mode())
            .finish()
    }
}

/// The calls of a [`SqlCounter`], each the counter's SQL (decided on the call's own session)
/// and one procedure of [`CounterSql`].
macro_rules! counter_calls {
    ($($(#[$doc:meta])* $call:ident $(( $($field:ident: $ty:ty),* ))? => $output:ty, $operation:literal,
       |$session:ident, $sql:ident| $body:expr;)*) => {$(
        $(#[$doc])*
        struct $call $(( $($ty),* ))?;

        impl Call for $call {
            type Output = $output;
            type Sql = CounterSpec;
            const OPERATION: &'static str = $operation;

            async fn run<S: Session>(
                &self,
                $session: &mut S,
                spec: &CounterSpec,
            ) -> Result<$output, BoxError> {
                #[allow(unused_variables)]
                let $call $(( $($field),* ))? = self;
                let $sql = spec.sql_on($session).await?;
                $body.await
            }
        }
    )*};
}

counter_calls! {
    /// [`CounterSql::allocate_on`].
    AllocateCall(size: u64) => i64, "allocate", |session, sql| sql.allocate_on(session, *size);
    /// [`CounterSql::raise_on`].
    RaiseCall(floor: i64) => (), "raise", |session, sql| sql.raise_on(session, *floor);
    /// [`CounterSql::increment_on`].
    IncrementCall => Result<Option<u64>, MissingCounter>, "read the increment",
        |session, sql| sql.increment_on(session);
    /// [`CounterSql::create_on`].
    CreateCall(block: u64) => (), "create", |session, sql| sql.create_on(session, *block);
    /// The kind, decided on the session (what [`CounterSpec::sql_on`] does first).
    DetectCall => CounterMode, "detect the mode",
        |session, sql| std::future::ready(Ok::<_, BoxError>(CounterMode::from(sql.kind())));
}

/// [`CounterSql::allocate_blocks_on`].
struct AllocateBlocksCall {
    size: u64,
    count: u64,
}

impl Call for AllocateBlocksCall {
    type Output = Vec<i64>;
    type Sql = CounterSpec;
    const OPERATION: &'static str = "allocate blocks";

    async fn run<S: Session>(
        &self,
        session: &mut S,
        spec: &CounterSpec,
    ) -> Result<Vec<i64>, BoxError> {
        let sql = spec.sql_on(session).await?;
        sql.allocate_blocks_on(session, self.size, self.count).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(dialect: Dialect, mode: CounterMode) -> CounterSpec {
        CounterSpec {
            dialect,
            name: "orders".into(),
            table: DEFAULT_COUNTER_TABLE.into(),
            mode,
            decided: OnceLock::new(),
        }
    }

    #[test]
    fn the_kind_is_fixed_by_the_database_or_the_mode_or_decided_once() {
        use CounterKind::{Sequence, Table};
        let detect = CounterMode::Detect;
        assert_eq!(spec(Dialect::Postgres, detect).known_kind(), Some(Sequence));
        assert_eq!(spec(Dialect::Sqlite, detect).known_kind(), Some(Table));
        let mysql = spec(Dialect::MySql, detect);
        assert_eq!(mysql.known_kind(), None);
        assert!(mysql.decided.set(Sequence).is_ok());
        assert_eq!(mysql.known_kind(), Some(Sequence));
        assert_eq!(
            spec(Dialect::MySql, CounterMode::Table).known_kind(),
            Some(Table)
        );
        assert_eq!(
            spec(Dialect::MySql, CounterMode::Sequence).known_kind(),
            Some(Sequence)
        );
    }

    #[test]
    fn a_mode_the_database_lacks_and_a_bad_name_are_refused() {
        assert!(spec(Dialect::Postgres, CounterMode::Table).check().is_err());
        assert!(
            spec(Dialect::Sqlite, CounterMode::Sequence)
                .check()
                .is_err()
        );
        assert!(spec(Dialect::MySql, CounterMode::Detect).check().is_ok());
        let mut bad = spec(Dialect::Postgres, CounterMode::Detect);
        bad.table = "counters; --".into();
        assert!(matches!(
            bad.check().map_err(Error::into_kind),
            Err(ErrorKind::InvalidSqlName { .. })
        ));
        assert_eq!(
            spec(Dialect::Sqlite, CounterMode::Detect).describe(),
            "hi-lo counter orders"
        );
    }
}
