//! The five kinds of primary key under test, and one writer's generator for each.

use idgen_core::{Layout, Snowflake, Uuid7Generator};
use idgen_engine::hilo::HiLo;
use uuid::Uuid;

use crate::error::BoxResult;

/// A kind of primary key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyKind {
    /// `BIGINT` filled by the database (`GENERATED ALWAYS AS IDENTITY` / `AUTO_INCREMENT`).
    Identity,
    /// `BIGINT` from idgen-core's `Snowflake` (Twitter layout, one node per writer).
    Snowflake,
    /// `BIGINT` from idgen-engine's `HiLo` over a sequence with `INCREMENT BY 1000`.
    HiLo,
    /// `UUID` / `BINARY(16)` from the `uuid` crate's random v4.
    UuidV4,
    /// `UUID` / `BINARY(16)` from idgen-core's monotonic `Uuid7Generator`.
    UuidV7,
}

impl KeyKind {
    /// Every kind, in report order; `Identity` first because it is the baseline.
    pub(crate) const ALL: [KeyKind; 5] = [
        KeyKind::Identity,
        KeyKind::Snowflake,
        KeyKind::HiLo,
        KeyKind::UuidV4,
        KeyKind::UuidV7,
    ];

    /// The name in the report and on the command line.
    pub(crate) fn label(self) -> &'static str {
        match self {
            KeyKind::Identity => "bigint-identity",
            KeyKind::Snowflake => "snowflake",
            KeyKind::HiLo => "hilo",
            KeyKind::UuidV4 => "uuid-v4",
            KeyKind::UuidV7 => "uuid-v7",
        }
    }

    /// The kind named `label`, for `--kinds`.
    pub(crate) fn parse(label: &str) -> Result<KeyKind, String> {
        KeyKind::ALL
            .into_iter()
            .find(|kind| kind.label() == label)
            .ok_or_else(|| {
                let known: Vec<_> = KeyKind::ALL.iter().map(|k| k.label()).collect();
                format!(
                    "unknown key kind {label:?}: expected one of {}",
                    known.join(", ")
                )
            })
    }

    /// The table this kind is inserted into.
    pub(crate) fn table(self) -> String {
        format!("rows_{}", self.label().replace('-', "_"))
    }

    /// Whether the key is a 16-byte UUID (else an 8-byte integer).
    pub(crate) fn is_uuid(self) -> bool {
        matches!(self, KeyKind::UuidV4 | KeyKind::UuidV7)
    }
}

/// One key value, as the application sends it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Key {
    /// A `BIGINT` key.
    Int(i64),
    /// A UUID key.
    Uuid(Uuid),
}

/// One writer's key generator. Each writer stands for one application instance, so it has its
/// own generator: its own Snowflake node, its own hi-lo block, its own UUIDv7 counter.
pub(crate) enum KeySource {
    /// The database assigns the key.
    Identity,
    /// A Snowflake generator on this writer's node (boxed: the generator is cache-line padded).
    Snowflake(Box<Snowflake>),
    /// A hi-lo generator over the shared sequence.
    HiLo(HiLo),
    /// Random UUIDv4.
    UuidV4,
    /// Monotonic UUIDv7.
    UuidV7(Uuid7Generator),
}

impl KeySource {
    /// The generator for `kind` in writer number `writer`; `hilo` is used for [`KeyKind::HiLo`].
    pub(crate) fn new(kind: KeyKind, writer: usize, hilo: Option<HiLo>) -> BoxResult<KeySource> {
        Ok(match kind {
            KeyKind::Identity => KeySource::Identity,
            KeyKind::Snowflake => {
                KeySource::Snowflake(Box::new(Snowflake::new(Layout::TWITTER, writer as u64)?))
            }
            KeyKind::HiLo => KeySource::HiLo(hilo.ok_or("the hilo kind needs a HiLo generator")?),
            KeyKind::UuidV4 => KeySource::UuidV4,
            KeyKind::UuidV7 => KeySource::UuidV7(Uuid7Generator::new()),
        })
    }

    /// The next key, or `None` when the database assigns it.
    pub(crate) async fn next_key(&self) -> BoxResult<Option<Key>> {
        Ok(match self {
            KeySource::Identity => None,
            KeySource::Snowflake(ids) => Some(Key::Int(ids.next_id_async().await?.get())),
            KeySource::HiLo(ids) => Some(Key::Int(ids.next_id().await?)),
            KeySource::UuidV4 => Some(Key::Uuid(Uuid::new_v4())),
            KeySource::UuidV7(ids) => Some(Key::Uuid(ids.next_uuid()?)),
        })
    }
}
