//! A throwaway set of containers for one fault test: a Docker network, PostgreSQL
//! (`idgen-test/postgres:15`), optionally Redis, MariaDB or etcd, and instances of
//! `idgen-fault-node` on `idgen-test/base:bookworm`, driven with the `docker` command. Everything is labelled with this process's ID and removed
//! when the [`Cluster`] is dropped, or, if the process is killed, by a watchdog shell that waits
//! for the end of a pipe only this process holds.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::line::Line;

/// The image the instances run on (made by `scripts/test-images`).
pub const BASE_IMAGE: &str = "idgen-test/base:bookworm";
/// The PostgreSQL image (made by `scripts/test-images`).
pub const POSTGRES_IMAGE: &str = "idgen-test/postgres:15";
/// The Redis image (made by `scripts/test-images`).
pub const REDIS_IMAGE: &str = "idgen-test/redis:7.0";
/// The MariaDB image (made by `scripts/test-images`).
pub const MARIADB_IMAGE: &str = "idgen-test/mariadb:10.11";
/// The etcd image (made by `scripts/test-images`).
pub const ETCD_IMAGE: &str = "idgen-test/etcd:3.4";
/// The database the instances use, created by [`Cluster::start`]: a database of its own (not
/// `postgres`), so a test can drop it and restore it from a dump.
pub const DATABASE: &str = "ids";
/// The label every container, network and image of this process carries.
pub const LABEL: &str = "org.idgen.faults.pid";

/// Runs `docker args…` and returns its standard output, or its error output as the error.
///
/// ```no_run
/// let version = idgen_faults::cluster::docker(&["version", "--format", "{{.Server.Version}}"]).unwrap();
/// ```
pub fn docker(args: &[&str]) -> Result<String, String> {
    let out = Command::new("docker")
        .args(args)
        .output()
        .map_err(|err| format!("cannot run docker: {err}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    } else {
        Err(format!(
            "docker {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Why the fault tests cannot run here (no Docker engine, or the local images are missing), or
/// `None` when they can.
///
/// ```no_run
/// if let Some(why) = idgen_faults::cluster::unavailable() { eprintln!("skipped: {why}"); }
/// ```
pub fn unavailable() -> Option<String> {
    if let Err(err) = docker(&["version", "--format", "{{.Server.Version}}"]) {
        return Some(format!("no Docker engine answers: {err}"));
    }
    for image in [
        BASE_IMAGE,
        POSTGRES_IMAGE,
        REDIS_IMAGE,
        MARIADB_IMAGE,
        ETCD_IMAGE,
    ] {
        if docker(&["image", "inspect", "--format", "{{.Id}}", image]).is_err() {
            return Some(format!(
                "the image {image} is missing: run scripts/test-images"
            ));
        }
    }
    None
}

/// Milliseconds since the Unix epoch on this host's clock (the containers share it).
///
/// ```
/// assert!(idgen_faults::cluster::now_ms() > 1_600_000_000_000);
/// ```
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The instance image, built once per process from [`BASE_IMAGE`] and the node binary.
fn node_image(binary: &Path) -> Result<String, String> {
    static IMAGE: OnceLock<Result<String, String>> = OnceLock::new();
    IMAGE
        .get_or_init(|| {
            let pid = std::process::id();
            let tag = format!("idgen-test/fault-node:{pid}");
            let context = std::env::temp_dir().join(format!("idgen-faults-{pid}"));
            std::fs::create_dir_all(&context).map_err(|e| e.to_string())?;
            std::fs::copy(binary, context.join("idgen-fault-node")).map_err(|e| e.to_string())?;
            std::fs::write(
                context.join("Dockerfile"),
                format!(
                    "FROM {BASE_IMAGE}\nLABEL {LABEL}={pid}\nCOPY idgen-fault-node /usr/local/bin/\nENTRYPOINT [\"/usr/local/bin/idgen-fault-node\"]\n"
                ),
            )
            .map_err(|e| e.to_string())?;
            let built = Command::new("docker")
                .args(["build", "--quiet", "--tag", &tag])
                .arg(&context)
                .env("DOCKER_BUILDKIT", "0")
                .output()
                .map_err(|e| e.to_string());
            let _ = std::fs::remove_dir_all(&context);
            let built = built?;
            if !built.status.success() {
                return Err(format!(
                    "docker build {tag}: {}",
                    String::from_utf8_lossy(&built.stderr)
                ));
            }
            Ok(tag)
        })
        .clone()
}

/// Redis without persistence (no snapshots, no append-only file), as `docker run` arguments.
const REDIS_SERVER: [&str; 10] = [
    REDIS_IMAGE,
    "redis-server",
    "--bind",
    "0.0.0.0",
    "--protected-mode",
    "no",
    "--save",
    "",
    "--appendonly",
    "no",
];

/// The IP address of container `id` on its network (what a replica connects to: the primary's
/// alias moves at a failover).
fn ip_of(id: &str) -> Result<String, String> {
    docker(&[
        "inspect",
        "--format",
        "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}",
        id,
    ])
}

/// Polls `check` every 50 ms until it holds, at most `timeout`; the error names `what` and
/// ends with the last 20 lines of container `id`'s log.
fn poll(id: &str, timeout: Duration, what: &str, check: impl Fn() -> bool) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    while !check() {
        if Instant::now() > deadline {
            let logs = docker(&["logs", "--tail", "20", id]).unwrap_or_default();
            return Err(format!("{what}: not within {timeout:?}: {logs}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// Runs `sql` as MariaDB's `root` in container `id` (the client on the server's socket), one
/// tab-separated line a row, no headers (with `vertical`, one `name: value` line a column).
fn mariadb_sql(id: &str, sql: &str, vertical: bool) -> Result<String, String> {
    let format = if vertical { "-E" } else { "-NB" };
    docker(&["exec", id, "mariadb", "-uroot", format, "-e", sql])
}

/// Polls MariaDB in container `id` until it answers on TCP (the entry point's first, temporary
/// server listens on the socket only), at most a minute.
fn wait_for_mariadb(id: &str) -> Result<(), String> {
    let tcp = [
        "exec",
        id,
        "mariadb",
        "--protocol=tcp",
        "-h127.0.0.1",
        "-uroot",
        "-e",
        "SELECT 1",
    ];
    poll(id, Duration::from_secs(60), "MariaDB ready", || {
        docker(&tcp).is_ok()
    })
}

/// The shell script of the etcd container: etcd in a loop, so that a test can stop it
/// (`kill` of the PID in `/tmp/etcd.pid`), change its data directory while
/// `/tmp/etcd.hold` exists, and have it start again from there in the same container (same
/// address). Arguments as idgen-testkit runs etcd; the data on a tmpfs.
const ETCD_LOOP: &str = "while :; do \
    etcd --name=idgen --data-dir=/var/lib/etcd/data \
      --listen-client-urls=http://0.0.0.0:2379 --advertise-client-urls=http://127.0.0.1:2379 \
      --listen-peer-urls=http://127.0.0.1:2380 --initial-advertise-peer-urls=http://127.0.0.1:2380 \
      --initial-cluster=idgen=http://127.0.0.1:2380 & \
    echo $! >/tmp/etcd.pid; wait $!; \
    while [ -e /tmp/etcd.hold ]; do sleep 0.02; done; \
  done";

/// Runs `sql` with psql on the standby container `id` (its socket is in `/tmp`).
fn standby_sql(id: &str, sql: &str) -> Result<String, String> {
    docker(&[
        "exec", id, "psql", "-h", "/tmp", "-U", "postgres", "-qAt", "-c", sql,
    ])
}

/// Removes this process's containers, networks and image when the process ends, however.
fn watchdog() {
    static WATCHDOG: OnceLock<Option<Mutex<Child>>> = OnceLock::new();
    WATCHDOG.get_or_init(|| {
        let script = r#"cat >/dev/null
ids=$(docker ps -aq --filter "label=$1=$2"); [ -n "$ids" ] && docker rm -f -v $ids
nets=$(docker network ls -q --filter "label=$1=$2"); [ -n "$nets" ] && docker network rm $nets
docker rmi "idgen-test/fault-node:$2""#;
        Command::new("sh")
            .args(["-c", script, "idgen-faults-watchdog", LABEL])
            .arg(std::process::id().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()
            .map(Mutex::new)
    });
}

/// A network with PostgreSQL (alias `db`), optionally Redis (alias `redis`), MariaDB (alias
/// `mariadb`) or etcd (alias `etcd`), and instances on it.
pub struct Cluster {
    network: String,
    label: String,
    db: String,
    redis: Option<String>,
    image: String,
    nodes: Vec<String>,
    /// Containers replaced during the test (removed at the end with the others).
    retired: Vec<String>,
    /// An empty PostgreSQL waiting to replace the database.
    next_db: Option<String>,
    /// A Redis replica of `redis`.
    replica: Option<String>,
    /// A PostgreSQL streaming standby of `db`.
    standby: Option<String>,
    /// MariaDB, with its binary log on.
    mariadb: Option<String>,
    /// A MariaDB replica of `mariadb`.
    mariadb_replica: Option<String>,
    /// etcd, run by a shell loop that restarts it when it ends (see [`Cluster::start_etcd`]).
    etcd: Option<String>,
}

impl Cluster {
    /// A new network named after `scenario`, with PostgreSQL started and ready.
    ///
    /// ```no_run
    /// let cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("idgen-fault-node")).unwrap();
    /// ```
    pub fn start(scenario: &str, node_binary: &Path) -> Result<Cluster, String> {
        Cluster::start_with(scenario, node_binary, true)
    }

    /// [`start`](Self::start), with PostgreSQL only if `postgres` (a test whose instances lease
    /// and count elsewhere and keep no rows saves its start).
    ///
    /// ```no_run
    /// let cluster = idgen_faults::cluster::Cluster::start_with("demo", std::path::Path::new("idgen-fault-node"), false).unwrap();
    /// ```
    pub fn start_with(
        scenario: &str,
        node_binary: &Path,
        postgres: bool,
    ) -> Result<Cluster, String> {
        watchdog();
        let image = node_image(node_binary)?;
        let pid = std::process::id().to_string();
        let label = format!("{LABEL}={pid}");
        let network = format!("idgen-faults-{scenario}-{pid}");
        docker(&["network", "create", "--label", &label, &network])?;
        let mut cluster = Cluster {
            network,
            label,
            db: String::new(),
            redis: None,
            image,
            nodes: Vec::new(),
            retired: Vec::new(),
            next_db: None,
            replica: None,
            standby: None,
            mariadb: None,
            mariadb_replica: None,
            etcd: None,
        };
        if postgres {
            cluster.db = cluster.run_postgres("db")?;
            cluster.wait_for_db()?;
            cluster.psql("postgres", &format!("CREATE DATABASE {DATABASE}"))?;
        }
        Ok(cluster)
    }

    /// A new container on the network, labelled, with the network alias `alias` if any:
    /// `docker run --detach … args…`; returns its ID.
    fn run_container(&self, alias: Option<&str>, args: &[&str]) -> Result<String, String> {
        let mut run = vec![
            "run",
            "--detach",
            "--label",
            &self.label,
            "--network",
            &self.network,
        ];
        if let Some(alias) = alias {
            run.extend(["--network-alias", alias]);
        }
        run.extend(args);
        docker(&run)
    }

    /// A new PostgreSQL container with an empty data directory, alias `alias`.
    fn run_postgres(&self, alias: &str) -> Result<String, String> {
        self.run_container(
            Some(alias),
            &[
                "--env",
                "POSTGRES_PASSWORD=postgres",
                "--env",
                "POSTGRES_INITDB_ARGS=--no-sync",
                // No SCRAM: its key derivation, in the instances' debug build on a loaded machine,
                // makes every new connection take seconds, and a fault is about reconnecting fast.
                "--env",
                "POSTGRES_HOST_AUTH_METHOD=trust",
                POSTGRES_IMAGE,
                "-c",
                "fsync=off",
            ],
        )
    }

    /// Runs `sql` in `database` as `postgres` (psql in the database's container, on its socket).
    ///
    /// ```no_run
    /// # let cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.psql("ids", "SELECT 1").unwrap();
    /// ```
    pub fn psql(&self, database: &str, sql: &str) -> Result<String, String> {
        self.db_shell(
            &format!("psql -v ON_ERROR_STOP=1 -qAt -d {database} -c \"$1\"",),
            &[sql],
        )
    }

    /// Runs the shell `script` in the database's container as user `postgres`, with `args` as
    /// `$1…`.
    fn db_shell(&self, script: &str, args: &[&str]) -> Result<String, String> {
        let mut argv = vec![
            "exec", "--user", "postgres", &self.db, "sh", "-c", script, "sh",
        ];
        argv.extend(args);
        docker(&argv)
    }

    /// `pg_dump` of [`DATABASE`] into a file inside the database's container.
    ///
    /// ```no_run
    /// # let cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.dump_db().unwrap();
    /// ```
    pub fn dump_db(&self) -> Result<(), String> {
        self.db_shell(
            &format!("pg_dump --format=custom --file=/tmp/idgen-faults.dump {DATABASE}"),
            &[],
        )
        .map(drop)
    }

    /// Restores the dump [`dump_db`](Self::dump_db) took into a new database beside
    /// [`DATABASE`] (`pg_restore` takes seconds on a loaded machine; the instances do not see
    /// it yet), for [`swap_in_restored_db`](Self::swap_in_restored_db).
    ///
    /// ```no_run
    /// # let cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.restore_db_beside().unwrap();
    /// ```
    pub fn restore_db_beside(&self) -> Result<(), String> {
        self.db_shell(
            &format!(
                "createdb {DATABASE}_restored && \
                 pg_restore --exit-on-error --single-transaction --dbname={DATABASE}_restored \
                 /tmp/idgen-faults.dump"
            ),
            &[],
        )
        .map(drop)
    }

    /// The restore itself, as the instances see it: [`DATABASE`] is closed to new sessions,
    /// its sessions are ended, and the database [`restore_db_beside`](Self::restore_db_beside)
    /// made takes its name (the old one is kept as `…_replaced`). As a drop, create and restore
    /// of the dump, in about the time a small restore takes.
    ///
    /// ```no_run
    /// # let cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.swap_in_restored_db().unwrap();
    /// ```
    pub fn swap_in_restored_db(&self) -> Result<(), String> {
        self.db_shell(
            &format!(
                "psql -v ON_ERROR_STOP=1 -qAt -d postgres \
                 -c 'ALTER DATABASE {DATABASE} ALLOW_CONNECTIONS false' \
                 -c \"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '{DATABASE}'\" \
                 -c 'ALTER DATABASE {DATABASE} RENAME TO {DATABASE}_replaced' \
                 -c 'ALTER DATABASE {DATABASE}_restored RENAME TO {DATABASE}'"
            ),
            &[],
        )
        .map(drop)
    }

    /// Starts, beside the database, a second PostgreSQL with an empty data directory and
    /// [`DATABASE`] created but empty (alias `db-next`, which no instance uses), for
    /// [`replace_db`](Self::replace_db).
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.prepare_empty_db().unwrap();
    /// ```
    pub fn prepare_empty_db(&mut self) -> Result<(), String> {
        let next = self.run_postgres("db-next")?;
        let current = std::mem::replace(&mut self.db, next);
        let ready = self
            .wait_for_db()
            .and_then(|()| self.psql("postgres", &format!("CREATE DATABASE {DATABASE}")));
        let next = std::mem::replace(&mut self.db, current);
        self.next_db = Some(next);
        ready.map(drop)
    }

    /// A lost volume: kills the database container (`docker kill`) and puts in its place,
    /// under the alias `db`, the empty PostgreSQL [`prepare_empty_db`](Self::prepare_empty_db)
    /// started (or, without one, starts one now); returns when it answers.
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.replace_db().unwrap();
    /// ```
    pub fn replace_db(&mut self) -> Result<(), String> {
        if self.next_db.is_none() {
            self.prepare_empty_db()?;
        }
        let next = self.next_db.take().unwrap_or_default();
        docker(&["kill", &self.db])?;
        docker(&["network", "disconnect", &self.network, &next])?;
        docker(&["network", "connect", "--alias", "db", &self.network, &next])?;
        let old = std::mem::replace(&mut self.db, next);
        self.retired.push(old);
        self.wait_for_db()
    }

    /// Starts a Redis replica of the Redis server (no alias: no instance uses it) and waits
    /// until its link to the primary is up.
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// # cluster.start_redis().unwrap();
    /// cluster.start_redis_replica().unwrap();
    /// ```
    pub fn start_redis_replica(&mut self) -> Result<(), String> {
        let primary = self.redis_id()?.to_owned();
        let ip = ip_of(&primary)?;
        let mut args = REDIS_SERVER.to_vec();
        args.extend(["--replicaof", &ip, "6379"]);
        let id = self.run_container(None, &args)?;
        self.replica = Some(id.clone());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let info =
                docker(&["exec", &id, "redis-cli", "info", "replication"]).unwrap_or_default();
            if info.contains("master_link_status:up") {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!("the Redis replica did not connect: {info}"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Cuts the Redis replica's link to the primary (`docker network disconnect`): from now on
    /// nothing the primary acknowledges reaches it.
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// # cluster.start_redis().unwrap();
    /// # cluster.start_redis_replica().unwrap();
    /// cluster.cut_redis_replica().unwrap();
    /// ```
    pub fn cut_redis_replica(&self) -> Result<(), String> {
        let replica = self.replica.as_deref().ok_or("no Redis replica")?;
        docker(&["network", "disconnect", &self.network, replica]).map(drop)
    }

    /// A failover to the (lagging) replica: kills the primary, promotes the replica
    /// (`REPLICAOF NO ONE`) and gives it the alias `redis`; returns when it answers there.
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// # cluster.start_redis().unwrap();
    /// # cluster.start_redis_replica().unwrap();
    /// cluster.fail_over_redis().unwrap();
    /// ```
    pub fn fail_over_redis(&mut self) -> Result<(), String> {
        let replica = self.replica.take().ok_or("no Redis replica")?;
        let primary = self.redis.replace(replica.clone()).unwrap_or_default();
        // Promoted before it gets the alias (it is cut off until then): it must not find
        // itself under `redis` while it still looks for its primary there.
        docker(&["exec", &replica, "redis-cli", "replicaof", "no", "one"])?;
        self.move_alias(&primary, &replica, "redis")?;
        self.wait_for_redis()
    }

    /// The last step of a failover, as a virtual IP or a DNS name moves: kills `old` (removed
    /// with the others at the end) and gives `new` the network alias `alias` (reconnecting it
    /// if it is on the network already).
    fn move_alias(&mut self, old: &str, new: &str, alias: &str) -> Result<(), String> {
        self.retired.push(old.to_owned());
        docker(&["kill", old])?;
        let _ = docker(&["network", "disconnect", &self.network, new]);
        docker(&["network", "connect", "--alias", alias, &self.network, new]).map(drop)
    }

    /// Starts an asynchronous streaming standby of the database (`pg_basebackup -R`, no alias:
    /// no instance uses it) and waits until it streams.
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.start_pg_standby().unwrap();
    /// ```
    pub fn start_pg_standby(&mut self) -> Result<(), String> {
        self.db_shell(
            "echo 'host replication all all trust' >>\"$PGDATA/pg_hba.conf\" && \
             psql -qAt -c 'SELECT pg_reload_conf()'",
            &[],
        )?;
        let ip = ip_of(&self.db)?;
        let script = format!(
            "pg_basebackup -h {ip} -U postgres -D /tmp/standby -R -X stream --checkpoint=fast && \
             chmod 700 /tmp/standby && \
             exec postgres -D /tmp/standby -c fsync=off -c unix_socket_directories=/tmp"
        );
        let id = self.run_container(
            None,
            &[
                "--user",
                "postgres",
                "--entrypoint",
                "sh",
                POSTGRES_IMAGE,
                "-c",
                &script,
            ],
        )?;
        self.standby = Some(id.clone());
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let status = standby_sql(&id, "SELECT status FROM pg_stat_wal_receiver");
            if status.as_deref() == Ok("streaming") {
                return Ok(());
            }
            if Instant::now() > deadline {
                let logs = docker(&["logs", "--tail", "20", &id]).unwrap_or_default();
                return Err(format!("the standby does not stream ({status:?}): {logs}"));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Pauses the standby's replay (`pg_wal_replay_pause()`) and cuts its link to the primary
    /// (`docker network disconnect`): nothing the primary commits from now on reaches it.
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// # cluster.start_pg_standby().unwrap();
    /// cluster.pause_pg_standby().unwrap();
    /// ```
    pub fn pause_pg_standby(&self) -> Result<(), String> {
        let standby = self.standby.as_deref().ok_or("no standby")?;
        standby_sql(standby, "SELECT pg_wal_replay_pause()")?;
        docker(&["network", "disconnect", &self.network, standby]).map(drop)
    }

    /// Promotes the (cut off, lagging) standby (`pg_promote()`, which ends the paused replay)
    /// while the primary still serves the instances;
    /// [`fail_over_to_pg_standby`](Self::fail_over_to_pg_standby) then puts it in the
    /// primary's place.
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// # cluster.start_pg_standby().unwrap();
    /// cluster.promote_pg_standby().unwrap();
    /// ```
    pub fn promote_pg_standby(&self) -> Result<(), String> {
        let standby = self.standby.as_deref().ok_or("no standby")?;
        let promoted = standby_sql(standby, "SELECT pg_promote(true, 30)")?;
        if promoted != "t" {
            return Err(format!("pg_promote() answered {promoted:?}"));
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while standby_sql(standby, "SELECT pg_is_in_recovery()").as_deref() != Ok("f") {
            if Instant::now() > deadline {
                return Err("the promoted standby is still in recovery".to_owned());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    /// The failover: kills the primary and gives the promoted standby the alias `db` (as a
    /// virtual IP or a DNS name moves); returns when it answers there.
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// # cluster.start_pg_standby().unwrap();
    /// # cluster.promote_pg_standby().unwrap();
    /// cluster.fail_over_to_pg_standby().unwrap();
    /// ```
    pub fn fail_over_to_pg_standby(&mut self) -> Result<(), String> {
        let standby = self.standby.take().ok_or("no standby")?;
        let primary = std::mem::replace(&mut self.db, standby.clone());
        self.move_alias(&primary, &standby, "db")
    }

    /// A new MariaDB container (`MARIADB_IMAGE`, [`DATABASE`] created, `root` without a
    /// password from anywhere, the binary log on, row-based, functions allowed to be created
    /// under it, as server `server_id`), with the
    /// network alias `alias` if any; returns its ID once it answers on TCP. Its data is on a
    /// tmpfs, unless `on_disk` (a volume of the container's own, kept when it restarts).
    fn run_mariadb(
        &self,
        alias: Option<&str>,
        server_id: u32,
        on_disk: bool,
    ) -> Result<String, String> {
        let server_id = format!("--server-id={server_id}");
        let database = format!("MARIADB_DATABASE={DATABASE}");
        let id = self.run_container(
            alias,
            &[
                "--env",
                "MARIADB_ALLOW_EMPTY_ROOT_PASSWORD=1",
                "--env",
                &database,
                if on_disk { "--volume" } else { "--tmpfs" },
                "/var/lib/mysql",
                MARIADB_IMAGE,
                "mariadbd",
                "--max-connections=300",
                &server_id,
                "--log-bin=mysql-bin",
                "--binlog-format=ROW",
                // With the binary log on, creating a stored function (the database-side
                // generator) needs this or the SUPER privilege (error 1418), as README says.
                "--log-bin-trust-function-creators=1",
                "--innodb-flush-log-at-trx-commit=2",
            ],
        )?;
        wait_for_mariadb(&id)?;
        Ok(id)
    }

    fn mariadb_id(&self) -> Result<&str, String> {
        self.mariadb
            .as_deref()
            .ok_or_else(|| "no MariaDB in this cluster".to_owned())
    }

    /// Starts MariaDB (alias `mariadb`, [`DATABASE`] created) and waits until it answers.
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.start_mariadb().unwrap();
    /// ```
    pub fn start_mariadb(&mut self) -> Result<(), String> {
        self.mariadb = Some(self.run_mariadb(Some("mariadb"), 1, false)?);
        Ok(())
    }

    /// [`start_mariadb`](Self::start_mariadb) with its data in a volume of the container's own
    /// instead of a tmpfs, so that it survives a restart of the container
    /// ([`restart_service`](Self::restart_service)).
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.start_mariadb_on_disk().unwrap();
    /// ```
    pub fn start_mariadb_on_disk(&mut self) -> Result<(), String> {
        self.mariadb = Some(self.run_mariadb(Some("mariadb"), 1, true)?);
        Ok(())
    }

    /// Restarts the database serving under `alias` (`db` or `mariadb`, `docker restart`: its
    /// server shut down, PostgreSQL fast, `SIGINT`, MariaDB normally, and started again on
    /// the data it kept; every connection breaks) and returns when it answers again.
    ///
    /// ```no_run
    /// # let cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.restart_service("db").unwrap();
    /// ```
    pub fn restart_service(&self, alias: &str) -> Result<(), String> {
        let id = self
            .service(alias)
            .ok_or_else(|| format!("no {alias} in this cluster"))?;
        docker(&["restart", "--time", "30", id])?;
        match alias {
            "db" => self.wait_for_db(),
            "mariadb" => wait_for_mariadb(id),
            _ => Err(format!("{alias} is not a database of this cluster")),
        }
    }

    /// `mariadb-dump --single-transaction` of [`DATABASE`] into a file inside the MariaDB
    /// container.
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// # cluster.start_mariadb().unwrap();
    /// cluster.dump_mariadb().unwrap();
    /// ```
    pub fn dump_mariadb(&self) -> Result<(), String> {
        let dump =
            format!("mariadb-dump -uroot --single-transaction {DATABASE} >/tmp/idgen-faults.sql");
        docker(&["exec", self.mariadb_id()?, "sh", "-c", &dump]).map(drop)
    }

    /// The restore of the dump [`dump_mariadb`](Self::dump_mariadb) took: [`DATABASE`] dropped,
    /// created again and loaded from the dump (the instances' calls fail meanwhile).
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// # cluster.start_mariadb().unwrap();
    /// # cluster.dump_mariadb().unwrap();
    /// cluster.restore_mariadb().unwrap();
    /// ```
    pub fn restore_mariadb(&self) -> Result<(), String> {
        let restore = format!(
            "mariadb -uroot -e 'DROP DATABASE {DATABASE}; CREATE DATABASE {DATABASE}' && \
             mariadb -uroot {DATABASE} </tmp/idgen-faults.sql"
        );
        docker(&["exec", self.mariadb_id()?, "sh", "-c", &restore]).map(drop)
    }

    /// Starts a second MariaDB (no alias: no instance uses it) as an asynchronous replica of
    /// the first, from the start of the primary's binary log (`CHANGE MASTER TO …;
    /// START SLAVE`), and waits until it has applied everything the primary logged.
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// # cluster.start_mariadb().unwrap();
    /// cluster.start_mariadb_replica().unwrap();
    /// ```
    pub fn start_mariadb_replica(&mut self) -> Result<(), String> {
        let primary = self.mariadb_id()?.to_owned();
        let ip = ip_of(&primary)?;
        let logs = mariadb_sql(&primary, "SHOW BINARY LOGS", false)?;
        let first = logs
            .split_whitespace()
            .next()
            .ok_or("the primary has no binary log")?
            .to_owned();
        let replica = self.run_mariadb(None, 2, false)?;
        self.mariadb_replica = Some(replica.clone());
        mariadb_sql(
            &replica,
            &format!(
                "CHANGE MASTER TO MASTER_HOST='{ip}', MASTER_USER='root', MASTER_PASSWORD='', \
                 MASTER_LOG_FILE='{first}', MASTER_LOG_POS=4; START SLAVE"
            ),
            false,
        )?;
        poll(
            &replica,
            Duration::from_secs(60),
            "the replica caught up",
            || {
                let status = mariadb_sql(&replica, "SHOW SLAVE STATUS", true).unwrap_or_default();
                let field = |name: &str| {
                    status.lines().find_map(|line| {
                        let (key, value) = line.trim().split_once(": ")?;
                        (key == name).then(|| value.to_owned())
                    })
                };
                field("Slave_IO_Running").as_deref() == Some("Yes")
                    && field("Slave_SQL_Running").as_deref() == Some("Yes")
                    && field("Seconds_Behind_Master").as_deref() == Some("0")
                    && field("Read_Master_Log_Pos") == field("Exec_Master_Log_Pos")
                    && field("Master_Log_File") == field("Relay_Master_Log_File")
            },
        )
    }

    /// Stops the replica's threads (`STOP SLAVE`) and cuts its link to the primary (`docker
    /// network disconnect`): nothing the primary commits from now on reaches it.
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// # cluster.start_mariadb().unwrap();
    /// # cluster.start_mariadb_replica().unwrap();
    /// cluster.stop_mariadb_replica().unwrap();
    /// ```
    pub fn stop_mariadb_replica(&self) -> Result<(), String> {
        let replica = self
            .mariadb_replica
            .as_deref()
            .ok_or("no MariaDB replica")?;
        mariadb_sql(replica, "STOP SLAVE", false)?;
        docker(&["network", "disconnect", &self.network, replica]).map(drop)
    }

    /// Promotes the (stopped, lagging) replica: `STOP SLAVE; RESET SLAVE ALL`, while the
    /// primary still serves the instances;
    /// [`fail_over_to_mariadb_replica`](Self::fail_over_to_mariadb_replica) then puts it in the
    /// primary's place.
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// # cluster.start_mariadb().unwrap();
    /// # cluster.start_mariadb_replica().unwrap();
    /// cluster.promote_mariadb_replica().unwrap();
    /// ```
    pub fn promote_mariadb_replica(&self) -> Result<(), String> {
        let replica = self
            .mariadb_replica
            .as_deref()
            .ok_or("no MariaDB replica")?;
        mariadb_sql(replica, "STOP SLAVE; RESET SLAVE ALL", false).map(drop)
    }

    /// The failover: kills the MariaDB primary and gives the promoted replica the alias
    /// `mariadb`.
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// # cluster.start_mariadb().unwrap();
    /// # cluster.start_mariadb_replica().unwrap();
    /// # cluster.promote_mariadb_replica().unwrap();
    /// cluster.fail_over_to_mariadb_replica().unwrap();
    /// ```
    pub fn fail_over_to_mariadb_replica(&mut self) -> Result<(), String> {
        let replica = self.mariadb_replica.take().ok_or("no MariaDB replica")?;
        let primary = self.mariadb.replace(replica.clone()).unwrap_or_default();
        self.move_alias(&primary, &replica, "mariadb")
    }

    fn etcd_id(&self) -> Result<&str, String> {
        self.etcd
            .as_deref()
            .ok_or_else(|| "no etcd in this cluster".to_owned())
    }

    /// Runs the bash `script` in the etcd container.
    fn etcd_shell(&self, script: &str) -> Result<String, String> {
        docker(&["exec", self.etcd_id()?, "bash", "-c", script])
    }

    /// Starts etcd (alias `etcd`, one member, run by a shell loop that restarts it when it ends)
    /// and waits until it answers.
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.start_etcd().unwrap();
    /// ```
    pub fn start_etcd(&mut self) -> Result<(), String> {
        let id = self.run_container(
            Some("etcd"),
            &[
                "--tmpfs",
                "/var/lib/etcd",
                ETCD_IMAGE,
                "bash",
                "-c",
                ETCD_LOOP,
            ],
        )?;
        self.etcd = Some(id);
        self.wait_for_etcd()
    }

    /// Waits until etcd's `/health` says it has a leader and serves (bash's `/dev/tcp`: the
    /// image has no etcdctl and no HTTP client).
    fn wait_for_etcd(&self) -> Result<(), String> {
        let health = "exec 3<>/dev/tcp/127.0.0.1/2379 && \
                      printf 'GET /health HTTP/1.0\r\n\r\n' >&3 && cat <&3";
        poll(
            self.etcd_id()?,
            Duration::from_secs(30),
            "etcd healthy",
            || {
                self.etcd_shell(health)
                    .is_ok_and(|answer| answer.contains(r#""health":"true""#))
            },
        )
    }

    /// A backup of etcd while it serves: its data directory copied while the process is
    /// stopped for the copy (`SIGSTOP`, tens of milliseconds), as a volume snapshot is taken;
    /// etcd recovers from the copy as from a crash at that moment. (Debian's etcd-server, the
    /// image's, has no `etcdctl` for `etcdctl snapshot save` / `snapshot restore`; restoring
    /// this copy gives etcd back the same keys, leases and revision as that would.)
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// # cluster.start_etcd().unwrap();
    /// cluster.snapshot_etcd().unwrap();
    /// ```
    pub fn snapshot_etcd(&self) -> Result<(), String> {
        self.etcd_shell(
            "touch /tmp/etcd.hold && pid=$(cat /tmp/etcd.pid) && kill -STOP $pid && \
             cp -a /var/lib/etcd/data /var/lib/etcd/backup; kill -CONT $pid; rm /tmp/etcd.hold",
        )
        .map(drop)
    }

    /// The restore: kills etcd (`SIGKILL`), replaces its data directory with the copy
    /// [`snapshot_etcd`](Self::snapshot_etcd) took and starts it from there; returns when it
    /// answers.
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// # cluster.start_etcd().unwrap();
    /// # cluster.snapshot_etcd().unwrap();
    /// cluster.restore_etcd().unwrap();
    /// ```
    pub fn restore_etcd(&self) -> Result<(), String> {
        self.etcd_shell(
            "touch /tmp/etcd.hold && kill -KILL $(cat /tmp/etcd.pid) && \
             rm -rf /var/lib/etcd/data && mv /var/lib/etcd/backup /var/lib/etcd/data && \
             rm /tmp/etcd.hold",
        )?;
        self.wait_for_etcd()
    }

    /// Sends `signal` to the instances `ids` (`docker kill --signal`): `USR1` lets instances
    /// started with `IDGEN_FAULT_GATE=1` go.
    ///
    /// ```no_run
    /// # let cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.signal(&["abc".to_owned()], "USR1").unwrap();
    /// ```
    pub fn signal(&self, ids: &[String], signal: &str) -> Result<(), String> {
        let mut args = vec!["kill", "--signal", signal];
        args.extend(ids.iter().map(String::as_str));
        docker(&args).map(drop)
    }

    /// Starts Redis (alias `redis`, no persistence: no snapshots, no append-only file) and
    /// waits until it answers.
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.start_redis().unwrap();
    /// ```
    pub fn start_redis(&mut self) -> Result<(), String> {
        let id = self.run_container(Some("redis"), &REDIS_SERVER)?;
        self.redis = Some(id);
        self.wait_for_redis()
    }

    fn redis_id(&self) -> Result<&str, String> {
        self.redis
            .as_deref()
            .ok_or_else(|| "no Redis in this cluster".to_owned())
    }

    fn wait_for_redis(&self) -> Result<(), String> {
        let id = self.redis_id()?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if docker(&["exec", id, "redis-cli", "ping"]).is_ok_and(|answer| answer == "PONG") {
                return Ok(());
            }
            if Instant::now() > deadline {
                let logs = docker(&["logs", "--tail", "20", id]).unwrap_or_default();
                return Err(format!("Redis did not get ready: {logs}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills Redis (`docker kill`: no shutdown, no save) and starts the same container again,
    /// empty (no persistence); returns when it answers.
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// # cluster.start_redis().unwrap();
    /// cluster.restart_redis().unwrap();
    /// ```
    pub fn restart_redis(&self) -> Result<(), String> {
        let id = self.redis_id()?;
        docker(&["kill", id])?;
        docker(&["start", id])?;
        self.wait_for_redis()
    }

    fn wait_for_db(&self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let ready = docker(&[
                "exec",
                &self.db,
                "pg_isready",
                "-q",
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
            ]);
            if ready.is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!("PostgreSQL did not get ready: {}", self.db_logs()));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn db_logs(&self) -> String {
        docker(&["logs", "--tail", "20", &self.db]).unwrap_or_default()
    }

    /// Starts an instance named `name` with `env` (`IDGEN_FAULT_*`, see [`crate::node::Config`]);
    /// returns its container ID.
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// let a = cluster.start_node("a", &[("IDGEN_FAULT_TTL_MS", "3000")]);
    /// ```
    pub fn start_node(&mut self, name: &str, env: &[(&str, &str)]) -> Result<String, String> {
        let label = format!("{LABEL}={}", std::process::id());
        let container_name = self.container(name);
        let mut args: Vec<String> = [
            "run",
            "--detach",
            "--label",
            &label,
            "--network",
            &self.network,
            "--name",
            &container_name,
            "--env",
            &format!("IDGEN_FAULT_DB_URL=postgres://postgres:postgres@db:5432/{DATABASE}"),
            "--env",
            "IDGEN_FAULT_REDIS_URL=redis://redis:6379/",
            "--env",
            &format!("IDGEN_FAULT_MYSQL_URL=mysql://root@mariadb:3306/{DATABASE}"),
            "--env",
            "IDGEN_FAULT_ETCD_URL=http://etcd:2379",
        ]
        .map(str::to_owned)
        .to_vec();
        for (key, value) in env {
            args.push("--env".to_owned());
            args.push(format!("{key}={value}"));
        }
        args.push(self.image.clone());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let id = docker(&args)?;
        self.nodes.push(id.clone());
        Ok(id)
    }

    /// The container name of the instance [`start_node`](Self::start_node) started as `name`
    /// (Docker takes it where it takes an ID).
    ///
    /// ```no_run
    /// # let mut cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.start_node("a", &[]).unwrap();
    /// cluster.pause(&cluster.container("a"), true).unwrap();
    /// ```
    pub fn container(&self, name: &str) -> String {
        format!("{}-{name}", self.network)
    }

    /// The lines instance `id` printed so far.
    ///
    /// ```no_run
    /// # let cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// let lines = cluster.lines("abc").unwrap();
    /// ```
    pub fn lines(&self, id: &str) -> Result<Vec<(i64, Line)>, String> {
        let logs = docker(&["logs", id])?;
        Ok(logs.lines().filter_map(Line::parse).collect())
    }

    /// Polls `id`'s lines until `done` holds for them, at most `timeout`.
    ///
    /// ```no_run
    /// # let cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.wait_until("abc", std::time::Duration::from_secs(5), "a lease", |lines| !lines.is_empty()).unwrap();
    /// ```
    pub fn wait_until(
        &self,
        id: &str,
        timeout: Duration,
        what: &str,
        done: impl Fn(&[(i64, Line)]) -> bool,
    ) -> Result<Vec<(i64, Line)>, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let lines = self.lines(id)?;
            if done(&lines) {
                return Ok(lines);
            }
            if Instant::now() > deadline {
                let tail = docker(&["logs", "--tail", "5", id]).unwrap_or_default();
                return Err(format!(
                    "{what}: not within {timeout:?}; instance log ends: {tail}"
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// `docker network disconnect`: `id` can no longer reach the database.
    ///
    /// ```no_run
    /// # let cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.disconnect("abc").unwrap();
    /// ```
    pub fn disconnect(&self, id: &str) -> Result<(), String> {
        docker(&["network", "disconnect", &self.network, id]).map(drop)
    }

    /// `docker network connect`: `id` reaches the database again.
    ///
    /// ```no_run
    /// # let cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.connect("abc").unwrap();
    /// ```
    pub fn connect(&self, id: &str) -> Result<(), String> {
        docker(&["network", "connect", &self.network, id]).map(drop)
    }

    /// The container that serves under the network alias `alias` (`db`, `redis`, `mariadb` or
    /// `etcd`), if this cluster runs it.
    ///
    /// ```no_run
    /// # let cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// assert!(cluster.service("db").is_some());
    /// ```
    pub fn service(&self, alias: &str) -> Option<&str> {
        match alias {
            "db" => Some(self.db.as_str()).filter(|db| !db.is_empty()),
            "redis" => self.redis.as_deref(),
            "mariadb" => self.mariadb.as_deref(),
            "etcd" => self.etcd.as_deref(),
            _ => None,
        }
    }

    /// Cuts the store serving under `alias` off the network (`connected` false) or puts it
    /// back under the same alias (`docker network connect --alias`: a plain reconnect would
    /// drop the alias the instances reach it by).
    ///
    /// ```no_run
    /// # let cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.connect_service("db", false).unwrap();
    /// cluster.connect_service("db", true).unwrap();
    /// ```
    pub fn connect_service(&self, alias: &str, connected: bool) -> Result<(), String> {
        let id = self
            .service(alias)
            .ok_or_else(|| format!("no {alias} in this cluster"))?;
        if connected {
            docker(&["network", "connect", "--alias", alias, &self.network, id]).map(drop)
        } else {
            docker(&["network", "disconnect", &self.network, id]).map(drop)
        }
    }

    /// `docker pause` / `docker unpause` of `id`.
    ///
    /// ```no_run
    /// # let cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.pause("abc", true).unwrap();
    /// ```
    pub fn pause(&self, id: &str, paused: bool) -> Result<(), String> {
        docker(&[if paused { "pause" } else { "unpause" }, id]).map(drop)
    }

    /// `docker stop` of the database container.
    ///
    /// ```no_run
    /// # let cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.stop_db().unwrap();
    /// ```
    pub fn stop_db(&self) -> Result<(), String> {
        docker(&["stop", "--time", "10", &self.db]).map(drop)
    }

    /// `docker start` of the database container, then waits until it answers.
    ///
    /// ```no_run
    /// # let cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// cluster.start_db().unwrap();
    /// ```
    pub fn start_db(&self) -> Result<(), String> {
        docker(&["start", &self.db])?;
        self.wait_for_db()
    }

    /// Stops every instance at once (`docker kill`) and returns each one's lines by ID.
    ///
    /// ```no_run
    /// # let cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("x")).unwrap();
    /// let lines_by_instance = cluster.finish().unwrap();
    /// ```
    pub fn finish(&self) -> Result<HashMap<String, Vec<(i64, Line)>>, String> {
        let mut args = vec!["kill"];
        args.extend(self.nodes.iter().map(String::as_str));
        let _ = docker(&args);
        self.nodes
            .iter()
            .map(|id| Ok((id.clone(), self.lines(id)?)))
            .collect()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let mut args = vec!["rm", "--force", "--volumes"];
        args.extend(Some(self.db.as_str()).filter(|db| !db.is_empty()));
        args.extend(self.redis.iter().map(String::as_str));
        args.extend(self.retired.iter().map(String::as_str));
        args.extend(self.next_db.iter().map(String::as_str));
        args.extend(self.replica.iter().map(String::as_str));
        args.extend(self.standby.iter().map(String::as_str));
        args.extend(self.mariadb.iter().map(String::as_str));
        args.extend(self.mariadb_replica.iter().map(String::as_str));
        args.extend(self.etcd.iter().map(String::as_str));
        args.extend(self.nodes.iter().map(String::as_str));
        let _ = docker(&args);
        let _ = docker(&["network", "rm", &self.network]);
        let _ = std::io::stderr().flush();
    }
}
