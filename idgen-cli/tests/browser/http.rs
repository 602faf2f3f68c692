//! Plain HTTP/1.1 requests to `idgen web`, with exactly the headers a test gives (a foreign
//! `Host`, no `Origin`, …), which a browser or an HTTP client would not send.

use serde_json::Value;

use super::Server;

/// An answer of the server: its status and body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    /// The status line and headers.
    pub head: String,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// One HTTP/1.1 request to `addr` over a plain socket, with exactly these headers (`Host`
/// included, or left out), and a JSON body if given.
pub fn request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Answer {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(body) = body {
        head.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    head.push_str("\r\n");
    head.push_str(body.unwrap_or_default());
    stream.write_all(head.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    // The bodies here are small: hyper sends them whole, with Content-Length.
    Answer {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    }
}

/// `GET path` as the page sends it (its Host, its token), which must answer 200, as JSON.
pub fn get_json(server: &Server, path: &str) -> Value {
    let answer = request(
        &server.addr,
        "GET",
        path,
        &[("Host", &server.addr), ("X-Idgen-Token", &server.token)],
        None,
    );
    assert_eq!(answer.status, 200, "{answer:?}");
    answer.json()
}

/// `POST path` with `body` as the page sends it (its Host, Origin and token).
pub fn post(server: &Server, path: &str, body: &Value) -> Answer {
    let origin = format!("http://{}", server.addr);
    request(
        &server.addr,
        "POST",
        path,
        &[
            ("Host", &server.addr),
            ("Origin", &origin),
            ("X-Idgen-Token", &server.token),
        ],
        Some(&body.to_string()),
    )
}
