//! The node of `compose` and `new`: `--node`, or its sub-fields (`--datacenter`, `--worker`,
//! `--node-field NAME=VALUE`).

use idgen_core::NodeId;

use crate::error::CliError;
use crate::layout_arg::LayoutArg;

/// The node options shared by `compose` and `new`.
#[derive(Clone, Debug, Default, clap::Args)]
pub(crate) struct NodeArgs {
    /// The node ID: a number, `hostname` (the number after the host name's last `-`, as in
    /// orders-7), `ip` (the low 16 bits of a private IPv4 address, Sonyflake's rule) or
    /// `env:VAR` (the number in an environment variable)
    #[arg(long, value_name = "NODE", value_parser = parse_node_source, allow_hyphen_values = true,
          conflicts_with_all = ["datacenter", "worker", "node_fields"])]
    pub(crate) node: Option<NodeId>,

    /// The datacenter sub-field of the node (Twitter layout)
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub(crate) datacenter: Option<u64>,

    /// The worker sub-field of the node (Twitter layout)
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub(crate) worker: Option<u64>,

    /// A node sub-field by name, for any layout (e.g. machine=2565, shard=12); repeatable
    #[arg(long = "node-field", id = "node_fields", value_name = "NAME=N", value_parser = parse_named_value,
        allow_hyphen_values = true)]
    pub(crate) node_fields: Vec<(String, u64)>,
}

impl NodeArgs {
    /// Whether any node option was given.
    pub(crate) fn given(&self) -> bool {
        self.node.is_some()
            || self.datacenter.is_some()
            || self.worker.is_some()
            || !self.node_fields.is_empty()
    }

    /// The node ID under `layout` (0 when no option was given), checked against its width.
    pub(crate) fn resolve(&self, layout: &LayoutArg) -> Result<u64, CliError> {
        if let Some(source) = &self.node {
            return Ok(source.resolve(&layout.layout)?);
        }
        let mut given: Vec<(&str, u64, String)> = Vec::new();
        if let Some(v) = self.datacenter {
            given.push(("datacenter", v, "--datacenter".into()));
        }
        if let Some(v) = self.worker {
            given.push(("worker", v, "--worker".into()));
        }
        for (name, v) in &self.node_fields {
            given.push((name, *v, format!("--node-field {name}={v}")));
        }
        if given.is_empty() {
            return Ok(0);
        }
        let fields = layout.layout.node_fields();
        let names = fields.iter().map(|f| f.name).collect::<Vec<_>>().join(", ");
        for (i, (name, _, flag)) in given.iter().enumerate() {
            if given[..i].iter().any(|(n, _, _)| n == name) {
                return Err(CliError::NodeFields(format!(
                    "node sub-field {name} is given twice (again by {flag})"
                )));
            }
            if !fields.iter().any(|f| f.name == *name) {
                return Err(CliError::NodeFields(format!(
                    "layout {layout} has no node sub-field {name} (given by {flag}); \
                     its node sub-fields are: {names}; or give the whole node with --node"
                )));
            }
        }
        let values = fields
            .iter()
            .map(|f| {
                given
                    .iter()
                    .find(|(n, _, _)| *n == f.name)
                    .map(|(_, v, _)| *v)
                    .ok_or_else(|| {
                        let flag = match f.name {
                            "datacenter" | "worker" => format!("--{} N", f.name),
                            other => format!("--node-field {other}=N"),
                        };
                        CliError::NodeFields(format!(
                            "layout {layout} needs node sub-field {} too ({flag}); \
                             its node sub-fields are: {names}",
                            f.name
                        ))
                    })
            })
            .collect::<Result<Vec<u64>, CliError>>()?;
        Ok(layout.layout.node_from_fields(&values)?)
    }
}

/// `7`, `hostname`, `ip` or `env:VAR`.
fn parse_node_source(text: &str) -> Result<NodeId, String> {
    if let Some(var) = text.strip_prefix("env:") {
        if var.is_empty() {
            return Err("env: needs a variable name, like env:NODE_ID".into());
        }
        return Ok(NodeId::Env(var.to_string()));
    }
    match text {
        "hostname" => Ok(NodeId::HostnameOrdinal(None)),
        "ip" => Ok(NodeId::PrivateIpv4(None)),
        _ => text.parse::<u64>().map(NodeId::Fixed).map_err(|_| {
            format!("{text:?} is not a node: give a non-negative integer, hostname, ip or env:VAR")
        }),
    }
}

/// `NAME=N`.
fn parse_named_value(text: &str) -> Result<(String, u64), String> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?} is not NAME=N (like machine=2565)"))?;
    if name.is_empty() {
        return Err(format!("{text:?} has no sub-field name before ="));
    }
    let value = value
        .parse::<u64>()
        .map_err(|_| format!("{text:?}: {value:?} is not a non-negative integer"))?;
    Ok((name.to_string(), value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout_arg;

    fn layout(name: &str) -> LayoutArg {
        layout_arg::parse(name).unwrap()
    }

    #[test]
    fn sub_fields_make_the_node() {
        let args = NodeArgs {
            datacenter: Some(3),
            worker: Some(17),
            ..Default::default()
        };
        assert_eq!(args.resolve(&layout("twitter")).unwrap(), 113);
        let args = NodeArgs {
            node_fields: vec![("machine".into(), 2565)],
            ..Default::default()
        };
        assert_eq!(args.resolve(&layout("sonyflake")).unwrap(), 2565);
        assert_eq!(NodeArgs::default().resolve(&layout("twitter")).unwrap(), 0);
    }

    #[test]
    fn mismatched_sub_fields_are_errors_naming_them() {
        let cases = [
            (
                NodeArgs {
                    datacenter: Some(3),
                    ..Default::default()
                },
                "twitter",
                "needs node sub-field worker too (--worker N)",
            ),
            (
                NodeArgs {
                    datacenter: Some(3),
                    ..Default::default()
                },
                "sonyflake",
                "no node sub-field datacenter (given by --datacenter); its node sub-fields are: machine",
            ),
            (
                NodeArgs {
                    datacenter: Some(3),
                    node_fields: vec![("datacenter".into(), 4)],
                    ..Default::default()
                },
                "twitter",
                "datacenter is given twice (again by --node-field datacenter=4)",
            ),
            (
                NodeArgs {
                    datacenter: Some(32),
                    worker: Some(0),
                    ..Default::default()
                },
                "twitter",
                "datacenter 32 does not fit in 5 bits",
            ),
            (
                NodeArgs {
                    node: Some(NodeId::Fixed(1024)),
                    ..Default::default()
                },
                "twitter",
                "node 1024 does not fit in 10 bits",
            ),
        ];
        for (args, name, want) in cases {
            let err = args.resolve(&layout(name)).unwrap_err().to_string();
            assert!(err.contains(want), "{err}");
        }
    }

    #[test]
    fn node_sources_parse() {
        assert_eq!(parse_node_source("7"), Ok(NodeId::Fixed(7)));
        assert_eq!(
            parse_node_source("hostname"),
            Ok(NodeId::HostnameOrdinal(None))
        );
        assert_eq!(parse_node_source("ip"), Ok(NodeId::PrivateIpv4(None)));
        assert_eq!(
            parse_node_source("env:NODE_ID"),
            Ok(NodeId::Env("NODE_ID".into()))
        );
        assert!(parse_node_source("-1").unwrap_err().contains("\"-1\""));
        assert!(parse_node_source("env:").is_err());
        assert_eq!(parse_named_value("shard=12"), Ok(("shard".into(), 12)));
        assert!(
            parse_named_value("shard")
                .unwrap_err()
                .contains("\"shard\"")
        );
        assert!(parse_named_value("=3").is_err());
        assert!(
            parse_named_value("shard=-1")
                .unwrap_err()
                .contains("\"-1\"")
        );
    }
}
