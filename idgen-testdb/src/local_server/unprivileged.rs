//! Running a server as an unprivileged user when the tests run as root.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use crate::error::Error;

/// How to run a server binary: directly, or as another user.
pub(super) struct Runner {
    /// Program and leading arguments that put the server under the unprivileged user.
    prefix: Vec<String>,
    /// The user's IDs, for the directories the server writes.
    owner: Option<(u32, u32)>,
}

impl Runner {
    /// Direct when not root; otherwise as `$IDGEN_TESTKIT_USER` or `nobody`.
    pub(super) fn for_this_process(what: &str) -> Result<Self, Error> {
        let euid = std::fs::metadata("/proc/self")
            .map(|m| m.uid())
            .unwrap_or(u32::MAX);
        if euid != 0 {
            return Ok(Runner {
                prefix: Vec::new(),
                owner: None,
            });
        }
        let user = std::env::var("IDGEN_TESTKIT_USER").unwrap_or_else(|_| "nobody".to_owned());
        let (uid, gid) = lookup_user(&user).ok_or_else(|| {
            Error::start(what, format!("the tests run as root and there is no user {user:?} in /etc/passwd to run the server as (set IDGEN_TESTKIT_USER)"))
        })?;
        let prefix = if super::binaries::find(&["setpriv"], &[]).is_some() {
            vec![
                "setpriv".into(),
                format!("--reuid={uid}"),
                format!("--regid={gid}"),
                "--clear-groups".into(),
                "--".into(),
            ]
        } else if super::binaries::find(&["runuser"], &[]).is_some() {
            vec!["runuser".into(), "-u".into(), user, "--".into()]
        } else {
            return Err(Error::start(
                what,
                "the tests run as root and neither setpriv nor runuser is installed to run the server as an unprivileged user",
            ));
        };
        Ok(Runner {
            prefix,
            owner: Some((uid, gid)),
        })
    }

    /// A command that runs `program` as the chosen user.
    pub(super) fn command(&self, program: &Path) -> Command {
        match self.prefix.split_first() {
            None => Command::new(program),
            Some((first, rest)) => {
                let mut cmd = Command::new(first);
                cmd.args(rest).arg(program);
                cmd
            }
        }
    }

    /// The argument list (prefix and program) for a shell's `"$@"`.
    pub(super) fn argv(&self, program: &Path) -> Vec<String> {
        let mut argv = self.prefix.clone();
        argv.push(program.display().to_string());
        argv
    }

    /// Hands `dir` to the chosen user.
    pub(super) fn give(&self, dir: &Path, what: &str) -> Result<(), Error> {
        match self.owner {
            None => Ok(()),
            Some((uid, gid)) => {
                std::os::unix::fs::chown(dir, Some(uid), Some(gid)).map_err(|err| {
                    Error::start(
                        what,
                        format!("chown {} to {uid}:{gid}: {err}", dir.display()),
                    )
                })
            }
        }
    }
}

fn lookup_user(name: &str) -> Option<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        if fields.next()? != name {
            return None;
        }
        let _password = fields.next()?;
        Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?))
    })
}
