//! Kernel test fixtures on top of `testbed`: namespaces, links and agents that are removed
//! on drop (and, after a crash, by the next run's `remove_leftovers`), and a private
//! congestion-control registry so that the tests never touch a system-wide `lia`.

#![allow(dead_code)]

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, MutexGuard, Once};
pub use testbed::netns::Process;
pub use testbed::{Netns, cleanup};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_mptcp-lab")
}

/// Kernel tests run one at a time: their measurements should not share the CPU.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether this machine can run the kernel tests. With MPTCP_LAB_REQUIRE_KERNEL=1 a
/// missing piece fails the test; otherwise the test is skipped, saying why.
pub fn kernel_available(test: &str) -> bool {
    match missing_piece() {
        None => {
            static LEFTOVERS: Once = Once::new();
            LEFTOVERS.call_once(|| {
                for what in cleanup::remove_leftovers() {
                    eprintln!("removed a crashed run's {what}");
                }
            });
            true
        }
        Some(why) if std::env::var("MPTCP_LAB_REQUIRE_KERNEL").as_deref() == Ok("1") => {
            panic!("{test}: MPTCP_LAB_REQUIRE_KERNEL=1 but {why}")
        }
        Some(why) => {
            // Straight to stderr: the test harness captures eprintln! of passing tests, and
            // a skip must be seen.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "skipping {test}: {why}");
            false
        }
    }
}

fn missing_piece() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root".into());
    }
    if let Err(why) = mptcp_bpf::algorithm::built() {
        return Some(format!("built without the eBPF programs: {why}"));
    }
    if let Err(e) = mptcp_bpf::system::check_kernel() {
        return Some(e.to_string());
    }
    for tool in ["ip", "tc"] {
        if Command::new(tool).arg("-V").output().is_err() {
            return Some(format!("`{tool}` (iproute2) is not installed"));
        }
    }
    None
}

pub fn netns(tag: &str) -> Netns {
    Netns::new(tag).expect("namespace")
}

pub fn veth(a: &Netns, dev_a: &str, addr_a: &str, b: &Netns, dev_b: &str, addr_b: &str) {
    testbed::veth(a, dev_a, addr_a, b, dev_b, addr_b).expect("veth");
}

pub fn tbf(ns: &Netns, dev: &str, rate: &str, latency: &str) {
    testbed::tbf(ns, dev, rate, latency).expect("tbf");
}

/// `mptcp-lab agent ARGS` inside `ns`.
pub fn agent(ns: &Netns, args: &[&str]) -> Process {
    let mut full = vec!["agent"];
    full.extend_from_slice(args);
    ns.spawn(bin(), &full, &[]).expect("agent")
}

pub fn report(p: Process) -> Value {
    p.report().expect("agent report")
}

/// A private registry: its own bpffs directory (`mlab-<pid>-cc-<tag>`, so a crashed run's
/// is found and removed) and name prefix. Everything is removed on drop.
pub struct TestRegistry {
    pub root: PathBuf,
    pub prefix: String,
    /// Our struct_ops maps the kernel held before this registry: leaks of earlier runs are
    /// not this test's.
    baseline: Vec<u32>,
}

impl TestRegistry {
    pub fn new(tag: &str) -> TestRegistry {
        TestRegistry {
            root: PathBuf::from("/sys/fs/bpf").join(cleanup::owned_name(&format!("cc-{tag}"))),
            // TCP_CA_NAME_MAX is 16 with the NUL: "t" + 5 digits + a tag letter + "fcoupled"
            // (the longest) fits.
            prefix: format!("t{}{tag}", std::process::id() % 100_000),
            baseline: mptcp_bpf::system::live_struct_ops(),
        }
    }

    /// Another registry under the same names (to provoke "name taken").
    pub fn sharing_names(&self, tag: &str) -> TestRegistry {
        TestRegistry {
            root: self
                .root
                .with_file_name(cleanup::owned_name(&format!("cc-{tag}"))),
            prefix: self.prefix.clone(),
            baseline: self.baseline.clone(),
        }
    }

    /// Removes everything and checks that the kernel let go of it: no registration, no
    /// pin, and no struct_ops map of ours beyond those it held before (their freeing
    /// waits for RCU grace periods, hence the patience).
    pub fn finish(self) {
        let (ok, out, err) = self.cc(&["remove", "all"]);
        assert!(ok, "remove all: {out}{err}");
        assert!(!self.root.exists(), "pins left in {}", self.root.display());
        let available =
            std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control").unwrap();
        assert!(
            !available
                .split_whitespace()
                .any(|n| n.starts_with(&self.prefix)),
            "still registered: {available}"
        );
        let leaked = self.held(std::time::Duration::from_secs(10));
        assert!(
            leaked.is_empty(),
            "struct_ops maps still held by the kernel 10 s after remove: ids {leaked:?}"
        );
    }

    /// Our struct_ops maps the kernel holds beyond the baseline, waiting up to `patience`
    /// for them to go.
    pub fn held(&self, patience: std::time::Duration) -> Vec<u32> {
        mptcp_bpf::system::struct_ops_held_beyond(&self.baseline, patience)
    }

    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("MPTCP_LAB_BPF_ROOT".into(), self.root.display().to_string()),
            ("MPTCP_LAB_CC_PREFIX".into(), self.prefix.clone()),
        ]
    }

    /// The same registry as the library sees it.
    pub fn registry(&self) -> mptcp_bpf::Registry {
        mptcp_bpf::Registry {
            root: self.root.clone(),
            prefix: self.prefix.clone(),
        }
    }

    pub fn name(&self, algorithm: &str) -> String {
        format!("{}{algorithm}", self.prefix)
    }

    /// `mptcp-lab cc ARGS` with this registry: (success, stdout, stderr).
    pub fn cc(&self, args: &[&str]) -> (bool, String, String) {
        let out = Command::new(bin())
            .arg("cc")
            .args(args)
            .envs(self.env())
            .output()
            .expect("spawn mptcp-lab");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    }

    pub fn install_all(&self) {
        let (ok, out, err) = self.cc(&["install", "all"]);
        assert!(ok, "install: {out}{err}");
    }

    pub fn show(&self) -> Value {
        let (ok, out, err) = self.cc(&["show", "--json"]);
        assert!(ok, "show: {err}");
        serde_json::from_str(&out).expect("show --json")
    }
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        let _ = self.cc(&["remove", "all", "--force"]);
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Goodput in Mbit/s of one receiver connection between `from` and `to` seconds after
/// it started.
pub fn goodput_mbps(connection: &Value, from: f64, to: f64) -> f64 {
    goodput_mbps_outside(connection, from, to, &[])
}

/// `goodput_mbps` with every sampling interval that overlaps one of `outside` left out of
/// both the bytes and the time. `outside` is in absolute seconds of `CLOCK_MONOTONIC`, the
/// clock of the agents' samples and traces (one clock for all namespaces).
pub fn goodput_mbps_outside(connection: &Value, from: f64, to: f64, outside: &[(f64, f64)]) -> f64 {
    let samples: Vec<(f64, f64)> = connection["samples"]
        .as_array()
        .expect("samples")
        .iter()
        .map(|s| (s[0].as_f64().unwrap(), s[1].as_f64().unwrap()))
        .collect();
    let t0 = samples[0].0;
    // The last sample at or before `t` seconds in.
    let at = |t: f64| {
        samples
            .iter()
            .rposition(|(time, _)| time - t0 <= t)
            .unwrap_or(0)
    };
    let (first, last) = (at(from), at(to));
    let mut bytes = samples[last].1 - samples[first].1;
    let mut secs = samples[last].0 - samples[first].0;
    for w in samples[first..=last].windows(2) {
        if outside.iter().any(|&(a, b)| w[0].0 < b && w[1].0 > a) {
            bytes -= w[1].1 - w[0].1;
            secs -= w[1].0 - w[0].0;
        }
    }
    bytes * 8.0 / secs.max(1e-9) / 1e6
}

pub fn sleep_ms(ms: u64) {
    std::thread::sleep(std::time::Duration::from_millis(ms));
}
