//! `idgen web`: a local web application on the library's own code. The page (HTML, CSS and a
//! little JavaScript, embedded in the binary, no external assets) asks the JSON API in
//! [`api`] for every number it shows.

mod api;
mod assets;
mod compose;
#[cfg(feature = "leases")]
mod free_body;
mod guard;
mod inspect;
#[cfg(feature = "leases")]
mod operator;
#[cfg(feature = "leases")]
mod recorded;
mod view;

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};

use crate::error::CliError;

/// Arguments of `web`.
#[derive(Debug, clap::Args)]
pub(crate) struct WebArgs {
    /// The port to listen on (0: any free port; the address is printed)
    #[arg(long, value_name = "N", default_value_t = 7878)]
    pub(crate) port: u16,

    /// The address to listen on; the default serves this machine only (another address needs
    /// --allow-remote)
    #[arg(long, value_name = "ADDR", default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub(crate) host: IpAddr,

    /// Listen on an address other than loopback: other machines can then reach the page, and
    /// whoever has the printed URL (its token travels unencrypted) can free node IDs
    #[arg(long)]
    pub(crate) allow_remote: bool,

    /// The layout the page starts with (and the operator view shows)
    #[command(flatten)]
    pub(crate) layout: crate::layout_opt::LayoutOpt,

    /// The operator view: the lease table of this database
    #[cfg(feature = "leases")]
    #[command(flatten)]
    pub(crate) store: crate::leases::StoreArgs,

    /// The operator view over etcd or Redis instead of a database (as `idgen leases` takes them)
    #[cfg(feature = "leases")]
    #[command(flatten)]
    pub(crate) kv: crate::leases::KvArgs,

    /// A hi-lo counter the operator view shows (a sequence, or a row of --counter-table);
    /// repeatable; with --database-url
    #[cfg(feature = "leases")]
    #[arg(long = "counter", value_name = "NAME", requires = "database_url")]
    pub(crate) counters: Vec<String>,

    /// The table of table counters (MySQL/MariaDB, SQLite)
    #[cfg(feature = "leases")]
    #[arg(long, value_name = "TABLE", default_value = idgen_sql::DEFAULT_COUNTER_TABLE)]
    pub(crate) counter_table: String,
}

/// Serves the application until the process is interrupted; prints the address first.
pub(crate) fn run(args: &WebArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    if !args.host.to_canonical().is_loopback() && !args.allow_remote {
        return Err(CliError::RemoteNotAllowed(args.host));
    }
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(SocketAddr::new(args.host, args.port))
            .await
            .map_err(CliError::Server)?;
        let addr = listener.local_addr().map_err(CliError::Server)?;
        let guard = Arc::new(guard::Guard::new(addr)?);
        let app = app(args, &guard)
            .await?
            .layer(axum::middleware::from_fn_with_state(
                guard.clone(),
                guard::check_host_and_origin,
            ));
        writeln!(
            out,
            "idgen web: listening on http://{addr}/?token={} (Ctrl-C stops it)",
            guard.token()
        )?;
        out.flush()?;
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .map_err(CliError::Server)?;
        Ok(())
    })
}

/// The routes (the operator's behind the token).
async fn app(args: &WebArgs, guard: &guard::SharedGuard) -> Result<Router, CliError> {
    let router = Router::new()
        .route("/", get(assets::index))
        .route("/app.css", get(assets::css))
        .route("/app.js", get(assets::js))
        .route("/api/layout", get(api::layout))
        .route("/api/compose", post(api::compose))
        .route("/api/inspect", post(api::inspect));
    #[cfg(feature = "leases")]
    let router = operator::routes(router, args, guard).await?;
    #[cfg(not(feature = "leases"))]
    let router = {
        let _ = guard;
        without_operator(router, &args.layout.layout)
    };
    Ok(router)
}

/// `/api/config` without an operator view: the layout the page starts with.
fn without_operator(router: Router, layout: &crate::layout_arg::LayoutArg) -> Router {
    let config = serde_json::json!({ "operator": false, "layout": layout.to_string() });
    router.route(
        "/api/config",
        get(move || async move { axum::Json(config) }),
    )
}
