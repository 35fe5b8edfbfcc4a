//! Registering the programs so that they outlive the command: each algorithm's struct_ops
//! link and its state map are pinned under one bpffs directory (default
//! `/sys/fs/bpf/mptcp-lab/<name>/`). Removing the pins unregisters the algorithm.

use crate::algorithm::Algorithm;
use crate::error::{CcError, Result, io};
use crate::system;
use libbpf_rs::{MapCore, MapHandle, ObjectBuilder};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Where pins go and what the registered names look like.
#[derive(Clone, Debug)]
pub struct Registry {
    /// bpffs directory holding one sub-directory per installed algorithm.
    pub root: PathBuf,
    /// Put before each name (`mlt_lia`): lets tests and side-by-side builds register their
    /// own copies without touching the system's `lia`.
    pub prefix: String,
}

/// One algorithm as `cc list` reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub algorithm: Algorithm,
    /// The name registered with the kernel.
    pub name: String,
    /// Pinned by mptcp-lab.
    pub installed: bool,
    /// Offered by the kernel (tcp_available_congestion_control).
    pub registered: bool,
    /// Sockets running it now (entries in its state map).
    pub sockets: usize,
    /// The system-wide default of this network namespace.
    pub default: bool,
}

/// What `install` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Installed {
    /// Registered now, as the kernel's struct_ops map with this id (what tells this
    /// registration apart from another run's of the same algorithm).
    Now {
        struct_ops_map: u32,
    },
    Already,
}

const LINK: &str = "link";
const STATE_MAP: &str = "subflows";
/// The C name of the state map (mlab_kern.h).
const STATE_MAP_NAME: &str = "mlab_subflows";
/// Offset of `name` in struct tcp_congestion_ops: eleven function pointers come first.
const NAME_OFFSET: usize = 11 * 8;
/// TCP_CA_NAME_MAX, with the terminating NUL.
const NAME_MAX: usize = 16;
/// Unregistering completes in a kernel work item after the last reference goes.
const UNREGISTER_WAIT: Duration = Duration::from_secs(5);

impl Default for Registry {
    fn default() -> Self {
        Registry {
            root: PathBuf::from("/sys/fs/bpf/mptcp-lab"),
            prefix: String::new(),
        }
    }
}

impl Registry {
    /// The default registry, or the one named by MPTCP_LAB_BPF_ROOT and MPTCP_LAB_CC_PREFIX.
    pub fn from_env() -> Registry {
        let mut r = Registry::default();
        if let Ok(root) = std::env::var("MPTCP_LAB_BPF_ROOT") {
            r.root = root.into();
        }
        if let Ok(prefix) = std::env::var("MPTCP_LAB_CC_PREFIX") {
            r.prefix = prefix;
        }
        r
    }

    pub fn name_of(&self, a: Algorithm) -> String {
        format!("{}{}", self.prefix, a.name())
    }

    fn dir(&self, a: Algorithm) -> PathBuf {
        self.root.join(a.name())
    }

    pub fn state_map_path(&self, a: Algorithm) -> PathBuf {
        self.dir(a).join(STATE_MAP)
    }

    fn is_installed(&self, a: Algorithm) -> bool {
        self.dir(a).join(LINK).exists()
    }

    /// Registers `a` and pins it. Installing an installed algorithm changes nothing.
    pub fn install(&self, a: Algorithm) -> Result<Installed> {
        system::require_root("install")?;
        system::check_kernel()?;
        let name = self.name_of(a);
        if name.len() >= NAME_MAX {
            return Err(CcError::Bpf {
                context: name,
                reason: format!(
                    "congestion control names have at most {} bytes",
                    NAME_MAX - 1
                ),
            });
        }
        let registered = system::available().contains(&name);
        if self.is_installed(a) {
            if registered {
                return Ok(Installed::Already);
            }
            // Pins without a registration: what a crash between the two steps leaves.
            self.unpin(a)?;
        } else if registered {
            return Err(CcError::NameTaken(name));
        }
        system::ensure_bpffs(&self.root)?;
        let bytes = a.object()?;
        let dir = self.dir(a);
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        let result = self.load_and_pin(a, bytes, &name, &dir);
        if result.is_err() {
            let _ = self.unpin(a);
        }
        result.map(|struct_ops_map| Installed::Now { struct_ops_map })
    }

    /// Loads, registers and pins `a`; returns the id of its struct_ops map.
    fn load_and_pin(&self, a: Algorithm, bytes: &[u8], name: &str, dir: &Path) -> Result<u32> {
        let load_err = |reason: String| CcError::Load {
            name: name.to_string(),
            reason,
        };
        let mut open = ObjectBuilder::default()
            .open_memory(bytes)
            .map_err(|e| load_err(e.to_string()))?;
        for mut map in open.maps_mut() {
            if map.name() == a.name() {
                let value = map
                    .initial_value_mut()
                    .ok_or_else(|| load_err("struct_ops map has no initial value".into()))?;
                rename(value, a.name(), name).map_err(load_err)?;
            }
        }
        let mut obj = with_libbpf_log(|| open.load()).map_err(load_err)?;
        let mut registered = None;
        for mut map in obj.maps_mut() {
            if map.name() == a.name() {
                let id = map.info().map_err(|e| load_err(e.to_string()))?.info.id;
                let link = with_libbpf_log(|| map.attach_struct_ops()).map_err(load_err)?;
                registered = Some((id, link));
            } else if map.name() == STATE_MAP_NAME {
                map.pin(dir.join(STATE_MAP))
                    .map_err(|e| load_err(format!("pinning the state map: {e}")))?;
            }
        }
        let (id, mut link) =
            registered.ok_or_else(|| load_err("no struct_ops map in the object".into()))?;
        link.pin(dir.join(LINK))
            .map_err(|e| load_err(format!("pinning the link: {e}")))?;
        Ok(id)
    }

    /// Unregisters `a`. Refuses while sockets use it unless `force`.
    pub fn remove(&self, a: Algorithm, force: bool) -> Result<bool> {
        system::require_root("remove")?;
        let name = self.name_of(a);
        if !self.dir(a).exists() {
            return Ok(false);
        }
        let sockets = self.sockets(a);
        if sockets > 0 && !force {
            return Err(CcError::InUse { name, sockets });
        }
        self.unpin(a)?;
        wait_unregistered(&name);
        Ok(true)
    }

    fn unpin(&self, a: Algorithm) -> Result<()> {
        let dir = self.dir(a);
        for file in [LINK, STATE_MAP] {
            let p = dir.join(file);
            match std::fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(CcError::Io { path: p, source: e }),
            }
        }
        match std::fs::remove_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(CcError::Io {
                    path: dir,
                    source: e,
                });
            }
        }
        // The root goes too once empty, so that nothing of ours stays in bpffs.
        let _ = std::fs::remove_dir(&self.root);
        Ok(())
    }

    /// Sockets currently running `a` (entries of its pinned state map).
    pub fn sockets(&self, a: Algorithm) -> usize {
        MapHandle::from_pinned_path(self.state_map_path(a))
            .map(|m| m.keys().filter(|k| crate::state::is_socket_key(k)).count())
            .unwrap_or(0)
    }

    pub fn list(&self) -> Vec<Status> {
        let available = system::available();
        let default = system::default_cc();
        Algorithm::ALL
            .into_iter()
            .map(|a| {
                let name = self.name_of(a);
                Status {
                    algorithm: a,
                    installed: self.is_installed(a),
                    registered: available.contains(&name),
                    sockets: self.sockets(a),
                    default: default.as_deref() == Some(name.as_str()),
                    name,
                }
            })
            .collect()
    }
}

/// Writes `name` over `original` in the struct_ops data, checking that the layout is
/// the one expected.
fn rename(value: &mut [u8], original: &str, name: &str) -> std::result::Result<(), String> {
    let field = value
        .get_mut(NAME_OFFSET..NAME_OFFSET + NAME_MAX)
        .ok_or("struct tcp_congestion_ops is shorter than expected")?;
    let current = field.split(|&b| b == 0).next().unwrap_or_default();
    if current != original.as_bytes() {
        return Err(format!(
            "struct tcp_congestion_ops.name is not where expected (found {:?})",
            String::from_utf8_lossy(current)
        ));
    }
    field.fill(0);
    field[..name.len()].copy_from_slice(name.as_bytes());
    Ok(())
}

fn wait_unregistered(name: &str) {
    let start = Instant::now();
    while system::available().iter().any(|n| n == name) && start.elapsed() < UNREGISTER_WAIT {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// libbpf's messages of one call (the verifier log among them), kept for the error.
static LIBBPF_LOG: Mutex<String> = Mutex::new(String::new());

fn collect_log(_level: libbpf_rs::PrintLevel, msg: String) {
    if let Ok(mut log) = LIBBPF_LOG.lock() {
        log.push_str(&msg);
    }
}

pub(crate) fn with_libbpf_log<T>(
    f: impl FnOnce() -> libbpf_rs::Result<T>,
) -> std::result::Result<T, String> {
    if let Ok(mut log) = LIBBPF_LOG.lock() {
        log.clear();
    }
    let previous = libbpf_rs::set_print(Some((libbpf_rs::PrintLevel::Warn, collect_log)));
    let result = f();
    libbpf_rs::set_print(previous);
    result.map_err(|e| {
        let log = LIBBPF_LOG.lock().map(|l| l.clone()).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        if tail.is_empty() {
            e.to_string()
        } else {
            format!("{e}\n{}", tail.join("\n"))
        }
    })
}
