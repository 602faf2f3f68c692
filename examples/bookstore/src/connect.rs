//! Connecting to a server with a deadline, and errors that say what was tried: the kind of
//! database, the host and port, the database and user (never the password), and a hint when the
//! answer shows the wrong kind of server on that port.

use std::fmt;
use std::future::Future;
use std::time::Duration;

/// How long a connection to a server may take before the attempt is given up.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a connection attempt goes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// `PostgreSQL` or `MariaDB/MySQL`.
    pub kind: &'static str,
    /// Host name or address.
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// The database asked for.
    pub database: String,
    /// The user name.
    pub user: String,
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at {}:{} (database {:?}, user {:?})",
            self.kind, self.host, self.port, self.database, self.user
        )
    }
}

/// A connection attempt that failed or timed out, naming what was tried.
#[derive(Debug, thiserror::Error)]
#[error("cannot connect to {endpoint}: {reason}{hint}")]
pub struct ConnectError {
    /// Where the attempt went.
    pub endpoint: Endpoint,
    reason: String,
    hint: String,
    #[source]
    source: Option<sqlx::Error>,
}

/// Runs `attempt` (a connect to `endpoint`) with [`CONNECT_TIMEOUT`]; on failure, an error
/// naming the endpoint with a hint.
pub async fn connect<T>(
    endpoint: &Endpoint,
    attempt: impl Future<Output = Result<T, sqlx::Error>>,
) -> Result<T, ConnectError> {
    connect_within(CONNECT_TIMEOUT, endpoint, attempt).await
}

async fn connect_within<T>(
    limit: Duration,
    endpoint: &Endpoint,
    attempt: impl Future<Output = Result<T, sqlx::Error>>,
) -> Result<T, ConnectError> {
    match tokio::time::timeout(limit, attempt).await {
        Ok(Ok(connected)) => Ok(connected),
        Ok(Err(e)) => Err(ConnectError {
            endpoint: endpoint.clone(),
            reason: e.to_string(),
            hint: hint(endpoint, &e),
            source: Some(e),
        }),
        Err(_) => Err(ConnectError {
            endpoint: endpoint.clone(),
            reason: format!("no answer within {} ms", limit.as_millis()),
            hint: format!(
                " (is {} listening on port {}? A server of another kind there may wait for the client to speak first)",
                endpoint.kind, endpoint.port
            ),
            source: None,
        }),
    }
}

/// What to check, from the kind of failure.
fn hint(endpoint: &Endpoint, e: &sqlx::Error) -> String {
    let usual = match endpoint.kind {
        "PostgreSQL" => 5432,
        _ => 3306,
    };
    match e {
        sqlx::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => format!(
            " (is the server running, and listening on port {}? {} usually listens on {usual})",
            endpoint.port, endpoint.kind
        ),
        sqlx::Error::Protocol(_) | sqlx::Error::Decode(_) | sqlx::Error::Io(_) => format!(
            " (the server on port {} does not answer like {}: another kind of database? {} usually listens on {usual})",
            endpoint.port, endpoint.kind, endpoint.kind
        ),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::Connection;
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpListener;

    fn endpoint(kind: &'static str, port: u16) -> Endpoint {
        Endpoint {
            kind,
            host: "127.0.0.1".into(),
            port,
            database: "shop".into(),
            user: "app".into(),
        }
    }

    /// The message of a failed PostgreSQL connect to `url` (at `port`).
    async fn postgres_error(port: u16, url: &str) -> String {
        connect(
            &endpoint("PostgreSQL", port),
            sqlx::PgConnection::connect(url),
        )
        .await
        .unwrap_err()
        .to_string()
    }

    /// A port nothing listens on (bound, then closed).
    async fn closed_port() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.local_addr().unwrap().port()
    }

    #[tokio::test]
    async fn a_refused_connection_names_the_server_the_database_and_the_user() {
        let port = closed_port().await;
        let url = format!("postgres://app:secret@127.0.0.1:{port}/shop");
        let text = postgres_error(port, &url).await;
        assert!(
            text.starts_with(&format!(
                "cannot connect to PostgreSQL at 127.0.0.1:{port} (database \"shop\", user \"app\"): "
            )),
            "{text}"
        );
        assert!(text.contains("is the server running"), "{text}");
        assert!(!text.contains("secret"), "{text}");
    }

    #[tokio::test]
    async fn a_server_of_another_kind_is_named_as_the_likely_cause() {
        // Something that answers a PostgreSQL start-up message with bytes no PostgreSQL sends.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let _ = socket
                    .write_all(b"\x4a\x00\x00\x00\x0a5.5.5-10.11.6-MariaDB\0")
                    .await;
            }
        });
        let url = format!("postgres://app@127.0.0.1:{port}/shop");
        let text = postgres_error(port, &url).await;
        assert!(text.contains("does not answer like PostgreSQL"), "{text}");
    }

    #[tokio::test]
    async fn a_server_that_never_answers_is_given_up_after_the_deadline() {
        // A MySQL client waits for the server's greeting; a PostgreSQL server never sends one.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let held = tokio::spawn(async move {
            let mut sockets = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                sockets.push(socket);
            }
        });
        let url = format!("mysql://app@127.0.0.1:{port}/shop");
        let started = std::time::Instant::now();
        let err = connect_within(
            Duration::from_millis(300),
            &endpoint("MariaDB/MySQL", port),
            sqlx::MySqlConnection::connect(&url),
        )
        .await
        .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        let text = err.to_string();
        assert!(text.contains("no answer within 300 ms"), "{text}");
        assert!(
            text.contains(&format!("MariaDB/MySQL at 127.0.0.1:{port}")),
            "{text}"
        );
        held.abort();
    }
}
