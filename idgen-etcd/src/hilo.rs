//! [`EtcdCounter`]: a hi-lo counter in etcd, advanced by a compare-and-swap transaction.

pub use idgen_engine::hilo::*;

use std::sync::Mutex;

use etcd_client::{
    Client, Compare, CompareOp, GetOptions, KeyValue, Txn, TxnOp, TxnOpResponse, TxnResponse,
};
use idgen_engine::{Error, ErrorKind};

use crate::connection::Etcd;
pub use crate::connection::EtcdMarker;

/// The default key prefix of counters (the SQL counter table's default name).
pub const DEFAULT_PREFIX: &str = "idgen_hilo";

/// Compare-and-swap attempts of one block before giving up (each failed one means another
/// process took a block meanwhile, so this only ends under extreme contention).
const CAS_ATTEMPTS: usize = 64;

/// A hi-lo counter in etcd, in two keys: `<prefix>/<name>/next` (the next free ID, from 1) and
/// `<prefix>/<name>/increment` (the block size it was created with). The [`HiLoSource`] behind
/// `HiLo::new(&etcd, 1000)`.
///
/// A block is one transaction: it reads both keys, then writes `next + increment` only if
/// neither changed since (their `mod_revision`s), else it retries with the values the failed
/// transaction read. The counter advances by its stored increment, as a database sequence
/// does ([`Increment::Fixed`]): a generator whose block size differs refuses to start, naming
/// both numbers, and one that finds the increment changed while it runs fails closed.
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_etcd::hilo::{EtcdCounter, HiLo};
/// use idgen_etcd::Etcd;
///
/// let etcd = Etcd::new(["http://127.0.0.1:2379"]);
/// let counter = EtcdCounter::new(&etcd, "order_lines")?;
/// counter.create(1000).await?; // once; harmless when it exists
/// let ids = HiLo::new(counter, 1000).await?;
/// let id: i64 = ids.next_id().await?;
/// # let _ = id;
/// # Ok(()) }
/// ```
pub struct EtcdCounter {
    etcd: Etcd,
    name: String,
    /// `<prefix>/<name>/`, or why the name was refused.
    base: Result<String, Error>,
    /// What the last successful block left: the counter's next value, its revision, the
    /// increment and its revision; the next block tries it first, saving a read.
    seen: Mutex<Option<Seen>>,
}

#[derive(Clone, Copy, Debug)]
struct Seen {
    next: i64,
    next_revision: i64,
    increment: u64,
    increment_revision: i64,
}

impl Clone for EtcdCounter {
    fn clone(&self) -> Self {
        EtcdCounter {
            etcd: self.etcd.clone(),
            name: self.name.clone(),
            base: self.base.clone(),
            seen: Mutex::new(None),
        }
    }
}

impl std::fmt::Debug for EtcdCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdCounter")
            .field("etcd", &self.etcd)
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl EtcdCounter {
    /// The counter `name` on `etcd`, under `idgen_hilo/<name>/`. The name follows the SQL
    /// sources' rule (`name` or `schema.name`, ASCII letters, digits and `_`), so a counter
    /// keeps its name when it moves between stores.
    ///
    /// ```
    /// use idgen_etcd::{Etcd, hilo::EtcdCounter};
    /// let etcd = Etcd::new(["http://127.0.0.1:2379"]);
    /// assert_eq!(EtcdCounter::new(&etcd, "orders")?.next_key(), "idgen_hilo/orders/next");
    /// let err = EtcdCounter::new(&etcd, "orders; DROP").unwrap_err();
    /// assert!(err.to_string().contains("\"orders; DROP\""));
    /// # Ok::<(), idgen_etcd::Error>(())
    /// ```
    pub fn new(etcd: &Etcd, name: &str) -> Result<Self, Error> {
        validate_name(name)?;
        Ok(Self::unchecked(etcd, name))
    }

    fn unchecked(etcd: &Etcd, name: &str) -> Self {
        EtcdCounter {
            etcd: etcd.clone(),
            name: name.to_owned(),
            base: validate_name(name).map(|()| format!("{DEFAULT_PREFIX}/{name}/")),
            seen: Mutex::new(None),
        }
    }

    /// The same counter under another key prefix (same rule as the name).
    ///
    /// ```
    /// use idgen_etcd::{Etcd, hilo::EtcdCounter};
    /// let etcd = Etcd::new(["http://127.0.0.1:2379"]);
    /// let counter = EtcdCounter::new(&etcd, "orders")?.with_prefix("shop")?;
    /// assert_eq!(counter.next_key(), "shop/orders/next");
    /// # Ok::<(), idgen_etcd::Error>(())
    /// ```
    pub fn with_prefix(self, prefix: &str) -> Result<Self, Error> {
        validate_name(prefix)?;
        let base = self.base.map(|_| format!("{prefix}/{}/", self.name));
        Ok(EtcdCounter {
            base,
            seen: Mutex::new(None),
            ..self
        })
    }

    /// The key holding the next free ID (`<prefix>/<name>/next`).
    ///
    /// ```
    /// use idgen_etcd::{Etcd, hilo::EtcdCounter};
    /// let counter = EtcdCounter::new(&Etcd::new(["http://127.0.0.1:2379"]), "orders")?;
    /// assert_eq!(counter.next_key(), "idgen_hilo/orders/next");
    /// # Ok::<(), idgen_etcd::Error>(())
    /// ```
    pub fn next_key(&self) -> String {
        format!("{}next", self.base.as_deref().unwrap_or(&self.name))
    }

    fn increment_key(&self) -> String {
        format!("{}increment", self.base.as_deref().unwrap_or(&self.name))
    }

    /// Creates the counter at 1 with `increment` (the block size every generator on it must
    /// use) when it does not exist, in one transaction: safe for many instances starting at
    /// once, and it never changes an existing counter.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_etcd::Error> {
    /// let etcd = idgen_etcd::Etcd::new(["http://127.0.0.1:2379"]);
    /// let counter = idgen_etcd::hilo::EtcdCounter::new(&etcd, "orders")?;
    /// counter.create(1000).await?;
    /// counter.create(1000).await?; // no change
    /// # Ok(()) }
    /// ```
    pub async fn create(&self, increment: u64) -> Result<(), Error> {
        self.base.clone()?;
        if increment == 0 || increment > i64::MAX as u64 {
            return Err(ErrorKind::HiLoInvalidOption {
                option: "increment",
                value: increment.to_string(),
                reason: "must be between 1 and i64::MAX",
            }
            .into());
        }
        let (next, inc) = (self.next_key(), self.increment_key());
        let txn = Txn::new()
            .when([
                Compare::create_revision(next.as_str(), CompareOp::Equal, 0),
                Compare::create_revision(inc.as_str(), CompareOp::Equal, 0),
            ])
            .and_then([
                TxnOp::put(next.as_str(), "1", None),
                TxnOp::put(inc.as_str(), increment.to_string(), None),
            ]);
        let created = async {
            let mut client = self.client().await?;
            client
                .txn(txn)
                .await
                .map_err(|e| self.etcd.failed(format!("create {next}"), e).into())
        };
        created.await.map(drop).map_err(|source: BoxError| {
            ErrorKind::HiLoSource {
                counter: self.name.clone(),
                source: source.into(),
            }
            .into()
        })
    }

    async fn client(&self) -> Result<Client, BoxError> {
        self.etcd
            .client()
            .await
            .map_err(|e| self.etcd.failed("connect".into(), e).into())
    }

    fn missing_counter(&self) -> MissingCounter {
        MissingCounter::new(format!(
            "no key {} in etcd at {}",
            self.next_key(),
            self.etcd.endpoints().join(",")
        ))
    }

    fn missing(&self) -> BoxError {
        Box::new(Error::from(ErrorKind::HiLoCounterMissing {
            counter: self.name.clone(),
            missing: self.missing_counter().into_string(),
        }))
    }

    /// The counter's two keys from a read of its prefix (or of the two keys).
    fn decode(&self, kvs: &[KeyValue]) -> Result<Seen, BoxError> {
        self.decode_found(kvs)?.map_err(|_| self.missing())
    }

    /// The counter's keys decoded, or what is missing of them.
    fn decode_found(&self, kvs: &[KeyValue]) -> Result<Result<Seen, MissingCounter>, BoxError> {
        let (next_key, inc_key) = (self.next_key(), self.increment_key());
        let find = |key: &str| kvs.iter().find(|kv| kv.key() == key.as_bytes());
        let (Some(next), Some(inc)) = (find(&next_key), find(&inc_key)) else {
            return Ok(Err(self.missing_counter()));
        };
        let number = |kv: &KeyValue, key: &str| -> Result<i64, BoxError> {
            std::str::from_utf8(kv.value())
                .ok()
                .and_then(|text| text.parse().ok())
                .ok_or_else(|| {
                    BoxError::from(format!(
                        "{key} holds {:?}, not an integer",
                        String::from_utf8_lossy(kv.value())
                    ))
                })
        };
        let increment = u64::try_from(number(inc, &inc_key)?)
            .ok()
            .filter(|&i| i > 0)
            .ok_or_else(|| BoxError::from(format!("{inc_key} is not a positive integer")))?;
        Ok(Ok(Seen {
            next: number(next, &next_key)?,
            next_revision: next.mod_revision(),
            increment,
            increment_revision: inc.mod_revision(),
        }))
    }

    async fn read(&self, client: &mut Client) -> Result<Seen, BoxError> {
        self.read_found(client).await?.map_err(|_| self.missing())
    }

    /// The counter's keys read, or what is missing of them.
    async fn read_found(
        &self,
        client: &mut Client,
    ) -> Result<Result<Seen, MissingCounter>, BoxError> {
        let base = self.base.clone()?;
        let answer = client
            .get(base.as_str(), Some(GetOptions::new().with_prefix()))
            .await
            .map_err(|e| self.etcd.failed(format!("read {base}"), e))?;
        self.decode_found(answer.kvs())
    }
}

/// The SQL sources' rule for counter names, so a name moves between stores unchanged.
fn validate_name(name: &str) -> Result<(), Error> {
    idgen_engine::SqlName::parse("hi-lo counter", name).map(drop)
}

impl HiLoSource for EtcdCounter {
    /// One compare-and-swap transaction per block (retried on a conflict); a request refused
    /// before it was sent (a member down or still starting) goes at once to another member.
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        self.etcd.retry_unsent(|| self.allocate_once(size)).await
    }

    fn name(&self) -> &str {
        &self.name
    }

    /// [`create`](Self::create) with the block size as the increment.
    async fn create_if_missing(&self, block: u64) -> Result<(), BoxError> {
        Ok(self.create(block).await?)
    }

    /// A compare-and-swap transaction: the counter moves to the first value above `floor` on
    /// its grid (whole increments), only if neither key changed since it was read (retried
    /// with what the failed transaction read), so it never moves back.
    async fn raise_above(&self, floor: i64) -> Result<bool, BoxError> {
        self.etcd
            .retry_unsent(|| self.raise_above_once(floor))
            .await
    }

    /// The increment stored with the counter ([`Increment::Fixed`]), read afresh, or what is
    /// missing of its keys.
    async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> {
        let read = || async {
            let mut client = self.client().await?;
            let found = self.read_found(&mut client).await?;
            Ok(found.map(|seen| Increment::Fixed(seen.increment)))
        };
        self.etcd.retry_unsent(read).await
    }
}

impl EtcdCounter {
    async fn raise_above_once(&self, floor: i64) -> Result<bool, BoxError> {
        let mut client = self.client().await?;
        let mut seen = self.read(&mut client).await?;
        let (next_key, inc_key) = (self.next_key(), self.increment_key());
        for _ in 0..CAS_ATTEMPTS {
            if seen.next > floor {
                return Ok(true);
            }
            let step = i128::from(seen.increment);
            let k = (i128::from(floor) - i128::from(seen.next)).div_euclid(step) + 1;
            let target = i64::try_from(i128::from(seen.next) + k * step).map_err(|_| {
                BoxError::from(format!(
                    "counter {} at {} cannot move above the floor {floor} within i64",
                    self.name, seen.next
                ))
            })?;
            let txn = put_if_unchanged(&seen, &next_key, &inc_key, target);
            let answer = client
                .txn(txn)
                .await
                .map_err(|e| self.etcd.failed(format!("raise {next_key}"), e))?;
            if answer.succeeded() {
                // The next block reads afresh.
                *self.seen.lock().unwrap_or_else(|p| p.into_inner()) = None;
                return Ok(true);
            }
            seen = self.read_back(answer)?;
        }
        Err(self.changed_under_every_attempt())
    }

    async fn allocate_once(&self, size: u64) -> Result<i64, BoxError> {
        let mut client = self.client().await?;
        let cached = *self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let mut seen = match cached {
            Some(seen) => seen,
            None => self.read(&mut client).await?,
        };
        let (next_key, inc_key) = (self.next_key(), self.increment_key());
        for _ in 0..CAS_ATTEMPTS {
            if seen.increment != size {
                return Err(BoxError::from(format!(
                    "the increment of counter {} is {} now, not the block size {size} it started with: refusing further blocks",
                    self.name, seen.increment
                )));
            }
            let advanced = i64::try_from(seen.increment)
                .ok()
                .and_then(|inc| seen.next.checked_add(inc))
                .ok_or_else(|| {
                    BoxError::from(format!(
                        "counter {} at {} cannot advance by {} within i64",
                        self.name, seen.next, seen.increment
                    ))
                })?;
            let txn = put_if_unchanged(&seen, &next_key, &inc_key, advanced);
            let answer = client
                .txn(txn)
                .await
                .map_err(|e| self.etcd.failed(format!("advance {next_key}"), e))?;
            if answer.succeeded() {
                let revision = answer.header().map_or(0, |h| h.revision());
                let left = Seen {
                    next: advanced,
                    next_revision: revision,
                    ..seen
                };
                *self.seen.lock().unwrap_or_else(|p| p.into_inner()) = Some(left);
                return Ok(seen.next);
            }
            seen = self.read_back(answer)?;
        }
        Err(self.changed_under_every_attempt())
    }

    /// The counter as a failed compare-and-swap read it back (for the next attempt).
    fn read_back(&self, failed: TxnResponse) -> Result<Seen, BoxError> {
        let kvs: Vec<KeyValue> = failed
            .op_responses()
            .into_iter()
            .flat_map(|r| match r {
                TxnOpResponse::Get(mut get) => get.take_kvs(),
                _ => Vec::new(),
            })
            .collect();
        self.decode(&kvs)
    }

    /// The error when every compare-and-swap attempt found the counter changed.
    fn changed_under_every_attempt(&self) -> BoxError {
        BoxError::from(format!(
            "counter {} changed under {CAS_ATTEMPTS} compare-and-swap attempts in a row",
            self.name
        ))
    }
}

/// Puts `value` as the counter's next value if neither the next value nor the increment
/// changed since `seen` was read; otherwise reads both back (for the caller's next try).
fn put_if_unchanged(seen: &Seen, next_key: &str, inc_key: &str, value: i64) -> Txn {
    Txn::new()
        .when([
            Compare::mod_revision(next_key, CompareOp::Equal, seen.next_revision),
            Compare::mod_revision(inc_key, CompareOp::Equal, seen.increment_revision),
        ])
        .and_then([TxnOp::put(next_key, value.to_string(), None)])
        .or_else([TxnOp::get(next_key, None), TxnOp::get(inc_key, None)])
}

impl IntoHiLoSource<EtcdMarker> for Etcd {
    type Source = EtcdCounter;
    /// The counter `counter` (default [`DEFAULT_COUNTER`]) on this cluster.
    fn into_hilo_source(self, counter: &str) -> EtcdCounter {
        EtcdCounter::unchecked(&self, counter)
    }
}
