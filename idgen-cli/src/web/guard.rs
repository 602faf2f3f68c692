//! Who may talk to `idgen web`: the checks every request passes before its handler.
//!
//! - **Host** (every route: page, assets, API): the `Host` header (and an absolute request
//!   URI's authority) must name this server: the bound address, or `localhost`, `127.0.0.1`,
//!   `[::1]` (any loopback address), with the bound port. A DNS-rebinding page (its name made to
//!   resolve to 127.0.0.1) sends its own name, so it is refused. Bound to an unspecified address
//!   (`0.0.0.0`, `::`, with `--allow-remote`), any IP address with the port is accepted, never a
//!   name other than `localhost`: a rebinding page always sends a name.
//! - **Origin**: a request that carries an `Origin` must carry one of the same hosts, with
//!   `http://`; a request that is neither `GET` nor `HEAD` must carry one (browsers always send
//!   it there), so a page of another site can neither write nor read.
//! - **Token** (the operator routes, [`require_token`]): the secret of this run, drawn from the
//!   operating system's random source at start and printed in the URL
//!   (`http://127.0.0.1:7878/?token=…`), in the `X-Idgen-Token` header; compared in constant
//!   time. The page takes it from its URL and sends it with each request.
//!
//! A refusal is a 403 with the page's JSON error shape and a one-line reason. Every answer also
//! forbids framing (`X-Frame-Options`, CSP `frame-ancestors`) and referrers.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use subtle::ConstantTimeEq;

use crate::error::CliError;

/// The header the page sends the token in.
#[cfg_attr(not(feature = "leases"), allow(dead_code))]
pub(crate) const TOKEN_HEADER: &str = "x-idgen-token";

/// Random bytes of a token (hex-encoded: twice as many characters).
const TOKEN_BYTES: usize = 24;

/// The rules of one run: the bound address and the token.
#[derive(Debug)]
pub(crate) struct Guard {
    bound: SocketAddr,
    token: String,
}

/// A shared [`Guard`], the middlewares' state.
pub(crate) type SharedGuard = Arc<Guard>;

impl Guard {
    /// The guard of a server bound to `bound`, with a fresh random token.
    pub(crate) fn new(bound: SocketAddr) -> Result<Guard, CliError> {
        let mut bytes = [0u8; TOKEN_BYTES];
        getrandom::fill(&mut bytes).map_err(CliError::Random)?;
        let token = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Ok(Guard { bound, token })
    }

    /// The guard of a server bound to `bound` with a given token (tests).
    #[cfg(test)]
    fn with_token(bound: SocketAddr, token: &str) -> Guard {
        Guard {
            bound,
            token: token.to_owned(),
        }
    }

    /// This run's token.
    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    /// Whether `authority` (a `Host` header, or the host part of an `Origin`) names this server.
    fn is_this_server(&self, authority: &str) -> bool {
        let authority = authority.to_ascii_lowercase();
        let port = self.bound.port();
        let (host, given_port) = match split_port(&authority) {
            Some((host, p)) => (host, p),
            // No port: the default port of http.
            None => (authority.as_str(), 80),
        };
        if given_port != port {
            return false;
        }
        if host == "localhost" {
            return true;
        }
        let ip = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        // A v6 address must be bracketed; a bare one with colons was not split right.
        let Ok(ip) = ip.parse::<IpAddr>() else {
            return false;
        };
        if ip.is_ipv6() && !host.starts_with('[') {
            return false;
        }
        let (ip, bound) = (ip.to_canonical(), self.bound.ip().to_canonical());
        ip.is_loopback() || ip == bound || bound.is_unspecified()
    }

    /// Whether `origin` (an `Origin` header) is this server's.
    fn is_our_origin(&self, origin: &str) -> bool {
        origin
            .strip_prefix("http://")
            .is_some_and(|authority| !authority.contains('/') && self.is_this_server(authority))
    }

    /// Why the request's Host or Origin is refused, if it is.
    fn refuse_host_or_origin(
        &self,
        method: &Method,
        headers: &HeaderMap,
        uri_authority: Option<&str>,
    ) -> Option<String> {
        let host = match headers.get(header::HOST).map(HeaderValue::to_str) {
            None => return Some("a request without a Host header is refused".into()),
            Some(Err(_)) => return Some("the Host header is not text".into()),
            Some(Ok(h)) => h,
        };
        if !self.is_this_server(host) {
            return Some(format!(
                "Host {} is not this server ({}): idgen web answers only its own address and localhost",
                shown(host),
                self.bound
            ));
        }
        if let Some(a) = uri_authority
            && !self.is_this_server(a)
        {
            return Some(format!("the request names another server ({})", shown(a)));
        }
        match headers.get(header::ORIGIN).map(HeaderValue::to_str) {
            Some(Ok(origin)) if self.is_our_origin(origin) => None,
            Some(Ok(origin)) => Some(format!(
                "Origin {} is not this server: a page of another site may not use idgen web",
                shown(origin)
            )),
            Some(Err(_)) => Some("the Origin header is not text".into()),
            None if method == Method::GET || method == Method::HEAD => None,
            None => Some(format!(
                "a {method} request without an Origin header is refused (the page sends one)"
            )),
        }
    }

    /// Whether `headers` carry this run's token.
    #[cfg_attr(not(feature = "leases"), allow(dead_code))]
    fn has_token(&self, headers: &HeaderMap) -> bool {
        headers
            .get(TOKEN_HEADER)
            .is_some_and(|given| bool::from(given.as_bytes().ct_eq(self.token.as_bytes())))
    }
}

/// Splits `host:port` (`[v6]:port` included); `None` when there is no port.
fn split_port(authority: &str) -> Option<(&str, u16)> {
    let (host, port) = authority.rsplit_once(':')?;
    // `[::1]` alone: the colon was inside the brackets.
    if host.starts_with('[') && !host.ends_with(']') {
        return None;
    }
    // An empty port (`localhost:`) counts as none given, but never as a match for another one.
    Some((host, port.parse().unwrap_or(0)))
}

/// A header value as a refusal shows it: quoted, cut at 80 characters.
fn shown(value: &str) -> String {
    const MAX: usize = 80;
    match value.char_indices().nth(MAX) {
        Some((at, _)) => format!("{:?}…", &value[..at]),
        None => format!("{value:?}"),
    }
}

fn forbidden(message: String) -> Response {
    super::api::unreadable(StatusCode::FORBIDDEN, message)
}

/// Adds the headers that keep the page out of frames and its URL (with the token) out of
/// referrers.
fn protect(response: &mut Response) {
    let h = response.headers_mut();
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("frame-ancestors 'none'"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
}

/// The middleware of every route: Host and Origin (see the module's documentation).
pub(crate) async fn check_host_and_origin(
    State(guard): State<SharedGuard>,
    request: Request,
    next: Next,
) -> Response {
    let refusal = guard.refuse_host_or_origin(
        request.method(),
        request.headers(),
        request.uri().authority().map(|a| a.as_str()),
    );
    let mut response = match refusal {
        Some(reason) => forbidden(reason),
        None => next.run(request).await,
    };
    protect(&mut response);
    response
}

/// The middleware of the operator routes: the token.
#[cfg_attr(not(feature = "leases"), allow(dead_code))]
pub(crate) async fn require_token(
    State(guard): State<SharedGuard>,
    request: Request,
    next: Next,
) -> Response {
    if guard.has_token(request.headers()) {
        return next.run(request).await;
    }
    let why = if request.headers().contains_key(TOKEN_HEADER) {
        "the token is not this run's"
    } else {
        "the operator view needs the token"
    };
    forbidden(format!(
        "{why}: open the URL idgen web printed when it started (…/?token=…)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(bound: &str) -> Guard {
        Guard::with_token(bound.parse().unwrap(), "abc")
    }

    #[test]
    fn hosts_of_a_loopback_server() {
        let g = guard("127.0.0.1:7878");
        for ok in [
            "127.0.0.1:7878",
            "localhost:7878",
            "LocalHost:7878",
            "[::1]:7878",
            "127.0.0.2:7878",
        ] {
            assert!(g.is_this_server(ok), "{ok}");
        }
        for no in [
            "evil.example",
            "evil.example:7878",
            "localhost",
            "localhost:",
            "localhost:7879",
            "127.0.0.1",
            "127.0.0.1:80",
            "10.0.0.1:7878",
            "::1:7878",
            "[::1]",
            "localhost.:7878",
            "127.0.0.1.evil.example:7878",
            "",
        ] {
            assert!(!g.is_this_server(no), "{no}");
        }
    }

    #[test]
    fn hosts_of_other_bound_addresses() {
        let g = guard("192.168.1.5:8000");
        assert!(g.is_this_server("192.168.1.5:8000"));
        assert!(g.is_this_server("localhost:8000"));
        assert!(!g.is_this_server("192.168.1.6:8000"));
        assert!(!g.is_this_server("myhost.lan:8000"));
        let any = guard("0.0.0.0:8000");
        assert!(any.is_this_server("192.168.1.6:8000"));
        assert!(any.is_this_server("[fe80::1]:8000"));
        assert!(!any.is_this_server("myhost.lan:8000"));
        let port80 = guard("127.0.0.1:80");
        assert!(port80.is_this_server("localhost"));
        assert!(port80.is_this_server("[::1]"));
        assert!(port80.is_this_server("127.0.0.1:80"));
        let v6 = guard("[::1]:9000");
        assert!(v6.is_this_server("[::1]:9000"));
        assert!(v6.is_this_server("127.0.0.1:9000"));
    }

    #[test]
    fn origins() {
        let g = guard("127.0.0.1:7878");
        assert!(g.is_our_origin("http://127.0.0.1:7878"));
        assert!(g.is_our_origin("http://localhost:7878"));
        for no in [
            "null",
            "http://evil.example",
            "http://evil.example:7878",
            "https://127.0.0.1:7878",
            "http://127.0.0.1:7878/x",
            "http://127.0.0.1:7879",
            "127.0.0.1:7878",
        ] {
            assert!(!g.is_our_origin(no), "{no}");
        }
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| {
                (
                    header::HeaderName::from_static(k),
                    HeaderValue::from_static(v),
                )
            })
            .collect()
    }

    #[test]
    fn origin_is_needed_on_a_post_only() {
        let g = guard("127.0.0.1:7878");
        let host = ("host", "127.0.0.1:7878");
        assert_eq!(
            g.refuse_host_or_origin(&Method::GET, &headers(&[host]), None),
            None
        );
        let post = g.refuse_host_or_origin(&Method::POST, &headers(&[host]), None);
        assert!(post.unwrap().contains("without an Origin"));
        let foreign = g.refuse_host_or_origin(
            &Method::GET,
            &headers(&[host, ("origin", "http://evil.example")]),
            None,
        );
        assert!(foreign.unwrap().contains("\"http://evil.example\""));
        let absolute =
            g.refuse_host_or_origin(&Method::GET, &headers(&[host]), Some("evil.example"));
        assert!(absolute.unwrap().contains("another server"));
        let none = g.refuse_host_or_origin(&Method::GET, &HeaderMap::new(), None);
        assert!(none.unwrap().contains("without a Host"));
    }

    #[test]
    fn the_token_is_compared_whole() {
        let g = guard("127.0.0.1:7878");
        assert!(g.has_token(&headers(&[("x-idgen-token", "abc")])));
        for no in ["ab", "abd", "abcd", ""] {
            let mut h = HeaderMap::new();
            h.insert(TOKEN_HEADER, HeaderValue::from_str(no).unwrap());
            assert!(!g.has_token(&h), "{no:?}");
        }
        assert!(!g.has_token(&HeaderMap::new()));
    }

    #[test]
    fn tokens_are_random_and_long() {
        let bound = "127.0.0.1:7878".parse().unwrap();
        let (a, b) = (Guard::new(bound).unwrap(), Guard::new(bound).unwrap());
        assert_eq!(a.token().len(), 2 * TOKEN_BYTES);
        assert!(a.token().bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a.token(), b.token());
    }

    #[test]
    fn a_long_value_is_cut_in_a_refusal() {
        let long = "x".repeat(5000);
        assert!(shown(&long).chars().count() < 90);
    }
}
