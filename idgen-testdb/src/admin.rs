//! Administrator statements on a server (create, drop, ping), one short connection each.

use sqlx::{AssertSqlSafe, Connection, MySqlConnection, PgConnection};

use crate::error::Error;
use crate::server::ServerKind;

/// Runs one statement on a fresh connection to `url`.
pub(crate) async fn execute(kind: ServerKind, url: &str, sql: String) -> Result<(), Error> {
    let action = sql.clone();
    let result = match kind {
        ServerKind::Postgres => execute_on::<PgConnection>(url, sql).await,
        ServerKind::MySql => execute_on::<MySqlConnection>(url, sql).await,
        ServerKind::Etcd | ServerKind::Redis => {
            return Err(Error::database(action, url, "not an SQL server"));
        }
    };
    result.map_err(|err| Error::database(action, url, err))
}

/// Runs `sql` on a new connection of type `C` to `url`, closed afterwards.
async fn execute_on<C>(url: &str, sql: String) -> Result<(), sqlx::Error>
where
    C: Connection,
    for<'c> &'c mut C: sqlx::Executor<'c, Database = C::Database>,
{
    let mut conn = C::connect(url).await?;
    let result = sqlx::raw_sql(AssertSqlSafe(sql))
        .execute(&mut conn)
        .await
        .map(drop);
    let _ = conn.close().await;
    result
}

/// Whether the server at `url` answers a query.
pub(crate) async fn ping(kind: ServerKind, url: &str) -> Result<(), Error> {
    match kind {
        ServerKind::Etcd | ServerKind::Redis => crate::key_value::ping(kind, url).await,
        ServerKind::Postgres | ServerKind::MySql => execute(kind, url, "SELECT 1".to_owned()).await,
    }
}

/// `CREATE DATABASE` for `name` (a plain identifier made by this crate). On PostgreSQL a file
/// copy of `template0` (PostgreSQL 15+): about a tenth of the time of the default WAL-logged
/// copy, which matters for suites that make many databases.
pub(crate) fn create_database_sql(kind: ServerKind, name: &str) -> String {
    match kind {
        ServerKind::Postgres => {
            format!("CREATE DATABASE \"{name}\" TEMPLATE template0 STRATEGY = FILE_COPY")
        }
        ServerKind::MySql => format!("CREATE DATABASE `{name}`"),
        ServerKind::Etcd | ServerKind::Redis => unreachable!("{} has no databases", kind.name()),
    }
}

/// The plain `CREATE DATABASE` for a server that refused [`create_database_sql`]'s form with
/// `refusal` (PostgreSQL before 15 knows no `STRATEGY`); `None` when that is not the reason.
pub(crate) fn create_database_fallback_sql(
    kind: ServerKind,
    name: &str,
    refusal: &Error,
) -> Option<String> {
    let unknown_strategy = matches!(refusal, Error::Database { reason, .. }
        if reason.to_lowercase().contains("strategy"));
    (kind == ServerKind::Postgres && unknown_strategy)
        .then(|| format!("CREATE DATABASE \"{name}\""))
}

/// `DROP DATABASE` for `name`, closing the connections still open to it.
pub(crate) fn drop_database_sql(kind: ServerKind, name: &str) -> String {
    match kind {
        ServerKind::Postgres => format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"),
        ServerKind::MySql => format!("DROP DATABASE IF EXISTS `{name}`"),
        ServerKind::Etcd | ServerKind::Redis => unreachable!("{} has no databases", kind.name()),
    }
}

#[cfg(test)]
mod tests {
    use super::{create_database_fallback_sql, create_database_sql};
    use crate::error::Error;
    use crate::server::ServerKind;

    #[test]
    fn postgres_before_15_gets_the_plain_create_database() {
        let fast = create_database_sql(ServerKind::Postgres, "t");
        assert!(
            fast.ends_with("TEMPLATE template0 STRATEGY = FILE_COPY"),
            "{fast}"
        );
        let url = "postgres://postgres@127.0.0.1:5432/postgres";
        let old = Error::database(&fast, url, "option \"strategy\" not recognized");
        assert_eq!(
            create_database_fallback_sql(ServerKind::Postgres, "t", &old).as_deref(),
            Some("CREATE DATABASE \"t\"")
        );
        let denied = Error::database(&fast, url, "permission denied to create database");
        assert_eq!(
            create_database_fallback_sql(ServerKind::Postgres, "t", &denied),
            None
        );
        assert_eq!(
            create_database_fallback_sql(ServerKind::MySql, "t", &old),
            None
        );
    }
}
