//! `idgen leases list` and `idgen leases free NODE [--force]`: the node-ID lease table of a
//! database, or the lease keys of etcd (`--etcd`) or Redis (`--redis`).

use std::fmt::Write as _;
use std::io::Write;

use idgen_sql::procedure::FreeRequest;

use crate::error::CliError;
use crate::layout_opt::LayoutOpt;
use crate::leases::{AnyStore, FreeOutcome, KvArgs, LeaseTable, StoreArgs};

/// The subcommands of `leases`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum LeasesCommand {
    /// The held node IDs: holder, time left, last issued timestamp
    List(ListArgs),
    /// Free a node ID: an expired lease at once; a live one only with --force
    Free(FreeArgs),
}

/// Arguments of `leases list`.
#[derive(Debug, clap::Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    pub(crate) store: StoreArgs,

    #[command(flatten)]
    pub(crate) kv: KvArgs,

    /// The layout the namespace's generators use (shown, and used to split the node ID into
    /// its sub-fields)
    #[command(flatten)]
    pub(crate) layout: LayoutOpt,
}

/// Arguments of `leases free`.
#[derive(Debug, clap::Args)]
pub(crate) struct FreeArgs {
    /// The node ID
    #[arg(value_name = "NODE")]
    pub(crate) node: u64,

    /// Free it only if this holder still holds it (as `leases list` shows it)
    #[arg(long, value_name = "HOLDER")]
    pub(crate) holder: Option<String>,

    /// Free a live lease too: its holder may still be issuing, so two processes may issue with
    /// the same node ID until the old holder's fence deadline
    #[arg(long)]
    pub(crate) force: bool,

    #[command(flatten)]
    pub(crate) store: StoreArgs,

    #[command(flatten)]
    pub(crate) kv: KvArgs,
}

/// Runs a `leases` subcommand.
pub(crate) fn run(
    command: &LeasesCommand,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    runtime.block_on(async {
        match command {
            LeasesCommand::List(args) => {
                let store = AnyStore::connect(&args.store, &args.kv).await?;
                let table = store.leases(&args.store.namespace).await?;
                if json {
                    crate::json::write_json(out, &table)
                } else {
                    out.write_all(render(&table, &args.layout).as_bytes())?;
                    Ok(())
                }
            }
            LeasesCommand::Free(args) => {
                let store = AnyStore::connect(&args.store, &args.kv).await?;
                let req = FreeRequest {
                    namespace: &args.store.namespace,
                    node: args.node,
                    holder: args.holder.as_deref(),
                    force: args.force,
                };
                match store.free(req).await? {
                    FreeOutcome::Freed(freed) => {
                        writeln!(out, "{freed}")?;
                        Ok(())
                    }
                    FreeOutcome::Live(not) => Err(CliError::NotFreed(format!(
                        "{not}. Give --force to free it anyway"
                    ))),
                    FreeOutcome::Refused(not) => Err(CliError::NotFreed(not)),
                }
            }
        }
    })
}

/// The table for people.
pub(crate) fn render(table: &LeaseTable, layout: &LayoutOpt) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "namespace {} at {} ({}); layout {}",
        table.namespace,
        table.now_utc.as_deref().unwrap_or("?"),
        table.clock,
        layout.layout
    );
    let _ = writeln!(
        out,
        "{:<6} {:<40} {:<22} last issued timestamp (upper bound)",
        "node", "holder", "expires in"
    );
    for l in &table.leases {
        let _ = writeln!(
            out,
            "{:<6} {:<40} {:<22} {}",
            l.node,
            l.holder,
            l.expires_in(),
            l.last_timestamp_utc.as_deref().unwrap_or("-")
        );
    }
    if table.leases.is_empty() {
        let _ = writeln!(out, "(no node ID is held)");
    }
    out
}
