//! Shared by the bookstore tests: a prepared SQLite cluster, a server on an ephemeral port, a
//! plain HTTP/1.1 client, a check of a program's exit, and `node`.

#![allow(dead_code, unreachable_pub)]

use std::io::Write;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::Arc;

use axum::body::Bytes;
use bookstore::db::{Cluster, Target};
use bookstore::instance::Instance;
use bookstore::shards::Shards;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// SQLite files in a fresh temporary directory, opened and prepared as the binary does (tables
/// created); they last as long as the returned directory.
pub async fn sqlite_cluster() -> (tempfile::TempDir, Cluster, Shards) {
    let dir = tempfile::tempdir().unwrap();
    let cluster = Cluster::open(&Target::Dir(dir.path().to_owned()))
        .await
        .unwrap();
    let shards = bookstore::prepare(&cluster).await.unwrap();
    (dir, cluster, shards)
}

/// `out`, from a program that must have succeeded (else its stderr is the failure's message).
pub fn succeeded(out: std::process::Output) -> std::process::Output {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A bookstore API served from SQLite files in a temporary directory.
pub struct Server {
    pub addr: SocketAddr,
    pub instance: Arc<Instance>,
    pub cluster: Cluster,
    _dir: tempfile::TempDir,
}

impl Server {
    pub async fn start() -> Server {
        let (dir, cluster, shards) = sqlite_cluster().await;
        let instance = Arc::new(Instance::start(&cluster, shards).await.unwrap());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = bookstore::http::router(Arc::clone(&instance));
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Server {
            addr,
            instance,
            cluster,
            _dir: dir,
        }
    }
}

/// An HTTP answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub content_type: Option<String>,
    pub location: Option<String>,
    pub allow: Option<String>,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// Sends one request over a real TCP connection: `X-Customer-Id: customer` when given, and a
/// JSON content type when there is a body.
pub async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    customer: Option<&str>,
    body: Option<&str>,
) -> Answer {
    let mut headers = Vec::new();
    if let Some(c) = customer {
        headers.push(("x-customer-id", c));
    }
    if body.is_some() {
        headers.push(("content-type", "application/json"));
    }
    request_raw(addr, method, path, &headers, body.unwrap_or("")).await
}

/// Sends one request with exactly these headers.
pub async fn request_raw(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let client: Client<HttpConnector, Full<Bytes>> =
        Client::builder(TokioExecutor::new()).build_http();
    let mut req = axum::http::Request::builder()
        .method(method)
        .uri(format!("http://{addr}{path}"));
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let req = req.body(Full::new(Bytes::from(body.to_owned()))).unwrap();
    let res = client.request(req).await.unwrap();
    let header = |name: &str| {
        res.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    let (status, content_type, location, allow) = (
        res.status().as_u16(),
        header("content-type"),
        header("location"),
        header("allow"),
    );
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    Answer {
        status,
        content_type,
        location,
        allow,
        body: String::from_utf8(bytes.to_vec()).unwrap(),
    }
}

/// Runs `script` in node with `input` on stdin; returns stdout.
pub fn node(script: &str, input: &str) -> String {
    let mut child = Command::new("node")
        .args(["-e", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node (JavaScript) is needed for this test");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "node failed");
    String::from_utf8(out.stdout).unwrap()
}
