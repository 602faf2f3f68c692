//! What idgen's examples share, in one file an application can copy (as `support.rs`; it needs
//! only tokio and idgen):
//!
//! - [`database_url`]: the database from the first argument, `DATABASE_URL` or a SQLite file;
//! - [`connect`]: a connection attempt with a deadline ([`CONNECT_TIMEOUT`]) whose error names
//!   what was tried (the kind of database, host, port, database and user, never the password)
//!   and what to do;
//! - [`snowflake_on`] and [`release`]: the Snowflake generator on a leased node ID, and the node
//!   ID given back at shutdown;
//! - [`exit`]: the outcome of `main` as an exit code, a failure as one paragraph on stderr;
//! - for the orders examples: the [`ORDERS`] a run places, what it prints of them
//!   ([`print_order`], [`print_found`]) and what it did ([`Run`]).
//!
//! It works with any database library: the connection attempt is any future whose error
//! implements [`std::error::Error`] (sqlx, diesel, sea-orm).

use std::error::Error;
use std::fmt::{self, Display};
use std::future::Future;
use std::process::ExitCode;
use std::time::Duration;

use idgen_core::{Layout, Snowflake};
use idgen_engine::lease::{LeaseHandle, WorkerLease};

/// How long a connection may take before the attempt is given up.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The database URL: the first argument, else `DATABASE_URL`, else the SQLite file `sqlite_file`
/// in the temp dir. Prints which (`database: …`).
pub fn database_url(sqlite_file: &str) -> String {
    let (url, from) = match (std::env::args().nth(1), std::env::var("DATABASE_URL")) {
        (Some(url), _) => (url, "the first argument"),
        (None, Ok(url)) => (url, "DATABASE_URL"),
        (None, Err(_)) => {
            let file = std::env::temp_dir().join(sqlite_file);
            println!(
                "database: SQLite file {} (no URL given: pass one as the first argument or in DATABASE_URL)",
                file.display()
            );
            return format!("sqlite://{}?mode=rwc", file.display());
        }
    };
    match Target::from_url(&url) {
        Ok(target) => println!("database: {target}, URL from {from}"),
        Err(_) => println!("database: URL from {from}"),
    }
    url
}

/// The kind of database a URL names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `postgres://`, `postgresql://`.
    Postgres,
    /// `mysql://`, `mariadb://`.
    MySql,
    /// `sqlite:` (a file).
    Sqlite,
}

impl Kind {
    /// The port its servers listen on unless told otherwise.
    pub fn usual_port(self) -> u16 {
        match self {
            Kind::Postgres => 5432,
            Kind::MySql => 3306,
            Kind::Sqlite => 0,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Postgres => "PostgreSQL",
            Kind::MySql => "MariaDB/MySQL",
            Kind::Sqlite => "SQLite",
        })
    }
}

/// What a connection attempt goes to, as said in messages: no password.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The kind of database.
    pub kind: Kind,
    /// Host name or address (a socket directory when it starts with `/`); for SQLite, the file.
    pub host: String,
    /// TCP port (0 for SQLite).
    pub port: u16,
    /// The database asked for, if the URL names one.
    pub database: Option<String>,
    /// The user name, if the URL names one.
    pub user: Option<String>,
}

impl Target {
    /// The target of `scheme://user:password@host:port/database?host=…`, or why the URL is not
    /// one of PostgreSQL, MariaDB/MySQL or SQLite.
    pub fn from_url(url: &str) -> Result<Target, String> {
        let (scheme, rest) = url.split_once(':').unwrap_or(("", url));
        let kind = match scheme {
            "postgres" | "postgresql" => Kind::Postgres,
            "mysql" | "mariadb" => Kind::MySql,
            "sqlite" => Kind::Sqlite,
            _ => {
                return Err(format!(
                    "the URL starts with {scheme:?}, not postgres://, mysql:// or sqlite://"
                ));
            }
        };
        let rest = rest.trim_start_matches("//");
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        if kind == Kind::Sqlite {
            return Ok(Target {
                kind,
                host: rest.to_owned(),
                port: 0,
                database: None,
                user: None,
            });
        }
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (userinfo, mut host_port) = match authority.rsplit_once('@') {
            Some((userinfo, host_port)) => (Some(userinfo), host_port),
            None => (None, authority),
        };
        let user = userinfo.map(|u| decode(u.split(':').next().unwrap_or(u)));
        let mut host = "localhost".to_owned();
        let mut port = kind.usual_port();
        if let Some(bracketed) = host_port.strip_prefix('[') {
            // [::1]:5432
            let (address, after) = bracketed.split_once(']').unwrap_or((bracketed, ""));
            host = address.to_owned();
            host_port = after;
        } else if let Some((name, _)) = host_port.split_once(':') {
            host = name.to_owned();
        } else if !host_port.is_empty() {
            host = host_port.to_owned();
        }
        if let Some((_, number)) = host_port.rsplit_once(':') {
            port = number
                .parse()
                .map_err(|_| format!("the port {number:?} in the URL is not a number"))?;
        }
        for (key, value) in query.split('&').filter_map(|pair| pair.split_once('=')) {
            if key == "host" {
                host = decode(value);
            }
        }
        Ok(Target {
            kind,
            host: if host.is_empty() {
                "localhost".into()
            } else {
                host
            },
            port,
            database: Some(decode(path)).filter(|d| !d.is_empty()),
            user: user.filter(|u| !u.is_empty()),
        })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind == Kind::Sqlite {
            return write!(f, "SQLite file {}", self.host);
        }
        let named = |what: &str, name: &Option<String>| match name {
            Some(name) => format!("{what} {name:?}"),
            None => format!("no {what} in the URL"),
        };
        if self.host.starts_with('/') {
            write!(f, "{} at socket directory {}", self.kind, self.host)?;
        } else {
            write!(f, "{} at {}:{}", self.kind, self.host, self.port)?;
        }
        let (database, user) = (named("database", &self.database), named("user", &self.user));
        write!(f, " ({database}, {user})")
    }
}

/// A connection attempt that failed or timed out: what was tried, why it failed, what to do.
#[derive(Debug)]
pub struct ConnectError {
    /// Where the attempt went: none for a URL that does not name one.
    target: Option<Target>,
    reason: String,
    hint: String,
    source: Option<Box<dyn Error + Send + Sync>>,
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.target {
            Some(target) => write!(f, "cannot connect to {target}: {}", self.reason)?,
            None => write!(f, "cannot connect: {}", self.reason)?,
        }
        if !self.hint.is_empty() {
            write!(f, ". {}", self.hint)?;
        }
        Ok(())
    }
}

impl Error for ConnectError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn Error + 'static))
    }
}

/// Runs `attempt`, a connection to the database of `url`, within [`CONNECT_TIMEOUT`]; on failure,
/// an error naming the target with a hint. For a server, a TCP connection is tried first, so a
/// port nothing listens on is reported at once even by a pool that would retry until its own
/// timeout.
pub async fn connect<T, E>(
    url: &str,
    attempt: impl Future<Output = Result<T, E>>,
) -> Result<T, ConnectError>
where
    E: Into<Box<dyn Error + Send + Sync>>,
{
    let target = Target::from_url(url).map_err(|reason| ConnectError {
        target: None,
        reason,
        hint: String::new(),
        source: None,
    })?;
    connect_to(&target, CONNECT_TIMEOUT, attempt)
        .await
        .map_err(|mut error| {
            // Drivers do not print the password, but some print what they were given.
            if let Some(password) = password(url) {
                error.reason = error.reason.replace(&password, "***");
            }
            error
        })
}

/// [`connect`] to `target` with the deadline `limit`.
pub async fn connect_to<T, E>(
    target: &Target,
    limit: Duration,
    attempt: impl Future<Output = Result<T, E>>,
) -> Result<T, ConnectError>
where
    E: Into<Box<dyn Error + Send + Sync>>,
{
    let fail = |source: Box<dyn Error + Send + Sync>| ConnectError {
        target: Some(target.clone()),
        reason: one_paragraph(&*source),
        hint: hint(target, &*source),
        source: Some(source),
    };
    let deadline = tokio::time::Instant::now() + limit;
    if target.kind != Kind::Sqlite && !target.host.starts_with('/') {
        let address = (target.host.as_str(), target.port);
        match tokio::time::timeout_at(deadline, tokio::net::TcpStream::connect(address)).await {
            Ok(Ok(_)) | Err(_) => {} // a timeout is said below
            Ok(Err(e)) => return Err(fail(e.into())),
        }
    }
    match tokio::time::timeout_at(deadline, attempt).await {
        Ok(Ok(connected)) => Ok(connected),
        Ok(Err(e)) => Err(fail(e.into())),
        Err(_) => Err(ConnectError {
            target: Some(target.clone()),
            reason: format!("no answer within {limit:?}"),
            hint: format!(
                "Is {} listening on port {}? A server of another kind there may wait for the client to speak first; {}",
                target.kind,
                target.port,
                usual_ports(target.kind)
            ),
            source: None,
        }),
    }
}

/// What to check, from the text of the failure (each library words it its own way).
fn hint(target: &Target, error: &(dyn Error + 'static)) -> String {
    let text = one_paragraph(error).to_lowercase();
    let refused = std::iter::successors(Some(error), |&e| e.source()).any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
    }) || text.contains("connection refused");
    let (kind, host, port) = (target.kind, &target.host, target.port);
    let database = target.database.as_deref().unwrap_or("shop");
    if refused {
        format!(
            "Is the server running, and listening on port {port}? {}",
            usual_ports(kind)
        )
    } else if text.contains("unknown database")
        || text.contains(&format!("database \"{database}\" does not exist"))
    {
        let user = target.user.as_deref();
        match kind {
            Kind::Postgres => format!(
                "Create it (`createdb -h {host} -p {port} -U {} {database}`), or name an existing one in the URL",
                user.unwrap_or("postgres")
            ),
            _ => format!(
                "Create it (`mysql -h {host} -P {port} -u {} -p -e 'CREATE DATABASE {database}'`), or name an existing one in the URL",
                user.unwrap_or("root")
            ),
        }
    } else if text.contains("password") || text.contains("access denied") || text.contains("role") {
        "Check the user name and the password in the URL".to_owned()
    } else if kind == Kind::Sqlite {
        "Check that the file's folder exists and that this user may write there".to_owned()
    } else if [
        "unexpected",
        "invalid",
        "protocol",
        "decod",
        "lost connection",
        "received",
    ]
    .iter()
    .any(|word| text.contains(word))
    {
        format!(
            "The server on port {port} does not answer like {kind}: another kind of database? {}",
            usual_ports(kind)
        )
    } else {
        String::new()
    }
}

fn usual_ports(kind: Kind) -> String {
    let other = match kind {
        Kind::Postgres => Kind::MySql,
        _ => Kind::Postgres,
    };
    format!(
        "{kind} usually listens on {}, {other} on {}",
        kind.usual_port(),
        other.usual_port()
    )
}

/// The password in `url`, if it has one.
fn password(url: &str) -> Option<String> {
    let authority = url.split_once("://")?.1.split(['/', '?']).next()?;
    let userinfo = authority.rsplit_once('@')?.0;
    Some(decode(userinfo.split_once(':')?.1)).filter(|p| !p.is_empty())
}

/// `%xx` escapes decoded (user names, passwords and database names in URLs).
fn decode(text: &str) -> String {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&byte, after)) = rest.split_first() {
        let hex = after.get(..2).and_then(|h| std::str::from_utf8(h).ok());
        match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
            Some(decoded) if byte == b'%' => {
                bytes.push(decoded);
                rest = &after[2..];
            }
            _ => {
                bytes.push(byte);
                rest = after;
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// An error and the causes its text does not already hold, on one line, white space folded.
pub fn one_paragraph(error: &(dyn Error + 'static)) -> String {
    let fold = |text: String| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut text = fold(error.to_string());
    for cause in std::iter::successors(error.source(), |&e| e.source()) {
        let cause = fold(cause.to_string());
        if !text.contains(&cause) {
            text = format!("{text}: {cause}");
        }
    }
    text
}

/// The Snowflake generator (Twitter layout) on a leased node ID, and the lease's handle to give
/// the node ID back at shutdown ([`release`]). Prints the node ID. The same as:
///
/// ```text
/// let handle = lease.handle();
/// let ids = Snowflake::builder().layout(Layout::TWITTER).lease(lease).build()?;
/// ```
pub fn snowflake_on(lease: WorkerLease) -> Result<(Snowflake, LeaseHandle), idgen_core::Error> {
    let handle = lease.handle();
    println!(
        "leased node ID {} as {} (no other live process holds it)",
        lease.node(),
        lease.holder()
    );
    let ids = Snowflake::builder()
        .layout(Layout::TWITTER)
        .lease(lease)
        .build()?;
    Ok((ids, handle))
}

/// Gives the node ID back at once (otherwise it stays taken until the lease's TTL runs out), and
/// says so.
pub async fn release(handle: &LeaseHandle) -> Result<(), idgen_engine::Error> {
    handle.release().await?;
    println!("released node ID {}", handle.node());
    Ok(())
}

/// The body of an example's `main`: runs `run` on the [`database_url`] and returns [`exit`]'s
/// code.
pub async fn main<T>(
    sqlite_file: &str,
    run: impl AsyncFnOnce(&str) -> Result<T, Box<dyn Error>>,
) -> ExitCode {
    exit(run(&database_url(sqlite_file)).await)
}

/// `main`'s outcome as its exit code; a failure is printed as one paragraph on stderr, after the
/// program's name.
pub fn exit<T>(outcome: Result<T, Box<dyn Error>>) -> ExitCode {
    let Err(error) = outcome else {
        return ExitCode::SUCCESS;
    };
    let program = std::env::args().next().unwrap_or_default();
    let name = std::path::Path::new(&program)
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    eprintln!("{name}: {}", one_paragraph(&*error));
    ExitCode::FAILURE
}

/// The hi-lo counter of the orders examples' order lines (a sequence on PostgreSQL and MariaDB:
/// tables and sequences share one namespace there, so it is not named `order_lines`).
pub const LINE_COUNTER: &str = "order_line_ids";
/// Hi-lo IDs per counter round trip, for the order lines.
pub const LINE_BLOCK: u64 = 100;

/// The orders each run of an orders example places: a customer and two items.
pub const ORDERS: [(&str, [&str; 2]); 3] = [
    ("ada", ["tea", "scones"]),
    ("grace", ["coffee", "cake"]),
    ("edsger", ["water", "bread"]),
];

/// Prints an order: `order ord_… (key 1127…) for ada: lines 201 and 202`.
pub fn print_order<L: Display>(
    public_id: impl Display,
    key: impl Display,
    customer: &str,
    lines: impl IntoIterator<Item = L>,
) {
    let lines: Vec<String> = lines.into_iter().map(|id| id.to_string()).collect();
    let lines = lines.join(" and ");
    println!("order {public_id} (key {key}) for {customer}: lines {lines}");
}

/// Prints the order found by its public ID (as JSON), and how many orders the table holds.
pub fn print_found(public_id: impl Display, json: &str, orders_in_table: i64) {
    println!("found {public_id}: {json}");
    println!("{orders_in_table} orders in the table");
}

/// What one run of an orders example did, for the tests that run it.
#[derive(Debug)]
pub struct Run<Order, Line> {
    /// The node ID the run leased.
    pub node: u64,
    /// The orders it inserted.
    pub orders: Vec<Order>,
    /// Their lines.
    pub lines: Vec<Line>,
    /// The order it looked up by public ID.
    pub found: Order,
    /// Orders in the table at the end, earlier runs' included.
    pub orders_in_table: i64,
}

impl<Order, Line> Run<Order, Line> {
    /// The run on `node` that made `requests`: the orders, their lines, the order found by
    /// public ID and the orders in the table.
    pub fn new(node: u64, requests: (Vec<Order>, Vec<Line>, Order, i64)) -> Self {
        let (orders, lines, found, orders_in_table) = requests;
        Run {
            node,
            orders,
            lines,
            found,
            orders_in_table,
        }
    }
}
