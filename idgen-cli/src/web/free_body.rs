//! The body of `POST /api/leases/free` and its reading, apart from the operator view's handler
//! so the fuzz target in `fuzz/` reaches it (it includes this file by path).

use serde::Deserialize;

/// What the page sends to free a node ID.
#[derive(Deserialize)]
pub(crate) struct FreeBody {
    /// The node ID, as text.
    pub(crate) node: String,
    /// The holder the page showed: the free is refused when the row has another.
    pub(crate) holder: Option<String>,
    /// Free a live lease.
    #[serde(default)]
    pub(crate) force: bool,
}

impl FreeBody {
    /// The node ID: decimal digits, surrounding white space ignored.
    pub(crate) fn node(&self) -> Option<u64> {
        self.node.trim().parse::<u64>().ok()
    }
}
