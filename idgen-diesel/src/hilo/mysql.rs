//! MySQL and MariaDB (idgen-sqlx's SQL and mode detection): a `SEQUENCE` on MariaDB ≥ 10.3
//! (`SELECT NEXTVAL(name)`), otherwise a row of the counter table advanced with
//! `LAST_INSERT_ID(next_val + step)`.

use diesel::sql_types::{BigInt, Text};
use diesel::{MysqlConnection, OptionalExtension, QueryableByName, RunQueryDsl, sql_query};

use crate::DieselError;
use crate::hilo::Increment;
use crate::hilo::source::{
    HiLoConnection, Spec, is_missing_relation, missing_row, missing_sequence, positive_step,
};

#[derive(QueryableByName)]
struct Value {
    #[diesel(sql_type = BigInt)]
    value: i64,
}

#[derive(QueryableByName)]
struct Version {
    #[diesel(sql_type = Text)]
    version: String,
}

/// Whether the counter is a sequence: MariaDB ≥ 10.3, decided once per counter.
fn is_sequence(conn: &mut MysqlConnection, spec: &Spec) -> Result<bool, DieselError> {
    if let Some(&known) = spec.sequence.get() {
        return Ok(known);
    }
    let version: Version = sql_query("SELECT VERSION() AS version").get_result(conn)?;
    let sequence = mariadb_with_sequences(&version.version);
    Ok(*spec.sequence.get_or_init(|| sequence))
}

impl HiLoConnection for MysqlConnection {
    /// Autocommit, whatever the server's default: on a server started with `autocommit=0` a
    /// counter update would stay uncommitted, and be rolled back (its block handed out again)
    /// when the connection closes.
    fn prepare(&mut self) -> Result<(), DieselError> {
        sql_query("SET autocommit = 1").execute(self)?;
        Ok(())
    }

    fn allocate(&mut self, spec: &Spec, size: u64) -> Result<i64, DieselError> {
        if is_sequence(self, spec)? {
            let sql = format!("SELECT NEXTVAL({}) AS value", spec.name);
            return match sql_query(sql).get_result::<Value>(self) {
                Ok(row) => Ok(row.value),
                Err(e) if is_missing_relation(&e) => Err(missing_sequence(spec)),
                Err(e) => Err(e.into()),
            };
        }
        let step = i64::try_from(size).map_err(|_| {
            DieselError::Core(idgen_core::Error::HiLoInvalidOption {
                option: "block",
                value: size.to_string(),
                reason: "a block must fit in i64",
            })
        })?;
        let sql = format!(
            "UPDATE {} SET next_val = LAST_INSERT_ID(next_val + ?) WHERE name = ?",
            spec.table
        );
        let rows = match sql_query(sql)
            .bind::<BigInt, _>(step)
            .bind::<Text, _>(&spec.name)
            .execute(self)
        {
            Ok(rows) => rows,
            Err(e) if is_missing_relation(&e) => return Err(missing_row(spec)),
            Err(e) => return Err(e.into()),
        };
        if rows != 1 {
            return Err(missing_row(spec));
        }
        // LAST_INSERT_ID() is per connection, and this is the counter's own connection: the
        // counter after the update, so the block starts `step` below it.
        let after: Value =
            sql_query("SELECT CAST(LAST_INSERT_ID() AS SIGNED) AS value").get_result(self)?;
        Ok(after.value - step)
    }

    fn increment(&mut self, spec: &Spec) -> Result<Increment, DieselError> {
        if is_sequence(self, spec)? {
            let sql = format!("SELECT increment AS value FROM {}", spec.name);
            return match sql_query(sql).get_result::<Value>(self).optional() {
                Ok(Some(row)) => Ok(Increment::Fixed(positive_step(&spec.name, row.value)?)),
                Ok(None) => Err(missing_sequence(spec)),
                Err(e) if is_missing_relation(&e) => Err(missing_sequence(spec)),
                Err(e) => Err(e.into()),
            };
        }
        let sql = format!(
            "SELECT next_val AS value FROM {} WHERE name = ?",
            spec.table
        );
        match sql_query(sql)
            .bind::<Text, _>(&spec.name)
            .get_result::<Value>(self)
            .optional()
        {
            Ok(Some(_)) => Ok(Increment::PerCall),
            Ok(None) => Err(missing_row(spec)),
            Err(e) if is_missing_relation(&e) => Err(missing_row(spec)),
            Err(e) => Err(e.into()),
        }
    }

    fn migration_sql(&mut self, spec: &Spec, block: u64) -> Result<Vec<String>, DieselError> {
        if is_sequence(self, spec)? {
            return Ok(vec![format!(
                "CREATE SEQUENCE IF NOT EXISTS {} START WITH 1 MINVALUE 1 INCREMENT BY {block} NOCACHE NOCYCLE",
                spec.name
            )]);
        }
        Ok(vec![
            format!(
                "CREATE TABLE IF NOT EXISTS {} (\n    name     VARCHAR(255) NOT NULL PRIMARY KEY,\n    next_val BIGINT       NOT NULL\n) ENGINE = InnoDB",
                spec.table
            ),
            format!(
                "INSERT IGNORE INTO {} (name, next_val) VALUES ('{}', 1)",
                spec.table, spec.name
            ),
        ])
    }
}

/// MariaDB has sequences from 10.3.
fn mariadb_with_sequences(version: &str) -> bool {
    if !version.contains("MariaDB") {
        return false;
    }
    // Some proxies and old servers report the replication-compatibility prefix.
    let version = version.strip_prefix("5.5.5-").unwrap_or(version);
    let mut numbers = version
        .split(|c: char| !c.is_ascii_digit())
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let major = numbers.next().unwrap_or(0);
    let minor = numbers.next().unwrap_or(0);
    (major, minor) >= (10, 3)
}

#[cfg(test)]
mod tests {
    use super::mariadb_with_sequences;

    #[test]
    fn detects_mariadb_with_sequences_from_the_version_string() {
        assert!(mariadb_with_sequences("10.11.19-MariaDB-0+deb12u1"));
        assert!(mariadb_with_sequences("5.5.5-10.3.39-MariaDB"));
        assert!(!mariadb_with_sequences("10.2.44-MariaDB"));
        assert!(!mariadb_with_sequences("8.0.36"));
    }
}
