//! Temporary directories of test processes that were killed before they could clean up.
//!
//! Running servers are stopped and deleted by their watchdog, but a process killed while a data
//! directory is being created (or holding an SQLite file) leaves the directory behind. Every
//! directory's name carries its process ID, so a later run deletes those whose process is gone.

use std::path::PathBuf;
use std::sync::Once;

const PREFIX: &str = "idgen-testkit-";

/// The prefix for a new temporary directory of `what` (`pg`, `mariadb`, `sqlite`).
pub(crate) fn dir_prefix(what: &str) -> String {
    format!("{PREFIX}{what}-{}-", std::process::id())
}

/// Deletes, once per process, the directories of processes that no longer run.
pub(crate) fn sweep_once() {
    static SWEEP: Once = Once::new();
    SWEEP.call_once(|| {
        if !std::path::Path::new("/proc/self").exists() {
            return; // no cheap way to tell whether a process runs
        }
        let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
            return;
        };
        for entry in entries.flatten() {
            if let Some(pid) = owner_pid(&entry.file_name().to_string_lossy())
                && !PathBuf::from(format!("/proc/{pid}")).exists()
            {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    });
}

/// The process ID in `idgen-testkit-<what>-<pid>-<random>`.
fn owner_pid(name: &str) -> Option<u32> {
    let mut parts = name.strip_prefix(PREFIX)?.split('-');
    let _what = parts.next()?;
    let pid = parts.next()?.parse().ok()?;
    parts.next()?;
    Some(pid)
}

#[cfg(test)]
mod tests {
    use super::{dir_prefix, owner_pid};

    #[test]
    fn the_owner_is_read_back_from_the_name() {
        let name = format!("{}Ab12Cd", dir_prefix("pg"));
        assert_eq!(owner_pid(&name), Some(std::process::id()));
        assert_eq!(owner_pid("idgen-testkit-sqlite-77-x"), Some(77));
        assert_eq!(owner_pid("idgen-testkit-sqlite-x"), None);
        assert_eq!(owner_pid("other-pg-77-x"), None);
    }
}
