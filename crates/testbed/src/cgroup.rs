//! cgroup v2 directories for the MATCP tests and benchmark: the programs attach to a
//! cgroup, and only the processes moved into it have their connections placed. Removed on
//! drop (after killing what is left in it), and by `cleanup::remove_leftovers` if the
//! process died first.

use crate::cleanup::owned_name;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct Cgroup {
    pub path: PathBuf,
}

impl Cgroup {
    /// `<cgroup v2 root>/mlab-<pid>-<tag>`.
    pub fn new(tag: &str) -> Result<Cgroup> {
        let root = mptcp_bpf::matcp::install::cgroup2_root()?;
        let path = root.join(owned_name(tag));
        remove(&path);
        std::fs::create_dir(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok(Cgroup { path })
    }

    /// The file that moves a process in: a child writes "0" to it before it execs.
    pub fn procs(&self) -> PathBuf {
        self.path.join("cgroup.procs")
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        remove(&self.path);
    }
}

/// Kills what runs in the cgroup (cgroup.kill, Linux 5.14) and removes it, waiting for the
/// killed to go: a cgroup with tasks cannot be removed.
pub fn remove(path: &Path) {
    if !path.exists() {
        return;
    }
    let _ = std::fs::write(path.join("cgroup.kill"), "1");
    for _ in 0..100 {
        if std::fs::remove_dir(path).is_ok() || !path.exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
