//! [`RedisCounter`]: a hi-lo counter in one Redis key, advanced with `INCRBY`.

pub use idgen_engine::hilo::*;

use idgen_engine::{Error, ErrorKind};

use crate::connection::Connection;
#[allow(deprecated)]
pub use crate::connection::RedisClient;
pub use crate::connection::RedisMarker;
use crate::scripts;

/// The default key prefix of counters (the SQL counter table's default name).
pub const DEFAULT_PREFIX: &str = "idgen_hilo";

/// A hi-lo counter in the Redis key `<prefix>:<name>`: the [`HiLoSource`] behind
/// `HiLo::new(&client, 1000)`.
///
/// The key holds the next free ID (it starts at 1, like the SQL counter tables' `next_val`).
/// A block of `n` is `INCRBY key n`, and the block is `[new - n, new)`: pooled-lo, any size per
/// call ([`Increment::PerCall`]). A counter must be [created](RedisCounter::create) first; one
/// that disappeared (a flushed or failed-over server) is refused, never restarted at 1.
///
/// Durability is the server's: without `appendonly yes` and `appendfsync always`, a restart
/// can lose the last increments and hand blocks out again. A running generator notices only a
/// block at or below its own blocks (it fails closed); new ones, and one whose blocks lie below
/// the restored value, do not, unless given a floor
/// ([`HiLoBuilder::floor_from`](idgen_engine::hilo::HiLoBuilder::floor_from), read again before
/// every block). See [what Redis does not guarantee](crate#what-redis-does-not-guarantee).
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_redis::hilo::{HiLo, RedisCounter};
///
/// let client = redis::Client::open("redis://127.0.0.1:6379/")?;
/// let counter = RedisCounter::new(&client, "order_lines")?;
/// counter.create().await?; // once; harmless when it exists
/// let ids = HiLo::new(counter, 1000).await?;
/// let id: i64 = ids.next_id().await?;
/// # let _ = id;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisCounter {
    conn: Connection,
    name: String,
    /// `<prefix>:<name>`, or why the name was refused.
    key: Result<String, Error>,
}

impl std::fmt::Debug for RedisCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisCounter")
            .field("server", &self.conn.server())
            .field("key", &self.key)
            .finish()
    }
}

impl RedisCounter {
    /// The counter `name` on `client`'s server, in the key `idgen_hilo:<name>`. The name
    /// follows the SQL sources' rule (`name` or `schema.name`, ASCII letters, digits and `_`),
    /// so a counter keeps its name when it moves between stores.
    ///
    /// ```
    /// use idgen_redis::hilo::RedisCounter;
    /// let client = redis::Client::open("redis://127.0.0.1:6379/").unwrap();
    /// assert_eq!(RedisCounter::new(&client, "orders")?.key(), "idgen_hilo:orders");
    /// let err = RedisCounter::new(&client, "orders; DROP").unwrap_err();
    /// assert!(err.to_string().contains("\"orders; DROP\""));
    /// # Ok::<(), idgen_redis::Error>(())
    /// ```
    pub fn new(client: &redis::Client, name: &str) -> Result<Self, Error> {
        validate_name(name)?;
        Ok(Self::unchecked(client, name))
    }

    /// A counter whose refused name fails at start-up (for [`IntoHiLoSource`]).
    fn unchecked(client: &redis::Client, name: &str) -> Self {
        RedisCounter {
            conn: Connection::new(client.clone()),
            name: name.to_owned(),
            key: validate_name(name).map(|()| format!("{DEFAULT_PREFIX}:{name}")),
        }
    }

    /// The same counter under another key prefix (same rule as the name).
    ///
    /// ```
    /// # let client = redis::Client::open("redis://127.0.0.1:6379/").unwrap();
    /// use idgen_redis::hilo::RedisCounter;
    /// let counter = RedisCounter::new(&client, "orders")?.with_prefix("shop")?;
    /// assert_eq!(counter.key(), "shop:orders");
    /// # Ok::<(), idgen_redis::Error>(())
    /// ```
    pub fn with_prefix(self, prefix: &str) -> Result<Self, Error> {
        validate_name(prefix)?;
        let key = self.key.map(|_| format!("{prefix}:{}", self.name));
        Ok(RedisCounter { key, ..self })
    }

    /// The counter's key (`<prefix>:<name>`; the refused name, when it was refused).
    ///
    /// ```
    /// # let client = redis::Client::open("redis://127.0.0.1:6379/").unwrap();
    /// let counter = idgen_redis::hilo::RedisCounter::new(&client, "orders")?;
    /// assert_eq!(counter.key(), "idgen_hilo:orders");
    /// # Ok::<(), idgen_redis::Error>(())
    /// ```
    pub fn key(&self) -> &str {
        self.key.as_deref().unwrap_or(&self.name)
    }

    /// Creates the counter at 1 when it does not exist (`SET key 1 NX`): safe for many
    /// instances starting at once, and it never moves an existing counter.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_redis::Error> {
    /// let client = redis::Client::open("redis://127.0.0.1:6379/").unwrap();
    /// let counter = idgen_redis::hilo::RedisCounter::new(&client, "orders")?;
    /// counter.create().await?;
    /// counter.create().await?; // no change
    /// # Ok(()) }
    /// ```
    pub async fn create(&self) -> Result<(), Error> {
        let key = self.key.clone()?;
        let created: Result<Option<String>, _> = self
            .conn
            .run(|mut conn| async move {
                redis::cmd("SET")
                    .arg(&key)
                    .arg(1)
                    .arg("NX")
                    .query_async(&mut conn)
                    .await
            })
            .await;
        created
            .map(drop)
            .map_err(|e| self.source_error(self.failed("create the counter", e)))
    }

    fn failed(&self, action: &str, source: redis::RedisError) -> BoxError {
        let action = format!("{action} {}", self.key());
        Box::new(self.conn.failed(&action, source))
    }

    fn missing_counter(&self, key: &str) -> MissingCounter {
        MissingCounter::new(format!("no key {key} on Redis at {}", self.conn.server()))
    }

    fn missing(&self, key: &str) -> Error {
        ErrorKind::HiLoCounterMissing {
            counter: self.name.clone(),
            missing: self.missing_counter(key).into_string(),
        }
        .into()
    }

    fn source_error(&self, source: BoxError) -> Error {
        ErrorKind::HiLoSource {
            counter: self.name.clone(),
            source: source.into(),
        }
        .into()
    }
}

/// KEYS[1] the counter, ARGV[1] the target (a positive decimal): sets the counter to the target
/// when it holds less, and returns what it holds then; `false` when the key is missing. Numbers
/// are compared as texts (a sign, then the length, then the digits), so values above 2^53 are
/// exact.
static RAISE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
local v = redis.call('GET', KEYS[1])
if not v then
  return false
end
local t = ARGV[1]
local below
if string.sub(v, 1, 1) == '-' then
  below = true
elseif #v ~= #t then
  below = #v < #t
else
  below = v < t
end
if below then
  redis.call('SET', KEYS[1], t)
  return t
end
return v
",
    )
});

/// The SQL sources' rule for counter names, so a name moves between stores unchanged.
fn validate_name(name: &str) -> Result<(), Error> {
    idgen_engine::SqlName::parse("hi-lo counter", name).map(drop)
}

impl HiLoSource for RedisCounter {
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        let key = self.key.clone()?;
        let step = i64::try_from(size)
            .map_err(|_| BoxError::from(format!("a block of {size} exceeds i64::MAX")))?;
        let reply: Option<String> = self
            .conn
            .run(|mut conn| {
                let key = key.clone();
                async move {
                    scripts::ALLOCATE
                        .key(&key)
                        .arg(step)
                        .invoke_async(&mut conn)
                        .await
                }
            })
            .await
            .map_err(|e| self.failed("advance", e))?;
        let Some(text) = reply else {
            return Err(Box::new(self.missing(&key)));
        };
        let next: i64 = text
            .parse()
            .map_err(|_| BoxError::from(format!("counter {key} holds {text:?}, not an integer")))?;
        // `INCRBY` refuses to pass i64::MAX, so `next - step` cannot overflow.
        Ok(next - step)
    }

    /// One script, atomic on the server: `SET key floor+1` only if the key holds less (compared
    /// as decimal texts, exact over all of `i64`, which Lua's numbers are not); a missing key
    /// is refused, never created.
    async fn raise_above(&self, floor: i64) -> Result<bool, BoxError> {
        let key = self.key.clone()?;
        let target = floor.max(0).checked_add(1).ok_or_else(|| {
            BoxError::from(format!("no ID lies above the floor {floor} within i64"))
        })?;
        let reply: Option<String> = self
            .conn
            .run(|mut conn| {
                let key = key.clone();
                async move {
                    RAISE
                        .key(&key)
                        .arg(target.to_string())
                        .invoke_async(&mut conn)
                        .await
                }
            })
            .await
            .map_err(|e| self.failed("raise", e))?;
        match reply {
            Some(_) => Ok(true),
            None => Err(Box::new(self.missing(&key))),
        }
    }

    /// Any step per call (a counter, not a sequence), once the counter is found to exist.
    async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> {
        let key = self.key.clone()?;
        let exists: bool = self
            .conn
            .run(|mut conn| {
                let key = key.clone();
                async move { redis::cmd("EXISTS").arg(&key).query_async(&mut conn).await }
            })
            .await
            .map_err(|e| self.failed("look up", e))?;
        if !exists {
            return Ok(Err(self.missing_counter(&key)));
        }
        Ok(Ok(Increment::PerCall))
    }

    /// [`create`](Self::create) (a Redis counter takes any step, so `block` is not stored).
    async fn create_if_missing(&self, _block: u64) -> Result<(), BoxError> {
        Ok(self.create().await?)
    }

    fn name(&self) -> &str {
        &self.name
    }
}

impl IntoHiLoSource<RedisMarker> for redis::Client {
    type Source = RedisCounter;
    /// The counter `counter` (default [`DEFAULT_COUNTER`]) on this client.
    fn into_hilo_source(self, counter: &str) -> RedisCounter {
        RedisCounter::unchecked(&self, counter)
    }
}
