//! Names that say who made them, and removal of what dead processes left behind.

use std::path::Path;
use std::process::Command;

/// The prefix of everything mptcp-lab creates on the host for one process.
pub const PREFIX: &str = "mlab-";

/// `mlab-<pid>-<tag>`.
pub fn owned_name(tag: &str) -> String {
    format!("{PREFIX}{}-{tag}", std::process::id())
}

/// The pid in an `mlab-<pid>-...` name.
pub fn owner_of(name: &str) -> Option<u32> {
    name.strip_prefix(PREFIX)?.split('-').next()?.parse().ok()
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Whether `name` was made by a process that has exited.
pub fn is_leftover(name: &str) -> bool {
    owner_of(name).is_some_and(|pid| pid != std::process::id() && !alive(pid))
}

/// Deletes namespaces, bpffs directories (private registries: removing their pins
/// unregisters their congestion controls; a MATCP install cut short: removing its pins
/// detaches its programs) and cgroups of exited mptcp-lab processes. Returns what it
/// removed.
pub fn remove_leftovers() -> Vec<String> {
    let mut removed = Vec::new();
    if let Ok(out) = Command::new("ip").args(["netns", "list"]).output() {
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let name = line.split_whitespace().next().unwrap_or("");
            if is_leftover(name)
                && Command::new("ip")
                    .args(["netns", "del", name])
                    .status()
                    .is_ok_and(|s| s.success())
            {
                removed.push(format!("netns {name}"));
            }
        }
    }
    if let Ok(dir) = std::fs::read_dir("/sys/fs/bpf") {
        for entry in dir.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if is_leftover(&name) && std::fs::remove_dir_all(entry.path()).is_ok() {
                removed.push(format!("bpffs {name}"));
            }
        }
    }
    if let Ok(root) = mptcp_bpf::matcp::install::cgroup2_root()
        && let Ok(dir) = std::fs::read_dir(root)
    {
        for entry in dir.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if is_leftover(&name) {
                crate::cgroup::remove(&entry.path());
                if !entry.path().exists() {
                    removed.push(format!("cgroup {name}"));
                }
            }
        }
    }
    removed
}
