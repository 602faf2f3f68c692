//! [`Layout`]: where the timestamp, node and sequence live in a 63-bit ID.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::Result;
use crate::error::Error;
use crate::snowflake::SnowflakeId;

/// The most node sub-fields a layout can name (e.g. datacenter + worker).
pub const MAX_NODE_FIELDS: usize = 4;

/// The order of the node and sequence fields below the timestamp.
///
/// The timestamp is always the most significant field, so IDs sort by time either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldOrder {
    /// `timestamp | node | sequence` (Twitter, Instagram, Discord).
    TimeNodeSequence,
    /// `timestamp | sequence | node` (Sonyflake).
    TimeSequenceNode,
}

/// A named part of the node field, such as Twitter's 5-bit datacenter and 5-bit worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeField {
    /// The sub-field's name, used in errors and in [`Decomposed::node_fields`].
    pub name: &'static str,
    /// The sub-field's width in bits.
    pub bits: u8,
}

/// The fields of an ID, in the layout's units: what [`Layout::compose`] takes.
///
/// `ticks` counts time units (see [`Layout::unit_ms`]) since the layout's epoch; use
/// [`Layout::ticks_at`] to get it from a Unix time.
///
/// ```
/// use idgen_core::{Layout, Parts};
///
/// let id = Layout::TWITTER.compose(Parts { ticks: 1000, node: 33, sequence: 0 })?;
/// assert_eq!(id.get(), 4194439168);
/// # Ok::<(), idgen_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Parts {
    /// Time units since the layout's epoch.
    pub ticks: u64,
    /// The node ID (all node sub-fields together).
    pub node: u64,
    /// The sequence number within the tick.
    pub sequence: u64,
}

/// The fields of an ID, as [`Layout::decompose`] reads them.
///
/// ```
/// use idgen_core::{Layout, SnowflakeId};
///
/// let id = SnowflakeId::new(2116500430648709162).unwrap();
/// let d = Layout::TWITTER.decompose(id)?;
/// assert_eq!(d.unix_ms, 1_793_448_000_000); // 2026-10-31T12:00:00Z
/// assert_eq!(d.node_field("datacenter"), Some(3));
/// assert_eq!(d.node_field("worker"), Some(17));
/// assert_eq!(d.sequence, 42);
/// # Ok::<(), idgen_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Decomposed {
    /// Time units since the layout's epoch.
    pub ticks: u64,
    /// The start of the tick, in milliseconds since the Unix epoch.
    pub unix_ms: i64,
    /// The node ID (all node sub-fields together).
    pub node: u64,
    /// The sequence number within the tick.
    pub sequence: u64,
    layout: Layout,
}

impl Decomposed {
    /// The start of the ID's tick as a [`SystemTime`].
    ///
    /// ```
    /// # use idgen_core::{Layout, SnowflakeId};
    /// use std::time::{Duration, UNIX_EPOCH};
    /// let d = Layout::TWITTER.decompose(SnowflakeId::new(4194439168).unwrap())?;
    /// assert_eq!(d.time(), UNIX_EPOCH + Duration::from_millis(1288834975657));
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn time(&self) -> SystemTime {
        if self.unix_ms >= 0 {
            UNIX_EPOCH + Duration::from_millis(self.unix_ms as u64)
        } else {
            UNIX_EPOCH - Duration::from_millis(self.unix_ms.unsigned_abs())
        }
    }

    /// The node sub-fields, most significant first: `[("datacenter", 3), ("worker", 17)]` for
    /// Twitter, `[("machine", 2565)]` for Sonyflake.
    ///
    /// ```
    /// # use idgen_core::{Layout, SnowflakeId};
    /// let d = Layout::TWITTER.decompose(SnowflakeId::new(4194439168).unwrap())?;
    /// assert_eq!(d.node_fields().collect::<Vec<_>>(), [("datacenter", 1), ("worker", 1)]);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn node_fields(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.layout.split_node(self.node)
    }

    /// The value of the node sub-field called `name`, if the layout has one.
    ///
    /// ```
    /// # use idgen_core::{Layout, SnowflakeId};
    /// let d = Layout::SONYFLAKE.decompose(SnowflakeId::new(96902515261901317).unwrap())?;
    /// assert_eq!(d.node_field("machine"), Some(2565));
    /// assert_eq!(d.node_field("worker"), None);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn node_field(&self, name: &str) -> Option<u64> {
        self.node_fields().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// The layout the ID was read with.
    ///
    /// ```
    /// # use idgen_core::{Layout, SnowflakeId};
    /// let d = Layout::TWITTER.decompose(SnowflakeId::MIN)?;
    /// assert_eq!(d.layout(), &Layout::TWITTER);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
}

impl Decomposed {
    /// The start of the ID's tick as RFC 3339 text in UTC with milliseconds
    /// (`2026-10-31T12:00:00.000Z`), without a date-time crate (see also `to_jiff`, `to_chrono`,
    /// `to_time` behind their features).
    ///
    /// ```
    /// use idgen_core::{Layout, SnowflakeId};
    /// let d = Layout::TWITTER.decompose(SnowflakeId::new(2116500430648709162).unwrap())?;
    /// assert_eq!(d.rfc3339(), "2026-10-31T12:00:00.000Z");
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn rfc3339(&self) -> String {
        crate::fmt_time::UnixMs(self.unix_ms).to_string()
    }
}

/// `2026-10-31T12:00:00.000Z node 113 (datacenter 3, worker 17) sequence 42`: the tick's start
/// as RFC 3339 in UTC, the node with its sub-fields, and the sequence.
///
/// ```
/// use idgen_core::{Layout, SnowflakeId};
/// let d = Layout::TWITTER.decompose(SnowflakeId::new(2116500430648709162).unwrap())?;
/// assert_eq!(
///     d.to_string(),
///     "2026-10-31T12:00:00.000Z node 113 (datacenter 3, worker 17) sequence 42"
/// );
/// let d = Layout::SONYFLAKE.decompose(SnowflakeId::new(96902515261901317).unwrap())?;
/// assert_eq!(d.to_string(), "2026-10-31T12:00:00.000Z node 2565 sequence 7");
/// # Ok::<(), idgen_core::Error>(())
/// ```
impl std::fmt::Display for Decomposed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} node {}",
            crate::fmt_time::UnixMs(self.unix_ms),
            self.node
        )?;
        if self.layout.node_fields().len() > 1 {
            let fields: Vec<String> = self
                .node_fields()
                .map(|(name, value)| format!("{name} {value}"))
                .collect();
            write!(f, " ({})", fields.join(", "))?;
        }
        write!(f, " sequence {}", self.sequence)
    }
}

/// The bit layout of an ID: epoch, time unit, widths and order of the timestamp, node and
/// sequence fields (63 bits at most, the sign bit stays 0), and optional named node sub-fields.
///
/// Use a preset ([`TWITTER`](Layout::TWITTER), [`SONYFLAKE`](Layout::SONYFLAKE),
/// [`INSTAGRAM`](Layout::INSTAGRAM), [`JS_SAFE`](Layout::JS_SAFE)), [`Layout::plan`] for the
/// node count, rate and lifetime you need, or [`Layout::builder`].
///
/// ```
/// use idgen_core::{Layout, Parts};
///
/// // 41-bit ms timestamp | 10-bit worker | 12-bit sequence, from 2026-01-01.
/// let layout = Layout::builder()
///     .epoch_ms(1_767_225_600_000)
///     .timestamp_bits(41)
///     .node_bits(10)
///     .sequence_bits(12)
///     .build()?;
/// let id = layout.compose_at(1_767_225_600_005, 3, 9)?;
/// let back = layout.decompose(id)?;
/// assert_eq!((back.unix_ms, back.node, back.sequence), (1_767_225_600_005, 3, 9));
/// # Ok::<(), idgen_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    epoch_ms: i64,
    unit_ms: u32,
    time_bits: u8,
    node_bits: u8,
    seq_bits: u8,
    order: FieldOrder,
    node_fields: [NodeField; MAX_NODE_FIELDS],
    node_field_count: u8,
}

const NO_FIELD: NodeField = field("", 0);

/// A preset's node sub-field.
const fn field(name: &'static str, bits: u8) -> NodeField {
    NodeField { name, bits }
}

impl Layout {
    /// Twitter's original layout: epoch 1288834974657 (2010-11-04T01:42:54.657Z),
    /// 41-bit millisecond timestamp | 5-bit datacenter | 5-bit worker | 12-bit sequence.
    /// 4,096 IDs per millisecond per node, until 2080-07-10T17:30:30.208Z.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// assert_eq!(Layout::TWITTER.node_capacity(), 1024);
    /// assert_eq!(Layout::TWITTER.node_from_fields(&[1, 1])?, 33);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub const TWITTER: Layout = Layout::preset(
        1_288_834_974_657,
        1,
        (41, 10, 12),
        FieldOrder::TimeNodeSequence,
        &[field("datacenter", 5), field("worker", 5)],
    );

    /// Sonyflake v2: epoch 2025-01-01T00:00:00Z, 39-bit timestamp in 10 ms units |
    /// 8-bit sequence | 16-bit machine (the sequence comes before the node).
    /// 256 IDs per 10 ms per machine, until 2199-03-19.
    ///
    /// ```
    /// use idgen_core::{FieldOrder, Layout};
    /// assert_eq!(Layout::SONYFLAKE.unit_ms(), 10);
    /// assert_eq!(Layout::SONYFLAKE.order(), FieldOrder::TimeSequenceNode);
    /// ```
    pub const SONYFLAKE: Layout = Layout::preset(
        1_735_689_600_000,
        10,
        (39, 16, 8),
        FieldOrder::TimeSequenceNode,
        &[field("machine", 16)],
    );

    /// Instagram's layout: millisecond timestamp | 13-bit shard | 10-bit sequence, with
    /// Instagram's published epoch 1314220021721 (2011-08-24T21:07:01.721Z). Set your own epoch
    /// with [`with_epoch_ms`](Layout::with_epoch_ms).
    ///
    /// Instagram describes a 41-bit timestamp, which makes 64 bits with the shard and sequence:
    /// their IDs use the sign bit once the timestamp reaches 2^40 ms (about 34.8 years after the
    /// epoch). A [`SnowflakeId`] keeps the sign bit 0, so this preset has a **40-bit** timestamp:
    /// bit for bit the same IDs as Instagram's scheme until then (2046-06 with Instagram's
    /// epoch), and an error instead of a negative ID after.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// let mine = Layout::INSTAGRAM.with_epoch_ms(1_767_225_600_000)?;
    /// assert_eq!(mine.node_capacity(), 8192);
    /// assert_eq!(mine.epoch_ms(), 1_767_225_600_000);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub const INSTAGRAM: Layout = Layout::preset(
        1_314_220_021_721,
        1,
        (40, 13, 10),
        FieldOrder::TimeNodeSequence,
        &[field("shard", 13)],
    );

    /// IDs that JavaScript keeps exact: 53 bits, so every ID is at most 2^53 − 1
    /// (`Number.MAX_SAFE_INTEGER`, 9,007,199,254,740,991) and survives a JSON number, a
    /// JavaScript `number` and a `double` without rounding. Epoch 2026-01-01T00:00:00Z,
    /// 38-bit timestamp in 10 ms units | 7-bit node | 8-bit sequence.
    ///
    /// **128 nodes, 25,600 IDs per second per node (256 per 10 ms tick), for 87.1 years:
    /// until 2113-02-08T13:44:29.439Z.**
    ///
    /// Why these widths: Twitter's 41-bit millisecond timestamp would leave 12 bits for the
    /// node and the sequence, and 80 years of milliseconds need 42 bits on their own. 10 ms
    /// ticks (Sonyflake's) need 38 bits for 87 years and leave 15: 7 node bits, enough for a
    /// fleet whose node IDs come from a lease with room for rolling deploys, and 8 sequence
    /// bits, Sonyflake's 25,600 IDs per second per node. Coarser ticks would save no bits (what
    /// the timestamp saves, the sequence needs for the same rate) but would make a generator
    /// whose tick is used up wait longer, and would order IDs less finely. Need other numbers?
    /// [`Layout::plan`] finds the layout for your node count, rate and lifetime within 53 bits.
    ///
    /// ```
    /// use idgen_core::{Layout, Parts};
    /// let js = Layout::JS_SAFE;
    /// assert_eq!(js.total_bits(), 53);
    /// assert_eq!(js.node_capacity(), 128);
    /// assert_eq!(js.ids_per_tick(), 256);
    /// assert_eq!(js.ids_per_second(), 25_600);
    /// assert_eq!(js.lifetime_ms(), 2_748_779_069_440);
    /// assert!(js.lifetime_years() > 87.1 && js.lifetime_years() < 87.11);
    /// assert_eq!(js.last_rfc3339(), "2113-02-08T13:44:29.439Z");
    ///
    /// // The largest ID it can make is Number.MAX_SAFE_INTEGER.
    /// let max_safe_integer = (1u64 << 53) - 1;
    /// let largest = js.compose(Parts {
    ///     ticks: js.max_ticks(),
    ///     node: js.max_node(),
    ///     sequence: js.max_sequence(),
    /// })?;
    /// assert_eq!(largest.as_u64(), max_safe_integer);
    /// assert_eq!(largest.as_u64() as f64 as u64, largest.as_u64()); // exact as a double
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub const JS_SAFE: Layout = Layout::preset(
        1_767_225_600_000,
        10,
        (38, 7, 8),
        FieldOrder::TimeNodeSequence,
        &[field("node", 7)],
    );

    const fn preset(
        epoch_ms: i64,
        unit_ms: u32,
        (time_bits, node_bits, seq_bits): (u8, u8, u8),
        order: FieldOrder,
        fields: &[NodeField],
    ) -> Layout {
        let mut node_fields = [NO_FIELD; MAX_NODE_FIELDS];
        let mut i = 0;
        while i < fields.len() {
            node_fields[i] = fields[i];
            i += 1;
        }
        Layout {
            epoch_ms,
            unit_ms,
            time_bits,
            node_bits,
            seq_bits,
            order,
            node_fields,
            node_field_count: fields.len() as u8,
        }
    }

    /// A builder for any other layout; see [`LayoutBuilder`].
    ///
    /// ```
    /// let layout = idgen_core::Layout::builder().timestamp_bits(41).node_bits(10).sequence_bits(12).build()?;
    /// assert_eq!(layout.total_bits(), 63);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn builder() -> LayoutBuilder {
        LayoutBuilder::default()
    }

    /// This layout with another epoch (milliseconds since the Unix epoch).
    ///
    /// Fails when the layout's last instant would not fit an `i64` of milliseconds.
    ///
    /// ```
    /// # use idgen_core::Layout;
    /// assert!(Layout::TWITTER.with_epoch_ms(0).is_ok());
    /// assert!(Layout::TWITTER.with_epoch_ms(i64::MAX).is_err());
    /// ```
    pub fn with_epoch_ms(self, epoch_ms: i64) -> Result<Layout> {
        let layout = Layout { epoch_ms, ..self };
        layout.validate()?;
        Ok(layout)
    }

    /// The epoch, in milliseconds since the Unix epoch.
    ///
    /// ```
    /// assert_eq!(idgen_core::Layout::TWITTER.epoch_ms(), 1288834974657);
    /// ```
    pub const fn epoch_ms(&self) -> i64 {
        self.epoch_ms
    }

    /// The length of one tick of the timestamp field, in milliseconds.
    ///
    /// ```
    /// assert_eq!(idgen_core::Layout::TWITTER.unit_ms(), 1);
    /// ```
    pub const fn unit_ms(&self) -> u32 {
        self.unit_ms
    }

    /// The width of the timestamp field.
    ///
    /// ```
    /// assert_eq!(idgen_core::Layout::SONYFLAKE.timestamp_bits(), 39);
    /// ```
    pub const fn timestamp_bits(&self) -> u8 {
        self.time_bits
    }

    /// The width of the node field (all sub-fields together).
    ///
    /// ```
    /// assert_eq!(idgen_core::Layout::TWITTER.node_bits(), 10);
    /// ```
    pub const fn node_bits(&self) -> u8 {
        self.node_bits
    }

    /// The width of the sequence field.
    ///
    /// ```
    /// assert_eq!(idgen_core::Layout::INSTAGRAM.sequence_bits(), 10);
    /// ```
    pub const fn sequence_bits(&self) -> u8 {
        self.seq_bits
    }

    /// The order of the node and sequence fields.
    ///
    /// ```
    /// use idgen_core::{FieldOrder, Layout};
    /// assert_eq!(Layout::TWITTER.order(), FieldOrder::TimeNodeSequence);
    /// ```
    pub const fn order(&self) -> FieldOrder {
        self.order
    }

    /// All bits used: timestamp + node + sequence (at most 63).
    ///
    /// ```
    /// assert_eq!(idgen_core::Layout::SONYFLAKE.total_bits(), 63);
    /// ```
    pub const fn total_bits(&self) -> u8 {
        self.time_bits + self.node_bits + self.seq_bits
    }

    /// The named node sub-fields, most significant first. A layout without a split has one
    /// sub-field named `"node"`.
    ///
    /// ```
    /// let names: Vec<_> = idgen_core::Layout::TWITTER.node_fields().iter().map(|f| f.name).collect();
    /// assert_eq!(names, ["datacenter", "worker"]);
    /// ```
    pub fn node_fields(&self) -> &[NodeField] {
        &self.node_fields[..self.node_field_count as usize]
    }

    /// The largest tick count the timestamp field holds.
    ///
    /// ```
    /// assert_eq!(idgen_core::Layout::TWITTER.max_ticks(), (1 << 41) - 1);
    /// ```
    pub const fn max_ticks(&self) -> u64 {
        mask(self.time_bits)
    }

    /// The largest node ID.
    ///
    /// ```
    /// assert_eq!(idgen_core::Layout::TWITTER.max_node(), 1023);
    /// ```
    pub const fn max_node(&self) -> u64 {
        mask(self.node_bits)
    }

    /// How many node IDs exist (`max_node() + 1`).
    ///
    /// ```
    /// assert_eq!(idgen_core::Layout::SONYFLAKE.node_capacity(), 65536);
    /// ```
    pub const fn node_capacity(&self) -> u64 {
        mask(self.node_bits) + 1
    }

    /// The largest sequence number.
    ///
    /// ```
    /// assert_eq!(idgen_core::Layout::TWITTER.max_sequence(), 4095);
    /// ```
    pub const fn max_sequence(&self) -> u64 {
        mask(self.seq_bits)
    }

    /// IDs one node can issue per tick (`max_sequence() + 1`).
    ///
    /// ```
    /// assert_eq!(idgen_core::Layout::SONYFLAKE.ids_per_tick(), 256);
    /// ```
    pub const fn ids_per_tick(&self) -> u64 {
        mask(self.seq_bits) + 1
    }

    /// The most IDs one node can issue per second: [`ids_per_tick`](Layout::ids_per_tick) ×
    /// 1000 / [`unit_ms`](Layout::unit_ms), rounded down (saturating at `u64::MAX`). A generator
    /// that uses up a tick's sequence waits for the next tick.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// assert_eq!(Layout::TWITTER.ids_per_second(), 4_096_000);
    /// assert_eq!(Layout::SONYFLAKE.ids_per_second(), 25_600);
    /// ```
    pub const fn ids_per_second(&self) -> u64 {
        let per_s = self.ids_per_tick() as u128 * 1000 / self.unit_ms as u128;
        if per_s > u64::MAX as u128 {
            u64::MAX
        } else {
            per_s as u64
        }
    }

    /// How long the layout lasts, in milliseconds: from the epoch to the end of its last tick
    /// (`(max_ticks() + 1) × unit_ms()`, saturating at `u64::MAX`).
    ///
    /// ```
    /// use idgen_core::Layout;
    /// let twitter = Layout::TWITTER;
    /// assert_eq!(twitter.lifetime_ms(), 1 << 41);
    /// assert_eq!(twitter.epoch_ms() + twitter.lifetime_ms() as i64 - 1, twitter.last_unix_ms());
    /// ```
    pub const fn lifetime_ms(&self) -> u64 {
        let ms = (self.max_ticks() as u128 + 1) * self.unit_ms as u128;
        if ms > u64::MAX as u128 {
            u64::MAX
        } else {
            ms as u64
        }
    }

    /// [`lifetime_ms`](Layout::lifetime_ms) in years of 365.2425 days (the Gregorian average,
    /// [`YEAR_MS`](crate::snowflake::plan::YEAR_MS)).
    ///
    /// ```
    /// let years = idgen_core::Layout::TWITTER.lifetime_years();
    /// assert!(years > 69.68 && years < 69.69);
    /// ```
    pub fn lifetime_years(&self) -> f64 {
        self.lifetime_ms() as f64 / crate::snowflake::plan::requirements::YEAR_MS as f64
    }

    /// [`last_unix_ms`](Layout::last_unix_ms) as RFC 3339 text in UTC with milliseconds; years
    /// past 9999 in ISO 8601's expanded form (`+010000-01-01T00:00:00.000Z`).
    ///
    /// ```
    /// assert_eq!(idgen_core::Layout::TWITTER.last_rfc3339(), "2080-07-10T17:30:30.208Z");
    /// ```
    pub fn last_rfc3339(&self) -> String {
        crate::fmt_time::UnixMs(self.last_unix_ms()).to_string()
    }

    /// The last instant an ID of this layout can carry, in milliseconds since the Unix epoch
    /// (the last millisecond of the last tick).
    ///
    /// ```
    /// // 2080-07-10T17:30:30.208Z
    /// assert_eq!(idgen_core::Layout::TWITTER.last_unix_ms(), 3_487_858_230_208);
    /// ```
    pub const fn last_unix_ms(&self) -> i64 {
        // In i128: `ticks × unit` alone may pass i64::MAX when the epoch is far before 1970;
        // validate() proved the sum fits an i64.
        let last = self.epoch_ms as i128
            + self.max_ticks() as i128 * self.unit_ms as i128
            + (self.unit_ms as i128 - 1);
        last as i64
    }

    /// The tick that contains `unix_ms`.
    ///
    /// # Errors
    ///
    /// [`Error::BeforeEpoch`], or [`Error::TimeOverflow`] past
    /// [`last_unix_ms`](Layout::last_unix_ms). Never wraps.
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_core::Layout;
    /// assert_eq!(Layout::SONYFLAKE.ticks_at(1_793_448_000_000)?, 5_775_840_000);
    /// assert!(Layout::TWITTER.ticks_at(Layout::TWITTER.last_unix_ms() + 1).is_err());
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    #[inline]
    pub fn ticks_at(&self, unix_ms: i64) -> Result<u64> {
        if unix_ms < self.epoch_ms {
            return Err(Error::BeforeEpoch {
                unix_ms,
                epoch_ms: self.epoch_ms,
            });
        }
        // `unix_ms >= epoch_ms`, so the distance fits a u64 even when their difference would
        // not fit an i64 (an epoch far before 1970 and an instant far after).
        let ticks = unix_ms.abs_diff(self.epoch_ms) / u64::from(self.unit_ms);
        if ticks > self.max_ticks() {
            return Err(Error::TimeOverflow {
                unix_ms,
                last_ms: self.last_unix_ms(),
            });
        }
        Ok(ticks)
    }

    /// The first millisecond (since the Unix epoch) of tick `ticks`. Exact for every tick the
    /// layout can hold (up to [`max_ticks`](Layout::max_ticks)); beyond that it saturates at
    /// `i64::MAX` rather than wrap.
    ///
    /// ```
    /// assert_eq!(idgen_core::Layout::TWITTER.tick_start_ms(1000), 1288834975657);
    /// assert_eq!(idgen_core::Layout::TWITTER.tick_start_ms(u64::MAX), i64::MAX);
    /// ```
    #[inline]
    pub const fn tick_start_ms(&self, ticks: u64) -> i64 {
        // In i128 (at most 2^64 × 2^32 plus an i64): `ticks × unit` alone may pass i64::MAX
        // while the sum with an epoch far before 1970 still fits.
        let start = self.epoch_ms as i128 + ticks as i128 * self.unit_ms as i128;
        if start > i64::MAX as i128 {
            i64::MAX
        } else {
            start as i64
        }
    }

    /// The ID with these fields. Each field is checked against its width; an out-of-range field
    /// is [`Error::FieldOutOfRange`] naming the field, the value and the limit.
    ///
    /// ```
    /// use idgen_core::{Layout, Parts};
    /// let id = Layout::SONYFLAKE.compose(Parts { ticks: 5_775_840_000, node: 2565, sequence: 7 })?;
    /// assert_eq!(id.get(), 96902515261901317);
    /// assert!(Layout::SONYFLAKE.compose(Parts { ticks: 0, node: 0, sequence: 256 }).is_err());
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn compose(&self, parts: Parts) -> Result<SnowflakeId> {
        check("timestamp", parts.ticks, self.time_bits)?;
        check("node", parts.node, self.node_bits)?;
        check("sequence", parts.sequence, self.seq_bits)?;
        Ok(SnowflakeId::from_raw(self.pack(
            parts.ticks,
            parts.node,
            parts.sequence,
        )))
    }

    /// The ID for an instant given in milliseconds since the Unix epoch (rounded down to the
    /// tick), a node and a sequence number.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// let id = Layout::TWITTER.compose_at(1_793_448_000_000, Layout::TWITTER.node_from_fields(&[3, 17])?, 42)?;
    /// assert_eq!(id.get(), 2116500430648709162);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn compose_at(&self, unix_ms: i64, node: u64, sequence: u64) -> Result<SnowflakeId> {
        self.compose(Parts {
            ticks: self.ticks_at(unix_ms)?,
            node,
            sequence,
        })
    }

    /// The ID for a [`SystemTime`] (rounded down to the tick), a node and a sequence number.
    ///
    /// ```
    /// use std::time::{Duration, UNIX_EPOCH};
    /// use idgen_core::Layout;
    /// let t = UNIX_EPOCH + Duration::from_millis(1_288_834_975_657);
    /// assert_eq!(Layout::TWITTER.compose_time(t, 33, 0)?.get(), 4194439168);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn compose_time(&self, time: SystemTime, node: u64, sequence: u64) -> Result<SnowflakeId> {
        let unix_ms = match time.duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
            // Round towards negative infinity: 1 ns before the epoch is in millisecond -1.
            Err(e) => {
                let d = e.duration();
                let ms = d.as_millis() + u128::from(d.subsec_nanos() % 1_000_000 != 0);
                i64::try_from(ms).map(|m| -m).unwrap_or(i64::MIN)
            }
        };
        self.compose_at(unix_ms, node, sequence)
    }

    /// The fields of `id`.
    ///
    /// Fails with [`Error::FieldOutOfRange`] for the timestamp when `id` has bits set above the
    /// layout's [`total_bits`](Layout::total_bits) (it was not made with this layout).
    ///
    /// ```
    /// use idgen_core::{Layout, SnowflakeId};
    /// let layout = Layout::builder()
    ///     .epoch_ms(1_767_225_600_000)
    ///     .timestamp_bits(41).node_bits(10).sequence_bits(12)
    ///     .build()?;
    /// let d = layout.decompose(SnowflakeId::new(112719806108546862).unwrap())?;
    /// assert_eq!((d.unix_ms, d.node, d.sequence), (1_794_100_096_009, 3, 1838)); // 2026-11-08T01:08:16.009Z
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn decompose(&self, id: SnowflakeId) -> Result<Decomposed> {
        let raw = id.as_u64();
        let (time_shift, node_shift, seq_shift) = self.shifts();
        let ticks = raw >> time_shift;
        check("timestamp", ticks, self.time_bits)?;
        Ok(Decomposed {
            ticks,
            unix_ms: self.tick_start_ms(ticks),
            node: (raw >> node_shift) & self.max_node(),
            sequence: (raw >> seq_shift) & self.max_sequence(),
            layout: *self,
        })
    }

    /// The node ID made of the node sub-fields' values, most significant first (for Twitter:
    /// `[datacenter, worker]`). Each value is checked against its sub-field's width.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// assert_eq!(Layout::TWITTER.node_from_fields(&[3, 17])?, 113);
    /// let err = Layout::TWITTER.node_from_fields(&[32, 0]).unwrap_err();
    /// assert_eq!(err.to_string(), "datacenter 32 does not fit in 5 bits: the largest datacenter is 31");
    /// assert!(Layout::TWITTER.node_from_fields(&[1]).is_err());
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn node_from_fields(&self, values: &[u64]) -> Result<u64> {
        let fields = self.node_fields();
        if values.len() != fields.len() {
            return Err(Error::InvalidLayout {
                reason: format!(
                    "{} node sub-field values given, but the layout has {} ({})",
                    values.len(),
                    fields.len(),
                    fields.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
                ),
            });
        }
        let mut node = 0u64;
        for (field, &value) in fields.iter().zip(values) {
            check(field.name, value, field.bits)?;
            node = (node << field.bits) | value;
        }
        Ok(node)
    }

    /// Checks a node ID against the node field's width.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// assert!(Layout::TWITTER.check_node(1023).is_ok());
    /// assert_eq!(
    ///     Layout::TWITTER.check_node(1024).unwrap_err().to_string(),
    ///     "node 1024 does not fit in 10 bits: the largest node is 1023"
    /// );
    /// ```
    pub fn check_node(&self, node: u64) -> Result<u64> {
        check("node", node, self.node_bits).map(|()| node)
    }

    pub(crate) fn split_node(&self, node: u64) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        let mut shift = self.node_bits;
        self.node_fields().iter().map(move |f| {
            shift -= f.bits;
            (f.name, (node >> shift) & mask(f.bits))
        })
    }

    /// Bit offsets of (timestamp, node, sequence): how far each field is shifted left in an
    /// ID (what SQL that composes IDs itself, such as the database-side generator, needs).
    ///
    /// ```
    /// use idgen_core::Layout;
    /// assert_eq!(Layout::TWITTER.shifts(), (22, 12, 0));
    /// ```
    #[inline]
    pub const fn shifts(&self) -> (u32, u32, u32) {
        let low = (self.node_bits + self.seq_bits) as u32;
        match self.order {
            FieldOrder::TimeNodeSequence => (low, self.seq_bits as u32, 0),
            FieldOrder::TimeSequenceNode => (low, 0, self.node_bits as u32),
        }
    }

    /// Packs fields already known to fit.
    #[inline]
    pub(crate) const fn pack(&self, ticks: u64, node: u64, sequence: u64) -> u64 {
        let (t, n, s) = self.shifts();
        (ticks << t) | (node << n) | (sequence << s)
    }

    fn validate(&self) -> Result<()> {
        let invalid = |reason: String| Err(Error::InvalidLayout { reason });
        if self.time_bits == 0 {
            return invalid("the timestamp field has 0 bits; it needs at least 1".into());
        }
        let total =
            u32::from(self.time_bits) + u32::from(self.node_bits) + u32::from(self.seq_bits);
        if total > 63 {
            return invalid(format!(
                "timestamp {} + node {} + sequence {} = {total} bits, more than the 63 an ID has",
                self.time_bits, self.node_bits, self.seq_bits
            ));
        }
        if self.unit_ms == 0 {
            return invalid("the time unit is 0 ms; it must be at least 1 ms".into());
        }
        let span =
            i128::from(self.max_ticks()) * i128::from(self.unit_ms) + i128::from(self.unit_ms - 1);
        if i128::from(self.epoch_ms) + span > i128::from(i64::MAX) {
            return invalid(format!(
                "epoch {} ms plus the timestamp's span of {} ms does not fit in i64 milliseconds",
                self.epoch_ms,
                span + 1
            ));
        }
        let fields = self.node_fields();
        let field_bits: u32 = fields.iter().map(|f| u32::from(f.bits)).sum();
        if field_bits != u32::from(self.node_bits) {
            return invalid(format!(
                "the node sub-fields add up to {field_bits} bits but the node field has {}",
                self.node_bits
            ));
        }
        for (i, f) in fields.iter().enumerate() {
            if f.name.is_empty() {
                return invalid(format!("node sub-field {i} has an empty name"));
            }
            if f.bits == 0 {
                return invalid(format!("node sub-field {:?} has 0 bits", f.name));
            }
            if fields[..i].iter().any(|g| g.name == f.name) {
                return invalid(format!("node sub-field name {:?} is used twice", f.name));
            }
        }
        Ok(())
    }
}

impl Default for Layout {
    /// [`Layout::TWITTER`].
    fn default() -> Self {
        Layout::TWITTER
    }
}

/// Builds a custom [`Layout`]; [`build`](LayoutBuilder::build) rejects impossible ones.
///
/// Defaults: epoch 0 (the Unix epoch), 1 ms unit, `TimeNodeSequence`, 41 | 10 | 12 bits, one
/// node field called `"node"`.
///
/// ```
/// use idgen_core::{FieldOrder, Layout};
///
/// let layout = Layout::builder()
///     .epoch_ms(1_420_070_400_000) // Discord's epoch, 2015-01-01 (Discord's 42-bit time
///     .timestamp_bits(41)          // makes 64 bits; 41 keeps the sign bit 0 until 2084)
///     .node_field("worker", 5)
///     .node_field("process", 5)
///     .sequence_bits(12)
///     .build()?;
/// assert_eq!(layout.node_bits(), 10);
///
/// let err = Layout::builder().timestamp_bits(42).node_bits(10).sequence_bits(12).build().unwrap_err();
/// assert_eq!(err.to_string(), "invalid layout: timestamp 42 + node 10 + sequence 12 = 64 bits, more than the 63 an ID has");
/// # Ok::<(), idgen_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct LayoutBuilder {
    epoch_ms: i64,
    unit_ms: u32,
    time_bits: u8,
    node_bits: u8,
    seq_bits: u8,
    order: FieldOrder,
    fields: Vec<NodeField>,
}

impl Default for LayoutBuilder {
    fn default() -> Self {
        LayoutBuilder {
            epoch_ms: 0,
            unit_ms: 1,
            time_bits: 41,
            node_bits: 10,
            seq_bits: 12,
            order: FieldOrder::TimeNodeSequence,
            fields: Vec::new(),
        }
    }
}

impl LayoutBuilder {
    /// The epoch, in milliseconds since the Unix epoch.
    pub fn epoch_ms(mut self, epoch_ms: i64) -> Self {
        self.epoch_ms = epoch_ms;
        self
    }

    /// The epoch as a [`SystemTime`] (whole milliseconds; earlier than 1970 is allowed).
    pub fn epoch(self, epoch: SystemTime) -> Self {
        let ms = match epoch.duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
            Err(e) => i64::try_from(e.duration().as_millis())
                .map(|m| -m)
                .unwrap_or(i64::MIN),
        };
        self.epoch_ms(ms)
    }

    /// The length of a tick in milliseconds (1 by default; Sonyflake uses 10).
    pub fn unit_ms(mut self, unit_ms: u32) -> Self {
        self.unit_ms = unit_ms;
        self
    }

    /// The width of the timestamp field.
    pub fn timestamp_bits(mut self, bits: u8) -> Self {
        self.time_bits = bits;
        self
    }

    /// The width of the node field, as one sub-field named `"node"`. Replaces any
    /// [`node_field`](LayoutBuilder::node_field)s given before.
    pub fn node_bits(mut self, bits: u8) -> Self {
        self.node_bits = bits;
        self.fields.clear();
        self
    }

    /// Adds a named node sub-field below those added before (the first is most significant).
    /// The node width becomes the sum of the sub-fields.
    pub fn node_field(mut self, name: &'static str, bits: u8) -> Self {
        self.fields.push(NodeField { name, bits });
        self.node_bits = self
            .fields
            .iter()
            .fold(0u8, |acc, f| acc.saturating_add(f.bits));
        self
    }

    /// The width of the sequence field.
    pub fn sequence_bits(mut self, bits: u8) -> Self {
        self.seq_bits = bits;
        self
    }

    /// The order of the node and sequence fields.
    pub fn order(mut self, order: FieldOrder) -> Self {
        self.order = order;
        self
    }

    /// The layout, or [`Error::InvalidLayout`] saying why it cannot exist.
    pub fn build(self) -> Result<Layout> {
        if self.fields.len() > MAX_NODE_FIELDS {
            return Err(Error::InvalidLayout {
                reason: format!(
                    "{} node sub-fields given; a layout has at most {MAX_NODE_FIELDS}",
                    self.fields.len()
                ),
            });
        }
        let mut node_fields = [NO_FIELD; MAX_NODE_FIELDS];
        let count = if self.fields.is_empty() {
            if self.node_bits > 0 {
                node_fields[0] = NodeField {
                    name: "node",
                    bits: self.node_bits,
                };
                1
            } else {
                0
            }
        } else {
            node_fields[..self.fields.len()].copy_from_slice(&self.fields);
            self.fields.len()
        };
        let layout = Layout {
            epoch_ms: self.epoch_ms,
            unit_ms: self.unit_ms,
            time_bits: self.time_bits,
            node_bits: self.node_bits,
            seq_bits: self.seq_bits,
            order: self.order,
            node_fields,
            node_field_count: count as u8,
        };
        layout.validate()?;
        Ok(layout)
    }
}

#[inline]
const fn mask(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

#[inline]
fn check(field: &'static str, value: u64, bits: u8) -> Result<()> {
    let max = mask(bits);
    if value > max {
        Err(Error::FieldOutOfRange {
            field,
            value,
            bits,
            max,
        })
    } else {
        Ok(())
    }
}
