//! What one run of one key kind measured.

/// The primary key's B-tree after the inserts, `VACUUM`/`ANALYZE` and all.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IndexStats {
    /// Rows in the table (checked against the rows inserted).
    pub(crate) rows: u64,
    /// The primary-key index's size on disk.
    pub(crate) index_bytes: u64,
    /// Its leaf pages.
    pub(crate) leaf_pages: u64,
    /// `pgstatindex`'s `avg_leaf_density` (PostgreSQL only).
    pub(crate) leaf_density_pct: Option<f64>,
    /// `pgstatindex`'s `leaf_fragmentation` (PostgreSQL only).
    pub(crate) leaf_fragmentation_pct: Option<f64>,
}

/// One key kind's result: insert throughput and the index it left.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KindResult {
    /// Rows inserted per second of wall time, all writers together.
    pub(crate) rows_per_sec: f64,
    /// The index measurements.
    pub(crate) index: IndexStats,
}

impl KindResult {
    /// Rows per leaf page: a density measure InnoDB can give too.
    pub(crate) fn rows_per_leaf(&self) -> f64 {
        self.index.rows as f64 / self.index.leaf_pages.max(1) as f64
    }
}
