//! [`CliError`]: everything that makes `idgen` exit with status 1.

/// A domain error: the arguments were well-formed, but the library rejected them (a field out of
/// range, an ID from another layout, …). Usage errors are clap's and exit with status 2.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// The library refused.
    #[error("{0}")]
    Core(#[from] idgen_core::Error),

    /// An ID has bits set above the layout's fields.
    #[error("ID {id} was not made with layout {layout}: {source}")]
    NotThisLayout {
        /// The ID, in decimal.
        id: String,
        /// The layout's name or spec.
        layout: String,
        /// What the library said (boxed: it is large, and this path is rare).
        source: Box<idgen_core::Error>,
    },

    /// The node sub-field values given do not match the layout's node sub-fields.
    #[error("{0}")]
    NodeFields(String),

    /// The async runtime could not start.
    #[cfg(any(feature = "web", feature = "leases"))]
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),

    /// The web server could not start or stopped with an error.
    #[cfg(feature = "web")]
    #[error("the web server: {0}")]
    Server(#[source] std::io::Error),

    /// `idgen web --host` with an address other than loopback, without `--allow-remote`.
    #[cfg(feature = "web")]
    #[error(
        "--host {0} is not a loopback address: other machines could reach the page, and with the \
         printed URL free node IDs; give --allow-remote to listen there anyway (the token in the \
         URL travels unencrypted: an SSH tunnel to 127.0.0.1 is safer)"
    )]
    RemoteNotAllowed(std::net::IpAddr),

    /// The operating system's random source failed (the web token could not be drawn).
    #[cfg(feature = "web")]
    #[error("cannot draw a random token: {0}")]
    Random(#[source] getrandom::Error),

    /// The lease store refused or could not be reached.
    #[cfg(feature = "leases")]
    #[error("{0}")]
    Lease(#[from] idgen_sqlx::Error),

    /// `idgen leases` was given no database.
    #[cfg(feature = "leases")]
    #[error("no database given: give --database-url URL or set IDGEN_DATABASE_URL")]
    NoDatabase,

    /// A hi-lo counter could not be read.
    #[cfg(feature = "leases")]
    #[error("hi-lo counter {name}: {message}")]
    Counter {
        /// The counter.
        name: String,
        /// What the driver said.
        message: String,
    },

    /// The database could not be reached.
    #[cfg(feature = "leases")]
    #[error("cannot connect to {url}: {message}")]
    Connect {
        /// The URL, without its password.
        url: String,
        /// What the driver said.
        message: String,
    },

    /// `idgen adopt` refused the table or a step failed.
    #[cfg(feature = "adopt")]
    #[error("{0}")]
    Adopt(#[from] idgen_sqlx::adopt::AdoptError),

    /// `idgen leases` was given two lease stores on the command line (`--database-url` and
    /// `--etcd`, say).
    #[cfg(any(feature = "leases-etcd", feature = "leases-redis"))]
    #[error("give one lease store, not both {0} and {1}")]
    TwoStores(&'static str, &'static str),

    /// A lease was not freed (a live lease without `--force`, another holder, no such node).
    #[cfg(feature = "leases")]
    #[error("{0}")]
    NotFreed(String),

    /// Writing the output failed (other than a closed pipe, which ends quietly).
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}
