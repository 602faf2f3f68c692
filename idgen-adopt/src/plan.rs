//! What [`plan`](crate::plan) found and the steps [`apply`](crate::apply) runs.

use idgen_sql::Dialect;

use crate::readback::KeyReadback;

/// One step of an [`AdoptionPlan`]: a stable name (what the progress table records), what it
/// does and why it is safe, and its exact SQL in order.
///
/// ```
/// # fn show(plan: &idgen_adopt::AdoptionPlan) {
/// for step in &plan.steps {
///     println!("{} ({}): {}", step.name, if step.done { "done" } else { "to do" }, step.description);
///     for sql in &step.sql {
///         println!("    {sql};");
///     }
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Step {
    /// The step's name: `progress-table`, `check-keys`, `install-generator`,
    /// `retire-default`, `identity-by-default`, `hilo-sequence`, `public-id-column`,
    /// `public-id-backfill`, `public-id-unique-index` or `public-id-not-null`.
    pub name: &'static str,
    /// What it does, with the numbers read, and why it is safe online.
    pub description: String,
    /// Its SQL, in order. A PostgreSQL step is one text: one transaction ending with the
    /// progress record. `check-keys` reads only; `install-generator` runs
    /// [`db_generator::install`](idgen_db_generator::install), whose first statements these are.
    pub sql: Vec<String>,
    /// Whether the progress table records it as finished (`apply` skips it).
    pub done: bool,
}

impl Step {
    pub(crate) fn new(name: &'static str, description: String, sql: Vec<String>) -> Self {
        Step {
            name,
            description,
            sql,
            done: false,
        }
    }
}

/// What [`plan`](crate::plan) found and the steps [`apply`](crate::apply) would run. `Display`
/// prints it for an operator.
///
/// ```no_run
/// # async fn demo<S: idgen_sql::Session>(session: &mut S) -> Result<(), idgen_adopt::AdoptError> {
/// use idgen_adopt::{plan, AdoptOptions};
/// let plan = plan(session, &AdoptOptions::snowflake("orders", idgen_core::Layout::TWITTER)?).await?;
/// println!("{plan}");
/// assert!(plan.steps.iter().any(|s| s.name == "retire-default"));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AdoptionPlan {
    /// The database.
    pub dialect: Dialect,
    /// The table.
    pub table: String,
    /// Its key column.
    pub column: String,
    /// The key column's type.
    pub data_type: String,
    /// Where its values come from today (`identity (always)`, `nextval(…)`, `AUTO_INCREMENT`, …).
    pub key_source: String,
    /// `MAX(key)` when planned (0 for an empty table).
    pub max_key: i64,
    /// The server and its version (`PostgreSQL 15.18`, `MariaDB 10.11.19`).
    pub server: String,
    /// How writers read their new row's key back, and whether each way still gives the
    /// row's key once the database-side generator makes the keys (empty when the adoption
    /// leaves the key's default alone).
    pub key_readback: Vec<KeyReadback>,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

impl AdoptionPlan {
    /// Whether every step is done.
    ///
    /// ```no_run
    /// # async fn demo<S: idgen_sql::Session>(session: &mut S) -> Result<(), idgen_adopt::AdoptError> {
    /// use idgen_adopt::{apply, plan, AdoptOptions};
    /// let options = AdoptOptions::hilo("order_lines", 1000)?;
    /// apply(session, &options).await?;
    /// assert!(plan(session, &options).await?.finished());
    /// # Ok(()) }
    /// ```
    pub fn finished(&self) -> bool {
        self.steps.iter().all(|s| s.done)
    }

    /// The ways of reading a new key back that the switch does not keep on this server.
    ///
    /// ```no_run
    /// # async fn demo<S: idgen_sql::Session>(session: &mut S) -> Result<(), idgen_adopt::AdoptError> {
    /// use idgen_adopt::{plan, AdoptOptions};
    /// let options = AdoptOptions::hilo("order_lines", 1000)?;
    /// assert!(plan(session, &options).await?.lost_key_readback().is_empty());
    /// # Ok(()) }
    /// ```
    pub fn lost_key_readback(&self) -> Vec<&KeyReadback> {
        self.key_readback.iter().filter(|r| !r.kept).collect()
    }
}

impl std::fmt::Display for AdoptionPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "adopt {}.{} ({}, {}; largest key {}) on {}:",
            self.table, self.column, self.data_type, self.key_source, self.max_key, self.server
        )?;
        if !self.key_readback.is_empty() {
            writeln!(
                f,
                "\nhow writers read their new key back, after the switch on {}:",
                self.server
            )?;
            for r in &self.key_readback {
                let kept = if r.kept { "kept" } else { "NOT KEPT" };
                writeln!(f, "   {kept:>8}: {} ({})", r.means, r.how)?;
            }
            if !self.lost_key_readback().is_empty() {
                writeln!(
                    f,
                    "   apply refuses until you acknowledge the means not kept (--accept-lost-key-readback)"
                )?;
            }
        }
        for (i, step) in self.steps.iter().enumerate() {
            let state = if step.done { "done" } else { "to do" };
            writeln!(
                f,
                "\n{}. {} [{state}]\n   {}",
                i + 1,
                step.name,
                step.description
            )?;
            for sql in &step.sql {
                for line in sql.lines() {
                    writeln!(f, "     {line}")?;
                }
            }
        }
        Ok(())
    }
}
