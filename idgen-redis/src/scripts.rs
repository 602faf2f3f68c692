//! The Lua scripts the store and the counter run on the server: each is atomic there.
//!
//! Keys of a lease namespace `<base>` = `<prefix>:<namespace>`:
//! * `<base>:holder:<node>`: the holder's name, with the lease's expiry (`PX`): gone when the
//!   lease expires or is released.
//! * `<base>:node:<node>`: a hash without expiry: `last_timestamp` (the bound, decimal Unix ms)
//!   and `owner` (the holder the node ID was last claimed for, empty once released, the
//!   tombstone `FREED_HOLDER` once an operator freed its expired lease: the one holder that
//!   may take the node ID back after its lease expired unclaimed; only an empty owner makes
//!   the next claim exact).
//!
//! A timestamp travels as a non-negative decimal without leading zeros, compared by length,
//! then text: exact for every `i64`, where Lua's numbers (doubles) are not.

use redis::Script;
use std::sync::LazyLock;

/// ARGV: base, capacity, holder, ttl ms. Claims the lowest node ID given back by a release
/// (its hash has an empty owner and a last timestamp: exact), else the lowest whose holder key
/// is absent: `{node, last_timestamp or '', '1' when released else '0'}`, or nil when all are
/// held. A node ID without a release (no hash: never claimed, or Redis forgot it; or a lease
/// that expired) may hide a holder Redis no longer knows: the claimant waits (`Claim::exact`).
pub(crate) static CLAIM: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local base, capacity, holder, ttl = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local function take(id, released)
  if redis.call('SET', base .. ':holder:' .. id, holder, 'NX', 'PX', ttl) then
    local state = base .. ':node:' .. id
    redis.call('HSET', state, 'owner', holder)
    local last = redis.call('HGET', state, 'last_timestamp')
    return {id, last or '', released}
  end
  return nil
end
for node = 0, capacity - 1 do
  local id = string.format('%d', node)
  local state = base .. ':node:' .. id
  if redis.call('HGET', state, 'owner') == '' and redis.call('HEXISTS', state, 'last_timestamp') == 1 then
    local taken = take(id, '1')
    if taken then
      return taken
    end
  end
end
for node = 0, capacity - 1 do
  local taken = take(string.format('%d', node), '0')
  if taken then
    return taken
  end
end
return false
",
    )
});

/// ARGV: base, node, holder, ttl ms (0: ends the lease now), last timestamp or ''. Extends the
/// lease of `holder` (also after it expired, when nobody claimed the node ID since) and raises
/// `last_timestamp`: 1, or 0 when someone else holds the node ID or it was released.
pub(crate) static RENEW: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local holder_key, state = ARGV[1] .. ':holder:' .. ARGV[2], ARGV[1] .. ':node:' .. ARGV[2]
local holder, ttl, last = ARGV[3], ARGV[4], ARGV[5]
local current = redis.call('GET', holder_key)
if current == holder then
  if tonumber(ttl) > 0 then
    redis.call('PEXPIRE', holder_key, ttl)
  else
    redis.call('DEL', holder_key)
  end
elseif current == false and redis.call('HGET', state, 'owner') == holder then
  if tonumber(ttl) > 0 then
    redis.call('SET', holder_key, holder, 'PX', ttl)
  end
else
  return 0
end
if last ~= '' then
  local stored = redis.call('HGET', state, 'last_timestamp')
  if not stored or #stored < #last or (#stored == #last and stored < last) then
    redis.call('HSET', state, 'last_timestamp', last)
  end
end
return 1
",
    )
});

/// ARGV: base, node, holder, last timestamp or ''. When `holder` still holds the node ID (or
/// held it last and nobody claimed it since): deletes the holder key, empties the owner (the
/// hash stays, as a released row does) and replaces `last_timestamp`. Always 1.
pub(crate) static RELEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local holder_key, state = ARGV[1] .. ':holder:' .. ARGV[2], ARGV[1] .. ':node:' .. ARGV[2]
local holder, last = ARGV[3], ARGV[4]
local current = redis.call('GET', holder_key)
if current == holder or (current == false and redis.call('HGET', state, 'owner') == holder) then
  if current then
    redis.call('DEL', holder_key)
  end
  redis.call('HSET', state, 'owner', '')
  if last == '' then
    redis.call('HDEL', state, 'last_timestamp')
  else
    redis.call('HSET', state, 'last_timestamp', last)
  end
end
return 1
",
    )
});

/// KEYS: the counter. ARGV: step. Advances an existing counter by `step` and returns its new
/// value as text (exact: Lua's doubles never hold it); nil when the counter does not exist.
pub(crate) static ALLOCATE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('EXISTS', KEYS[1]) == 0 then
  return false
end
redis.call('INCRBY', KEYS[1], ARGV[1])
return redis.call('GET', KEYS[1])
",
    )
});

/// A timestamp as the scripts compare it: `max(ms, 0)` in decimal. Clamping up is safe for an
/// upper bound, and no generator issues before 1970.
pub(crate) fn timestamp_arg(ms: Option<i64>) -> String {
    ms.map(|ms| ms.max(0).to_string()).unwrap_or_default()
}

/// ARGV: base, node, holder asked for ('' for whoever holds it), force ('1' or '0'), the
/// tombstone (`FREED_HOLDER`). An operator's free (`LeaseOperator::free` of `RedisLeaseStore`), atomic on the
/// server: `{outcome, holder, ms}` with outcome `none` (no keys: never claimed), `notheld`
/// (released, or freed already: the owner is empty or the tombstone), `other` (holder: who
/// holds it now), `live` (not forced; ms: its PTTL), `forced` (the holder key deleted, the
/// hash keeps the holder as owner and the bound; ms: the PTTL it had) or `expired` (the owner
/// replaced with the tombstone, the bound kept: the old holder cannot take it back, and the
/// next claim is no release's, so not exact). Never deletes or lowers `last_timestamp`.
pub(crate) static FREE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local holder_key, state = ARGV[1] .. ':holder:' .. ARGV[2], ARGV[1] .. ':node:' .. ARGV[2]
local expected, force, tombstone = ARGV[3], ARGV[4], ARGV[5]
local current = redis.call('GET', holder_key)
if current then
  if expected ~= '' and current ~= expected then
    return {'other', current, '0'}
  end
  local left = redis.call('PTTL', holder_key)
  if force ~= '1' then
    return {'live', current, tostring(left)}
  end
  redis.call('DEL', holder_key)
  redis.call('HSET', state, 'owner', current)
  return {'forced', current, tostring(left)}
end
local owner = redis.call('HGET', state, 'owner')
if owner and owner ~= '' and owner ~= tombstone then
  if expected ~= '' and owner ~= expected then
    return {'other', owner, '0'}
  end
  redis.call('HSET', state, 'owner', tombstone)
  return {'expired', owner, '0'}
end
if redis.call('EXISTS', state) == 1 then
  return {'notheld', '', '0'}
end
return {'none', '', '0'}
",
    )
});

/// ARGV: base, node. The node ID's holder as an operator lists it: `{holder, PTTL, last
/// timestamp or ''}`: the holder key's value and its PTTL for a live lease; the hash's
/// non-empty owner and -2 for a lease that ended and that nobody claimed since (or the
/// tombstone of a free, which the caller leaves out); `''` when no one holds it.
pub(crate) static ROW: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local holder_key, state = ARGV[1] .. ':holder:' .. ARGV[2], ARGV[1] .. ':node:' .. ARGV[2]
local current = redis.call('GET', holder_key)
local left = -2
if current then
  left = redis.call('PTTL', holder_key)
else
  current = redis.call('HGET', state, 'owner') or ''
end
return {current, tostring(left), redis.call('HGET', state, 'last_timestamp') or ''}
",
    )
});
