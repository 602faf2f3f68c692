//! Path 2, forced: PostgreSQL and MySQL/MariaDB in containers through testcontainers, and their
//! removal when the test process dies.
//!
//! Without a Docker engine these tests say so and pass, so the suite passes on a machine with
//! none; with `IDGEN_TESTKIT_ROUTE=containers` (as CI runs) a missing engine fails them.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{assert_cleanup_drops, assert_isolated, assert_on_its_database, two, version};

/// Whether a Docker engine answers the `docker` command; panics when one is required.
fn docker_answers(test: &str) -> bool {
    let answers = Command::new("docker")
        .args(["version", "--format", "{{.Server.Version}}"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    let required = std::env::var("IDGEN_TESTKIT_ROUTE").is_ok_and(|route| route == "containers");
    assert!(
        answers || !required,
        "IDGEN_TESTKIT_ROUTE=containers, but no Docker engine answers `docker version`"
    );
    if !answers {
        let _ = writeln!(
            std::io::stderr(),
            "{test}: skipped, no Docker engine answers"
        );
    }
    answers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_container_gives_isolated_databases() {
    if !docker_answers("postgres_container_gives_isolated_databases") {
        return;
    }
    let (a, b) = two(idgen_testdb::containers::postgres, "a PostgreSQL container").await;
    let version = version(&a).await;
    assert!(version.starts_with("PostgreSQL 15"), "{version}");
    assert_isolated(&a, &b).await;
    assert_cleanup_drops(a, &b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mysql_container_gives_isolated_databases() {
    if !docker_answers("mysql_container_gives_isolated_databases") {
        return;
    }
    let (a, b) = two(idgen_testdb::containers::mysql, "a MySQL/MariaDB container").await;
    let version = version(&a).await;
    assert!(
        version.contains("MariaDB") || version.starts_with("8."),
        "{version}"
    );
    assert_isolated(&a, &b).await;
    assert_on_its_database(&b).await;
}

/// Run by [`a_killed_test_process_leaves_no_container`] in a child process.
#[tokio::test]
#[ignore = "a helper: run by a_killed_test_process_leaves_no_container in a child process"]
async fn child_holds_a_postgres_container() {
    if std::env::var_os("IDGEN_TESTKIT_CHILD").is_none() {
        return;
    }
    let _db = idgen_testdb::containers::postgres()
        .await
        .expect("a PostgreSQL container");
    let mut out = std::io::stdout();
    let _ = writeln!(out, "holding");
    let _ = out.flush();
    tokio::time::sleep(Duration::from_secs(600)).await;
}

#[test]
fn a_killed_test_process_leaves_no_container() {
    if !docker_answers("a_killed_test_process_leaves_no_container") {
        return;
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "child_holds_a_postgres_container",
            "--nocapture",
        ])
        .env("IDGEN_TESTKIT_CHILD", "1")
        .env_remove("IDGEN_POSTGRES_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let holding = lines.any(|line| line.is_ok_and(|l| l.contains("holding")));
    assert!(holding, "the child process did not get its container");

    let label = format!("label=org.idgen.testkit.pid={}", child.id());
    let containers = || {
        let out = Command::new("docker")
            .args(["ps", "--all", "--quiet", "--filter", &label])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    assert!(!containers().is_empty(), "no container labelled {label}");

    child.kill().unwrap(); // SIGKILL: no destructor, no exit handler runs
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !containers().is_empty() {
        assert!(
            Instant::now() < deadline,
            "container {} outlived its killed process by 60 s",
            containers()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}
