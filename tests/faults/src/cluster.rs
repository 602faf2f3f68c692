//! A throwaway set of containers for one fault test: a Docker network, PostgreSQL
//! (`idgen-test/postgres:15`) and instances of `idgen-fault-node` on `idgen-test/base:bookworm`,
//! driven with the `docker` command. Everything is labelled with this process's ID and removed
//! when the [`Cluster`] is dropped, or, if the process is killed, by a watchdog shell that waits
//! for the end of a pipe only this process holds.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::Line;

/// The image the instances run on (made by `scripts/test-images`).
pub const BASE_IMAGE: &str = "idgen-test/base:bookworm";
/// The PostgreSQL image (made by `scripts/test-images`).
pub const POSTGRES_IMAGE: &str = "idgen-test/postgres:15";
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
    for image in [BASE_IMAGE, POSTGRES_IMAGE] {
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

/// A network with PostgreSQL (alias `db`) and instances on it.
pub struct Cluster {
    network: String,
    db: String,
    image: String,
    nodes: Vec<String>,
}

impl Cluster {
    /// A new network named after `scenario`, with PostgreSQL started and ready.
    ///
    /// ```no_run
    /// let cluster = idgen_faults::cluster::Cluster::start("demo", std::path::Path::new("idgen-fault-node")).unwrap();
    /// ```
    pub fn start(scenario: &str, node_binary: &Path) -> Result<Cluster, String> {
        watchdog();
        let image = node_image(node_binary)?;
        let pid = std::process::id().to_string();
        let label = format!("{LABEL}={pid}");
        let network = format!("idgen-faults-{scenario}-{pid}");
        docker(&["network", "create", "--label", &label, &network])?;
        let mut cluster = Cluster {
            network,
            db: String::new(),
            image,
            nodes: Vec::new(),
        };
        cluster.db = docker(&[
            "run",
            "--detach",
            "--label",
            &label,
            "--network",
            &cluster.network,
            "--network-alias",
            "db",
            "--env",
            "POSTGRES_PASSWORD=postgres",
            "--env",
            "POSTGRES_INITDB_ARGS=--no-sync",
            POSTGRES_IMAGE,
            "-c",
            "fsync=off",
        ])?;
        cluster.wait_for_db()?;
        Ok(cluster)
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
        let container_name = format!("{}-{name}", self.network);
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
            "IDGEN_FAULT_DB_URL=postgres://postgres:postgres@db:5432/postgres",
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
        let mut args = vec!["rm", "--force", "--volumes", self.db.as_str()];
        args.extend(self.nodes.iter().map(String::as_str));
        let _ = docker(&args);
        let _ = docker(&["network", "rm", &self.network]);
        let _ = std::io::stderr().flush();
    }
}
