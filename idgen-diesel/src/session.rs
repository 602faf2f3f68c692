//! [`DieselConnection`]: the diesel connections idgen keeps its tables in, and the
//! [`Session`](idgen_sql::Session) on one of them that idgen-sql's shared lease and
//! hi-lo procedures run on (blocking: on a thread of its own, driven by
//! [`block_on`](idgen_sql::block_on)). This is all the database code of idgen-diesel:
//! binding the values of idgen-sql's statements and decoding their rows.

// Without a database feature no connection type implements `DieselConnection`, so the row
// types and binders below have no caller (the crate still builds, e.g. for `cargo package`'s
// default-features check).
#![cfg_attr(
    not(any(feature = "postgres", feature = "mysql", feature = "sqlite")),
    allow(dead_code, unused_imports)
)]

use diesel::QueryableByName;
use diesel::r2d2::R2D2Connection;
use diesel::result::{DatabaseErrorKind, Error as QueryError, QueryResult};
use diesel::sql_types::{BigInt, Nullable, Text};
use idgen_sql::{Dialect, ErrorClass, LeaseRow, Statement, Value};

// SQLite's preparation: `batch_execute` (a supertrait method elsewhere) and `get_result` of its
// `PRAGMA busy_timeout`.
#[cfg(feature = "sqlite")]
use diesel::{RunQueryDsl, connection::SimpleConnection};

mod sealed {
    /// Implemented by `diesel_connection!` for each connection, with its `DieselConnection`.
    #[allow(unreachable_pub)]
    pub trait Sealed {}
}

/// A diesel connection idgen keeps lease tables and hi-lo counters in: `PgConnection`,
/// `MysqlConnection` (MariaDB too) and `SqliteConnection`, with the crate features
/// `postgres`, `mysql`, `sqlite`. Sealed.
///
/// ```
/// fn takes_an_idgen_connection<C: idgen_diesel::DieselConnection>(_conn: &mut C) {}
/// # #[cfg(feature = "sqlite")]
/// # let _ = takes_an_idgen_connection::<diesel::SqliteConnection>;
/// ```
pub trait DieselConnection: R2D2Connection + sealed::Sealed + 'static {
    /// The SQL dialect.
    const DIALECT: Dialect;
    /// Readies a connection taken from the pool: a 5 s busy timeout on SQLite when it has none
    /// (writers wait for the one writer; sqlx's default). Nothing elsewhere: idgen changes no
    /// setting of a connection the application lends it (on MySQL/MariaDB each unit of work
    /// runs in an explicit transaction of its own, whatever the connection's autocommit).
    #[doc(hidden)]
    fn prepare(&mut self) -> QueryResult<()>;
    /// Runs `st` with its values bound; the rows it affected.
    #[doc(hidden)]
    fn run(&mut self, st: Statement<'_>) -> QueryResult<usize>;
    /// The `value` column of each row of `st`, a number.
    #[doc(hidden)]
    fn load_numbers(&mut self, st: Statement<'_>) -> QueryResult<Vec<i64>>;
    /// The `value` column of each row of `st`, a text.
    #[doc(hidden)]
    fn load_texts(&mut self, st: Statement<'_>) -> QueryResult<Vec<String>>;
    /// `node, last_timestamp` of each row of `st`.
    #[doc(hidden)]
    fn load_claims(&mut self, st: Statement<'_>) -> QueryResult<Vec<(i64, Option<i64>)>>;
    /// `node, holder, expires_at_ms, last_timestamp` of each row of `st`.
    #[doc(hidden)]
    fn load_lease_rows(&mut self, st: Statement<'_>) -> QueryResult<Vec<LeaseRow>>;
}

/// `… AS value`, a number.
#[derive(QueryableByName)]
pub(crate) struct Number {
    #[diesel(sql_type = BigInt)]
    pub(crate) value: i64,
}

/// `… AS value`, a text.
#[derive(QueryableByName)]
pub(crate) struct TextValue {
    #[diesel(sql_type = Text)]
    pub(crate) value: String,
}

/// `node, last_timestamp`.
#[derive(QueryableByName)]
pub(crate) struct ClaimRow {
    #[diesel(sql_type = BigInt)]
    pub(crate) node: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    pub(crate) last_timestamp: Option<i64>,
}

/// `node, holder, expires_at_ms, last_timestamp`.
#[derive(QueryableByName)]
pub(crate) struct TableRow {
    #[diesel(sql_type = BigInt)]
    node: i64,
    #[diesel(sql_type = Nullable<Text>)]
    holder: Option<String>,
    #[diesel(sql_type = BigInt)]
    expires_at_ms: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    last_timestamp: Option<i64>,
}

impl TableRow {
    pub(crate) fn into_lease_row(self) -> QueryResult<LeaseRow> {
        LeaseRow::new(
            self.node,
            self.holder,
            self.expires_at_ms,
            self.last_timestamp,
        )
        .ok_or_else(|| {
            QueryError::DeserializationError(
                format!("negative node ID {} in the lease table", self.node).into(),
            )
        })
    }
}

/// What a session may leave unfinished on its connection: a statement not answered yet (its
/// call was cancelled), or idgen's own transaction
/// ([`Session::transaction_open`](idgen_sql::Session::transaction_open)). Kept by the
/// owner of the connection, which does not give an unsettled connection back to its pool
/// ([`break_connection`] for r2d2; the diesel-async stores take it out of theirs).
#[derive(Debug, Default)]
pub(crate) struct Unsettled {
    pub(crate) in_flight: bool,
    pub(crate) in_transaction: bool,
}

impl Unsettled {
    /// Whether the connection may be inside a statement or a transaction of idgen's.
    pub(crate) fn any(&self) -> bool {
        self.in_flight || self.in_transaction
    }
}

/// Marks `conn` broken, so that r2d2 closes it instead of giving it back to the pool (r2d2 asks
/// `R2D2Connection::is_broken`, which is diesel's transaction manager's state).
pub(crate) fn break_connection<C: diesel::Connection>(conn: &mut C) {
    use diesel::connection::TransactionManager;
    C::TransactionManager::transaction_manager_status_mut(conn).set_in_error();
}

/// One connection as an idgen-sql [`Session`](idgen_sql::Session); blocking.
pub(crate) struct DieselSession<'c, C> {
    pub(crate) conn: &'c mut C,
    pub(crate) state: &'c mut Unsettled,
}

/// What a diesel error means on `dialect` (diesel reports messages, not codes).
pub(crate) fn classify(dialect: Dialect, err: &QueryError) -> ErrorClass {
    match err {
        QueryError::DatabaseError(DatabaseErrorKind::SerializationFailure, _) => {
            ErrorClass::Transient
        }
        QueryError::DatabaseError(_, info) => dialect.classify(None, info.message()),
        _ => ErrorClass::Other,
    }
}

/// The idgen-sql [`Session`](idgen_sql::Session) of a session type over a connection
/// trait (`DieselConnection` here, `AsyncDieselConnection` in [`crate::async_session`]), both
/// with the same methods: one text for the blocking and the async session, whose only
/// differences are whether each call is awaited (the trailing `await`) and how a pause waits.
macro_rules! diesel_session {
    ($session:ident, $bound:ident $(+ $more:ident)*, $sleep:path $(, $await:tt)?) => {
        impl<C: $bound $(+ $more)*> idgen_sql::Session for $session<'_, C> {
            type Error = diesel::result::Error;

            fn dialect(&self) -> idgen_sql::Dialect {
                C::DIALECT
            }

            fn classify(&self, err: &diesel::result::Error) -> idgen_sql::ErrorClass {
                $crate::session::classify(C::DIALECT, err)
            }

            async fn execute(
                &mut self,
                st: idgen_sql::Statement<'_>,
            ) -> diesel::QueryResult<u64> {
                self.state.in_flight = true;
                let done = if st.params.is_empty() {
                    // One simple query: it may hold several statements.
                    self.conn.batch_execute(&st.sql)$(.$await)?.map(|()| 0)
                } else {
                    self.conn.run(st)$(.$await)?.map(|rows| rows as u64)
                };
                self.state.in_flight = false;
                done
            }

            async fn fetch_i64(
                &mut self,
                st: idgen_sql::Statement<'_>,
            ) -> diesel::QueryResult<Option<i64>> {
                self.state.in_flight = true;
                let rows = self.conn.load_numbers(st)$(.$await)?;
                self.state.in_flight = false;
                Ok(rows?.first().copied())
            }

            async fn fetch_text(
                &mut self,
                st: idgen_sql::Statement<'_>,
            ) -> diesel::QueryResult<Option<String>> {
                self.state.in_flight = true;
                let rows = self.conn.load_texts(st)$(.$await)?;
                self.state.in_flight = false;
                Ok(rows?.into_iter().next())
            }

            async fn fetch_claim(
                &mut self,
                st: idgen_sql::Statement<'_>,
            ) -> diesel::QueryResult<Option<(i64, Option<i64>)>> {
                self.state.in_flight = true;
                let rows = self.conn.load_claims(st)$(.$await)?;
                self.state.in_flight = false;
                Ok(rows?.first().copied())
            }

            async fn fetch_lease_rows(
                &mut self,
                st: idgen_sql::Statement<'_>,
            ) -> diesel::QueryResult<Vec<idgen_sql::LeaseRow>> {
                self.state.in_flight = true;
                let rows = self.conn.load_lease_rows(st)$(.$await)?;
                self.state.in_flight = false;
                rows
            }

            async fn pause(&mut self, pause: std::time::Duration) {
                $sleep(pause)$(.$await)?;
            }

            fn transaction_open(&mut self, open: bool) {
                self.state.in_transaction = open;
            }
        }
    };
}
// For diesel-async's session (`async_session.rs`).
#[cfg(feature = "async")]
pub(crate) use diesel_session;

diesel_session!(DieselSession, DieselConnection + Send, std::thread::sleep);

/// How long a statement waits for another SQLite writer when the connection has no busy
/// timeout of its own (diesel's default is none; sqlx's is 5 s).
#[cfg(feature = "sqlite")]
const SQLITE_BUSY_TIMEOUT_MS: i32 = 5_000;

#[cfg(feature = "sqlite")]
#[derive(QueryableByName)]
struct BusyTimeout {
    #[diesel(sql_type = diesel::sql_types::Integer)]
    timeout: i32,
}

/// `st`'s SQL with its values bound, for `DB`.
pub(crate) fn bound<'a, DB>(
    st: Statement<'a>,
) -> diesel::query_builder::BoxedSqlQuery<'a, DB, diesel::query_builder::SqlQuery>
where
    DB: diesel::backend::Backend + diesel::sql_types::HasSqlType<BigInt>,
    &'a str: diesel::serialize::ToSql<Text, DB>,
    i64: diesel::serialize::ToSql<BigInt, DB>,
    Option<i64>: diesel::serialize::ToSql<Nullable<BigInt>, DB>,
    f64: diesel::serialize::ToSql<diesel::sql_types::Double, DB>,
    DB: diesel::sql_types::HasSqlType<Text>
        + diesel::sql_types::HasSqlType<diesel::sql_types::Double>,
{
    let mut query = diesel::sql_query(st.sql).into_boxed::<DB>();
    for param in st.params {
        query = match param {
            Value::Text(v) => query.bind::<Text, _>(v),
            Value::BigInt(v) => query.bind::<BigInt, _>(v),
            Value::NullableBigInt(v) => query.bind::<Nullable<BigInt>, _>(v),
            Value::Double(v) => query.bind::<diesel::sql_types::Double, _>(v),
        };
    }
    query
}

macro_rules! diesel_connection {
    ($feature:literal, $conn:ty, $backend:ty, $dialect:expr, $prepare:expr) => {
        #[cfg(feature = $feature)]
        impl sealed::Sealed for $conn {}

        #[cfg(feature = $feature)]
        impl DieselConnection for $conn {
            const DIALECT: Dialect = $dialect;

            fn prepare(&mut self) -> QueryResult<()> {
                let prepare: fn(&mut $conn) -> QueryResult<()> = $prepare;
                prepare(self)
            }

            $crate::session::bind_and_decode!($backend, diesel::RunQueryDsl);
        }
    };
}

/// The binding and decoding methods of `DieselConnection` and `AsyncDieselConnection` for the
/// backend `$backend`: one text, run with diesel's `RunQueryDsl`, or with diesel-async's when
/// the trailing `async await` makes each method `async` and awaits its query.
macro_rules! bind_and_decode {
    ($backend:ty, $($dsl:ident)::+ $(, $async:tt $await:tt)?) => {
        $($async)? fn run(
            &mut self,
            st: idgen_sql::Statement<'_>,
        ) -> diesel::QueryResult<usize> {
            let query = $crate::session::bound::<$backend>(st);
            $($dsl)::+::execute(query, self)$(.$await)?
        }

        $($async)? fn load_numbers(
            &mut self,
            st: idgen_sql::Statement<'_>,
        ) -> diesel::QueryResult<Vec<i64>> {
            let query = $crate::session::bound::<$backend>(st);
            let rows: Vec<$crate::session::Number> = $($dsl)::+::load(query, self)$(.$await)??;
            Ok(rows.into_iter().map(|row| row.value).collect())
        }

        $($async)? fn load_texts(
            &mut self,
            st: idgen_sql::Statement<'_>,
        ) -> diesel::QueryResult<Vec<String>> {
            let query = $crate::session::bound::<$backend>(st);
            let rows: Vec<$crate::session::TextValue> = $($dsl)::+::load(query, self)$(.$await)??;
            Ok(rows.into_iter().map(|row| row.value).collect())
        }

        $($async)? fn load_claims(
            &mut self,
            st: idgen_sql::Statement<'_>,
        ) -> diesel::QueryResult<Vec<(i64, Option<i64>)>> {
            let query = $crate::session::bound::<$backend>(st);
            let rows: Vec<$crate::session::ClaimRow> = $($dsl)::+::load(query, self)$(.$await)??;
            Ok(rows.into_iter().map(|row| (row.node, row.last_timestamp)).collect())
        }

        $($async)? fn load_lease_rows(
            &mut self,
            st: idgen_sql::Statement<'_>,
        ) -> diesel::QueryResult<Vec<idgen_sql::LeaseRow>> {
            let query = $crate::session::bound::<$backend>(st);
            let rows: Vec<$crate::session::TableRow> = $($dsl)::+::load(query, self)$(.$await)??;
            rows.into_iter().map($crate::session::TableRow::into_lease_row).collect()
        }
    };
}
pub(crate) use bind_and_decode;

diesel_connection!(
    "postgres",
    diesel::PgConnection,
    diesel::pg::Pg,
    Dialect::Postgres,
    |_| Ok(())
);
diesel_connection!(
    "mysql",
    diesel::MysqlConnection,
    diesel::mysql::Mysql,
    Dialect::MySql,
    |_| Ok(())
);
diesel_connection!(
    "sqlite",
    diesel::SqliteConnection,
    diesel::sqlite::Sqlite,
    Dialect::Sqlite,
    |conn| {
        let current: BusyTimeout = diesel::sql_query("PRAGMA busy_timeout").get_result(conn)?;
        if current.timeout == 0 {
            conn.batch_execute(&format!("PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}"))?;
        }
        Ok(())
    }
);
