//! A server process that stops, and deletes its directory, when this process ends.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;

use crate::error::Error;

/// The shell that runs the server (a background job's stdin is /dev/null, hence fd 3). It starts `"$@"` in the background and a subshell that waits
/// for the end of its standard input: a pipe whose writing end only the test process holds, so
/// the OS closes it when that process ends, even on a crash or SIGKILL. Then the subshell marks
/// the stop as wanted and signals the server; the shell waits for the server and deletes the
/// directory. A server that ends on its own leaves the directory (and its log) to the caller.
const SCRIPT: &str = r#"dir="$1"; signal="$2"; shift 2
exec 3<&0
"$@" >"$dir/server.log" 2>&1 </dev/null 3<&- &
pid=$!
( cat <&3 >/dev/null; touch "$dir/stop-requested"; kill -"$signal" "$pid" ) 2>/dev/null &
exec 3<&-
wait "$pid"
if [ -e "$dir/stop-requested" ]; then rm -rf "$dir"; fi"#;

/// The watchdog shell; dropping it (closing the pipe) stops the server.
pub(super) struct Watchdog {
    child: Mutex<Child>,
}

impl Watchdog {
    /// Starts `argv` under a watchdog that removes `dir` afterwards; `stop_signal` is the
    /// signal name for a fast, clean shutdown (`INT` for PostgreSQL, `TERM` for MariaDB).
    pub(super) fn spawn(
        dir: &Path,
        stop_signal: &str,
        argv: &[String],
        what: &str,
    ) -> Result<Self, Error> {
        let child = Command::new("sh")
            .arg("-c")
            .arg(SCRIPT)
            .arg("idgen-testkit-watchdog")
            .arg(dir)
            .arg(stop_signal)
            .args(argv)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|err| Error::start(what, format!("cannot run sh: {err}")))?;
        Ok(Watchdog {
            child: Mutex::new(child),
        })
    }

    /// Whether the server (and so the watchdog) is still running.
    pub(super) fn server_exited(&self) -> bool {
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        child
            .try_wait()
            .map(|status| status.is_some())
            .unwrap_or(true)
    }

    /// Stops the server now (if it still runs) and deletes `dir`.
    pub(super) fn stop(self, dir: &Path) {
        let mut child = self.child.into_inner().unwrap_or_else(|e| e.into_inner());
        drop(child.stdin.take());
        let _ = child.wait();
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// The last lines of the server's log, for an error message.
pub(super) fn log_tail(dir: &Path) -> String {
    let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(8)..].join(" | ")
}
