//! [`Statement`]: SQL text and the values to bind to it, in order.

/// A value to bind: the adapters map each to their driver's type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    /// A text (`VARCHAR`, `TEXT`).
    Text(&'a str),
    /// A `BIGINT`.
    BigInt(i64),
    /// A nullable `BIGINT`.
    NullableBigInt(Option<i64>),
    /// A `DOUBLE PRECISION` (PostgreSQL interval arithmetic).
    Double(f64),
}

/// One SQL statement and the values for its placeholders, in the order they are bound (on
/// MySQL/MariaDB, the order the `?` appear).
///
/// ```
/// use idgen_sql::{Dialect, LeaseSql, Value};
///
/// let sql = LeaseSql::new(Dialect::Sqlite, "leases")?;
/// let rows = sql.rows("orders");
/// assert!(rows.sql.contains("WHERE namespace = ?1"), "{}", rows.sql);
/// assert_eq!(rows.params, [Value::Text("orders")]);
/// # Ok::<(), idgen_engine::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Statement<'a> {
    /// The SQL text.
    pub sql: String,
    /// The values, in binding order.
    pub params: Vec<Value<'a>>,
}

impl<'a> Statement<'a> {
    /// A statement of `sql` with `params` bound in order.
    ///
    /// ```
    /// use idgen_sql::{Statement, Value};
    ///
    /// let statement = Statement::new("SELECT ? AS value".to_owned(), vec![Value::BigInt(7)]);
    /// assert_eq!(statement.params, [Value::BigInt(7)]);
    /// ```
    pub fn new(sql: String, params: Vec<Value<'a>>) -> Self {
        Statement { sql, params }
    }
}
