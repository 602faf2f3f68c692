//! What to adopt and how ([`AdoptOptions`]), checked as it is set.

use std::time::Duration;

use idgen_core::Layout;
use idgen_db_generator::DbGenerator;
use idgen_engine::SqlName;

use crate::error::AdoptError;
use crate::limits::{
    DEFAULT_BACKFILL_BATCH, DEFAULT_BACKFILL_PAUSE, DEFAULT_CLOCK_ALLOWANCE, DEFAULT_LOCK_WAIT,
    DEFAULT_PROGRESS_TABLE, MAX_BACKFILL_BATCH,
};

/// What keys the table gets from idgen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    Snowflake {
        layout: Layout,
        generator: Option<Box<DbGenerator>>,
        clock_allowance: Duration,
    },
    HiLo {
        block: u64,
        sequence: Option<SqlName>,
        /// The user moves the writers to a named sequence that is not the column's own.
        writers_use_sequence: bool,
        /// The user accepts a key type with little room for the sequence's values.
        accept_key_capacity: bool,
    },
    /// Keys stay as they are (only a public ID is added).
    KeepKeys,
}

/// What to adopt and how: the table, Snowflake keys or hi-lo blocks, and the progress
/// table. See the [crate documentation](crate).
///
/// ```
/// use std::time::Duration;
/// use idgen_adopt::AdoptOptions;
/// use idgen_db_generator::DbGenerator;
/// use idgen_core::Layout;
///
/// let options = AdoptOptions::snowflake("shop.orders", Layout::TWITTER)?
///     .db_generator(DbGenerator::new(Layout::TWITTER))
///     .clock_allowance(Duration::from_secs(300))
///     .progress_table("ops.adoption")?;
/// assert_eq!(options.table(), "shop.orders");
/// # Ok::<(), idgen_adopt::AdoptError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdoptOptions {
    pub(crate) table: SqlName,
    pub(crate) target: Target,
    pub(crate) progress_table: SqlName,
    pub(crate) lock_wait: Duration,
    pub(crate) public_id: Option<PublicIdOptions>,
    pub(crate) accept_lost_key_readback: bool,
}

impl AdoptOptions {
    /// Snowflake keys under `layout` for `table` (`name` or `schema.name`).
    ///
    /// # Errors
    ///
    /// [`AdoptError::Options`] for a table name that is not a plain SQL name.
    ///
    /// # Examples
    ///
    /// ```
    /// let options = idgen_adopt::AdoptOptions::snowflake("orders", idgen_core::Layout::TWITTER)?;
    /// assert_eq!(options.table(), "orders");
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn snowflake(table: &str, layout: Layout) -> Result<Self, AdoptError> {
        Self::new(
            table,
            Target::Snowflake {
                layout,
                generator: None,
                clock_allowance: DEFAULT_CLOCK_ALLOWANCE,
            },
        )
    }

    /// Hi-lo blocks of `block` for `table`, from the key column's own sequence (its identity
    /// or `DEFAULT nextval(…)`) unless [`sequence`](Self::sequence) names another.
    ///
    /// # Errors
    ///
    /// [`AdoptError::Options`] for a table name that is not a plain SQL name.
    ///
    /// # Examples
    ///
    /// ```
    /// let options = idgen_adopt::AdoptOptions::hilo("order_lines", 1000)?;
    /// assert_eq!(options.table(), "order_lines");
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn hilo(table: &str, block: u64) -> Result<Self, AdoptError> {
        Self::new(
            table,
            Target::HiLo {
                block,
                sequence: None,
                writers_use_sequence: false,
                accept_key_capacity: false,
            },
        )
    }

    fn new(table: &str, target: Target) -> Result<Self, AdoptError> {
        Ok(AdoptOptions {
            table: SqlName::parse("table", table)?,
            target,
            progress_table: SqlName::parse("progress table", DEFAULT_PROGRESS_TABLE)?,
            lock_wait: DEFAULT_LOCK_WAIT,
            public_id: None,
            accept_lost_key_readback: false,
        })
    }

    /// Keys kept as they are: only a public ID is added (with [`public_id`](Self::public_id),
    /// which this adoption needs). The table must still be keyed by one integer column, which
    /// the backfill walks in batches.
    ///
    /// # Errors
    ///
    /// [`AdoptError::Options`] for a table name that is not a plain SQL name.
    ///
    /// # Examples
    ///
    /// ```
    /// let options = idgen_adopt::AdoptOptions::keep_keys("customers")?.public_id("public_id")?;
    /// assert_eq!(options.table(), "customers");
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn keep_keys(table: &str) -> Result<Self, AdoptError> {
        Self::new(table, Target::KeepKeys)
    }

    /// Also give every row a public ID in `column` (PostgreSQL `uuid`, MariaDB `BINARY(16)`:
    /// what [`PublicId`](idgen_core::PublicId) maps to), online: the column with a random
    /// default, a backfill of the existing rows in batches, then a unique index and `NOT
    /// NULL`, none of which blocks writers (see the [crate documentation](crate)). The
    /// application can write public IDs from the moment the column exists; the backfill never
    /// overwrites one.
    ///
    /// # Errors
    ///
    /// [`AdoptError::Options`] for a name that is not a plain SQL name.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use idgen_adopt::AdoptOptions;
    /// let options = AdoptOptions::snowflake("orders", idgen_core::Layout::TWITTER)?
    ///     .public_id("public_id")?
    ///     .backfill_batch(5000)?
    ///     .backfill_pause(Duration::from_millis(10));
    /// # let _ = options;
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn public_id(mut self, column: &str) -> Result<Self, AdoptError> {
        let column = SqlName::parse("public-ID column", column)?;
        if column.as_str().contains('.') {
            return Err(AdoptError::Options(
                idgen_engine::ErrorKind::InvalidSqlName {
                    what: "public-ID column",
                    name: column.as_str().to_owned(),
                    reason: "a column name has no schema part".into(),
                }
                .into(),
            ));
        }
        self.public_id = Some(PublicIdOptions {
            column,
            batch: DEFAULT_BACKFILL_BATCH,
            pause: DEFAULT_BACKFILL_PAUSE,
        });
        Ok(self)
    }

    /// How many rows a backfill batch fills (default [`DEFAULT_BACKFILL_BATCH`]; 1 to
    /// [`MAX_BACKFILL_BATCH`]). Each batch is one short transaction. Call it after
    /// [`public_id`](Self::public_id); before, it does nothing.
    ///
    /// # Errors
    ///
    /// [`AdoptError::BackfillBatch`] for 0 or more than [`MAX_BACKFILL_BATCH`].
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_adopt::{AdoptError, AdoptOptions};
    /// let options = AdoptOptions::keep_keys("t")?.public_id("public_id")?;
    /// assert!(options.clone().backfill_batch(10_000).is_ok());
    /// assert!(matches!(options.backfill_batch(0), Err(AdoptError::BackfillBatch { batch: 0, .. })));
    /// # Ok::<(), AdoptError>(())
    /// ```
    pub fn backfill_batch(mut self, rows: u32) -> Result<Self, AdoptError> {
        if rows == 0 || rows > MAX_BACKFILL_BATCH {
            return Err(AdoptError::BackfillBatch {
                batch: rows,
                max: MAX_BACKFILL_BATCH,
            });
        }
        if let Some(p) = &mut self.public_id {
            p.batch = rows;
        }
        Ok(self)
    }

    /// How long the backfill pauses between two batches (default [`DEFAULT_BACKFILL_PAUSE`]; zero for none), to leave the server
    /// to the writers. Call it after [`public_id`](Self::public_id); before, it does nothing.
    ///
    /// ```
    /// use std::time::Duration;
    /// let options = idgen_adopt::AdoptOptions::keep_keys("t")?
    ///     .public_id("public_id")?
    ///     .backfill_pause(Duration::from_millis(20));
    /// # let _ = options;
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn backfill_pause(mut self, pause: Duration) -> Self {
        if let Some(p) = &mut self.public_id {
            p.pause = pause;
        }
        self
    }

    /// Hi-lo: the sequence to use (`name` or `schema.name`). Ignored for Snowflake keys.
    ///
    /// # Errors
    ///
    /// [`AdoptError::Options`] for a name that is not a plain SQL name.
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_adopt::AdoptOptions;
    /// assert!(AdoptOptions::hilo("t", 100)?.sequence("t_id_seq").is_ok());
    /// assert!(AdoptOptions::hilo("t", 100)?.sequence("t id seq").is_err());
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn sequence(mut self, name: &str) -> Result<Self, AdoptError> {
        if let Target::HiLo { sequence, .. } = &mut self.target {
            *sequence = Some(SqlName::parse("sequence", name)?);
        }
        Ok(self)
    }

    /// Hi-lo: take a [`sequence`](Self::sequence) that is not the key column's own (not its
    /// identity's, not the one its `DEFAULT nextval(…)` calls), because the writers get their
    /// keys from it in their own SQL, or will before they write again: the user moves them.
    /// Without it such a sequence is refused ([`AdoptError::SequenceNotUsed`]): old writers
    /// would go on taking keys from the column's default, which knows nothing of the blocks.
    /// Ignored for Snowflake keys.
    ///
    /// ```
    /// let options = idgen_adopt::AdoptOptions::hilo("order_lines", 1000)?
    ///     .sequence("shared_ids")?
    ///     .writers_use_sequence();
    /// # let _ = options;
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn writers_use_sequence(mut self) -> Self {
        if let Target::HiLo {
            writers_use_sequence,
            ..
        } = &mut self.target
        {
            *writers_use_sequence = true;
        }
        self
    }

    /// Hi-lo: accept a key type that leaves the sequence fewer values than idgen asks for
    /// ([`MIN_SEQUENCE_VALUES_LEFT`](crate::MIN_SEQUENCE_VALUES_LEFT), and at least the
    /// largest key so far). With `INCREMENT BY block` every old writer's row takes a whole
    /// block of the key's range, so an `integer` key with blocks of 1000 has room for about
    /// 2.1 million more rows or blocks; the plan states the room either way. Without it, too little room is refused
    /// ([`AdoptError::KeyCapacity`]). Ignored for Snowflake keys.
    ///
    /// ```
    /// let options = idgen_adopt::AdoptOptions::hilo("order_lines", 100_000)?.accept_key_capacity();
    /// # let _ = options;
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn accept_key_capacity(mut self) -> Self {
        if let Target::HiLo {
            accept_key_capacity,
            ..
        } = &mut self.target
        {
            *accept_key_capacity = true;
        }
        self
    }

    /// Snowflake keys: make the database-side generator the column's default (installed by
    /// `apply`; see [`idgen_db_generator`]). Its layout should be the one
    /// given to [`snowflake`](Self::snowflake). Ignored for hi-lo.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_adopt::AdoptOptions;
    /// use idgen_db_generator::DbGenerator;
    /// let options = AdoptOptions::snowflake("orders", Layout::TWITTER)?.db_generator(DbGenerator::new(Layout::TWITTER));
    /// # let _ = options;
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn db_generator(mut self, generator: DbGenerator) -> Self {
        if let Target::Snowflake { generator: g, .. } = &mut self.target {
            *g = Some(Box::new(generator));
        }
        self
    }

    /// Snowflake keys: how far behind this host's clock the key check looks (default
    /// [`DEFAULT_CLOCK_ALLOWANCE`]). Ignored for hi-lo.
    ///
    /// ```
    /// use std::time::Duration;
    /// let options = idgen_adopt::AdoptOptions::snowflake("orders", idgen_core::Layout::TWITTER)?
    ///     .clock_allowance(Duration::ZERO);
    /// # let _ = options;
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn clock_allowance(mut self, allowance: Duration) -> Self {
        if let Target::Snowflake {
            clock_allowance, ..
        } = &mut self.target
        {
            *clock_allowance = allowance;
        }
        self
    }

    /// The progress table's name (default [`DEFAULT_PROGRESS_TABLE`]).
    ///
    /// # Errors
    ///
    /// [`AdoptError::Options`] for a name that is not a plain SQL name.
    ///
    /// # Examples
    ///
    /// ```
    /// let options = idgen_adopt::AdoptOptions::hilo("t", 10)?.progress_table("ops.adoption")?;
    /// # let _ = options;
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn progress_table(mut self, name: &str) -> Result<Self, AdoptError> {
        self.progress_table = SqlName::parse("progress table", name)?;
        Ok(self)
    }

    /// How long a step that changes the schema keeps trying to get its lock (default
    /// [`DEFAULT_LOCK_WAIT`]). Each try waits at most 100 ms on PostgreSQL (`lock_timeout`)
    /// and not at all on MariaDB (`lock_wait_timeout = 0`), because other sessions' queries
    /// queue behind an `ALTER` that waits: writers never wait behind a step for longer than
    /// one try plus the change itself. Between tries the step pauses 200 ms (10 ms on MariaDB:
    /// a try that does not wait finds the lock free only when no statement on the table runs,
    /// and blocks nobody, so it tries often).
    ///
    /// ```
    /// use std::time::Duration;
    /// let options = idgen_adopt::AdoptOptions::hilo("t", 10)?.lock_wait(Duration::from_secs(60));
    /// # let _ = options;
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn lock_wait(mut self, wait: Duration) -> Self {
        self.lock_wait = wait;
        self
    }

    /// Acknowledge that some way writers read their new key back is not kept on this server
    /// (the plan's [`key_readback`](crate::AdoptionPlan::key_readback) entries that are not `kept`,
    /// e.g. MariaDB's consecutive keys of a multi-row insert): without it, `apply` refuses
    /// such an adoption with [`AdoptError::KeyReadbackLost`] before changing anything.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_adopt::AdoptOptions;
    /// use idgen_db_generator::DbGenerator;
    /// let options = AdoptOptions::snowflake("orders", Layout::TWITTER)?
    ///     .db_generator(DbGenerator::new(Layout::TWITTER))
    ///     .accept_lost_key_readback();
    /// # let _ = options;
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn accept_lost_key_readback(mut self) -> Self {
        self.accept_lost_key_readback = true;
        self
    }

    /// The table, as given.
    ///
    /// ```
    /// let options = idgen_adopt::AdoptOptions::hilo("shop.lines", 10)?;
    /// assert_eq!(options.table(), "shop.lines");
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn table(&self) -> &str {
        self.table.as_str()
    }
}

/// What a public-ID adoption is asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PublicIdOptions {
    pub(crate) column: SqlName,
    pub(crate) batch: u32,
    pub(crate) pause: Duration,
}
