//! A real browser for the web tests: Debian's `chromium` driven through WebDriver
//! (`chromedriver`, package `chromium-driver`), started on a free port by the test, and the
//! `idgen web` server as a child process. Nothing is skipped: without chromedriver or chromium
//! the test fails naming the package.

#![allow(dead_code, unreachable_pub)]

pub mod audit;
pub mod http;

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

/// A child process killed (and reaped) when dropped.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// chromedriver in a process group of its own, which is killed whole when dropped: the
/// Chromium it started goes too, even when a test panicked before closing its session.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.0.id())])
            .status();
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An executable on `PATH` (or at `fallback`), or a panic naming the Debian package.
fn executable(name: &str, fallbacks: &[&str], package: &str) -> PathBuf {
    let on_path = std::env::var_os("PATH").into_iter().flat_map(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .collect::<Vec<_>>()
    });
    on_path
        .chain(fallbacks.iter().map(PathBuf::from))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "{name} not found on PATH: the browser tests need Debian's {package} package \
                 (`apt-get install chromium chromium-driver`; scripts/test installs it)"
            )
        })
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on 127.0.0.1")
}

/// A headless Chromium session, with its chromedriver.
pub struct Browser {
    pub client: Client,
    _driver: Driver,
}

impl Browser {
    /// Starts chromedriver on a free port and opens a headless Chromium session.
    pub async fn start() -> Browser {
        Browser::start_with(&[]).await
    }

    /// [`Browser::start`], with more Chromium switches (`--host-resolver-rules=…`).
    pub async fn start_with(switches: &[&str]) -> Browser {
        let driver = executable(
            "chromedriver",
            &["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"],
            "chromium-driver",
        );
        let chromium = std::env::var_os("IDGEN_CHROMIUM")
            .map(PathBuf::from)
            .unwrap_or_else(|| executable("chromium", &["/usr/bin/chromium"], "chromium"));
        let port = free_port();
        let child = Command::new(&driver)
            .arg(format!("--port={port}"))
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", driver.display()));
        let driver_process = Driver(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "chromedriver did not listen on port {port} within 20 s"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let mut caps = serde_json::Map::new();
        let mut args = vec![
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--window-size=1000,900",
            "--lang=en-US",
        ];
        args.extend(switches);
        caps.insert(
            "goog:chromeOptions".into(),
            json!({ "binary": chromium, "args": args }),
        );
        // A chromedriver that accepts connections may still drop the first requests while it
        // starts (seen once in CI: "webdriver server did not respond", 2 of 3 sessions started
        // at the same moment were fine): ask again until the same deadline.
        let client = loop {
            let attempt =
                ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
                    .capabilities(caps.clone())
                    .connect(&format!("http://127.0.0.1:{port}"))
                    .await;
            match attempt {
                Ok(client) => break client,
                Err(e) if Instant::now() >= deadline => {
                    panic!("no Chromium session from chromedriver within 20 s: {e}")
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(250)).await,
            }
        };
        Browser {
            client,
            _driver: driver_process,
        }
    }

    /// Opens `url` and waits until the page has loaded its layout.
    pub async fn open(&self, url: &str) {
        self.client.goto(url).await.expect("page opens");
        self.wait_for_js("return document.body.dataset.ready === 'true'")
            .await;
    }

    /// Waits (up to 15 s) until `script` returns `true`.
    pub async fn wait_for_js(&self, script: &str) {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let v = self
                .client
                .execute(script, vec![])
                .await
                .expect("script runs");
            if v == json!(true) {
                return;
            }
            assert!(Instant::now() < deadline, "timed out waiting for: {script}");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// The element with this `id`.
    pub async fn by_id(&self, id: &str) -> fantoccini::elements::Element {
        self.client
            .find(Locator::Id(id))
            .await
            .unwrap_or_else(|e| panic!("no element #{id}: {e}"))
    }

    /// Clears the input `id` and types `text` into it.
    pub async fn type_into(&self, id: &str, text: &str) {
        let input = self.by_id(id).await;
        input.clear().await.expect("clear");
        if !text.is_empty() {
            input.send_keys(text).await.expect("type");
        }
    }

    /// The text content of `id` (also of hidden elements).
    pub async fn text(&self, id: &str) -> String {
        let v = self
            .client
            .execute(
                "return document.getElementById(arguments[0]).textContent",
                vec![json!(id)],
            )
            .await
            .expect("script runs");
        v.as_str().unwrap_or_default().to_owned()
    }

    /// Clicks `button` and waits until the output `out` is no longer pending.
    pub async fn submit(&self, button: &str, out: &str) {
        self.client
            .execute(
                "document.getElementById(arguments[0]).dataset.status = 'pending'",
                vec![json!(out)],
            )
            .await
            .expect("script runs");
        self.by_id(button).await.click().await.expect("click");
        self.wait_for_js(&format!(
            "return document.getElementById('{out}').dataset.status !== 'pending'"
        ))
        .await;
    }

    /// Saves a screenshot of the window as `name`.png in [`screenshot_dir`].
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.client.screenshot().await.expect("screenshot");
        let path = screenshot_dir().join(format!("{name}.png"));
        std::fs::write(&path, png).expect("screenshot written");
        eprintln!("screenshot: {}", path.display());
        path
    }
}

/// Where screenshots go: `IDGEN_SCREENSHOT_DIR`, else `web-screenshots` in the target dir.
pub fn screenshot_dir() -> PathBuf {
    let dir = std::env::var_os("IDGEN_SCREENSHOT_DIR").map_or_else(
        || Path::new(env!("CARGO_TARGET_TMPDIR")).join("web-screenshots"),
        PathBuf::from,
    );
    std::fs::create_dir_all(&dir).expect("screenshot directory");
    dir
}

/// `idgen web --port 0 ARGS…`, and its address.
pub struct Server {
    /// The URL it printed, with its token (`http://127.0.0.1:PORT/?token=…`).
    pub url: String,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// The token of the printed URL (empty if it printed none).
    pub token: String,
    _process: Killed,
}

impl Server {
    /// Starts the server and reads the address it prints.
    pub fn start(args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_idgen"))
            .args(["web", "--port", "0"])
            .args(args)
            .env("TZ", "UTC")
            .stdout(Stdio::piped())
            .spawn()
            .expect("idgen web starts");
        let stdout = child.stdout.take().expect("stdout");
        let process = Killed(child);
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("idgen web prints its address");
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_owned();
        let rest = url.trim_start_matches("http://");
        let (addr, query) = rest.split_once('/').unwrap_or((rest, ""));
        let token = query.strip_prefix("?token=").unwrap_or_default().to_owned();
        Server {
            addr: addr.to_owned(),
            token,
            url,
            _process: process,
        }
    }
}
