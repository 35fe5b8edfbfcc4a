//! Network namespaces and veth links, through iproute2. Each namespace is deleted when its
//! guard drops (and by `cleanup::remove_leftovers` if the process died first).

use crate::cleanup::owned_name;
use anyhow::{Context, Result, bail};
use std::process::{Child, Command, Stdio};

/// Runs a command, failing with its stderr.
pub fn run(args: &[&str]) -> Result<()> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .with_context(|| format!("running {}", args[0]))?;
    if !out.status.success() {
        bail!(
            "{}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// A network namespace, deleted on drop.
#[derive(Debug)]
pub struct Netns {
    pub name: String,
}

impl Netns {
    /// `mlab-<pid>-<tag>`, with loopback up and reverse-path filtering off (policy routing
    /// sends a subflow out of its own interface; strict filtering would drop the replies).
    pub fn new(tag: &str) -> Result<Netns> {
        let name = owned_name(tag);
        let _ = Command::new("ip").args(["netns", "del", &name]).output();
        run(&["ip", "netns", "add", &name])?;
        let ns = Netns { name };
        ns.ip("link set lo up")?;
        ns.sysctl("net.ipv4.conf.all.rp_filter=0")?;
        ns.sysctl("net.ipv4.conf.default.rp_filter=0")?;
        Ok(ns)
    }

    /// `ip -n <ns> ARGS` (ARGS split on whitespace).
    pub fn ip(&self, args: &str) -> Result<()> {
        let mut full = vec!["ip", "-n", &self.name];
        full.extend(args.split_whitespace());
        run(&full)
    }

    pub fn tc(&self, args: &str) -> Result<()> {
        let mut full = vec!["tc", "-n", &self.name];
        full.extend(args.split_whitespace());
        run(&full)
    }

    pub fn sysctl(&self, key_value: &str) -> Result<()> {
        run(&[
            "ip", "netns", "exec", &self.name, "sysctl", "-qw", key_value,
        ])
    }

    /// Makes `cc` this namespace's default congestion control. Only a non-restricted one
    /// (listed in the initial namespace's tcp_allowed_congestion_control) may be a default
    /// outside the initial namespace; asking for another fails with EPERM, and Linux 6.18
    /// then keeps the reference it took on the algorithm, so that an eBPF one can never be
    /// freed. Refused here, before the kernel sees it.
    pub fn set_default_cc(&self, cc: &str) -> Result<()> {
        let allowed = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_allowed_congestion_control")?;
        if !allowed.split_whitespace().any(|a| a == cc) {
            bail!(
                "{cc} is restricted (not in net.ipv4.tcp_allowed_congestion_control: {}): \
                 namespace {} cannot default to it",
                allowed.trim(),
                self.name
            );
        }
        self.sysctl(&format!("net.ipv4.tcp_congestion_control={cc}"))
    }

    /// The namespace's handle, as `ip netns` mounts it.
    pub fn path(&self) -> std::path::PathBuf {
        std::path::Path::new("/run/netns").join(&self.name)
    }

    /// Runs `f` on a thread that has joined this namespace: sockets (netlink included) and
    /// TUN devices it creates live there, and `/proc/sys/net` is this namespace's.
    pub fn enter<R: Send + 'static>(
        &self,
        f: impl FnOnce() -> Result<R> + Send + 'static,
    ) -> Result<R> {
        self.thread(f)?
            .join()
            .map_err(|_| anyhow::anyhow!("a thread working in namespace {} panicked", self.name))?
    }

    /// Starts `f` on a thread that has joined this namespace, without waiting for it.
    pub fn thread<R: Send + 'static>(
        &self,
        f: impl FnOnce() -> Result<R> + Send + 'static,
    ) -> Result<std::thread::JoinHandle<Result<R>>> {
        let handle = std::fs::File::open(self.path())
            .with_context(|| format!("opening namespace {}", self.name))?;
        let name = self.name.clone();
        Ok(std::thread::spawn(move || {
            nix::sched::setns(&handle, nix::sched::CloneFlags::CLONE_NEWNET)
                .with_context(|| format!("joining namespace {name}"))?;
            f()
        }))
    }

    /// Bytes an interface of this namespace has sent.
    pub fn tx_bytes(&self, dev: &str) -> Result<u64> {
        let out = Command::new("ip")
            .args(["netns", "exec", &self.name, "cat"])
            .arg(format!("/sys/class/net/{dev}/statistics/tx_bytes"))
            .output()?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().parse()?)
    }

    /// Starts `program ARGS` inside the namespace, stdout piped; killed when the guard drops.
    pub fn spawn(&self, program: &str, args: &[&str], env: &[(String, String)]) -> Result<Process> {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.name, program]).args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {program} in {}", self.name))?;
        Ok(Process { child: Some(child) })
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
    }
}

/// A veth pair from `a:dev_a` to `b:dev_b`, addresses in CIDR form, both ends up.
pub fn veth(
    a: &Netns,
    dev_a: &str,
    addr_a: &str,
    b: &Netns,
    dev_b: &str,
    addr_b: &str,
) -> Result<()> {
    run(&[
        "ip", "link", "add", dev_a, "netns", &a.name, "type", "veth", "peer", "name", dev_b,
        "netns", &b.name,
    ])?;
    a.ip(&format!("addr add {addr_a} dev {dev_a}"))?;
    b.ip(&format!("addr add {addr_b} dev {dev_b}"))?;
    a.ip(&format!("link set {dev_a} up"))?;
    b.ip(&format!("link set {dev_b} up"))
}

/// A token bucket on `dev`'s egress: `rate` (tc syntax, e.g. 20mbit), with a queue that
/// holds `latency` (e.g. 50ms) at that rate.
pub fn tbf(ns: &Netns, dev: &str, rate: &str, latency: &str) -> Result<()> {
    ns.tc(&format!(
        "qdisc add dev {dev} root tbf rate {rate} burst 32kbit latency {latency}"
    ))
}

/// A process inside a namespace; killed on drop if still running.
#[derive(Debug)]
pub struct Process {
    child: Option<Child>,
}

impl Process {
    /// Waits for the process and parses the JSON it printed.
    pub fn report(mut self) -> Result<serde_json::Value> {
        let child = self.child.take().expect("the process is taken only here");
        let out = child.wait_with_output()?;
        if !out.status.success() {
            bail!("{}", String::from_utf8_lossy(&out.stderr).trim());
        }
        serde_json::from_slice(&out.stdout)
            .with_context(|| format!("report: {}", String::from_utf8_lossy(&out.stdout)))
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
