//! [`layout_key`]: a layout as the lease stores record it per namespace.

use idgen_core::{FieldOrder, Layout};

/// `layout` as a lease store records it with a namespace, and as the database-side generator
/// records it with its state: every number that decides which 63-bit value an ID gets (the
/// epoch, the tick, the field widths and their order). Two layouts with the same key make the
/// same IDs; two with different keys can make the same ID from different node IDs or times.
///
/// ```
/// use idgen_core::Layout;
/// assert_eq!(
///     idgen_engine::lease::layout_key(&Layout::TWITTER),
///     "epoch_ms=1288834974657 unit_ms=1 time=41 node=10 sequence=12 order=time-node-sequence"
/// );
/// assert_ne!(
///     idgen_engine::lease::layout_key(&Layout::TWITTER),
///     idgen_engine::lease::layout_key(&Layout::SONYFLAKE)
/// );
/// ```
pub fn layout_key(layout: &Layout) -> String {
    let order = match layout.order() {
        FieldOrder::TimeNodeSequence => "time-node-sequence",
        FieldOrder::TimeSequenceNode => "time-sequence-node",
    };
    format!(
        "epoch_ms={} unit_ms={} time={} node={} sequence={} order={order}",
        layout.epoch_ms(),
        layout.unit_ms(),
        layout.timestamp_bits(),
        layout.node_bits(),
        layout.sequence_bits()
    )
}
