//! A three-member etcd cluster (local `etcd` processes) under four OS processes that lease node
//! IDs and issue Snowflake IDs, while members are killed with SIGKILL:
//!
//! 1. all three up: four distinct node IDs, renewals succeed;
//! 2. one member killed: the leases keep renewing, no generator is fenced;
//! 3. a second member killed (no quorum): every generator fences itself, at or before its
//!    fence deadline, which lies `safety_margin` before the earliest moment etcd could expire
//!    its lease; nobody can claim a node ID meanwhile;
//! 4. both restarted: every generator resumes on its own node ID (no lease lost);
//! 5. the run ends: no ID was issued twice across the four processes.
//!
//! Needs the `etcd` binary (Debian: etcd-server); run time about half a minute.

use std::collections::HashSet;
use std::process::Stdio;
use std::time::{Duration, Instant};

use idgen_etcd::lease::{LeaseOptions, WorkerLease};
use idgen_etcd::{Clock, Etcd, Layout, Snowflake, SnowflakeId, SystemClock};
use idgen_testkit::local_server::etcd_cluster::EtcdCluster;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

const PROCESSES: usize = 4;
const TTL: Duration = Duration::from_secs(6);
const MARGIN: Duration = Duration::from_secs(1);
const RENEW_EVERY: Duration = Duration::from_millis(400);
const ROLE: &str = "IDGEN_CLUSTER_ROLE";

fn options() -> LeaseOptions {
    WorkerLease::options()
        .skip_takeover_wait_for_tests_and_development(true) // a fresh database
        .namespace("cluster")
        .ttl(TTL)
        .renew_every(RENEW_EVERY)
        .safety_margin(MARGIN)
        .store_timeout(Duration::from_millis(600))
}

fn now_ms() -> i64 {
    SystemClock::new().now_ms()
}

/// One issuing process, driven over its stdin and stdout.
struct Issuer {
    process: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    node: u64,
    out: std::path::PathBuf,
}

impl Issuer {
    fn spawn(endpoints: &str, out: &std::path::Path) -> Issuer {
        let exe = std::env::current_exe().expect("the test binary");
        let mut process = tokio::process::Command::new(exe)
            .args(["--exact", "issuer", "--nocapture", "--test-threads=1"])
            .env(ROLE, "issuer")
            .env("IDGEN_CLUSTER_ENDPOINTS", endpoints)
            .env("IDGEN_CLUSTER_OUT", out)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start an issuing process");
        let lines = BufReader::new(process.stdout.take().unwrap()).lines();
        Issuer {
            stdin: process.stdin.take(),
            process,
            lines,
            node: u64::MAX,
            out: out.to_owned(),
        }
    }

    /// The rest of the next line tagged `tag`.
    async fn line(&mut self, tag: &str) -> String {
        let tagged = format!("{tag} ");
        loop {
            let line = tokio::time::timeout(Duration::from_secs(60), self.lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("no {tag} line within 60 s"))
                .expect("read the issuer's stdout")
                .unwrap_or_else(|| panic!("the issuer ended before {tag}"));
            if let Some(at) = line.find(&tagged) {
                return line[at + tagged.len()..].trim().to_owned();
            }
        }
    }

    async fn send(&mut self, order: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin
            .write_all(format!("{order}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
    }

    /// `(renewals, failed renewals, lost, fenced since the last report, issued, valid_until_ms,
    /// first fenced, highest timestamp issued since the last report, first ID after a fence)`.
    async fn status(&mut self) -> Status {
        self.send("STATUS").await;
        let text = self.line("STATUS").await;
        let (numbers, last_error) = text.split_once(" |").unwrap_or((&text, ""));
        let last_error = last_error.trim();
        let f: Vec<i64> = numbers.split(' ').map(|n| n.parse().unwrap()).collect();
        Status {
            renewals: f[0],
            failed: f[1],
            lost: f[2] == 1,
            fenced: f[3] == 1,
            issued: f[4],
            valid_until_ms: f[5],
            first_fenced_ms: f[6],
            highest_ms: f[7],
            resumed_ms: f[8],
            last_error: last_error.to_owned(),
        }
    }
}

#[derive(Debug)]
struct Status {
    renewals: i64,
    failed: i64,
    lost: bool,
    fenced: bool,
    issued: i64,
    valid_until_ms: i64,
    first_fenced_ms: i64,
    highest_ms: i64,
    /// Wall-clock ms of the first ID issued after the generator was fenced (`i64::MIN`: none).
    resumed_ms: i64,
    last_error: String,
}

async fn statuses(issuers: &mut [Issuer]) -> Vec<Status> {
    let mut all = Vec::new();
    for issuer in issuers.iter_mut() {
        all.push(issuer.status().await);
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_member_cluster_loses_members_and_no_id_is_issued_twice() {
    if std::env::var(ROLE).is_ok() {
        return;
    }
    run().await;
}

async fn run() {
    let started = Instant::now();
    let mut cluster = EtcdCluster::start(3)
        .await
        .expect("a three-member etcd cluster");
    let endpoints = cluster.endpoints().join(",");
    let dir = tempfile::tempdir().unwrap();
    let mut issuers: Vec<Issuer> = (0..PROCESSES)
        .map(|i| Issuer::spawn(&endpoints, &dir.path().join(format!("ids-{i}"))))
        .collect();
    let mut nodes = HashSet::new();
    for issuer in &mut issuers {
        issuer.node = issuer.line("NODE").await.parse().unwrap();
        assert!(nodes.insert(issuer.node), "node {} twice", issuer.node);
    }
    eprintln!(
        "[{:>5.1}s] 3 members up; node IDs {nodes:?}",
        started.elapsed().as_secs_f64()
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = statuses(&mut issuers).await;
    assert!(
        before.iter().all(|s| s.renewals > 0 && !s.fenced),
        "{before:?}"
    );

    // 2. One member down, the leader (the harder case: an election): a quorum of two remains.
    let leader = cluster.leader().await.expect("a leader");
    cluster.kill(leader);
    eprintln!(
        "[{:>5.1}s] member {leader}, the leader, killed (SIGKILL)",
        started.elapsed().as_secs_f64()
    );
    tokio::time::sleep(TTL + Duration::from_secs(1)).await;
    let one_down = statuses(&mut issuers).await;
    for (b, s) in before.iter().zip(&one_down) {
        assert!(
            !s.lost && !s.fenced,
            "fenced or lost with one member down: {s:?}"
        );
        assert!(
            s.renewals >= b.renewals + 5,
            "renewals stalled: {b:?} -> {s:?}"
        );
        assert!(s.issued > b.issued, "issuing stalled: {s:?}");
    }
    eprintln!(
        "[{:>5.1}s] one member down for {:?}: renewals {:?} (failed {:?}), none fenced",
        started.elapsed().as_secs_f64(),
        TTL + Duration::from_secs(1),
        one_down.iter().map(|s| s.renewals).collect::<Vec<_>>(),
        one_down.iter().map(|s| s.failed).collect::<Vec<_>>()
    );

    // 3. Two down: no quorum. Every generator must fence itself.
    let second = (leader + 1) % 3;
    cluster.kill(second);
    let lost_quorum_ms = now_ms();
    eprintln!(
        "[{:>5.1}s] member {second} killed: no quorum",
        started.elapsed().as_secs_f64()
    );
    let outage = loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let now = statuses(&mut issuers).await;
        if now.iter().all(|s| s.fenced) {
            break now;
        }
        assert!(
            now_ms() - lost_quorum_ms < 3 * TTL.as_millis() as i64,
            "not every generator fenced itself: {now:?}"
        );
    };
    for s in &outage {
        // The deadline of the last good renewal: sent + ttl - margin. etcd's leader started the
        // TTL no earlier than that send, so it could expire the lease no earlier than
        // valid_until + margin; the generator stopped by valid_until (10 ms of scheduling).
        assert!(!s.lost, "{s:?}");
        assert!(
            s.highest_ms <= s.valid_until_ms,
            "issued after its deadline: {s:?}"
        );
        assert!(s.first_fenced_ms <= s.valid_until_ms + 10 + 250, "{s:?}");
        assert!(s.valid_until_ms + MARGIN.as_millis() as i64 > s.highest_ms);
        assert!(s.valid_until_ms <= lost_quorum_ms + (TTL - MARGIN).as_millis() as i64);
    }
    eprintln!(
        "[{:>5.1}s] failed renewals so far: {:?}; last errors: {:?}",
        started.elapsed().as_secs_f64(),
        outage.iter().map(|s| s.failed).collect::<Vec<_>>(),
        outage
            .iter()
            .map(|s| s.last_error.as_str())
            .collect::<Vec<_>>()
    );
    eprintln!(
        "[{:>5.1}s] all {PROCESSES} fenced; fence deadlines {:?} ms after the quorum was lost, each {} ms before etcd could expire its lease",
        started.elapsed().as_secs_f64(),
        outage
            .iter()
            .map(|s| s.valid_until_ms - lost_quorum_ms)
            .collect::<Vec<_>>(),
        MARGIN.as_millis()
    );
    // Nobody can be handed a node ID without a quorum.
    let contender = Etcd::new(cluster.endpoints());
    let claim = tokio::time::timeout(
        Duration::from_secs(5),
        options().acquire(&contender, &Layout::TWITTER),
    )
    .await;
    assert!(
        !matches!(claim, Ok(Ok(_))),
        "a node ID was claimed without a quorum"
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    let still = statuses(&mut issuers).await;
    assert!(
        still.iter().all(|s| s.fenced && s.highest_ms == i64::MIN),
        "{still:?}"
    );

    // 4. Restore: the quorum is back, every generator resumes on its own node ID.
    cluster
        .restart(leader)
        .await
        .expect("the first member back");
    cluster
        .restart(second)
        .await
        .expect("the second member back");
    cluster.wait_for_quorum().await.expect("the quorum is back");
    let answered_ms = now_ms();
    eprintln!(
        "[{:>5.1}s] members {leader} and {second} restarted; the cluster answers",
        started.elapsed().as_secs_f64()
    );
    // Every holder issues again within one renew interval of the cluster answering: its
    // renewals retry every renew_every / 4 while it is fenced, and each is bounded by the
    // store timeout, which must not leave it waiting on a connection to a member that was down.
    let resumed = loop {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now = statuses(&mut issuers).await;
        assert!(now.iter().all(|s| !s.lost), "a lease was lost: {now:?}");
        if now.iter().all(|s| !s.fenced && s.resumed_ms > i64::MIN) {
            break now;
        }
        assert!(
            now_ms() - answered_ms < 3 * TTL.as_millis() as i64,
            "not resumed: {now:?}"
        );
    };
    let after: Vec<i64> = resumed.iter().map(|s| s.resumed_ms - answered_ms).collect();
    eprintln!(
        "[{:>5.1}s] all {PROCESSES} issuing again {after:?} ms after the cluster answered (renew interval {} ms)",
        started.elapsed().as_secs_f64(),
        RENEW_EVERY.as_millis()
    );
    assert!(
        after.iter().all(|ms| *ms <= RENEW_EVERY.as_millis() as i64),
        "a holder issued again more than one renew interval ({RENEW_EVERY:?}) after the cluster answered: {after:?} ms"
    );
    // A claim through the client that lived through the outage (the contender's) succeeds at
    // once too: the client does not keep trying the connections that broke.
    let claimed = Instant::now();
    let extra = tokio::time::timeout(
        Duration::from_secs(10),
        options().acquire(&contender, &Layout::TWITTER),
    )
    .await
    .expect("a claim after the quorum came back returns")
    .expect("a claim after the quorum came back succeeds");
    eprintln!(
        "[{:>5.1}s] a claim through the client used during the outage took {} ms: node {}",
        started.elapsed().as_secs_f64(),
        claimed.elapsed().as_millis(),
        extra.node()
    );
    assert!(!nodes.contains(&extra.node()));
    assert!(claimed.elapsed() <= RENEW_EVERY, "{:?}", claimed.elapsed());
    extra
        .handle()
        .release()
        .await
        .expect("release the extra claim");
    tokio::time::sleep(Duration::from_secs(1)).await;

    // 5. The end: each releases and writes what it issued.
    let mut all = HashSet::new();
    let mut total = 0usize;
    for mut issuer in issuers {
        drop(issuer.stdin.take());
        let status = tokio::time::timeout(Duration::from_secs(30), issuer.process.wait())
            .await
            .expect("the issuer ends")
            .unwrap();
        assert!(status.success(), "an issuer failed: {status}");
        let bytes = std::fs::read(&issuer.out).expect("the issuer's IDs");
        for chunk in bytes.chunks_exact(8) {
            let id = SnowflakeId::new(i64::from_le_bytes(chunk.try_into().unwrap())).unwrap();
            assert_eq!(Layout::TWITTER.decompose(id).unwrap().node, issuer.node);
            total += 1;
            all.insert(id);
        }
    }
    assert!(total > 10_000, "too few IDs to tell: {total}");
    assert_eq!(all.len(), total, "{} IDs issued twice", total - all.len());
    eprintln!(
        "[{:>5.1}s] {total} IDs from {PROCESSES} processes, 0 duplicates",
        started.elapsed().as_secs_f64()
    );
}

/// The issuing process (a no-op in a normal run): leases a node ID, issues about 20 IDs a
/// millisecond until its stdin closes, answers `STATUS`, then releases and writes its IDs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issuer() {
    if std::env::var(ROLE).as_deref() != Ok("issuer") {
        return;
    }
    let endpoints = std::env::var("IDGEN_CLUSTER_ENDPOINTS").unwrap();
    let etcd = Etcd::new(endpoints.split(','));
    let lease = options()
        .acquire(&etcd, &Layout::TWITTER)
        .await
        .expect("acquire");
    let handle = lease.handle();
    println!("NODE {}", lease.node());
    let ids = std::sync::Arc::new(
        Snowflake::builder()
            .layout(Layout::TWITTER)
            .lease(lease)
            .build()
            .unwrap(),
    );
    #[derive(Default)]
    struct Seen {
        issued: Vec<i64>,
        fenced: bool,
        first_fenced_ms: i64,
        highest_ms: i64,
        resumed_ms: i64,
    }
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Seen {
        highest_ms: i64::MIN,
        first_fenced_ms: i64::MIN,
        resumed_ms: i64::MIN,
        ..Seen::default()
    }));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let issuing = {
        let (ids, seen, stop) = (ids.clone(), seen.clone(), stop.clone());
        tokio::spawn(async move {
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                for _ in 0..20 {
                    let outcome = ids.next_id();
                    let mut seen = seen.lock().unwrap();
                    match outcome {
                        Ok(id) => {
                            seen.issued.push(id.get());
                            if seen.fenced {
                                seen.resumed_ms = now_ms();
                            }
                            seen.fenced = false;
                            let ms = Layout::TWITTER.decompose(id).unwrap().unix_ms;
                            seen.highest_ms = seen.highest_ms.max(ms);
                        }
                        Err(idgen_etcd::CoreError::Fenced { .. }) => {
                            if !seen.fenced {
                                seen.fenced = true;
                                seen.first_fenced_ms = now_ms();
                            }
                            break;
                        }
                        Err(e) => panic!("unexpected: {e}"),
                    }
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
    };
    let mut orders = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(order)) = orders.next_line().await {
        if order == "STATUS" {
            let status = handle.status();
            let mut seen = seen.lock().unwrap();
            println!(
                "STATUS {} {} {} {} {} {} {} {} {} | {}",
                status.renewals,
                status.failed_renewals,
                i32::from(status.lost),
                i32::from(seen.fenced),
                seen.issued.len(),
                status.valid_until_ms,
                seen.first_fenced_ms,
                seen.highest_ms,
                seen.resumed_ms,
                status.last_error.unwrap_or_default().replace('\n', " ")
            );
            seen.highest_ms = i64::MIN; // per report
        }
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    issuing.await.unwrap();
    // A member may still be down at the end: the client can try it first and get a refused
    // connection. A release that failed before reaching the store may be called again (its
    // documented contract), so try a few times before calling it a failure.
    let mut released = handle.release().await;
    for _ in 0..10 {
        if released.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        released = handle.release().await;
    }
    released.expect("release");
    let seen = seen.lock().unwrap();
    let bytes: Vec<u8> = seen.issued.iter().flat_map(|id| id.to_le_bytes()).collect();
    std::fs::write(std::env::var("IDGEN_CLUSTER_OUT").unwrap(), bytes).unwrap();
}
