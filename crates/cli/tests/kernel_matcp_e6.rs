//! E6 (MATCP, Dimopoulos, Zeephongsekul and Tari, ISCC 2006, Figure 2) on the kernel
//! backend: `run scenarios/e6-sources.toml --backend kernel` places each on/off source's
//! connections with the eBPF programs of `mptcp-lab matcp`, one installation per edge host
//! attached to that host's threaded cgroup. A very short point of docs/matcp-kernel.md's
//! shortened E6 (uplinks at 4 Mbit/s, 1 to 15 sources per edge) must order single path and
//! weighted RTT as the simulator does, and leave nothing behind, after a SIGKILL too (Ctrl-C
//! takes the same clean-up as a run's end; tests/kernel_backend.rs interrupts runs). Root; with MPTCP_LAB_REQUIRE_KERNEL=1 a missing piece fails it.

mod support;

use mptcp_bpf::matcp::install::{live_programs, programs_beyond};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use support::*;

/// The shortened point: 8 sources per edge on average, 7 either side, uplinks at 4 Mbit/s,
/// 6 s of warm-up and 19 s measured.
const POINT: [&str; 10] = [
    "--set",
    "sources=8",
    "--set",
    "spread=7",
    "--set",
    "rate=4Mbps",
    "--set",
    "warmup=6s",
    "--duration",
    "25s",
];

fn e6() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/e6-sources.toml")
        .to_string_lossy()
        .into_owned()
}

fn run(select: &str, out: &Path) -> Child {
    Command::new(bin())
        .args(["run", &e6(), "--backend", "kernel"])
        .args(POINT)
        .args(["--set", &format!("select={select}"), "--out"])
        .arg(out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mptcp-lab run")
}

/// What process `pid` made: namespaces, bpffs directories, cgroups.
fn leftovers_of(pid: u32) -> Vec<String> {
    let prefix = format!("{}{pid}-", cleanup::PREFIX);
    let mut found = Vec::new();
    let netns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    for line in String::from_utf8_lossy(&netns.stdout).lines() {
        if line.starts_with(&prefix) {
            found.push(format!("netns {line}"));
        }
    }
    let cgroups = mptcp_bpf::matcp::install::cgroup2_root().expect("cgroup v2");
    for dir in [PathBuf::from("/sys/fs/bpf"), cgroups] {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with(&prefix) {
                found.push(e.path().display().to_string());
            }
        }
    }
    found
}

/// Waits for run `pid` to have installed its programs (its bpffs directory has a host).
fn wait_for_programs(pid: u32) {
    let dir = PathBuf::from("/sys/fs/bpf").join(format!("{}{pid}-matcp", cleanup::PREFIX));
    for _ in 0..200 {
        if std::fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_some()) {
            return;
        }
        sleep_ms(50);
    }
    panic!("run {pid} never installed its programs");
}

fn variant(out: &Path) -> Value {
    let text = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    let summary: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(summary["backend"], "kernel");
    summary["variants"][0].clone()
}

fn metric(v: &Value, name: &str) -> f64 {
    v["metrics"][name]["mean"]
        .as_f64()
        .unwrap_or_else(|| panic!("{name} missing in {}", v["name"]))
}

#[test]
fn a_short_e6_point_on_the_kernel_orders_the_selectors_and_leaves_nothing() {
    if !kernel_available("a_short_e6_point_on_the_kernel") {
        return;
    }
    let _serial = serial();
    let baseline = live_programs();
    let tmp = std::env::temp_dir().join(cleanup::owned_name("e6"));

    // SIGKILL: what is left goes at the next run's start.
    let mut killed = run("weighted-rtt", &tmp.join("killed"));
    wait_for_programs(killed.id());
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert!(
        !leftovers_of(killed.id()).is_empty(),
        "a killed run leaves its pins"
    );

    let mut variants = Vec::new();
    for select in ["single-path", "weighted-rtt"] {
        let dir = tmp.join(select);
        let child = run(select, &dir);
        let pid = child.id();
        let result = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&result.stderr);
        eprintln!("{}{stderr}", String::from_utf8_lossy(&result.stdout));
        assert!(result.status.success(), "{select}: the run failed");
        assert!(leftovers_of(pid).is_empty(), "{:?}", leftovers_of(pid));
        variants.push(variant(&dir));
    }
    assert!(
        leftovers_of(killed.id()).is_empty(),
        "{:?}",
        leftovers_of(killed.id())
    );
    assert!(
        programs_beyond(&baseline, std::time::Duration::from_secs(5)).is_empty(),
        "MATCP programs still loaded"
    );
    let _ = std::fs::remove_dir_all(&tmp);

    let (single, weighted) = (&variants[0], &variants[1]);
    // The programs placed every connection: single path all on each edge's first path,
    // weighted RTT on the others too (three in four, were the RTTs equal; an edge of one
    // or two sources makes few connections, so the paths are counted over all edges); no
    // socket they could not bind.
    let choices =
        |v: &Value, edge: &str, k: usize| metric(v, &format!("kernel.{edge}.MatcpChoicesPath{k}"));
    let edges = ["edge1", "edge2", "edge3", "edge4"];
    let on = |v: &Value, k: usize| edges.iter().map(|e| choices(v, e, k)).sum::<f64>();
    for edge in edges {
        assert!(
            choices(single, edge, 0) >= 1.0,
            "{edge}: no connection placed"
        );
        for k in 1..4 {
            assert_eq!(
                choices(single, edge, k),
                0.0,
                "{edge}: single path used path {k}"
            );
        }
        for v in [single, weighted] {
            assert_eq!(metric(v, &format!("kernel.{edge}.MatcpBindErrors")), 0.0);
        }
    }
    let all: f64 = (0..4).map(|k| on(weighted, k)).sum();
    eprintln!(
        "weighted RTT's choices per path over the edges: {:?}",
        (0..4).map(|k| on(weighted, k)).collect::<Vec<_>>()
    );
    assert!(
        (1..4).all(|k| on(weighted, k) >= 1.0) && all - on(weighted, 0) >= 0.4 * all,
        "weighted RTT kept to the first paths"
    );
    // Figure 2's orderings. The paths' spread: a placement that did nothing would leave
    // weighted RTT's runs those of single path (the same sources, starts and bursts), a
    // ratio of 1. Seed 1's single-path spread comes from its drawn source counts, so it
    // hardly varies (0.67 on the simulator, 0.645 to 0.649 on the kernel). Weighted RTT's
    // does: the programs draw from the kernel's unseeded random numbers, and 25 s makes few
    // connections; six kernel runs gave 0.12 to 0.45 (ratios 5.4 down to 1.44; the
    // simulator 3.0, 2.0 and 10 in seeds 1 to 3). So the bound is 1.25 times, above what
    // doing nothing gives and below every run seen; the file asks 2 of 450 s measured.
    // The per-source deviation is printed, not asserted: in runs this short its ordering is
    // noise: on the simulator weighted RTT's is the larger in 4 of seeds 1 to 12 (ratios
    // 0.75 to 1.55), and a kernel run of seed 1 gave 0.273 against single path's 0.271.
    // docs/matcp-kernel.md orders it over two seeds of 60 s.
    let spread = |v: &Value| metric(v, "derived.path_goodput_spread");
    let deviation = |v: &Value| metric(v, "all.goodput_std_mbps");
    eprintln!(
        "path goodput spread: single path {:.4}, weighted RTT {:.4}; per-source deviation: {:.4}, {:.4} Mbit/s",
        spread(single),
        spread(weighted),
        deviation(single),
        deviation(weighted)
    );
    assert!(
        spread(weighted) * 1.25 <= spread(single),
        "spread: weighted RTT {} vs single path {}",
        spread(weighted),
        spread(single)
    );
}
