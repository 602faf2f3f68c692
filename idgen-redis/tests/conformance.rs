//! idgen-testkit's conformance suites on idgen-redis: the lease store (with its operator's
//! view, its `LeaseOperator`) and the hi-lo counter on a real Redis server (`IDGEN_REDIS_URL`, a container, or a local `redis-server`).

use idgen_redis::hilo::RedisCounter;
use idgen_redis::lease::{BoxError, RedisLeaseStore};
use idgen_testkit::conformance::{CounterUnderTest, DbKind, HiLoSubject, LeaseSubject};
use idgen_testkit::key_value::split_url;

/// idgen-redis: `RedisLeaseStore`, `RedisCounter`, each under the case's key prefix.
struct Redis;

impl LeaseSubject for Redis {
    type Store = RedisLeaseStore;
    const DATABASE: DbKind = DbKind::Redis;
    async fn store(url: &str, table: &str) -> Result<RedisLeaseStore, BoxError> {
        let (server, prefix) = split_url(url);
        let client = redis::Client::open(server)?;
        Ok(RedisLeaseStore::new(client).with_prefix(&format!("{prefix}{table}"))?)
    }
}

impl HiLoSubject for Redis {
    type Source = RedisCounter;
    const DATABASE: DbKind = DbKind::Redis;
    const COUNTER: CounterUnderTest = CounterUnderTest::Table;
    async fn source(url: &str, counter: &str) -> Result<RedisCounter, BoxError> {
        let (server, prefix) = split_url(url);
        let client = redis::Client::open(server)?;
        let counter = RedisCounter::new(&client, counter)?;
        Ok(counter.with_prefix(&format!("{prefix}{}", idgen_redis::hilo::DEFAULT_PREFIX))?)
    }
    async fn create(source: &RedisCounter, _block: u64) -> Result<(), BoxError> {
        Ok(source.create().await?)
    }
}

idgen_testkit::lease_suite!(redis_lease, Redis, key_value);
idgen_testkit::hilo_suite!(redis_hilo, Redis, key_value);
idgen_testkit::startup_suite!(redis_startup, Redis, Redis);
idgen_testkit::operator_suite!(redis_operator, Redis);

/// Issue 40, the soak's seed 7, on a real Redis: a process with its clock stepped ahead, Redis
/// forgetting its keys, and a process with a right clock taking the node ID issue no ID twice
/// (the stepped process is refused before it claims).
#[test]
fn seed_7_a_leading_clock_a_redis_that_forgets_and_a_new_holder_issue_no_id_twice() {
    idgen_testkit::conformance::run(
        idgen_testkit::conformance::lease_forgetting::a_leading_clock_a_store_that_forgets_and_a_new_holder_issue_no_id_twice::<Redis>(),
    );
}
