//! OS processes for the cases: the test binary runs itself again, as one of its tests.
//!
//! Each suite macro writes a `#[test]` entry (`lease_child`, `hilo_child`, `startup_child`)
//! that does nothing in a normal run. A case starts the binary with `--exact <that test>` and
//! `IDGEN_CONFORMANCE_ROLE` (plus the role's variables) set; the entry then plays the role,
//! talks on stdout in tagged lines (`NODE 3`) and listens on stdin.

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{ChildStdin, ChildStdout, Command};

/// The variable that names a child's role.
const ROLE: &str = "IDGEN_CONFORMANCE_ROLE";

/// How long a case waits for one line of a child.
const LINE_WAIT: Duration = Duration::from_secs(120);

/// The child entry of one suite instance: the test to run in a child process.
///
/// ```
/// use idgen_testkit::conformance::Children;
/// let children = Children::entry("conformance::sqlx_postgres", "lease_child");
/// assert_eq!(children.test(), "sqlx_postgres::lease_child");
/// ```
#[derive(Clone, Debug)]
pub struct Children {
    test: String,
}

impl Children {
    /// The entry `name` in the module `module_path` (`module_path!()`, whose first segment, the
    /// crate, libtest leaves out of test names).
    pub fn entry(module_path: &str, name: &str) -> Children {
        let module = module_path.split_once("::").map_or("", |(_, rest)| rest);
        let test = if module.is_empty() {
            name.to_owned()
        } else {
            format!("{module}::{name}")
        };
        Children { test }
    }

    /// The libtest name of the entry.
    pub fn test(&self) -> &str {
        &self.test
    }

    /// Starts a child in `role`, with the role's variables (`IDGEN_CONFORMANCE_<NAME>`).
    pub(crate) fn spawn(&self, role: &str, vars: &[(&str, String)]) -> Child {
        let exe = std::env::current_exe().expect("the test binary's path");
        let mut cmd = Command::new(exe);
        cmd.args(["--exact", &self.test, "--nocapture", "--test-threads=1"])
            .env(ROLE, role)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        for (name, value) in vars {
            cmd.env(format!("IDGEN_CONFORMANCE_{name}"), value);
        }
        let mut process = cmd.spawn().expect("start a child process");
        let lines = BufReader::new(process.stdout.take().expect("its stdout")).lines();
        let stdin = process.stdin.take();
        Child {
            process,
            lines,
            stdin,
        }
    }
}

/// A running child process.
pub(crate) struct Child {
    process: tokio::process::Child,
    lines: Lines<BufReader<ChildStdout>>,
    stdin: Option<ChildStdin>,
}

impl Child {
    /// The rest of the child's next line tagged `tag` (`"NODE"` for `NODE 3`).
    pub(crate) async fn line(&mut self, tag: &str) -> String {
        let tagged = format!("{tag} ");
        loop {
            let line = tokio::time::timeout(LINE_WAIT, self.lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("no {tag} line from the child within {LINE_WAIT:?}"))
                .expect("read the child's stdout")
                .unwrap_or_else(|| panic!("the child ended before printing {tag}"));
            // libtest may print "test x ... " in front of the child's first line.
            if let Some(at) = line.find(&tagged) {
                return line[at + tagged.len()..].trim().to_owned();
            }
            assert!(!line.contains("FAILED"), "the child failed: {line}");
        }
    }

    /// Sends the child one line on its stdin.
    pub(crate) async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("the child's stdin is open");
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("write to the child");
        stdin.flush().await.expect("write to the child");
    }

    /// Closes the child's stdin (it lets go of what it holds and ends) and checks it succeeded.
    pub(crate) async fn finish(mut self) {
        drop(self.stdin.take());
        // Read the rest, so the child's last lines do not meet a closed pipe.
        while let Ok(Ok(Some(_))) = tokio::time::timeout(LINE_WAIT, self.lines.next_line()).await {}
        let status = self.wait().await;
        assert!(status.success(), "the child exited with {status}");
    }

    /// Waits for the child to end.
    pub(crate) async fn wait(&mut self) -> ExitStatus {
        tokio::time::timeout(LINE_WAIT, self.process.wait())
            .await
            .expect("the child ends")
            .expect("wait for the child")
    }

    /// Kills the child at once (SIGKILL): it cannot clean up.
    pub(crate) async fn kill(&mut self) {
        self.process.kill().await.expect("kill the child");
    }
}

/// The role of this process, when it is a child of a case.
pub(crate) fn role() -> Option<String> {
    std::env::var(ROLE).ok()
}

/// The child's variable `name` (`IDGEN_CONFORMANCE_<NAME>`).
pub(crate) fn var(name: &str) -> String {
    std::env::var(format!("IDGEN_CONFORMANCE_{name}"))
        .unwrap_or_else(|_| panic!("IDGEN_CONFORMANCE_{name} is set for a child"))
}

/// Prints a tagged line for the parent.
pub(crate) fn say(tag: &str, value: impl std::fmt::Display) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{tag} {value}").expect("write to the parent");
    out.flush().expect("write to the parent");
}

/// The lines the parent sends, read on a blocking thread; `None` once stdin closes.
pub(crate) struct Orders {
    lines: Lines<BufReader<tokio::io::Stdin>>,
}

impl Orders {
    pub(crate) fn new() -> Orders {
        Orders {
            lines: BufReader::new(tokio::io::stdin()).lines(),
        }
    }

    /// The next line from the parent, `None` when it closed the child's stdin.
    pub(crate) async fn next(&mut self) -> Option<String> {
        self.lines.next_line().await.ok().flatten()
    }
}

/// A multi-thread runtime like `#[tokio::main]`'s (two workers).
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}
