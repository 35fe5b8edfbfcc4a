//! The kernel backend's session: what it needs from this machine around the runs. Checks
//! (root, MPTCP, TUN, BPF), removal of a crashed run's leftovers, a private copy of the eBPF
//! congestion controls the scenarios name (registered as `m<pid>lia`, ...; removed at the
//! end, on error and on Ctrl-C, and by the next run if this one dies), the variants this
//! kernel can run, and the `Backend` that runs them.

use super::{KernelOptions, KernelRun};
use crate::cleanup;
use anyhow::{Context, Result, bail};
use mptcp_bpf::{Algorithm, Installed, Registry};
use mptcp_cc::AlgorithmId;
use net::capture::capture_files;
use scenario::Scenario;
use scenario::results::RunResult;
use scenario::{Backend, Progress};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub struct KernelSession {
    registry: Registry,
    installed: Vec<Algorithm>,
    pub cc_names: BTreeMap<AlgorithmId, String>,
    pub interrupted: Arc<AtomicBool>,
    /// The kernel ids of the struct_ops maps this session registered: the clean-up waits
    /// for these only, never for another run's registrations of the same algorithms.
    registered: Vec<u32>,
}

/// What this machine lacks for the kernel backend, if anything.
fn check_machine() -> Result<()> {
    mptcp_bpf::system::require_root("run --backend kernel")?;
    if !Path::new("/proc/sys/net/mptcp/enabled").exists() {
        bail!(
            "this kernel has no MPTCP (/proc/sys/net/mptcp is missing; CONFIG_MPTCP=y is needed)"
        );
    }
    if !Path::new("/dev/net/tun").exists() {
        bail!("no /dev/net/tun: the emulator needs TUN devices (modprobe tun)");
    }
    Ok(())
}

/// Names the kernel knows without us (built-in or loaded modules).
fn kernel_algorithms() -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
            .unwrap_or_default()
            .split_whitespace()
            .map(String::from)
            .collect();
    names.push("reno".into());
    names
}

/// Why this kernel cannot run `sc`, if it cannot: an algorithm with neither an eBPF
/// program of ours nor a kernel implementation, path selection the programs cannot do, or
/// a receiver trace (which the backend does not sample), or a host's jitter (which real
/// hosts bring themselves).
pub fn unsupported(sc: &Scenario) -> Option<String> {
    if sc.measure.trace_receiver {
        return Some(
            "measure.trace_receiver is simulator-only (on the kernel, `ss -tmi` in the \
             receiver's namespace shows rcv_ssthresh)"
                .into(),
        );
    }
    if sc.measure.trace_cc {
        return Some(
            "measure.trace_cc is simulator-only (on the kernel, `mptcp-lab cc show` with the \
             run's registry, which the run prints, shows the coupling state)"
                .into(),
        );
    }
    if let Some(node) = sc.nodes.iter().find(|n| n.jitter.0 > 0) {
        return Some(format!(
            "node `{}` has a jitter, which is simulator-only: the kernel's hosts are real and \
             take their own processing time (set it to 0 for this backend)",
            node.name
        ));
    }
    if let Some(why) = super::matcp::unsupported(sc) {
        return Some(why);
    }
    if let Err(why) = crate::ndiffports::Ndiffports::of(sc) {
        return Some(why);
    }
    let kernel = kernel_algorithms();
    let missing: Vec<&str> = sc
        .flows
        .iter()
        .map(|f| f.cc.name())
        .filter(|cc| Algorithm::parse(cc).is_err() && !kernel.iter().any(|k| k == cc))
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "no kernel implementation of {} (eBPF programs exist for lia, olia, balia, wvegas, ewtcp, fullycoupled)",
            missing.join(", ")
        )
    })
}

/// The process's Ctrl-C (and SIGTERM) flag, cleared for a new session. The handler is
/// installed once per process: a process may run several sessions one after another (the
/// Python package runs kernel campaigns in the interpreter's process), and a handler can be
/// set only once. A second Ctrl-C while cleaning up is ignored: the clean-up finishes.
fn interrupt_flag() -> Result<Arc<AtomicBool>> {
    static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    if let Some(flag) = FLAG.get() {
        flag.store(false, Ordering::SeqCst);
        return Ok(flag.clone());
    }
    let flag = Arc::new(AtomicBool::new(false));
    let set = flag.clone();
    ctrlc::set_handler(move || set.store(true, Ordering::SeqCst))
        .context("installing the Ctrl-C handler")?;
    Ok(FLAG.get_or_init(|| flag).clone())
}

impl KernelSession {
    pub fn start() -> Result<KernelSession> {
        check_machine()?;
        for what in cleanup::remove_leftovers() {
            eprintln!("removed a crashed run's {what}");
        }
        let interrupted = interrupt_flag()?;
        Ok(KernelSession {
            registry: Registry {
                root: PathBuf::from("/sys/fs/bpf").join(cleanup::owned_name("cc")),
                prefix: format!("m{}", std::process::id() % 100_000),
            },
            installed: Vec::new(),
            cc_names: BTreeMap::new(),
            interrupted,
            registered: Vec::new(),
        })
    }

    /// Why this kernel cannot run `sc`, if it cannot (see [`unsupported`]).
    pub fn unsupported(&self, sc: &Scenario) -> Option<String> {
        unsupported(sc)
    }

    /// The kernel ids of the struct_ops maps this session registered (to check, after it is
    /// dropped, that the kernel let go of them).
    pub fn registered_struct_ops(&self) -> Vec<u32> {
        self.registered.clone()
    }

    /// Installs the eBPF algorithms `sc` uses that are not installed yet.
    pub fn prepare(&mut self, sc: &Scenario) -> Result<()> {
        let first = self.installed.is_empty();
        for f in &sc.flows {
            let Some(a) = Algorithm::of(f.cc) else {
                continue;
            };
            if !self.installed.contains(&a) {
                let installed = self
                    .registry
                    .install(a)
                    .with_context(|| format!("installing {}", a.name()))?;
                if let Installed::Now { struct_ops_map } = installed {
                    self.registered.push(struct_ops_map);
                }
                self.installed.push(a);
                self.cc_names.insert(f.cc, self.registry.name_of(a));
            }
        }
        if first && !self.installed.is_empty() {
            // `ip netns exec` remounts /sys, hiding bpffs: the coupling state is read from
            // the root namespace, in this run's private registry.
            eprintln!(
                "coupling state during the run: sudo MPTCP_LAB_BPF_ROOT={} MPTCP_LAB_CC_PREFIX={} mptcp-lab cc show",
                self.registry.root.display(),
                self.registry.prefix
            );
        }
        Ok(())
    }

    /// Thresholds and windows this session's eBPF algorithms have repaired since they were
    /// installed, over every socket (docs/kernel-cc.md, "Skipped callbacks").
    pub fn cc_repairs(&self) -> u64 {
        self.installed
            .iter()
            .map(|a| mptcp_bpf::state::repairs_total(&self.registry, *a))
            .sum()
    }

    pub fn run(
        &self,
        sc: &Scenario,
        seed: u64,
        captures: Vec<(usize, PathBuf)>,
        sysctls: &[(String, String)],
        progress: impl FnMut(f64),
    ) -> Result<KernelRun> {
        if self.interrupted.load(Ordering::SeqCst) {
            bail!("interrupted");
        }
        let opts = KernelOptions {
            cc_names: self.cc_names.clone(),
            captures,
            interrupted: self.interrupted.clone(),
            sysctls: sysctls.to_vec(),
        };
        super::run(sc, seed, &opts, progress)
    }
}

/// Real Linux TCP and MPTCP through the emulator, as a backend of `run`.
pub struct KernelBackend {
    session: KernelSession,
    sysctls: Vec<(String, String)>,
    /// Links to capture, and the folder their captures go to (`pcap/` inside it).
    pcap_links: Vec<String>,
    pcap_dir: PathBuf,
}

impl KernelBackend {
    /// Starts a session on this machine. `sysctls` are `KEY=VALUE` (net.* only).
    pub fn start(sysctls: &[String], pcap_links: Vec<String>, pcap_dir: PathBuf) -> Result<Self> {
        let sysctls = parse_sysctls(sysctls)?;
        Ok(KernelBackend {
            session: KernelSession::start()?,
            sysctls,
            pcap_links,
            pcap_dir,
        })
    }
}

impl Backend for KernelBackend {
    fn name(&self) -> &'static str {
        "kernel"
    }

    fn real_time(&self) -> bool {
        true
    }

    fn unsupported(&self, sc: &Scenario) -> Option<String> {
        self.session.unsupported(sc)
    }

    fn run(&mut self, sc: &Scenario, seed: u64, progress: &mut dyn Progress) -> Result<RunResult> {
        self.session.prepare(sc)?;
        let captures = capture_files(sc, &self.pcap_links, &self.pcap_dir, seed)?;
        let repairs_before = self.session.cc_repairs();
        let run = self
            .session
            .run(sc, seed, captures, &self.sysctls, |f| progress.fraction(f))?;
        let repairs = self.session.cc_repairs().saturating_sub(repairs_before);
        let e = &run.emulator;
        let variant = sc.variant_name();
        let mut result = run.result;
        let health = result.emulator.clone().unwrap_or_default();
        progress.note(&format!(
            "{variant} seed {seed}: emulator {} packets, {:.0} MB, late p50 {} us p99 {} us, {} beyond {} ms, woke late {} times ({} ms in all); own losses {} ({:.3} %: {} not read in time, {} refused by a device, {} dropped on arrival), link drops {}",
            e.written_pkts,
            e.written_bytes as f64 / 1e6,
            e.lateness.quantile_us(0.5).unwrap_or(0),
            e.lateness.quantile_us(0.99).unwrap_or(0),
            health.late_beyond_bound,
            health.late_bound_ms,
            e.stalls.count,
            e.stalls.total_ns / 1_000_000,
            health.own_losses,
            health.own_loss_fraction * 100.0,
            health.not_read,
            health.refused,
            health.dropped_on_arrival,
            health.link_drops
        ));
        if health.unreliable {
            progress.note(&format!(
                "warning: {variant} seed {seed} is unreliable: {}",
                health.why.join("; ")
            ));
        }
        for (what, v) in [
            ("late_p50_us", e.lateness.quantile_us(0.5)),
            ("late_p99_us", e.lateness.quantile_us(0.99)),
            ("device_drops", Some(e.device_drops)),
            ("late_wakeups", Some(e.stalls.count)),
            ("late_wakeup_ms", Some(e.stalls.total_ns / 1_000_000)),
            ("own_losses", Some(health.own_losses)),
            ("not_read", Some(health.not_read)),
            ("late_beyond_bound", Some(health.late_beyond_bound)),
        ] {
            if let Some(v) = v {
                let name = scenario::metrics::Diagnostic::Emulator(what.into());
                result.metrics.insert(name.into(), v as f64);
            }
        }
        if sc.flows.iter().any(|f| Algorithm::of(f.cc).is_some()) {
            result.metrics.insert(
                scenario::metrics::Diagnostic::CcRepairs.into(),
                repairs as f64,
            );
        }
        if repairs > 0 {
            progress.note(&format!(
                "warning: {variant} seed {seed}: the kernel skipped {repairs} callback(s) of our \
                 congestion controls, each repaired one ACK later (kernel.cc_repairs; \
                 docs/kernel-cc.md, \"Skipped callbacks\")"
            ));
        }
        let fraction = scenario::metrics::Diagnostic::Emulator("own_loss_fraction".into());
        result
            .metrics
            .insert(fraction.into(), health.own_loss_fraction);
        Ok(result)
    }
}

impl Drop for KernelSession {
    fn drop(&mut self) {
        for a in &self.installed {
            if let Err(e) = self.registry.remove(*a, true) {
                eprintln!("removing {}: {e:#}", self.registry.name_of(*a));
            }
        }
        let _ = std::fs::remove_dir_all(&self.registry.root);
        if self.installed.is_empty() {
            return;
        }
        // Every socket of the run was aborted and its namespace deleted, so the kernel
        // lets go of the programs within moments; one it keeps is a leak worth saying.
        let held = mptcp_bpf::system::struct_ops_still_held(&self.registered, HELD_PATIENCE);
        if !held.is_empty() {
            eprintln!(
                "warning: the kernel still holds struct_ops maps {held:?} of this run's \
                 congestion controls (`bpftool struct_ops list`)"
            );
        }
    }
}

/// How long the clean-up waits for the kernel to free the congestion controls it removed.
const HELD_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// `--sysctl KEY=VALUE`: only `net.*` keys, which every network namespace has its own copy
/// of; any other would change the whole machine.
pub fn parse_sysctls(args: &[String]) -> Result<Vec<(String, String)>> {
    args.iter()
        .map(|a| match a.split_once('=') {
            Some((k, v))
                if k.starts_with("net.")
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
                    && !k.contains("..")
                    && !v.is_empty() =>
            {
                Ok((k.to_string(), v.to_string()))
            }
            _ => bail!(
                "--sysctl {a}: expected KEY=VALUE with a net.* key (only those belong to a \
                 host's namespace)"
            ),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{parse_sysctls, unsupported};
    use scenario::{LoadOptions, load_file};
    use std::path::Path;

    #[test]
    fn simulator_only_traces_are_refused_not_left_out() {
        let file =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/e3-aggregation.toml");
        let mut sc = load_file(&file, &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"))
            .remove(0);
        assert_eq!(unsupported(&sc), None);
        sc.measure.trace_receiver = true;
        let why = unsupported(&sc).expect("refused");
        assert!(why.contains("trace_receiver is simulator-only"), "{why}");
        sc.measure.trace_receiver = false;
        sc.measure.trace_cc = true;
        let why = unsupported(&sc).expect("refused");
        assert!(why.contains("trace_cc is simulator-only"), "{why}");
        sc.measure.trace_cc = false;
        sc.nodes[0].jitter = scenario::units::Duration(20_000);
        let why = unsupported(&sc).expect("refused");
        assert!(why.contains("jitter, which is simulator-only"), "{why}");
    }

    #[test]
    fn sysctls_must_be_per_namespace_key_value_pairs() {
        let ok = parse_sysctls(&["net.mptcp.stale_loss_cnt=1".into()]).unwrap();
        assert_eq!(ok, vec![("net.mptcp.stale_loss_cnt".into(), "1".into())]);
        for bad in [
            "kernel.panic=1",
            "net.mptcp.stale_loss_cnt",
            "net.mptcp.stale_loss_cnt=",
            "net/../../kernel/panic=1",
            "net..x=1",
        ] {
            let e = parse_sysctls(&[bad.into()]).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("--sysctl {bad}: expected KEY=VALUE")),
                "{e}"
            );
        }
    }
}
