//! Connection errors name what was tried and what to do, on servers that refuse, greet like
//! another kind of database or never answer; URLs are read without their passwords.

use std::time::{Duration, Instant};

use example_support::{Kind, Target, connect, connect_to};
use sqlx::Connection;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

fn target(kind: Kind, port: u16) -> Target {
    Target {
        kind,
        host: "127.0.0.1".into(),
        port,
        database: Some("shop".into()),
        user: Some("app".into()),
    }
}

/// A port nothing listens on (bound, then closed).
async fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn urls_are_read_into_kind_host_port_database_and_user_without_the_password() {
    let pg = Target::from_url("postgres://app:s%40cret@db.example:6543/shop?sslmode=disable");
    assert_eq!(pg.unwrap(), {
        let mut t = target(Kind::Postgres, 6543);
        t.host = "db.example".into();
        t
    });
    let my = Target::from_url("mariadb://root@[::1]/my%20shop").unwrap();
    assert_eq!(
        (my.kind, my.host.as_str(), my.port),
        (Kind::MySql, "::1", 3306)
    );
    assert_eq!(my.database.as_deref(), Some("my shop"));
    let socket = Target::from_url("postgresql:///shop?host=/tmp/pg").unwrap();
    assert_eq!(
        socket.to_string(),
        "PostgreSQL at socket directory /tmp/pg (database \"shop\", no user in the URL)"
    );
    let file = Target::from_url("sqlite:///tmp/a.sqlite?mode=rwc").unwrap();
    assert_eq!(file.to_string(), "SQLite file /tmp/a.sqlite");
    let text = Target::from_url("postgres://app:secret@h:5432/shop")
        .unwrap()
        .to_string();
    assert_eq!(
        text,
        "PostgreSQL at h:5432 (database \"shop\", user \"app\")"
    );
    assert!(Target::from_url("mongodb://h/shop").is_err());
    assert!(Target::from_url("mysql://h:port/shop").is_err());
}

#[tokio::test]
async fn a_refused_connection_names_the_server_the_database_and_the_user_at_once() {
    let port = closed_port().await;
    let url = format!("postgres://app:secret@127.0.0.1:{port}/shop");
    let started = Instant::now();
    // A pool would retry until its own timeout; the error comes from the probe before it.
    let never = std::future::pending::<Result<(), sqlx::Error>>();
    let text = connect(&url, never).await.unwrap_err().to_string();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        text.starts_with(&format!(
            "cannot connect to PostgreSQL at 127.0.0.1:{port} (database \"shop\", user \"app\"): "
        )),
        "{text}"
    );
    assert!(text.contains("Is the server running"), "{text}");
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
    let err = connect(&url, sqlx::PgConnection::connect(&url))
        .await
        .unwrap_err();
    let text = err.to_string();
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
    let started = Instant::now();
    let err = connect_to(
        &target(Kind::MySql, port),
        Duration::from_millis(300),
        sqlx::MySqlConnection::connect(&url),
    )
    .await
    .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    let text = err.to_string();
    assert!(text.contains("no answer within 300ms"), "{text}");
    assert!(
        text.contains(&format!("MariaDB/MySQL at 127.0.0.1:{port}")),
        "{text}"
    );
    assert!(
        text.contains("MariaDB/MySQL usually listens on 3306, PostgreSQL on 5432"),
        "{text}"
    );
    held.abort();
}
