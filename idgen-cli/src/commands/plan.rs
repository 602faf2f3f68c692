//! `idgen plan --nodes N --rate R/s --years Y [--max-bits B] [--epoch T]`: the layout that
//! `idgen_core::Layout::plan` finds, explained; or its refusal (exit status 1).

use std::io::Write;

use idgen_core::Layout;
use idgen_core::snowflake::plan::{PREFERRED_UNITS_MS, Plan, Requirements};
use serde::Serialize;

use crate::describe::LayoutJson;
use crate::error::CliError;
use crate::layout_arg::{self, LayoutArg};
use crate::time_arg;

/// Arguments of `plan`.
#[derive(Debug, clap::Args)]
pub(crate) struct PlanArgs {
    /// How many nodes issue IDs at once (node IDs 0 to N-1)
    #[arg(long, value_name = "N")]
    pub(crate) nodes: u64,

    /// IDs per second that one node must be able to issue: R or R/s (per node, which is what a
    /// Snowflake sequence limits)
    #[arg(long, value_name = "R/s", value_parser = parse_rate)]
    pub(crate) rate: u64,

    /// Years (of 365.2425 days) the layout must last from its epoch
    #[arg(long, value_name = "Y")]
    pub(crate) years: u32,

    /// The most bits an ID may use, 1 to 63 (53 keeps IDs exact as JSON numbers in JavaScript)
    #[arg(long, value_name = "B", default_value_t = 63)]
    pub(crate) max_bits: u8,

    /// The epoch: RFC 3339 or Unix milliseconds [default: the start of the current year, UTC]
    #[arg(long, value_name = "TIME", value_parser = time_arg::parse_unix_ms, allow_hyphen_values = true)]
    pub(crate) epoch: Option<i64>,
}

/// `100000` or `100000/s`.
fn parse_rate(text: &str) -> Result<u64, String> {
    let number = text.strip_suffix("/s").unwrap_or(text);
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{text:?} is not a rate: write IDs per second per node as R or R/s (like 100000/s)"
        ));
    }
    number
        .parse()
        .map_err(|_| format!("{text:?} is not a rate: at most {} IDs/s", u64::MAX))
}

/// The JSON of `plan`.
#[derive(Serialize)]
struct PlanJson {
    /// The layout; `layout.spec` is what `--layout` takes.
    layout: LayoutJson,
    asked: AskedJson,
    total_bits: u8,
    /// The bits the requirements need at this tick; the rest went to the timestamp.
    needs_bits: u8,
    spare_bits: u8,
    /// Whether the tick is one of 1 ms, 10 ms, 100 ms, 1 s.
    preferred_unit: bool,
    node_capacity: u64,
    ids_per_tick: u64,
    ids_per_second: u64,
    lifetime_ms: u64,
    lifetime_years: f64,
    /// The last instant the layout can carry, RFC 3339 in UTC.
    until: String,
}

#[derive(Serialize)]
struct AskedJson {
    nodes: u64,
    rate_per_node: u64,
    years: u32,
    max_bits: u8,
    epoch_ms: i64,
}

/// Prints the planned layout and why, or fails with the library's refusal.
pub(crate) fn run(args: &PlanArgs, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let mut needs =
        Requirements::new(args.nodes, args.rate, args.years).with_max_bits(args.max_bits);
    if let Some(epoch) = args.epoch {
        needs = needs.with_epoch_ms(epoch);
    }
    let plan = Layout::plan(&needs).map_err(idgen_core::Error::from)?;
    let layout = plan.layout;
    // The text --layout takes, read back: the same layout (and its preset's name, if it is one).
    let spec = layout_arg::spec(&layout);
    let arg = layout_arg::parse(&spec)
        .ok()
        .filter(|arg| arg.layout == layout)
        .ok_or_else(|| idgen_core::Error::InvalidLayout {
            reason: format!("{spec} does not read back as the planned layout"),
        })?;
    if json {
        let report = PlanJson {
            layout: LayoutJson::new(&arg),
            asked: AskedJson {
                nodes: needs.nodes,
                rate_per_node: needs.rate_per_node,
                years: needs.years,
                max_bits: needs.max_bits,
                epoch_ms: needs.epoch_ms,
            },
            total_bits: layout.total_bits(),
            needs_bits: plan.narrowest.total_bits(),
            spare_bits: plan.spare_bits(),
            preferred_unit: plan.preferred_unit(),
            node_capacity: layout.node_capacity(),
            ids_per_tick: layout.ids_per_tick(),
            ids_per_second: layout.ids_per_second(),
            lifetime_ms: layout.lifetime_ms(),
            lifetime_years: layout.lifetime_years(),
            until: layout.last_rfc3339(),
        };
        return crate::json::write_json(out, &report);
    }
    for (name, value) in lines(&needs, &plan, &spec, &arg) {
        writeln!(out, "{name:<10} {value}")?;
    }
    Ok(())
}

/// The text report: one (name, value) a line.
fn lines(
    needs: &Requirements,
    plan: &Plan,
    spec: &str,
    arg: &LayoutArg,
) -> Vec<(&'static str, String)> {
    let l = &plan.layout;
    let unit = unit_text(l.unit_ms());
    let epoch = time_arg::utc(l.epoch_ms()).unwrap_or_else(|| format!("{} ms", l.epoch_ms()));
    let mut lines = vec![("layout", spec.to_owned())];
    if arg.name != "custom" {
        lines.push(("preset", format!("{} (--layout {})", arg.name, arg.name)));
    }
    lines.extend([
        (
            "bits",
            format!(
                "{} of {}: timestamp {} | node {} | sequence {}, {unit} ticks",
                l.total_bits(),
                needs.max_bits,
                l.timestamp_bits(),
                l.node_bits(),
                l.sequence_bits()
            ),
        ),
        (
            "nodes",
            format!(
                "{} (node IDs 0 to {}), asked {}",
                l.node_capacity(),
                l.max_node(),
                needs.nodes
            ),
        ),
        (
            "rate",
            format!(
                "{} {} per node ({} per {unit} tick), asked {}",
                l.ids_per_second(),
                if l.ids_per_second() == 1 {
                    "ID/s"
                } else {
                    "IDs/s"
                },
                l.ids_per_tick(),
                needs.rate_per_node
            ),
        ),
        (
            "lifetime",
            format!(
                "{:.1} years, from {epoch} until {}, asked {}",
                l.lifetime_years(),
                l.last_rfc3339(),
                needs.years
            ),
        ),
    ]);
    let needed = plan.narrowest.total_bits();
    let preferred = PREFERRED_UNITS_MS.map(unit_text).join(", ");
    lines.push((
        "tick",
        if plan.preferred_unit() {
            format!(
                "{unit}: of {preferred}, the tick that needs the fewest bits ({needed}; the finer \
                 wins a tie)"
            )
        } else {
            format!(
                "{unit}: none of {preferred} fits {} bits; this tick needs {needed}",
                needs.max_bits
            )
        },
    ));
    let spare = plan.spare_bits();
    lines.push((
        "spare",
        if spare == 0 {
            "none: the layout needs every bit".to_owned()
        } else {
            format!(
                "{spare} bits, to the timestamp ({} → {} bits): when the timestamp runs out every \
                 node stops at once, while a low rate only makes a generator wait",
                plan.narrowest.timestamp_bits(),
                l.timestamp_bits()
            )
        },
    ));
    let unused = needs.max_bits - l.total_bits();
    if unused > 0 {
        lines.push((
            "unused",
            format!(
                "{unused} bits: a longer timestamp would pass the last instant a layout can carry"
            ),
        ));
    }
    lines
}

/// `1 ms`, `1 s`, `1500 ms`.
fn unit_text(unit_ms: u32) -> String {
    if unit_ms >= 1000 && unit_ms.is_multiple_of(1000) {
        format!("{} s", unit_ms / 1000)
    } else {
        format!("{unit_ms} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_with_or_without_per_second() {
        assert_eq!(parse_rate("100000"), Ok(100_000));
        assert_eq!(parse_rate("100000/s"), Ok(100_000));
        assert_eq!(parse_rate("0"), Ok(0)); // refused by the planner, naming it
        for bad in ["", "/s", "1e5", "-1", "100/ms", "99999999999999999999"] {
            let err = parse_rate(bad).unwrap_err();
            assert!(err.contains(&format!("{bad:?}")), "{err}");
        }
    }
}
