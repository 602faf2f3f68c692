//! One server under test, whichever kind it is.

use idgen_core::hilo::HiLo;

use crate::BoxResult;
use crate::keys::{Key, KeyKind};
use crate::measure::IndexStats;
use crate::mysql::MyBench;
use crate::postgres::PgBench;
use crate::sequence::{BLOCK, MySequence, PgSequence};

/// Which server, with the benchmark's database on it.
pub(crate) enum Database {
    /// PostgreSQL.
    Postgres(PgBench),
    /// MariaDB or MySQL (InnoDB).
    MySql(MyBench),
}

impl Database {
    /// A fresh table for `kind`.
    pub(crate) async fn create_table(&self, kind: KeyKind) -> BoxResult<()> {
        match self {
            Database::Postgres(db) => db.create_table(kind).await,
            Database::MySql(db) => db.create_table(kind).await,
        }
    }

    /// A new hi-lo generator over the sequence, on its own connections (one application instance).
    pub(crate) async fn hilo(&self) -> BoxResult<HiLo> {
        Ok(match self {
            Database::Postgres(db) => {
                HiLo::new(
                    PgSequence {
                        pool: db.side_pool().await?,
                    },
                    BLOCK,
                )
                .await?
            }
            Database::MySql(db) => {
                HiLo::new(
                    MySequence {
                        pool: db.side_pool().await?,
                    },
                    BLOCK,
                )
                .await?
            }
        })
    }

    /// One multi-row `INSERT`.
    pub(crate) async fn insert(
        &self,
        kind: KeyKind,
        rows: &[(Option<Key>, String)],
    ) -> BoxResult<()> {
        match self {
            Database::Postgres(db) => db.insert(kind, rows).await,
            Database::MySql(db) => db.insert(kind, rows).await,
        }
    }

    /// The primary key's index after the inserts.
    pub(crate) async fn measure(&self, kind: KeyKind) -> BoxResult<IndexStats> {
        match self {
            Database::Postgres(db) => db.measure(kind).await,
            Database::MySql(db) => db.measure(kind).await,
        }
    }

    /// Drops `kind`'s table.
    pub(crate) async fn drop_table(&self, kind: KeyKind) -> BoxResult<()> {
        match self {
            Database::Postgres(db) => db.drop_table(kind).await,
            Database::MySql(db) => db.drop_table(kind).await,
        }
    }

    /// Drops the benchmark's database.
    pub(crate) async fn drop(self) -> BoxResult<()> {
        match self {
            Database::Postgres(db) => db.drop().await,
            Database::MySql(db) => db.drop().await,
        }
    }
}
