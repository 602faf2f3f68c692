//! [`EtcdCluster`]: a cluster of local `etcd` members on 127.0.0.1 that a test can kill
//! (SIGKILL) and restart one member at a time (feature `etcd`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::Error;

/// The shell each member runs under: it starts etcd, writes its process ID to `pid`, and kills
/// it (SIGKILL) when its standard input closes, which the OS does when the test process ends,
/// however it ends.
const SCRIPT: &str = r#"dir="$1"; shift
exec 3<&0
"$@" >>"$dir/server.log" 2>&1 </dev/null 3<&- &
pid=$!
echo "$pid" >"$dir/pid"
( cat <&3 >/dev/null; kill -KILL "$pid" ) 2>/dev/null &
exec 3<&-
wait "$pid""#;

/// How long a member or the cluster may take to answer after a start.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// Local etcd members forming one cluster, each in a directory of its own under a temporary
/// directory deleted when the cluster is dropped (which kills every member).
///
/// ```no_run
/// # async fn demo() -> Result<(), idgen_testdb::Error> {
/// use idgen_testdb::local_server::etcd_cluster::EtcdCluster;
///
/// let mut cluster = EtcdCluster::start(3).await?;
/// let endpoints = cluster.endpoints(); // ["http://127.0.0.1:…", …]
/// cluster.kill(0);                      // SIGKILL: the other two keep the quorum
/// cluster.restart(0).await?;            // same data directory
/// # let _ = endpoints;
/// # Ok(()) }
/// ```
pub struct EtcdCluster {
    dir: tempfile::TempDir,
    binary: PathBuf,
    members: Vec<Member>,
    initial_cluster: String,
}

struct Member {
    name: String,
    client_port: u16,
    peer_port: u16,
    /// The watchdog shell of the running process; `None` once killed.
    shell: Option<Child>,
}

impl EtcdCluster {
    /// Starts `size` members and waits until the cluster takes a write and every member
    /// answers (a quorum alone can leave one member still starting, refusing connections).
    pub async fn start(size: usize) -> Result<EtcdCluster, Error> {
        let binary = super::etcd::binary()?;
        let dir = tempfile::Builder::new()
            .prefix(&crate::stale::dir_prefix("etcd-cluster"))
            .tempdir()
            .map_err(|e| Error::start("an etcd cluster", format!("no temporary directory: {e}")))?;
        let mut members = Vec::with_capacity(size);
        for i in 0..size {
            members.push(Member {
                name: format!("m{i}"),
                client_port: super::free_port()?,
                peer_port: super::free_port()?,
                shell: None,
            });
        }
        let initial_cluster = members
            .iter()
            .map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.peer_port))
            .collect::<Vec<_>>()
            .join(",");
        let mut cluster = EtcdCluster {
            dir,
            binary,
            members,
            initial_cluster,
        };
        for i in 0..size {
            cluster.spawn(i)?;
        }
        cluster.wait_for_quorum().await?;
        for i in 0..size {
            cluster.wait_for_member(i).await?;
        }
        Ok(cluster)
    }

    /// The members' client URLs, in order.
    pub fn endpoints(&self) -> Vec<String> {
        self.members
            .iter()
            .map(|m| format!("http://127.0.0.1:{}", m.client_port))
            .collect()
    }

    /// The index of the member that is the leader now (asking the running members).
    pub async fn leader(&self) -> Result<usize, Error> {
        let mut ids = Vec::new();
        let mut leader = None;
        for endpoint in self.endpoints() {
            let status = async {
                let mut client = crate::key_value::etcd::client(&endpoint).await?;
                client
                    .status()
                    .await
                    .map_err(|e| Error::database("status", &endpoint, e))
            };
            match tokio::time::timeout(Duration::from_secs(5), status).await {
                Ok(Ok(status)) => {
                    ids.push(status.header().map(|h| h.member_id()));
                    leader = leader.or(Some(status.leader()));
                }
                _ => ids.push(None),
            }
        }
        ids.iter()
            .position(|id| *id == leader && leader.is_some())
            .ok_or_else(|| Error::start("an etcd cluster", "no member is the leader"))
    }

    /// Kills member `i` with SIGKILL (no clean shutdown) and waits until it is gone.
    pub fn kill(&mut self, i: usize) {
        let member = &mut self.members[i];
        let Some(mut shell) = member.shell.take() else {
            return;
        };
        let pid_file = self.dir.path().join(&member.name).join("pid");
        if let Ok(pid) = std::fs::read_to_string(&pid_file) {
            let _ = Command::new("kill").args(["-KILL", pid.trim()]).status();
        }
        drop(shell.stdin.take());
        let _ = shell.wait();
    }

    /// Starts member `i` again on its data directory and waits until it answers.
    pub async fn restart(&mut self, i: usize) -> Result<(), Error> {
        self.spawn(i)?;
        self.wait_for_member(i).await
    }

    /// Waits until member `i` answers on its client port.
    async fn wait_for_member(&self, i: usize) -> Result<(), Error> {
        let endpoint = self.endpoints()[i].clone();
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if crate::key_value::ping(crate::server::ServerKind::Etcd, &endpoint)
                .await
                .is_ok()
            {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(Error::start(
                    format!("etcd member {i}"),
                    format!(
                        "no answer within {READY_TIMEOUT:?}; log: {}",
                        self.log_tail(i)
                    ),
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until a write through all endpoints succeeds (a leader and a quorum).
    pub async fn wait_for_quorum(&self) -> Result<(), Error> {
        let endpoints = self.endpoints().join(",");
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let written = async {
                let mut client = crate::key_value::etcd::client(&endpoints).await?;
                client
                    .put("idgen-testkit/quorum", "ok", None)
                    .await
                    .map_err(|e| Error::database("put", &endpoints, e))
            };
            match tokio::time::timeout(Duration::from_secs(5), written).await {
                Ok(Ok(_)) => return Ok(()),
                _ if Instant::now() > deadline => {
                    return Err(Error::start(
                        "an etcd cluster",
                        format!(
                            "no quorum within {READY_TIMEOUT:?}; log of m0: {}",
                            self.log_tail(0)
                        ),
                    ));
                }
                _ => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    }

    fn spawn(&mut self, i: usize) -> Result<(), Error> {
        let member = &self.members[i];
        let dir = self.dir.path().join(&member.name);
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::start("an etcd member", format!("{}: {e}", dir.display())))?;
        let _ = std::fs::remove_file(dir.join("pid"));
        let args = super::etcd::member_args(
            &member.name,
            &dir.join("data"),
            member.client_port,
            member.peer_port,
            &self.initial_cluster,
            "new",
        );
        let shell = Command::new("sh")
            .arg("-c")
            .arg(SCRIPT)
            .arg("idgen-etcd-member")
            .arg(&dir)
            .arg(&self.binary)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| Error::start("an etcd member", format!("cannot run sh: {e}")))?;
        self.members[i].shell = Some(shell);
        wait_for_file(&dir.join("pid"));
        Ok(())
    }

    fn log_tail(&self, i: usize) -> String {
        let log = std::fs::read_to_string(
            self.dir
                .path()
                .join(&self.members[i].name)
                .join("server.log"),
        )
        .unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(5)..].join(" | ")
    }
}

fn wait_for_file(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !path.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
}

impl Drop for EtcdCluster {
    fn drop(&mut self) {
        for i in 0..self.members.len() {
            self.kill(i);
        }
    }
}
