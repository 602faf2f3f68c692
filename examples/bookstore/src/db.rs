//! The databases: four order shards and one control database (node leases, the hi-lo
//! counter), embedded SQLite files by default or PostgreSQL / MariaDB from a URL.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use sqlx::ConnectOptions;
use sqlx::mysql::{MySqlConnectOptions, MySqlPool};
use sqlx::pool::PoolOptions;
use sqlx::postgres::{PgConnectOptions, PgPool};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};

use crate::Result;
use crate::leases::Leases;
use example_support::{CONNECT_TIMEOUT, Kind, connect_to};

/// How many shards the `orders` table is split into.
pub const SHARDS: usize = 4;

/// Where the data lives.
#[derive(Clone, Debug)]
pub enum Target {
    /// Embedded SQLite: `control.sqlite` and `shard-N.sqlite` in this directory.
    Dir(PathBuf),
    /// A PostgreSQL or MariaDB/MySQL server: databases `<name>_control` and `<name>_shard_N`,
    /// where `<name>` is the URL's database (default `bookstore`).
    Url(String),
}

/// Which kind of database a pool talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
    /// MariaDB or MySQL.
    MySql,
}

/// A pool of one of the three kinds. [`on_pool!`](crate::on_pool) runs the same code on each.
#[derive(Clone, Debug)]
pub enum Pool {
    /// SQLite.
    Sqlite(SqlitePool),
    /// PostgreSQL.
    Postgres(PgPool),
    /// MariaDB or MySQL.
    MySql(MySqlPool),
}

/// Runs `$body` with `$p` bound to the concrete pool (`&SqlitePool`, `&PgPool` or `&MySqlPool`).
#[macro_export]
macro_rules! on_pool {
    ($pool:expr, $p:ident => $body:expr) => {
        match $pool {
            $crate::db::Pool::Sqlite($p) => $body,
            $crate::db::Pool::Postgres($p) => $body,
            $crate::db::Pool::MySql($p) => $body,
        }
    };
}

impl Pool {
    /// The kind of database.
    pub fn backend(&self) -> Backend {
        match self {
            Pool::Sqlite(_) => Backend::Sqlite,
            Pool::Postgres(_) => Backend::Postgres,
            Pool::MySql(_) => Backend::MySql,
        }
    }

    /// `sql` with its `?` placeholders written as this database wants them (`$1, $2…` on
    /// PostgreSQL).
    pub fn sql(&self, sql: &str) -> String {
        if self.backend() != Backend::Postgres {
            return sql.to_owned();
        }
        let mut out = String::with_capacity(sql.len() + 8);
        let mut n = 0;
        for c in sql.chars() {
            if c == '?' {
                n += 1;
                out.push_str(&format!("${n}"));
            } else {
                out.push(c);
            }
        }
        out
    }

    /// Runs one statement without parameters.
    pub async fn execute(&self, sql: &str) -> Result<()> {
        on_pool!(self, p => { sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())).execute(p).await?; });
        Ok(())
    }

    /// Closes the pool.
    pub async fn close(&self) {
        on_pool!(self, p => p.close().await)
    }
}

/// The control database and the shards.
#[derive(Clone, Debug)]
pub struct Cluster {
    /// Node leases and the hi-lo counter.
    pub control: Pool,
    /// The order shards, `SHARDS` of them.
    pub shards: Vec<Pool>,
    /// Where they live, for the report.
    pub location: String,
    /// Every node-ID lease taken on the control database by this process's instances.
    pub leases: Leases,
}

impl Cluster {
    /// Opens (creating when missing) the control database and the shards.
    pub async fn open(target: &Target) -> Result<Cluster> {
        match target {
            Target::Dir(dir) => open_sqlite(dir).await,
            Target::Url(url) if url.starts_with("postgres") => open_postgres(url).await,
            Target::Url(url) if url.starts_with("mysql") || url.starts_with("mariadb") => {
                open_mysql(url).await
            }
            Target::Url(url) => Err(format!(
                "unsupported database URL {:?}: use postgres://…, mysql://… (MariaDB) or no URL for SQLite",
                redact_password(url)
            )
            .into()),
        }
    }

    /// The kind of database.
    pub fn backend(&self) -> Backend {
        self.control.backend()
    }

    /// Gives back every node-ID lease this process still holds (see [`Leases`]); one message
    /// per lease that could not be released.
    pub async fn release_leases(&self) -> Vec<String> {
        self.leases.release_all().await
    }

    /// Closes every pool.
    pub async fn close(&self) {
        self.control.close().await;
        for shard in &self.shards {
            shard.close().await;
        }
    }
}

async fn open_sqlite(dir: &Path) -> Result<Cluster> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create the data directory {}: {e}", dir.display()))?;
    let files = std::iter::once("control.sqlite".to_owned())
        .chain((0..SHARDS).map(|n| format!("shard-{n}.sqlite")))
        .collect::<Vec<_>>();
    let location = format!("SQLite files in {}", dir.display());
    open_all(&files, location, async |file: &str| {
        let options = SqliteConnectOptions::new()
            .filename(dir.join(file))
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(Duration::from_secs(30));
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await?;
        Ok(Pool::Sqlite(pool))
    })
    .await
}

/// The control database (`names[0]`) and the shards (the rest), each opened by `open`.
async fn open_all(
    names: &[String],
    location: String,
    open: impl AsyncFn(&str) -> Result<Pool>,
) -> Result<Cluster> {
    let control = open(&names[0]).await?;
    let mut shards = Vec::with_capacity(SHARDS);
    for name in &names[1..] {
        shards.push(open(name).await?);
    }
    Ok(Cluster {
        control,
        shards,
        location,
        leases: Leases::default(),
    })
}

/// The pool settings of a server's databases, PostgreSQL or MariaDB.
fn server_pool<DB: sqlx::Database>() -> PoolOptions<DB> {
    PoolOptions::new()
        .max_connections(8)
        .acquire_timeout(CONNECT_TIMEOUT)
}

/// `url` with its password replaced by `***`, for messages.
pub fn redact_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _password)) => format!("{scheme}://{user}:***@{host}{path}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// The databases' names: `<base>_control`, `<base>_shard_0`…
pub fn database_names(base: &str) -> Result<Vec<String>> {
    if base.is_empty() || !base.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(format!(
            "database name {base:?} in the URL: use ASCII letters, digits and '_' only"
        )
        .into());
    }
    let mut names = vec![format!("{base}_control")];
    names.extend((0..SHARDS).map(|n| format!("{base}_shard_{n}")));
    Ok(names)
}

async fn open_postgres(url: &str) -> Result<Cluster> {
    let options = PgConnectOptions::from_str(url)?;
    let base = options.get_database().unwrap_or("bookstore").to_owned();
    let names = database_names(&base)?;
    let endpoint = |database: &str| example_support::Target {
        kind: Kind::Postgres,
        host: options.get_host().to_owned(),
        port: options.get_port(),
        database: Some(database.to_owned()),
        user: Some(options.get_username().to_owned()),
    };
    let mut admin = connect_to(
        &endpoint("postgres"),
        CONNECT_TIMEOUT,
        options.clone().database("postgres").connect(),
    )
    .await?;
    for name in &names {
        let exists: Option<i32> =
            sqlx::query_scalar("SELECT 1 FROM pg_database WHERE datname = $1")
                .bind(name)
                .fetch_optional(&mut admin)
                .await?;
        if exists.is_none() {
            let create = format!("CREATE DATABASE \"{name}\"");
            match sqlx::query(sqlx::AssertSqlSafe(create))
                .execute(&mut admin)
                .await
            {
                Ok(_) => {}
                // Another process created it meanwhile.
                Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some("42P04") => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    let location = format!("PostgreSQL databases {}", names.join(", "));
    open_all(&names, location, async |name: &str| {
        let pool = server_pool().connect_with(options.clone().database(name));
        Ok(Pool::Postgres(
            connect_to(&endpoint(name), CONNECT_TIMEOUT, pool).await?,
        ))
    })
    .await
}

async fn open_mysql(url: &str) -> Result<Cluster> {
    let url = url.replacen("mariadb://", "mysql://", 1);
    let options = MySqlConnectOptions::from_str(&url)?;
    let base = options.get_database().unwrap_or("bookstore").to_owned();
    let names = database_names(&base)?;
    // The server always has the `mysql` database; the URL's own one may not exist yet.
    let endpoint = |database: &str| example_support::Target {
        kind: Kind::MySql,
        host: options.get_host().to_owned(),
        port: options.get_port(),
        database: Some(database.to_owned()),
        user: Some(options.get_username().to_owned()),
    };
    let mut admin = connect_to(
        &endpoint("mysql"),
        CONNECT_TIMEOUT,
        options.clone().database("mysql").connect(),
    )
    .await?;
    for name in &names {
        let create = format!("CREATE DATABASE IF NOT EXISTS `{name}`");
        sqlx::query(sqlx::AssertSqlSafe(create))
            .execute(&mut admin)
            .await?;
    }
    let location = format!("MariaDB/MySQL databases {}", names.join(", "));
    open_all(&names, location, async |name: &str| {
        let pool = server_pool().connect_with(options.clone().database(name));
        Ok(Pool::MySql(
            connect_to(&endpoint(name), CONNECT_TIMEOUT, pool).await?,
        ))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_names_derive_from_the_url_database_and_refuse_odd_ones() {
        assert_eq!(
            database_names("bookstore").unwrap(),
            [
                "bookstore_control",
                "bookstore_shard_0",
                "bookstore_shard_1",
                "bookstore_shard_2",
                "bookstore_shard_3"
            ]
        );
        let err = database_names("a-b\"; DROP").unwrap_err();
        assert!(err.to_string().contains(r#""a-b\"; DROP""#), "{err}");
        assert!(database_names("").is_err());
    }

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact_password("postgres://app:s3cret@db:5432/shop"),
            "postgres://app:***@db:5432/shop"
        );
        assert_eq!(
            redact_password("mysql://root@db/shop"),
            "mysql://root@db/shop"
        );
        assert_eq!(
            redact_password("postgres://a:b@c@host/x?y=@"),
            "postgres://a:***@host/x?y=@"
        );
        assert_eq!(redact_password("not a url"), "not a url");
    }

    #[tokio::test]
    async fn postgres_placeholders_are_numbered() {
        let lazy = sqlx::postgres::PgPoolOptions::new()
            .connect_lazy("postgres://localhost/x")
            .unwrap();
        let pg = Pool::Postgres(lazy);
        assert_eq!(pg.sql("a = ? AND b = ?"), "a = $1 AND b = $2");
        let sqlite = Pool::Sqlite(SqlitePool::connect("sqlite::memory:").await.unwrap());
        assert_eq!(sqlite.sql("a = ? AND b = ?"), "a = ? AND b = ?");
    }
}
