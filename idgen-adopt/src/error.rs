//! [`AdoptError`]: why a table cannot be adopted, or why applying a step failed.

use std::sync::Arc;

/// Why [`plan`](super::plan) refused a table, or why [`apply`](super::apply) stopped. Every
/// refusal names the table, column or value and what to do; a refusal changes nothing.
///
/// ```
/// use idgen_adopt::AdoptError;
/// let err = AdoptError::CompositeKey { table: "order_lines".into(), columns: vec!["order_id".into(), "line".into()] };
/// assert_eq!(
///     err.to_string(),
///     "table order_lines has a composite primary key (order_id, line): idgen adopts a table keyed by one integer column; \
///      keep this key and give the table a public ID instead"
/// );
/// ```
#[derive(Clone, thiserror::Error)]
#[non_exhaustive]
pub enum AdoptError {
    /// The table does not exist, or the session's user cannot see it.
    #[error("table {table} does not exist (or this user cannot see it): check its name and schema")]
    TableNotFound {
        /// The table as given.
        table: String,
    },

    /// The table has no primary key.
    #[error(
        "table {table} has no primary key: idgen adopts a table keyed by one integer column; add a primary key first"
    )]
    NoPrimaryKey {
        /// The table.
        table: String,
    },

    /// The primary key has more than one column.
    #[error(
        "table {table} has a composite primary key ({}): idgen adopts a table keyed by one integer column; keep this key and give the table a public ID instead",
        .columns.join(", ")
    )]
    CompositeKey {
        /// The table.
        table: String,
        /// The key's columns, in order.
        columns: Vec<String>,
    },

    /// The key column does not hold integers (a UUID, a text), or is too narrow for the IDs
    /// asked for.
    #[error("key column {table}.{column} is {data_type}: {reason}")]
    UnsupportedKeyType {
        /// The table.
        table: String,
        /// The key column.
        column: String,
        /// Its type, as the database names it.
        data_type: String,
        /// Why that type cannot be adopted, and what to do.
        reason: String,
    },

    /// A trigger on the table sets the key column: it would overwrite the keys idgen writes.
    #[error(
        "trigger {} on {table} sets the key column {column}: it would overwrite the keys idgen writes; drop or change it first",
        .triggers.join(", ")
    )]
    TriggerWritesKey {
        /// The table.
        table: String,
        /// The key column.
        column: String,
        /// The triggers' names.
        triggers: Vec<String>,
    },

    /// The session's user may not alter the table or sequence (PostgreSQL: only its owner, or
    /// a member of the owning role, may).
    #[error(
        "user {user} may not alter {object}: it is owned by {owner}, and only its owner (or a member of that role) may alter it; run the adoption as {owner}"
    )]
    NotOwner {
        /// The table or sequence.
        object: String,
        /// Its owner.
        owner: String,
        /// The session's user.
        user: String,
    },

    /// A Snowflake ID issued from now on could be at or below an existing key.
    #[error(
        "the largest key of {table}.{column} is {max_key}, but the smallest ID idgen can issue from {from} under the layout ({layout}) is {smallest}: new keys would not all be above the old ones; use a layout whose IDs are larger (an earlier epoch, more node or sequence bits), or adopt the table with hi-lo"
    )]
    KeysNotAbove {
        /// The table.
        table: String,
        /// The key column.
        column: String,
        /// `MAX(column)`.
        max_key: i64,
        /// The smallest ID the layout can issue from `from` on (node 0, sequence 0).
        smallest: i64,
        /// The time it was computed for (RFC 3339).
        from: String,
        /// The layout.
        layout: String,
    },

    /// Hi-lo was asked for, but no sequence was named and the key column takes its values
    /// from none.
    #[error("{reason}")]
    NoSequence {
        /// What was found, and what to do.
        reason: String,
    },

    /// The sequence cannot take hi-lo blocks safely: it counts downwards, cycles, or would
    /// run past its maximum.
    #[error("sequence {sequence} cannot hand out hi-lo blocks of {block}: {reason}")]
    UnsafeSequence {
        /// The sequence.
        sequence: String,
        /// The block size asked for.
        block: u64,
        /// Why.
        reason: String,
    },

    /// Hi-lo on a named sequence that the key column does not take its values from (not its
    /// identity's, not the one its default calls): old writers would go on taking keys from
    /// the column's own default, which knows nothing of the blocks, unless the user moves them
    /// ([`AdoptOptions::writers_use_sequence`](super::AdoptOptions::writers_use_sequence)).
    #[error(
        "sequence {sequence} is not what {table}.{column} takes its keys from ({key_source}): writers that leave the key to the column \
         would not take part in the hi-lo blocks, so their keys could fall inside a block; name the column's own sequence, or, if you move \
         every writer to {sequence} yourself, say so (AdoptOptions::writers_use_sequence, idgen adopt --writers-use-sequence)"
    )]
    SequenceNotUsed {
        /// The table.
        table: String,
        /// The key column.
        column: String,
        /// The sequence named.
        sequence: String,
        /// Where the column takes its keys from (`no default`, `nextval of public.t_id_seq`, …).
        key_source: String,
    },

    /// Hi-lo on a key type that leaves the sequence too few values: with `INCREMENT BY block`
    /// every old writer's row takes one value (a whole block of the key's range), and every
    /// hi-lo block one. idgen asks for at least [`MIN_SEQUENCE_VALUES_LEFT`](super::MIN_SEQUENCE_VALUES_LEFT)
    /// and at least the largest key so far.
    #[error(
        "key column {table}.{column} is {data_type}, which holds keys up to {type_max}: with INCREMENT BY {block} its sequence has room for \
         only {capacity} more values (each old writer's row takes one, a whole block of {block} keys, and each hi-lo block one); idgen asks \
         for at least {min} and at least the largest key so far: widen the key to bigint, use a smaller block, or accept it \
         (AdoptOptions::accept_key_capacity, idgen adopt --accept-key-capacity)",
        min = crate::limits::MIN_SEQUENCE_VALUES_LEFT
    )]
    KeyCapacity {
        /// The table.
        table: String,
        /// The key column.
        column: String,
        /// Its type, as the database names it.
        data_type: String,
        /// The largest key the type (or the sequence, if lower) holds.
        type_max: i64,
        /// The block size asked for.
        block: u64,
        /// How many more values the sequence can hand out.
        capacity: i64,
    },

    /// PostgreSQL: the public ID's unique index is still invalid after being built (a build
    /// stopped or failed in another session between the check and the build, more than once).
    /// The step is not recorded; run apply again.
    #[error(
        "the unique index {index} on {table} is invalid after {tries} builds (another session's build stopped or failed meanwhile): \
         the step is not recorded; run apply again"
    )]
    InvalidIndex {
        /// The table.
        table: String,
        /// The index.
        index: String,
        /// How many times it was built.
        tries: u32,
    },

    /// Other sessions held a lock the step needs for longer than the step tries (a
    /// transaction that called `nextval`, or one that uses the table, and has not ended). Each
    /// try waits at most 100 ms (MariaDB: not at all), so other sessions never queue behind
    /// the step for longer; the step tried until [`AdoptOptions::lock_wait`](super::AdoptOptions::lock_wait)
    /// was spent. It did not make its change (on PostgreSQL each try is rolled back whole; on
    /// MariaDB a hi-lo step's `SETVAL`, which runs first, may have moved the sequence
    /// forwards, which hands out no value twice). Run apply again when they have ended.
    #[error(
        "step {step} did not get its lock on {object} in {tries} tries over {waited_ms} ms: other sessions hold it (a transaction that used it and has not ended); the step did not make its change, run apply again once they have ended"
    )]
    Busy {
        /// The step's name.
        step: &'static str,
        /// The table or sequence.
        object: String,
        /// How many times the step tried.
        tries: u32,
        /// How long it tried, in milliseconds.
        waited_ms: u64,
        /// The database's last error.
        source: Arc<dyn std::error::Error + Send + Sync + 'static>,
    },

    /// The public-ID column exists with a type other than the one [`PublicId`](idgen_core::PublicId)
    /// maps to.
    #[error(
        "public-ID column {table}.{column} exists as {data_type}: a public ID is {wanted} here; name another column, or convert this one first"
    )]
    PublicIdColumnType {
        /// The table.
        table: String,
        /// The column.
        column: String,
        /// Its type, as the database names it.
        data_type: String,
        /// The type a public ID needs (`uuid`, `binary(16)`).
        wanted: &'static str,
    },

    /// After several rounds of the backfill, rows without a public ID keep appearing: some
    /// writer inserts `NULL` into the column explicitly (the column's default would have given
    /// one). The step is not recorded; stop that writer and run apply again.
    #[error(
        "{rows} rows of {table} still have no {column} after {rounds} rounds of the backfill: a writer inserts NULL into {column} explicitly; \
         let it give a public ID (or omit the column, whose default gives one) and run apply again"
    )]
    PublicIdsKeepMissing {
        /// The table.
        table: String,
        /// The public-ID column.
        column: String,
        /// How many rounds the backfill ran.
        rounds: u32,
        /// Rows without a public ID after the last round.
        rows: u64,
    },

    /// A backfill batch size of 0 or above the limit.
    #[error("backfill batch of {batch} rows is out of range: it must be 1 to {max}")]
    BackfillBatch {
        /// The batch asked for.
        batch: u32,
        /// The largest batch.
        max: u32,
    },

    /// After the switch, some way writers read their new row's key back would no longer give
    /// the row's key on this server (see [`AdoptionPlan::key_readback`](super::AdoptionPlan::key_readback));
    /// `plan` lists them. Nothing was changed: make sure no writer reads its key that way,
    /// then acknowledge it ([`AdoptOptions::accept_lost_key_readback`](super::AdoptOptions::accept_lost_key_readback),
    /// `idgen adopt apply --accept-lost-key-readback`).
    #[error(
        "after the switch of {table}, writers that read their new key by {} would not get their row's key on {server}:          nothing was changed; check that no writer does, then pass --accept-lost-key-readback (AdoptOptions::accept_lost_key_readback)",
        .means.join("; ")
    )]
    KeyReadbackLost {
        /// The table.
        table: String,
        /// The server and its version (`MariaDB 10.11.19`, `PostgreSQL 15.18`).
        server: String,
        /// The means that are not kept.
        means: Vec<String>,
    },

    /// The database cannot do this adoption (SQLite; MariaDB hi-lo on an `AUTO_INCREMENT`).
    #[error("{reason}")]
    Unsupported {
        /// What cannot be done, and what to do instead.
        reason: String,
    },

    /// A name or option was refused (an invalid SQL name, a database-side generator's error).
    #[error(transparent)]
    Options(#[from] idgen_engine::Error),

    /// The database returned an error.
    #[error("adopting {table} failed to {operation}: {source}")]
    Database {
        /// The table being adopted.
        table: String,
        /// What was being done.
        operation: String,
        /// The database's error.
        source: Arc<dyn std::error::Error + Send + Sync + 'static>,
    },
}

impl std::fmt::Debug for AdoptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        idgen_core::display_then_causes(self, f)
    }
}
