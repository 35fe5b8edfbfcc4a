//! What the kernel must offer before anything is loaded, each missing piece named.

use crate::error::{CcError, Result, io};
use std::path::Path;

const BTF: &str = "/sys/kernel/btf/vmlinux";
const MPTCP: &str = "/proc/sys/net/mptcp";
const AVAILABLE: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";
const DEFAULT: &str = "/proc/sys/net/ipv4/tcp_congestion_control";

pub fn require_root(command: &'static str) -> Result<()> {
    if nix::unistd::geteuid().is_root() {
        Ok(())
    } else {
        Err(CcError::NotRoot(command))
    }
}

/// BTF, MPTCP and struct_ops for tcp_congestion_ops.
pub fn check_kernel() -> Result<()> {
    let btf = match std::fs::read(BTF) {
        Ok(b) => b,
        Err(_) => return Err(CcError::NoBtf),
    };
    if !Path::new(MPTCP).exists() {
        return Err(CcError::NoMptcp);
    }
    // The kernel names the struct_ops wrapper of each registrable type in its BTF.
    let needle = b"bpf_struct_ops_tcp_congestion_ops";
    if !btf.windows(needle.len()).any(|w| w == needle) {
        return Err(CcError::NoStructOps);
    }
    Ok(())
}

/// Mounts bpffs on `/sys/fs/bpf` if nothing is mounted there yet, and creates `dir`.
pub fn ensure_bpffs(dir: &Path) -> Result<()> {
    let mount_point = Path::new("/sys/fs/bpf");
    if !is_bpffs(mount_point) {
        std::fs::create_dir_all(mount_point).map_err(io(mount_point))?;
        nix::mount::mount(
            Some("bpf"),
            mount_point,
            Some("bpf"),
            nix::mount::MsFlags::empty(),
            None::<&str>,
        )
        .map_err(|e| CcError::Io {
            path: mount_point.into(),
            source: std::io::Error::other(format!("mounting bpffs: {e}")),
        })?;
    }
    std::fs::create_dir_all(dir).map_err(io(dir))
}

fn is_bpffs(path: &Path) -> bool {
    nix::sys::statfs::statfs(path)
        .map(|s| s.filesystem_type() == nix::sys::statfs::BPF_FS_MAGIC)
        .unwrap_or(false)
}

/// The congestion controls the kernel offers now (built-in, modules, eBPF).
pub fn available() -> Vec<String> {
    std::fs::read_to_string(AVAILABLE)
        .map(|s| s.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// The system-wide default (net.ipv4.tcp_congestion_control) of this network namespace.
pub fn default_cc() -> Option<String> {
    std::fs::read_to_string(DEFAULT)
        .ok()
        .map(|s| s.trim().to_string())
}

/// Ids of the kernel's live struct_ops maps named after one of our algorithms (the C
/// variable name, whatever name it was registered under). After every `remove` they go
/// once the kernel has dropped its last reference; one that stays is a leak.
pub fn live_struct_ops() -> Vec<u32> {
    let ours: Vec<&str> = crate::Algorithm::ALL.iter().map(|a| a.name()).collect();
    libbpf_rs::query::MapInfoIter::default()
        .filter(|m| m.ty == libbpf_rs::MapType::StructOps)
        .filter(|m| ours.iter().any(|n| m.name.to_str() == Some(n)))
        .map(|m| m.id)
        .collect()
}

/// Which of the struct_ops maps `ids` (registered by this process) the kernel still holds,
/// waiting up to `patience` for them to go. Another run's registrations of the same
/// algorithms, live at the same time, are not looked at.
pub fn struct_ops_still_held(ids: &[u32], patience: std::time::Duration) -> Vec<u32> {
    wait_for_release(patience, || {
        libbpf_rs::query::MapInfoIter::default()
            .filter(|m| m.ty == libbpf_rs::MapType::StructOps && ids.contains(&m.id))
            .map(|m| m.id)
            .collect()
    })
}

/// Our struct_ops maps the kernel still holds beyond `baseline` (those live before),
/// waiting up to `patience` for them to go.
pub fn struct_ops_held_beyond(baseline: &[u32], patience: std::time::Duration) -> Vec<u32> {
    wait_for_release(patience, || {
        live_struct_ops()
            .into_iter()
            .filter(|id| !baseline.contains(id))
            .collect()
    })
}

/// Polls `held` until it is empty or `patience` has passed: a socket that ends takes its
/// reference with it only once the kernel has freed it, and the map follows after an RCU
/// grace period.
pub(crate) fn wait_for_release(
    patience: std::time::Duration,
    held: impl Fn() -> Vec<u32>,
) -> Vec<u32> {
    let start = std::time::Instant::now();
    loop {
        let held = held();
        if held.is_empty() || start.elapsed() >= patience {
            return held;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
