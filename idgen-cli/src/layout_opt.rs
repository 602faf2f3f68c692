//! `--layout` as a clap argument, shared by the Snowflake commands and the web page.

use crate::layout_arg::{self, LayoutArg};

/// `--layout`, shared by the Snowflake commands.
#[derive(Clone, Debug, clap::Args)]
pub(crate) struct LayoutOpt {
    /// The layout: twitter, sonyflake, instagram, js-safe (53 bits, exact in JavaScript), or
    /// custom:KEY=VALUE,… with the keys base=PRESET, epoch=RFC3339|UNIX_MS, unit=Nms|Ns,
    /// time=BITS, node=BITS|NAME:BITS+NAME:BITS…, seq=BITS, order=tns|tsn; for example
    /// custom:epoch=2026-01-01T00:00:00Z,unit=1ms,time=41,node=dc:5+worker:5,seq=12
    #[arg(long, value_name = "LAYOUT", env = "IDGEN_LAYOUT", default_value = "twitter",
          value_parser = layout_arg::parse)]
    pub(crate) layout: LayoutArg,
}
