//! SQLite: a counter table, `UPDATE … RETURNING` in one statement (idgen-sqlx's SQL).

use diesel::sql_types::{BigInt, Text};
use diesel::{OptionalExtension, QueryableByName, RunQueryDsl, SqliteConnection, sql_query};

use crate::DieselError;
use crate::hilo::Increment;
use crate::hilo::source::{HiLoConnection, Spec, is_missing_relation, missing_row};

#[derive(QueryableByName)]
struct Value {
    #[diesel(sql_type = BigInt)]
    value: i64,
}

impl HiLoConnection for SqliteConnection {
    fn allocate(&mut self, spec: &Spec, size: u64) -> Result<i64, DieselError> {
        crate::sqlite_busy::ensure_busy_timeout(self)?;
        let step = i64::try_from(size).map_err(|_| {
            DieselError::Core(idgen_core::Error::HiLoInvalidOption {
                option: "block",
                value: size.to_string(),
                reason: "a block must fit in i64",
            })
        })?;
        let sql = format!(
            "UPDATE {} SET next_val = next_val + ?1 WHERE name = ?2 RETURNING next_val - ?1 AS value",
            spec.table
        );
        match sql_query(sql)
            .bind::<BigInt, _>(step)
            .bind::<Text, _>(&spec.name)
            .get_result::<Value>(self)
            .optional()
        {
            Ok(Some(row)) => Ok(row.value),
            Ok(None) => Err(missing_row(spec)),
            Err(e) if is_missing_relation(&e) => Err(missing_row(spec)),
            Err(e) => Err(e.into()),
        }
    }

    fn increment(&mut self, spec: &Spec) -> Result<Increment, DieselError> {
        crate::sqlite_busy::ensure_busy_timeout(self)?;
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

    fn migration_sql(&mut self, spec: &Spec, _block: u64) -> Result<Vec<String>, DieselError> {
        crate::sqlite_busy::ensure_busy_timeout(self)?;
        Ok(vec![
            format!(
                "CREATE TABLE IF NOT EXISTS {} (\n    name     TEXT    NOT NULL PRIMARY KEY,\n    next_val INTEGER NOT NULL\n)",
                spec.table
            ),
            format!(
                "INSERT OR IGNORE INTO {} (name, next_val) VALUES ('{}', 1)",
                spec.table, spec.name
            ),
        ])
    }
}
