//! PostgreSQL: a `SEQUENCE` with `INCREMENT BY block`, one `nextval` per block (idgen-sqlx's
//! SQL).

use diesel::sql_types::BigInt;
use diesel::{OptionalExtension, PgConnection, QueryableByName, RunQueryDsl, sql_query};

use crate::DieselError;
use crate::hilo::Increment;
use crate::hilo::source::{
    HiLoConnection, Spec, is_missing_relation, missing_sequence, positive_step,
};

#[derive(QueryableByName)]
struct Value {
    #[diesel(sql_type = BigInt)]
    value: i64,
}

impl HiLoConnection for PgConnection {
    fn create_if_missing(&mut self, ddl: &str) -> Result<(), DieselError> {
        Ok(crate::pg_ddl::create_if_missing(self, ddl)?)
    }

    fn allocate(&mut self, spec: &Spec, _size: u64) -> Result<i64, DieselError> {
        let sql = format!("SELECT nextval('{}') AS value", spec.name);
        match sql_query(sql).get_result::<Value>(self) {
            Ok(row) => Ok(row.value),
            Err(e) if is_missing_relation(&e) => Err(missing_sequence(spec)),
            Err(e) => Err(e.into()),
        }
    }

    fn increment(&mut self, spec: &Spec) -> Result<Increment, DieselError> {
        let sql = format!(
            "SELECT seqincrement AS value FROM pg_catalog.pg_sequence WHERE seqrelid = '{}'::regclass",
            spec.name
        );
        match sql_query(sql).get_result::<Value>(self).optional() {
            Ok(Some(row)) => Ok(Increment::Fixed(positive_step(&spec.name, row.value)?)),
            Ok(None) => Err(missing_sequence(spec)),
            Err(e) if is_missing_relation(&e) => Err(missing_sequence(spec)),
            Err(e) => Err(e.into()),
        }
    }

    fn migration_sql(&mut self, spec: &Spec, block: u64) -> Result<Vec<String>, DieselError> {
        Ok(vec![format!(
            "CREATE SEQUENCE IF NOT EXISTS {} AS BIGINT INCREMENT BY {block} MINVALUE 1 START WITH 1 CACHE 1 NO CYCLE",
            spec.name
        )])
    }
}
