//! `mptcp-lab cc bench`: what the eBPF congestion controls cost. An MPTCP connection over
//! two unlimited veth paths between two namespaces, bulk for a few seconds, with each
//! algorithm in turn against the kernel's built-in reno and cubic; runs interleaved and
//! repeated. Throughput from the receiver; CPU from /proc/stat (all of the machine: sender,
//! receiver and the softirq work between them), per gigabyte delivered.

use anyhow::{Context, Result, bail};
use mptcp_bpf::{Algorithm, Registry};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use testbed::{Netns, cleanup, veth};

const BUILT_IN: [&str; 2] = ["reno", "cubic"];

/// Busy and total jiffies of all CPUs.
pub(crate) fn cpu_jiffies() -> Result<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat")?;
    let fields: Vec<u64> = stat
        .lines()
        .next()
        .context("empty /proc/stat")?
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal
    let idle = fields.get(3).copied().unwrap_or(0) + fields.get(4).copied().unwrap_or(0);
    let total: u64 = fields.iter().take(8).sum();
    Ok((total - idle, total))
}

pub(crate) fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 { hz as f64 } else { 100.0 }
}

/// The registry the bench installs into and removes on drop: its own names, so an
/// installed system-wide `lia` is neither needed nor touched.
struct BenchRegistry(Registry);

impl Drop for BenchRegistry {
    fn drop(&mut self) {
        for a in Algorithm::ALL {
            let _ = self.0.remove(a, true);
        }
        let _ = std::fs::remove_dir_all(&self.0.root);
    }
}

const ALLOWED: &str = "/proc/sys/net/ipv4/tcp_allowed_congestion_control";

/// Makes the built-in algorithms non-restricted for the bench (a namespace other than the
/// initial one may only default to those; cubic is not when the system default is another)
/// and restores the list on drop. The list is read back with the eBPF ones in it, so
/// restoring it keeps their flags too.
struct AllowedGuard(Option<String>);

impl AllowedGuard {
    fn allow(names: &[&str]) -> Result<AllowedGuard> {
        let before = std::fs::read_to_string(ALLOWED)?.trim().to_string();
        let mut list: Vec<&str> = before.split_whitespace().collect();
        let missing: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| !list.contains(n))
            .collect();
        if missing.is_empty() {
            return Ok(AllowedGuard(None));
        }
        list.extend(missing);
        std::fs::write(ALLOWED, list.join(" "))
            .context("widening tcp_allowed_congestion_control")?;
        Ok(AllowedGuard(Some(before)))
    }
}

impl Drop for AllowedGuard {
    fn drop(&mut self) {
        if let Some(before) = &self.0 {
            let _ = std::fs::write(ALLOWED, before);
        }
    }
}

pub(crate) struct Paths {
    pub client: Netns,
    pub server: Netns,
}

pub(crate) fn two_unlimited_paths() -> Result<Paths> {
    let client = Netns::new("bench-c")?;
    let server = Netns::new("bench-s")?;
    veth(&client, "c0", "10.9.1.1/24", &server, "s0", "10.9.1.2/24")?;
    veth(&client, "c1", "10.9.2.1/24", &server, "s1", "10.9.2.2/24")?;
    client.ip("rule add from 10.9.2.1 table 102")?;
    client.ip("route add 10.9.1.0/24 via 10.9.2.2 dev c1 table 102")?;
    for ns in [&client, &server] {
        ns.ip("mptcp limits set subflows 2 add_addr_accepted 2")?;
    }
    client.ip("mptcp endpoint add 10.9.2.1 dev c1 subflow")?;
    Ok(Paths { client, server })
}

struct Sample {
    gbps: f64,
    cpu_s_per_gb: f64,
}

fn one_run(paths: &Paths, cc: &str, seconds: f64, port: u16) -> Result<Sample> {
    // The namespace's default too: a subflow joining after connect() may start with the
    // default rather than the socket's TCP_CONGESTION (Linux 6.18).
    paths.client.set_default_cc(cc)?;
    let exe = std::env::current_exe()?;
    let exe = exe.to_str().context("executable path")?;
    let listen = format!("0.0.0.0:{port}");
    let recv = paths
        .server
        .spawn(exe, &["agent", "recv", "--mptcp", "--listen", &listen], &[])?;
    let to = format!("10.9.1.2:{port}");
    let secs = seconds.to_string();
    let (busy0, _) = cpu_jiffies()?;
    let send = paths.client.spawn(
        exe,
        &[
            "agent",
            "send",
            "--mptcp",
            "--to",
            &to,
            "--cc",
            cc,
            "--seconds",
            &secs,
        ],
        &[],
    )?;
    send.report().with_context(|| format!("sender with {cc}"))?;
    let got = recv
        .report()
        .with_context(|| format!("receiver with {cc}"))?;
    let (busy1, _) = cpu_jiffies()?;
    let conn = &got["connections"][0];
    let bytes = conn["bytes"].as_f64().unwrap_or(0.0);
    let samples = conn["samples"].as_array().context("receiver samples")?;
    let span = samples.last().and_then(|s| s[0].as_f64()).unwrap_or(0.0)
        - samples.first().and_then(|s| s[0].as_f64()).unwrap_or(0.0);
    if bytes <= 0.0 || span <= 0.0 {
        bail!("{cc}: nothing arrived");
    }
    let cpu_s = (busy1 - busy0) as f64 / clock_ticks();
    Ok(Sample {
        gbps: bytes * 8.0 / span / 1e9,
        cpu_s_per_gb: cpu_s / (bytes / 1e9),
    })
}

/// Median, and the smallest and largest value.
pub(crate) fn spread(xs: &[f64]) -> (f64, f64, f64) {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (median, v[0], v[n - 1])
}

pub fn bench(seconds: f64, repeat: u32, algorithms: &[String]) -> Result<bool> {
    mptcp_bpf::system::require_root("bench")?;
    mptcp_bpf::system::check_kernel()?;
    for what in cleanup::remove_leftovers() {
        eprintln!("removed a crashed run's {what}");
    }
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
        .context("installing the Ctrl-C handler")?;

    let registry = BenchRegistry(Registry {
        root: std::path::PathBuf::from("/sys/fs/bpf").join(cleanup::owned_name("cc-bench")),
        prefix: format!("b{}", std::process::id() % 100_000),
    });
    let mut names = Vec::new();
    for a in algorithms {
        if BUILT_IN.contains(&a.as_str()) {
            names.push((a.clone(), a.clone()));
        } else {
            let alg = Algorithm::parse(a)?;
            registry.0.install(alg)?;
            names.push((a.clone(), registry.0.name_of(alg)));
        }
    }
    let _allowed = AllowedGuard::allow(&BUILT_IN)?;
    let paths = two_unlimited_paths()?;
    let mut samples: Vec<Vec<Sample>> = names.iter().map(|_| Vec::new()).collect();
    let mut port = 6000u16;
    for round in 0..repeat {
        for (i, (label, cc)) in names.iter().enumerate() {
            if stop.load(Ordering::SeqCst) {
                bail!("interrupted; everything it set up is removed");
            }
            port += 1;
            let s = one_run(&paths, cc, seconds, port)?;
            eprintln!(
                "round {}/{repeat} {label}: {:.2} Gbit/s, {:.2} CPU s/GB",
                round + 1,
                s.gbps,
                s.cpu_s_per_gb
            );
            samples[i].push(s);
        }
    }
    let reference = names.iter().position(|(l, _)| l == "reno");
    // Medians: a veth run on a small machine now and then lands in a slow mode (all
    // algorithms, built-in ones too), which a mean would smear over the others.
    let summary = |i: usize| {
        let g: Vec<f64> = samples[i].iter().map(|s| s.gbps).collect();
        let c: Vec<f64> = samples[i].iter().map(|s| s.cpu_s_per_gb).collect();
        (spread(&g), spread(&c))
    };
    println!(
        "MPTCP, two unlimited veth paths, {seconds} s x {repeat} runs each (median [min, max])\n"
    );
    println!("| algorithm | Gbit/s | CPU s per GB | throughput vs reno | CPU/GB vs reno |");
    println!("|---|---|---|---|---|");
    for (i, (label, _)) in names.iter().enumerate() {
        let ((g, g0, g1), (c, c0, c1)) = summary(i);
        let versus = |x: f64, base: f64| format!("{:+.1} %", (x / base - 1.0) * 100.0);
        let (vg, vc) = match reference {
            Some(r) => {
                let ((rg, _, _), (rc, _, _)) = summary(r);
                (versus(g, rg), versus(c, rc))
            }
            None => ("-".into(), "-".into()),
        };
        println!(
            "| {label} | {g:.2} [{g0:.2}, {g1:.2}] | {c:.3} [{c0:.3}, {c1:.3}] | {vg} | {vc} |"
        );
    }
    Ok(true)
}
