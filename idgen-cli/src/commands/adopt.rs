//! `idgen adopt plan|apply`: take over a table that already has rows (idgen-adopt, through
//! [`idgen_sqlx::adopt`], on PostgreSQL and MariaDB).

use std::io::Write;

use idgen_sqlx::adopt::{self, AdoptOptions, AdoptionPlan, DEFAULT_PROGRESS_TABLE};
use idgen_sqlx::db_generator::DbGenerator;

use crate::error::CliError;
use crate::layout_opt::LayoutOpt;

/// The subcommands of `adopt`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum AdoptCommand {
    /// Print every step and its SQL; change nothing (refuses a table that cannot be adopted,
    /// saying why)
    Plan(AdoptArgs),
    /// Run the steps not yet done, recording each in the progress table (run it again after
    /// an interruption; after completion it changes nothing)
    Apply(AdoptArgs),
}

/// What to adopt.
#[derive(Debug, clap::Args)]
pub(crate) struct AdoptArgs {
    /// The database: postgres://… or mysql://… (MariaDB)
    #[arg(long, value_name = "URL", env = "IDGEN_DATABASE_URL")]
    pub(crate) database_url: Option<String>,

    /// The table (`name` or `schema.name`), keyed by one integer column
    #[arg(long, value_name = "TABLE")]
    pub(crate) table: String,

    /// Snowflake keys under this layout (unless --block is given)
    #[command(flatten)]
    pub(crate) layout: LayoutOpt,

    /// Hi-lo instead of Snowflake keys: the block size; the sequence gets INCREMENT BY N and
    /// moves above the largest key
    #[arg(long, value_name = "N")]
    pub(crate) block: Option<u64>,

    /// Hi-lo: the sequence (default: the key column's own identity or nextval sequence)
    #[arg(long, value_name = "SEQUENCE", requires = "block")]
    pub(crate) hilo_sequence: Option<String>,

    /// Hi-lo: take a --hilo-sequence that is not the key column's own (its identity's or its
    /// default's), because you move every writer to it yourself (refused otherwise)
    #[arg(long, requires = "hilo_sequence")]
    pub(crate) writers_use_sequence: bool,

    /// Hi-lo: accept a key type that leaves the sequence fewer than 1,000,000 values (or
    /// fewer than the largest key) with INCREMENT BY N; plan states the room either way
    #[arg(long, requires = "block")]
    pub(crate) accept_key_capacity: bool,

    /// Snowflake keys: make the database-side generator (idgen_next_id()) the column's default
    #[arg(long, conflicts_with = "block")]
    pub(crate) db_generator: bool,

    /// With --db-generator: apply even though `plan` lists a way of reading the new key back
    /// that the switch does not keep on this server ("NOT KEPT", e.g. MariaDB's consecutive
    /// keys of a multi-row insert); check first that no writer reads its key that way
    #[arg(long, requires = "db_generator")]
    pub(crate) accept_lost_key_readback: bool,

    /// Keep the keys as they are: only add a public ID (needs --public-id)
    #[arg(long, conflicts_with_all = ["block", "db_generator"], requires = "public_id")]
    pub(crate) keep_keys: bool,

    /// Also give every row a public ID in this column (uuid / BINARY(16)), online: the column
    /// with a random default, a backfill in batches, a unique index and NOT NULL
    #[arg(long, value_name = "COLUMN")]
    pub(crate) public_id: Option<String>,

    /// Rows per backfill batch (each batch is one short transaction)
    #[arg(long, value_name = "ROWS", default_value_t = adopt::DEFAULT_BACKFILL_BATCH, requires = "public_id")]
    pub(crate) batch: u32,

    /// Pause between backfill batches, in milliseconds, to leave the server to the writers
    #[arg(long, value_name = "MS", default_value_t = adopt::DEFAULT_BACKFILL_PAUSE.as_millis() as u64, requires = "public_id")]
    pub(crate) pause_ms: u64,

    /// The table where apply records its progress
    #[arg(long, value_name = "TABLE", default_value = DEFAULT_PROGRESS_TABLE)]
    pub(crate) progress_table: String,

    /// How long a schema change keeps trying to get its lock, in milliseconds (each try waits
    /// at most 100 ms, so writers never queue behind it for longer)
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    pub(crate) lock_wait_ms: u64,
}

impl AdoptArgs {
    fn options(&self) -> Result<AdoptOptions, CliError> {
        let layout = self.layout.layout.layout;
        let options = match self.block {
            Some(block) => {
                let mut options = AdoptOptions::hilo(&self.table, block)?;
                if let Some(sequence) = &self.hilo_sequence {
                    options = options.sequence(sequence)?;
                }
                if self.writers_use_sequence {
                    options = options.writers_use_sequence();
                }
                if self.accept_key_capacity {
                    options = options.accept_key_capacity();
                }
                options
            }
            None if self.keep_keys => AdoptOptions::keep_keys(&self.table)?,
            None if self.db_generator => {
                let options = AdoptOptions::snowflake(&self.table, layout)?
                    .db_generator(DbGenerator::new(layout));
                if self.accept_lost_key_readback {
                    options.accept_lost_key_readback()
                } else {
                    options
                }
            }
            None => AdoptOptions::snowflake(&self.table, layout)?,
        };
        let options = match &self.public_id {
            Some(column) => options
                .public_id(column)?
                .backfill_batch(self.batch)?
                .backfill_pause(std::time::Duration::from_millis(self.pause_ms)),
            None => options,
        };
        Ok(options
            .progress_table(&self.progress_table)?
            .lock_wait(std::time::Duration::from_millis(self.lock_wait_ms)))
    }
}

/// Runs an `adopt` subcommand.
pub(crate) fn run(command: &AdoptCommand, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let (args, apply) = match command {
        AdoptCommand::Plan(args) => (args, false),
        AdoptCommand::Apply(args) => (args, true),
    };
    let options = args.options()?;
    let url = args.database_url.as_deref().ok_or(CliError::NoDatabase)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    let plan = runtime.block_on(async {
        let connect_error = |e: sqlx::Error| CliError::Connect {
            url: crate::leases::redact(url),
            message: e.to_string(),
        };
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let pool = sqlx::postgres::PgPoolOptions::new()
                .max_connections(1)
                .connect(url)
                .await
                .map_err(connect_error)?;
            Ok::<_, CliError>(if apply {
                adopt::apply_with_progress(&pool, &options, progress_line()).await?
            } else {
                adopt::plan(&pool, &options).await?
            })
        } else if url.starts_with("mysql://") || url.starts_with("mariadb://") {
            let pool = sqlx::mysql::MySqlPoolOptions::new()
                .max_connections(1)
                .connect(url)
                .await
                .map_err(connect_error)?;
            Ok(if apply {
                adopt::apply_with_progress(&pool, &options, progress_line()).await?
            } else {
                adopt::plan(&pool, &options).await?
            })
        } else {
            Err(CliError::Connect {
                url: crate::leases::redact(url),
                message: "adopt works on PostgreSQL and MariaDB: the URL must start with postgres:// or mysql://".into(),
            })
        }
    })?;
    if json {
        crate::json::write_json(out, &to_json(&plan))
    } else {
        write!(out, "{plan}")?;
        if apply {
            writeln!(out, "\nadopted: every step is done")?;
        }
        Ok(())
    }
}

/// The backfill's progress on standard error: one line rewritten in place on a terminal (at
/// most five times a second), otherwise a line every five seconds (and the last one).
fn progress_line() -> impl FnMut(&adopt::Progress) + Send {
    use std::io::IsTerminal;
    let terminal = std::io::stderr().is_terminal();
    let every = std::time::Duration::from_millis(if terminal { 200 } else { 5000 });
    let mut shown: Option<std::time::Instant> = None;
    move |p| {
        let done = p.rows >= p.rows_expected;
        if !done && shown.is_some_and(|at| at.elapsed() < every) {
            return;
        }
        shown = Some(std::time::Instant::now());
        if terminal {
            eprint!("\r\x1b[2K{p}");
            if done {
                eprintln!();
            }
        } else {
            eprintln!("{p}");
        }
    }
}

fn to_json(plan: &AdoptionPlan) -> serde_json::Value {
    serde_json::json!({
        "database": plan.dialect.to_string(),
        "table": plan.table,
        "column": plan.column,
        "data_type": plan.data_type,
        "key_source": plan.key_source,
        "max_key": plan.max_key.to_string(),
        "server": plan.server,
        "key_readback": plan.key_readback.iter().map(|r| serde_json::json!({
            "means": r.means,
            "kept": r.kept,
            "how": r.how,
        })).collect::<Vec<_>>(),
        "finished": plan.finished(),
        "steps": plan.steps.iter().map(|s| serde_json::json!({
            "name": s.name,
            "description": s.description,
            "sql": s.sql,
            "done": s.done,
        })).collect::<Vec<_>>(),
    })
}
