//! cgroup v2 directories for MATCP: the programs attach to a cgroup, and only the
//! processes (the tests, the benchmark) or threads (the kernel backend's senders) moved
//! into it have their connections placed. Removed on drop (after killing what is left in
//! it), and by `cleanup::remove_leftovers` if the process died first.

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

/// One threaded cgroup per source host, under a cgroup of the run that this process joins
/// for the run (Documentation/admin-guide/cgroup-v2.rst, "Threads"): the kernel backend's
/// agents are threads of one process, and a socket belongs to the cgroup of the thread that
/// made it (`cgroup_sk_alloc`, kernel/cgroup/cgroup.c), so each host's sender threads join
/// that host's cgroup and its MATCP programs see only their connections. On drop the
/// process goes back to the cgroup it came from and the directories are removed.
#[derive(Debug)]
pub struct ThreadedCgroups {
    run: PathBuf,
    /// The process's cgroup before the run.
    home: PathBuf,
    pub hosts: Vec<PathBuf>,
}

impl ThreadedCgroups {
    /// `<root>/mlab-<pid>-<tag>/<host>` for each of `hosts`, threaded; this process moves
    /// into `mlab-<pid>-<tag>`.
    pub fn new(tag: &str, hosts: &[String]) -> Result<ThreadedCgroups> {
        let root = mptcp_bpf::matcp::install::cgroup2_root()?;
        let home = root.join(own_cgroup()?.trim_start_matches('/'));
        let run = root.join(owned_name(tag));
        remove(&run);
        std::fs::create_dir(&run).with_context(|| format!("creating {}", run.display()))?;
        let mut made = ThreadedCgroups {
            run,
            home,
            hosts: Vec::new(),
        };
        for h in hosts {
            let p = made.run.join(h);
            std::fs::create_dir(&p).with_context(|| format!("creating {}", p.display()))?;
            made.hosts.push(p.clone());
            std::fs::write(p.join("cgroup.type"), "threaded")
                .with_context(|| format!("making {} threaded", p.display()))?;
        }
        std::fs::write(
            made.run.join("cgroup.procs"),
            std::process::id().to_string(),
        )
        .with_context(|| format!("moving this process into {}", made.run.display()))?;
        Ok(made)
    }
}

/// Moves the calling thread into the threaded cgroup `dir` (one of `ThreadedCgroups::hosts`).
pub fn join_thread(dir: &Path) -> Result<()> {
    // "0": the writing thread itself (cgroup.threads).
    std::fs::write(dir.join("cgroup.threads"), "0")
        .with_context(|| format!("moving a thread into {}", dir.display()))
}

/// This process's cgroup v2 path ("0::<path>" in /proc/self/cgroup).
fn own_cgroup() -> Result<String> {
    let text = std::fs::read_to_string("/proc/self/cgroup").context("/proc/self/cgroup")?;
    text.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(String::from)
        .context("this process is in no cgroup v2")
}

impl Drop for ThreadedCgroups {
    fn drop(&mut self) {
        match std::fs::write(
            self.home.join("cgroup.procs"),
            std::process::id().to_string(),
        ) {
            Ok(()) => remove(&self.run),
            // Not removed: that would kill this process. The next start removes it.
            Err(e) => eprintln!("warning: moving back into {}: {e}", self.home.display()),
        }
    }
}

/// Kills what runs in the cgroup (cgroup.kill, Linux 5.14) and removes it with the cgroups
/// under it, waiting for the killed to go: a cgroup with tasks or children cannot be
/// removed.
pub fn remove(path: &Path) {
    if !path.exists() {
        return;
    }
    if let Ok(children) = std::fs::read_dir(path) {
        for c in children.flatten().filter(|c| c.path().is_dir()) {
            remove(&c.path());
        }
    }
    let _ = std::fs::write(path.join("cgroup.kill"), "1");
    for _ in 0..100 {
        if std::fs::remove_dir(path).is_ok() || !path.exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
