//! [`NodeId`]: where a generator's node ID comes from.

use std::net::{IpAddr, Ipv4Addr};

use crate::Result;
use crate::error::Error;
use crate::snowflake::Layout;

/// A source of a node ID, resolved and checked against the layout's node width by
/// [`SnowflakeBuilder::build`](crate::snowflake::SnowflakeBuilder::build) (or [`NodeId::resolve`]).
///
/// For node IDs that can never be shared by two live processes, lease them from the database
/// (`WorkerLease` in the adapter crates); these sources are for deployments that already assign
/// unique numbers.
///
/// ```
/// use idgen_core::{Layout, NodeId};
///
/// assert_eq!(NodeId::Fixed(7).resolve(&Layout::TWITTER)?, 7);
/// assert_eq!(NodeId::HostnameOrdinal(Some("orders-12".into())).resolve(&Layout::TWITTER)?, 12);
/// assert_eq!(
///     NodeId::PrivateIpv4(Some("10.0.10.5".parse().unwrap())).resolve(&Layout::SONYFLAKE)?,
///     (10 << 8) | 5
/// );
/// # Ok::<(), idgen_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeId {
    /// This number.
    Fixed(u64),
    /// The decimal number in this environment variable (e.g. `"NODE_ID"`).
    Env(String),
    /// The trailing number of a host name after its last `-`, as a Kubernetes StatefulSet names
    /// its pods (`orders-7` → 7). `None` reads this machine's host name.
    HostnameOrdinal(Option<String>),
    /// Sonyflake's rule: the low 16 bits of a private IPv4 address (10/8, 172.16/12,
    /// 192.168/16 or 169.254/16). `None` takes the first such address of this machine's network
    /// interfaces.
    PrivateIpv4(Option<Ipv4Addr>),
}

impl NodeId {
    /// The node ID, checked against `layout`'s node width.
    ///
    /// ```
    /// use idgen_core::{Layout, NodeId};
    /// let err = NodeId::HostnameOrdinal(Some("orders-2000".into())).resolve(&Layout::TWITTER).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "no node ID from host name \"orders-2000\": node 2000 does not fit in 10 bits: the largest node is 1023"
    /// );
    /// ```
    pub fn resolve(&self, layout: &Layout) -> Result<u64> {
        let (origin, node) = match self {
            NodeId::Fixed(n) => return layout.check_node(*n),
            NodeId::Env(var) => {
                let origin = format!("environment variable {var}");
                let text = std::env::var(var).map_err(|e| Error::NodeSource {
                    origin: origin.clone(),
                    reason: match e {
                        std::env::VarError::NotPresent => "it is not set".into(),
                        std::env::VarError::NotUnicode(_) => "it is not valid UTF-8".into(),
                    },
                })?;
                let node = text.parse::<u64>().map_err(|_| Error::NodeSource {
                    origin: origin.clone(),
                    reason: format!("{text:?} is not a non-negative decimal integer"),
                })?;
                (origin, node)
            }
            NodeId::HostnameOrdinal(name) => {
                let name = match name {
                    Some(n) => n.clone(),
                    None => gethostname::gethostname().to_string_lossy().into_owned(),
                };
                let origin = format!("host name {name:?}");
                match hostname_ordinal(&name) {
                    Some(n) => (origin, n),
                    None => {
                        return Err(Error::NodeSource {
                            origin,
                            reason: "it does not end in -<number> (like orders-7)".into(),
                        });
                    }
                }
            }
            NodeId::PrivateIpv4(addr) => {
                let addr = match addr {
                    Some(a) => *a,
                    None => first_private_ipv4().ok_or_else(|| Error::NodeSource {
                        origin: "network interfaces".into(),
                        reason: "no interface has a private IPv4 address \
                                 (10/8, 172.16/12, 192.168/16, 169.254/16)"
                            .into(),
                    })?,
                };
                let origin = format!("private IPv4 address {addr}");
                match node_from_private_ipv4(addr) {
                    Some(n) => (origin, n),
                    None => {
                        return Err(Error::NodeSource {
                            origin,
                            reason: "it is not in 10/8, 172.16/12, 192.168/16 or 169.254/16".into(),
                        });
                    }
                }
            }
        };
        layout.check_node(node).map_err(|e| Error::NodeSource {
            origin,
            reason: e.to_string(),
        })
    }
}

/// The number after the last `-` of a host name (`orders-7` → `Some(7)`; a domain suffix such
/// as `orders-7.orders.svc` is ignored).
fn hostname_ordinal(name: &str) -> Option<u64> {
    let short = name.split('.').next().unwrap_or(name);
    let (_, digits) = short.rsplit_once('-')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Sonyflake's machine ID: the low 16 bits of a private IPv4 address.
fn node_from_private_ipv4(addr: Ipv4Addr) -> Option<u64> {
    let [a, b, c, d] = addr.octets();
    let private = a == 10
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 168)
        || (a == 169 && b == 254);
    private.then_some((u64::from(c) << 8) | u64::from(d))
}

fn first_private_ipv4() -> Option<Ipv4Addr> {
    if_addrs::get_if_addrs()
        .ok()?
        .into_iter()
        .find_map(|iface| match iface.ip() {
            IpAddr::V4(v4) if node_from_private_ipv4(v4).is_some() => Some(v4),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostname_ordinals() {
        assert_eq!(hostname_ordinal("orders-7"), Some(7));
        assert_eq!(hostname_ordinal("orders-api-0"), Some(0));
        assert_eq!(hostname_ordinal("orders-7.orders.default.svc"), Some(7));
        assert_eq!(hostname_ordinal("orders"), None);
        assert_eq!(hostname_ordinal("orders-"), None);
        assert_eq!(hostname_ordinal("orders-7a"), None);
        assert_eq!(hostname_ordinal("orders-99999999999999999999999"), None);
    }

    #[test]
    fn private_ipv4_ranges() {
        let node = |s: &str| node_from_private_ipv4(s.parse().unwrap());
        assert_eq!(node("10.1.2.3"), Some(0x0203));
        assert_eq!(node("172.16.0.1"), Some(1));
        assert_eq!(node("172.31.255.255"), Some(0xffff));
        assert_eq!(node("172.32.0.1"), None);
        assert_eq!(node("172.15.0.1"), None);
        assert_eq!(node("192.168.1.9"), Some(0x0109));
        assert_eq!(node("169.254.3.4"), Some(0x0304));
        assert_eq!(node("127.0.0.1"), None);
        assert_eq!(node("8.8.8.8"), None);
        assert_eq!(node("100.64.0.1"), None);
    }

    #[test]
    fn env_source_parses_and_checks() {
        // Each test uses its own variable name: tests run in parallel.
        unsafe_free_env_test("IDGEN_TEST_NODE_OK", Some("513"), Ok(513));
        unsafe_free_env_test("IDGEN_TEST_NODE_UNSET", None, Err("is not set"));
        unsafe_free_env_test(
            "IDGEN_TEST_NODE_TEXT",
            Some("seven"),
            Err("\"seven\" is not"),
        );
        unsafe_free_env_test(
            "IDGEN_TEST_NODE_BIG",
            Some("1024"),
            Err("the largest node is 1023"),
        );
    }

    fn unsafe_free_env_test(
        var: &str,
        value: Option<&str>,
        expect: std::result::Result<u64, &str>,
    ) {
        // set_var is unsafe in edition 2024; run the check in a child process instead.
        let exe = std::env::current_exe().unwrap();
        let mut cmd = std::process::Command::new(exe);
        cmd.args([
            "--exact",
            "snowflake::node::tests::env_child",
            "--nocapture",
        ]);
        cmd.env("IDGEN_ENV_CHILD_VAR", var)
            .env("IDGEN_ENV_CHILD_EXPECT", format!("{expect:?}"));
        match value {
            Some(v) => cmd.env(var, v),
            None => cmd.env_remove(var),
        };
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{var}: {stdout}"
        );
    }

    #[test]
    fn env_child() {
        let Ok(var) = std::env::var("IDGEN_ENV_CHILD_VAR") else {
            return;
        };
        let expect = std::env::var("IDGEN_ENV_CHILD_EXPECT").unwrap();
        let got = NodeId::Env(var.clone()).resolve(&Layout::TWITTER);
        match got {
            Ok(n) => assert_eq!(expect, format!("{:?}", Ok::<u64, &str>(n))),
            Err(e) => {
                let text = e.to_string();
                assert!(text.starts_with(&format!("no node ID from environment variable {var}")));
                let want = expect.trim_start_matches("Err(\"").trim_end_matches("\")");
                let want = want.replace("\\\"", "\"");
                assert!(text.contains(&want), "{text} does not contain {want}");
            }
        }
    }

    #[test]
    fn this_machines_sources_resolve_or_explain() {
        // Whatever this machine's name and addresses are, the answer is a node ID that fits, or
        // an error that names where it looked.
        for source in [NodeId::HostnameOrdinal(None), NodeId::PrivateIpv4(None)] {
            match source.resolve(&Layout::SONYFLAKE) {
                Ok(n) => assert!(n <= Layout::SONYFLAKE.max_node()),
                Err(Error::NodeSource { origin, reason }) => {
                    assert!(!origin.is_empty() && !reason.is_empty())
                }
                Err(other) => panic!("unexpected error {other}"),
            }
        }
    }
}
