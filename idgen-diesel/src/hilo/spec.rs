//! What a diesel hi-lo counter is, whatever pool it draws connections from: shared by the
//! r2d2 counter ([`DieselCounter`](super::DieselCounter)) and the diesel-async one.

use std::sync::{Arc, OnceLock};

use idgen_sql::{CounterKind, CounterSql, Dialect};

use crate::hilo::DEFAULT_TABLE;
use idgen_engine::Error;

/// A counter's name, its table (for table counters), and whether it is a sequence or a table
/// row: fixed by the database on PostgreSQL (sequence) and SQLite (table row), decided once
/// from the server's version on MySQL/MariaDB (shared by the counter's clones).
#[derive(Clone, Debug)]
pub(crate) struct CounterSpec {
    pub(crate) name: String,
    pub(crate) table: String,
    kind: Arc<OnceLock<CounterKind>>,
}

impl CounterSpec {
    /// The counter `name` in the default table, names not checked yet (see [`Self::sql`]).
    pub(crate) fn unchecked(name: &str) -> Self {
        CounterSpec {
            name: name.to_owned(),
            table: DEFAULT_TABLE.to_owned(),
            kind: Arc::default(),
        }
    }

    /// The same counter in `table`, its kind not decided yet; its names checked.
    pub(crate) fn with_table(&self, dialect: Dialect, table: &str) -> Result<Self, Error> {
        let spec = CounterSpec {
            name: self.name.clone(),
            table: table.to_owned(),
            kind: Arc::default(),
        };
        spec.check(dialect)?;
        Ok(spec)
    }

    /// Whether the names can be written into SQL ([`ErrorKind::InvalidSqlName`](idgen_engine::ErrorKind::InvalidSqlName) naming the one
    /// refused).
    pub(crate) fn check(&self, dialect: Dialect) -> Result<(), Error> {
        self.sql(dialect, CounterKind::Table).map(drop)
    }

    /// The counter's SQL as a `kind` counter, on the database's terms (PostgreSQL: sequence,
    /// SQLite: table).
    pub(crate) fn sql(&self, dialect: Dialect, kind: CounterKind) -> Result<CounterSql, Error> {
        match (dialect, kind) {
            (Dialect::Postgres, _) | (Dialect::MySql, CounterKind::Sequence) => {
                CounterSql::sequence(dialect, &self.name)
            }
            _ => CounterSql::table(dialect, &self.name, &self.table),
        }
    }

    /// The idempotent DDL for a migration file: on MySQL/MariaDB the table form until the
    /// counter has met its server.
    pub(crate) fn migration_sql(&self, dialect: Dialect, block: u64) -> Result<String, Error> {
        let kind = self.kind.get().copied().unwrap_or(CounterKind::Table);
        Ok(self.sql(dialect, kind)?.migration_sql(block))
    }

    /// The kind when it is known without asking the server: fixed by the database, or decided
    /// earlier. `None`: a MySQL/MariaDB counter that has not met its server yet.
    pub(crate) fn known_kind(&self, dialect: Dialect) -> Option<CounterKind> {
        match dialect {
            Dialect::Postgres => Some(CounterKind::Sequence),
            Dialect::Sqlite => Some(CounterKind::Table),
            Dialect::MySql => self.kind.get().copied(),
        }
    }

    /// Keeps the kind the server's version decided (the first decision wins).
    pub(crate) fn decided(&self, kind: CounterKind) -> CounterKind {
        *self.kind.get_or_init(|| kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_is_fixed_by_the_database_or_decided_once() {
        let spec = CounterSpec::unchecked("orders");
        assert_eq!(
            spec.known_kind(Dialect::Postgres),
            Some(CounterKind::Sequence)
        );
        assert_eq!(spec.known_kind(Dialect::Sqlite), Some(CounterKind::Table));
        assert_eq!(spec.known_kind(Dialect::MySql), None);
        let clone = spec.clone();
        assert_eq!(spec.decided(CounterKind::Sequence), CounterKind::Sequence);
        // Decided once, for every clone.
        assert_eq!(clone.decided(CounterKind::Table), CounterKind::Sequence);
        assert_eq!(
            clone.known_kind(Dialect::MySql),
            Some(CounterKind::Sequence)
        );
        assert!(
            clone
                .migration_sql(Dialect::MySql, 1000)
                .unwrap()
                .contains("SEQUENCE")
        );
        // Another table: a counter of its own, not decided yet.
        let moved = spec.with_table(Dialect::MySql, "counters").unwrap();
        assert_eq!(moved.known_kind(Dialect::MySql), None);
        assert!(
            moved
                .migration_sql(Dialect::MySql, 1000)
                .unwrap()
                .contains("counters")
        );
        assert!(matches!(
            spec.with_table(Dialect::MySql, "counters;")
                .map_err(Error::into_kind),
            Err(idgen_engine::ErrorKind::InvalidSqlName { .. })
        ));
    }
}
