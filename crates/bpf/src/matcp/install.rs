//! Installing MATCP so that it outlives the command: the `matcp_state` map and the three
//! programs' cgroup links (`connect4`, `connect6`, `sockops`) are pinned under one bpffs
//! directory (default `/sys/fs/bpf/mptcp-lab/matcp/`). Unpinning detaches them (a cgroup
//! bpf_link lives as long as a pin or a descriptor holds it).
//!
//! Install pins into a staging directory named after the process (`mlab-<pid>-...` at the
//! top of bpffs) and renames it into place as its last step: a process killed half-way
//! leaves either nothing (its descriptors close, its unpinned links detach) or a staging
//! directory, which the next start removes (testbed's `cleanup::remove_leftovers`), never a
//! half installation where `status` and `remove` look.

use super::MAX_PATHS;
use super::error::{MatcpError, Result, bpf, io};
use super::layout::State;
use super::path::PathAddrs;
use super::selector::Selector;
use crate::registry::with_libbpf_log;
use libbpf_rs::{MapCore, MapFlags, MapHandle, ObjectBuilder};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// What to install.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub selector: Selector,
    /// Source addresses, one path per uplink; path x is the x-th. Every path has the same
    /// families: those are the connections placed.
    pub paths: Vec<PathAddrs>,
    /// R; `None`: never refresh.
    pub refresh: Option<u32>,
    /// The cgroup v2 directory whose processes' connections are placed.
    pub cgroup: PathBuf,
    /// A window limit for every placed connection (Linux's snd_cwnd_clamp), in segments.
    pub cwnd_clamp: Option<u32>,
}

impl Config {
    /// Checks what does not need the kernel: path count, families, repeats, R.
    pub fn validate(&self) -> Result<()> {
        if self.paths.is_empty() || self.paths.len() > MAX_PATHS {
            return Err(MatcpError::PathCount(self.paths.len()));
        }
        let first = self.paths[0];
        if let Some((i, p)) =
            (self.paths.iter().enumerate()).find(|(_, p)| p.families() != first.families())
        {
            return Err(MatcpError::Families {
                index: i + 1,
                path: p.to_string(),
                first: first.to_string(),
            });
        }
        let addrs: Vec<_> = self.paths.iter().flat_map(PathAddrs::addrs).collect();
        for (i, a) in addrs.iter().enumerate() {
            if addrs[..i].contains(a) {
                return Err(MatcpError::Repeated(*a));
            }
        }
        if self.refresh == Some(0) {
            return Err(MatcpError::ZeroRefresh);
        }
        Ok(())
    }
}

/// What `install` did: the ids of the programs it loaded (to check they are gone later).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Installation {
    pub program_ids: Vec<u32>,
}

/// Where MATCP's pins go.
#[derive(Clone, Debug)]
pub struct Matcp {
    /// The installed programs' directory.
    pub dir: PathBuf,
    /// Where `install` pins before renaming into `dir`; on the same bpffs, named so that
    /// the next start removes it if this process dies.
    pub staging: PathBuf,
}

const STATE: &str = "state";
const CONNECT4: &str = "connect4";
const CONNECT6: &str = "connect6";
const SOCKOPS: &str = "sockops";
const PINS: [&str; 4] = [CONNECT4, CONNECT6, SOCKOPS, STATE];
const STATE_MAP: &str = "matcp_state";
/// Our programs as the kernel names them, each with the pin of its cgroup link. Every one is
/// attached whatever the paths' families: a program whose family the paths lack returns at
/// once, and one set of pins keeps install, remove and the clean-up alike.
const PROGRAMS: [(&str, &str); 3] = [
    ("matcp_connect4", CONNECT4),
    ("matcp_connect6", CONNECT6),
    ("matcp_sockops", SOCKOPS),
];

impl Matcp {
    /// `<root>/matcp`, root being $MPTCP_LAB_BPF_ROOT or `/sys/fs/bpf/mptcp-lab` (as the
    /// congestion controls' registry); `staging` as the caller names it.
    pub fn from_env(staging: PathBuf) -> Matcp {
        Matcp {
            dir: crate::Registry::from_env().root.join("matcp"),
            staging,
        }
    }

    pub fn is_installed(&self) -> bool {
        self.dir.join(STATE).exists()
    }

    /// Loads the programs, writes the configuration, attaches them to `config.cgroup` and
    /// pins them.
    pub fn install(&self, config: &Config) -> Result<Installation> {
        require_root("install")?;
        config.validate()?;
        require_cgroup2(&config.cgroup)?;
        if self.is_installed() {
            return Err(MatcpError::AlreadyInstalled(self.dir.clone()));
        }
        let root = self.dir.parent().unwrap_or(Path::new("/sys/fs/bpf"));
        // Only the mount here: the root is made just before the commit, so that a process
        // killed earlier leaves no empty directory where `remove` would not look.
        crate::system::ensure_bpffs(Path::new("/sys/fs/bpf")).map_err(|e| MatcpError::Bpf {
            context: "bpffs".into(),
            reason: e.to_string(),
        })?;
        // A stale directory of ours without the state map: a removal that was cut short.
        self.unpin(&self.dir)?;
        let result = self.load_attach_pin(config);
        let _ = self.unpin(&self.staging);
        let _ = std::fs::remove_dir(root);
        result
    }

    fn load_attach_pin(&self, config: &Config) -> Result<Installation> {
        let open = ObjectBuilder::default()
            .open_memory(object()?)
            .map_err(bpf("opening the MATCP object"))?;
        let mut obj = with_libbpf_log(|| open.load()).map_err(|reason| MatcpError::Bpf {
            context: "the kernel refused MATCP's programs".into(),
            reason,
        })?;
        std::fs::create_dir_all(&self.staging).map_err(io(&self.staging))?;
        let mut state = State::new(
            config.selector,
            &config.paths,
            config.refresh,
            netns_cookie()?,
        );
        state.cwnd_clamp = config.cwnd_clamp.unwrap_or(0);
        for mut map in obj.maps_mut() {
            if map.name() == STATE_MAP {
                map.update(&0u32.to_ne_bytes(), state.as_bytes(), MapFlags::ANY)
                    .map_err(bpf("writing the configuration"))?;
                map.pin(self.staging.join(STATE))
                    .map_err(bpf("pinning the state map"))?;
            }
        }
        let cgroup = std::fs::File::open(&config.cgroup).map_err(io(&config.cgroup))?;
        let mut program_ids = Vec::new();
        for prog in obj.progs_mut() {
            let Some(pin) = prog.name().to_str().and_then(pin_of) else {
                continue;
            };
            let mut link = prog
                .attach_cgroup(cgroup.as_raw_fd())
                .map_err(bpf("attaching to the cgroup"))?;
            link.pin(self.staging.join(pin))
                .map_err(bpf("pinning a link"))?;
            program_ids.push(link.info().map_err(bpf("reading a link"))?.prog_id);
        }
        if !PINS.iter().all(|p| self.staging.join(p).exists()) {
            return Err(MatcpError::Bpf {
                context: "the MATCP object".into(),
                reason: format!("it lacks matcp_state or one of {:?}", PROGRAMS.map(|p| p.0)),
            });
        }
        if let Some(parent) = self.dir.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        // The commit: from here on the installation is whole where status and remove look.
        std::fs::rename(&self.staging, &self.dir).map_err(io(&self.dir))?;
        Ok(Installation { program_ids })
    }

    /// The state map's value now.
    pub fn read(&self) -> Result<State> {
        let path = self.dir.join(STATE);
        if !path.exists() {
            return Err(MatcpError::NotInstalled(self.dir.clone()));
        }
        let map = MapHandle::from_pinned_path(&path).map_err(bpf("opening the state map"))?;
        let bytes = map
            .lookup(&0u32.to_ne_bytes(), MapFlags::ANY)
            .map_err(bpf("reading the state map"))?
            .unwrap_or_default();
        State::from_bytes(&bytes).ok_or_else(|| MatcpError::Bpf {
            context: "the state map".into(),
            reason: format!(
                "{} bytes, expected {} (installed by another version of mptcp-lab?)",
                bytes.len(),
                std::mem::size_of::<State>()
            ),
        })
    }

    /// Detaches and unpins; `false` if nothing was installed.
    pub fn remove(&self) -> Result<bool> {
        require_root("remove")?;
        let installed = self.dir.exists();
        if installed {
            self.unpin(&self.dir)?;
        }
        if let Some(root) = self.dir.parent() {
            // The root goes too once empty, so that nothing of ours stays in bpffs.
            let _ = std::fs::remove_dir(root);
        }
        Ok(installed)
    }

    fn unpin(&self, dir: &Path) -> Result<()> {
        for pin in PINS {
            let p = dir.join(pin);
            match std::fs::remove_file(&p) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(MatcpError::Io { path: p, source: e });
                }
                _ => {}
            }
        }
        match std::fs::remove_dir(dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(MatcpError::Io {
                path: dir.into(),
                source: e,
            }),
            _ => Ok(()),
        }
    }
}

/// This process's network namespace as the programs see it (`bpf_get_netns_cookie`):
/// SO_NETNS_COOKIE of a socket made here (Linux 5.14).
fn netns_cookie() -> Result<u64> {
    use nix::libc;
    use std::os::fd::AsRawFd;
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").map_err(io("a socket"))?;
    let mut cookie = 0u64;
    let mut len = std::mem::size_of::<u64>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into `cookie`.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_NETNS_COOKIE,
            (&mut cookie as *mut u64).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(MatcpError::Io {
            path: "SO_NETNS_COOKIE".into(),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(cookie)
}

/// The pin of our program named `name`; `None`: not one of ours.
fn pin_of(name: &str) -> Option<&'static str> {
    PROGRAMS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, pin)| *pin)
}

/// Ids of the kernel's live programs named as ours (`matcp_connect4`, `matcp_connect6`,
/// `matcp_sockops`), whoever loaded them.
pub fn live_programs() -> Vec<u32> {
    libbpf_rs::query::ProgInfoIter::default()
        .filter(|p| pin_of(&p.name.to_string_lossy()).is_some())
        .map(|p| p.id)
        .collect()
}

/// Time spent in and calls of each of our live programs (name, ns, calls), as the kernel
/// counts them while `kernel.bpf_stats_enabled` is 1.
pub fn program_run_times() -> Vec<(String, u64, u64)> {
    libbpf_rs::query::ProgInfoIter::default()
        .filter_map(|p| {
            let name = p.name.to_string_lossy().to_string();
            pin_of(&name)
                .is_some()
                .then_some((name, p.run_time_ns, p.run_cnt))
        })
        .collect()
}

/// Our live programs beyond `baseline` (those live before), waiting up to `patience` for
/// them to go: a program is freed after its last link and descriptor, past an RCU grace
/// period.
pub fn programs_beyond(baseline: &[u32], patience: std::time::Duration) -> Vec<u32> {
    crate::system::wait_for_release(patience, || {
        live_programs()
            .into_iter()
            .filter(|id| !baseline.contains(id))
            .collect()
    })
}

pub fn require_root(command: &'static str) -> Result<()> {
    if nix::unistd::geteuid().is_root() {
        Ok(())
    } else {
        Err(MatcpError::NotRoot(command))
    }
}

/// Whether `path` is a directory of a cgroup v2 hierarchy.
pub fn require_cgroup2(path: &Path) -> Result<()> {
    match nix::sys::statfs::statfs(path) {
        Ok(s) if s.filesystem_type() == nix::sys::statfs::CGROUP2_SUPER_MAGIC => Ok(()),
        _ => Err(MatcpError::NotCgroup2(path.into())),
    }
}

/// The first mounted cgroup v2 hierarchy (`/sys/fs/cgroup` on most systems,
/// `/sys/fs/cgroup/unified` on hybrid ones): its root holds every process.
pub fn cgroup2_root() -> Result<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").map_err(io("/proc/self/mounts"))?;
    mounts
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() > 2 && f[2] == "cgroup2")
        .map(|f| PathBuf::from(f[1]))
        .ok_or(MatcpError::NoCgroup2)
}

#[cfg(not(mlab_no_bpf))]
fn object() -> Result<&'static [u8]> {
    Ok(include_bytes!(concat!(env!("OUT_DIR"), "/matcp.bpf.o")))
}

#[cfg(mlab_no_bpf)]
fn object() -> Result<&'static [u8]> {
    Err(MatcpError::NotBuilt(env!("MLAB_NO_BPF")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(paths: &[&str]) -> Config {
        Config {
            selector: Selector::Rtt,
            paths: paths.iter().map(|p| p.parse().unwrap()).collect(),
            refresh: None,
            cgroup: PathBuf::from("/sys/fs/cgroup"),
            cwnd_clamp: None,
        }
    }

    #[test]
    fn every_path_has_the_families_of_the_first_and_no_address_twice() {
        assert!(
            config(&["10.7.1.1+fd00::1", "fd00::2+10.7.2.1"])
                .validate()
                .is_ok()
        );
        assert!(config(&["fd00::1", "fd00::2"]).validate().is_ok());
        let mixed = config(&["10.7.1.1+fd00::1", "10.7.2.1"]).validate();
        assert!(
            matches!(&mixed, Err(MatcpError::Families { index: 2, path, .. })
                if path == "10.7.2.1"),
            "{mixed:?}"
        );
        let twice = config(&["10.7.1.1+fd00::1", "10.7.2.1+fd00::1"]).validate();
        assert!(
            matches!(twice, Err(MatcpError::Repeated(a)) if a.to_string() == "fd00::1"),
            "{twice:?}"
        );
    }
}
