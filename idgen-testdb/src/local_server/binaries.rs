//! Finding server binaries: `PATH`, then the distributions' usual places.

use std::path::{Path, PathBuf};

/// The first of `names` found on `PATH` or in `extra_dirs`.
pub(super) fn find(names: &[&str], extra_dirs: &[PathBuf]) -> Option<PathBuf> {
    let path_dirs = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    names.iter().find_map(|name| {
        path_dirs
            .iter()
            .chain(extra_dirs)
            .map(|dir| dir.join(name))
            .find(|candidate| is_executable(candidate))
    })
}

/// `name` from Debian's `package`: on `PATH`, else where Debian (or a local install) puts it;
/// else an error for `what` that says how to install it.
#[cfg(any(feature = "etcd", feature = "redis"))]
pub(super) fn find_debian(
    name: &str,
    package: &str,
    what: &str,
) -> Result<PathBuf, crate::error::Error> {
    let dirs = ["/usr/bin", "/usr/local/bin", "/usr/sbin"].map(PathBuf::from);
    find(&[name], &dirs).ok_or_else(|| {
        crate::error::Error::start(
            what,
            format!(
                "`{name}` is neither on PATH nor in /usr/bin (Debian: apt-get install {package})"
            ),
        )
    })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `/usr/lib/postgresql/<version>/bin`, newest version first (Debian and Ubuntu).
pub(super) fn debian_postgres_bin_dirs() -> Vec<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .collect();
    versions.sort_by_key(|(version, _)| std::cmp::Reverse(*version));
    versions.into_iter().map(|(_, dir)| dir).collect()
}
