//! `run --backend kernel` end to end: a seed experiment on real MPTCP through the emulator
//! matches its published figures, a capture is readable, and nothing is left behind after
//! success, Ctrl-C or a crash (which the next run cleans up).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use support::*;

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name)
}

fn out_dir(tag: &str) -> PathBuf {
    std::env::temp_dir().join(cleanup::owned_name(tag))
}

/// Namespaces, bpffs directories and registered algorithms that process `pid` made.
fn leftovers_of(pid: u32) -> Vec<String> {
    let mut found = Vec::new();
    let prefix = format!("{}{pid}-", cleanup::PREFIX);
    let netns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    for line in String::from_utf8_lossy(&netns.stdout).lines() {
        if line.starts_with(&prefix) {
            found.push(format!("netns {line}"));
        }
    }
    for e in std::fs::read_dir("/sys/fs/bpf").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with(&prefix) {
            found.push(format!("bpffs {name}"));
        }
    }
    let cc_prefix = format!("m{}", pid % 100_000);
    let available =
        std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control").unwrap();
    for n in available.split_whitespace() {
        if n.starts_with(&cc_prefix) {
            found.push(format!("congestion control {n}"));
        }
    }
    found
}

/// Our struct_ops maps the kernel still holds beyond `baseline` after a run, given the
/// seconds it takes to free what was removed. A socket that outlives its run keeps its
/// congestion control (and its namespace) alive: that is a leak.
fn held_after_run(baseline: &[u32]) -> Vec<u32> {
    mptcp_bpf::system::struct_ops_held_beyond(baseline, std::time::Duration::from_secs(10))
}

fn start_run(args: &[&str]) -> Child {
    Command::new(bin())
        .arg("run")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs `mptcp-lab run ARGS`, which must fail and leave nothing behind; its stderr.
fn refused_run(args: &[&str]) -> String {
    let run = start_run(args);
    let pid = run.id();
    let out = run.wait_with_output().unwrap();
    assert!(!out.status.success(), "run {args:?} should have failed");
    assert!(leftovers_of(pid).is_empty(), "{:?}", leftovers_of(pid));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn wait_for_namespaces(pid: u32) {
    for _ in 0..100 {
        if leftovers_of(pid).iter().any(|l| l.starts_with("netns")) {
            return;
        }
        sleep_ms(100);
    }
    panic!("run {pid} never created its namespaces");
}

#[test]
fn e3_on_the_kernel_matches_table_3_and_leaves_nothing_even_after_a_crash() {
    if !kernel_available("e3_on_the_kernel") {
        return;
    }
    let _serial = serial();
    let baseline = mptcp_bpf::system::live_struct_ops();
    let e3 = scenario("e3-aggregation.toml");
    let e3 = e3.to_str().unwrap();

    // A run killed outright leaves its namespaces and its congestion controls behind...
    let crashed_out = out_dir("crashed");
    let mut crashed = start_run(&[
        e3,
        "--backend",
        "kernel",
        "--out",
        crashed_out.to_str().unwrap(),
    ]);
    wait_for_namespaces(crashed.id());
    sleep_ms(1000);
    crashed.kill().unwrap();
    crashed.wait().unwrap();
    let left = leftovers_of(crashed.id());
    assert!(
        !left.is_empty(),
        "a killed run should have left something to clean"
    );

    // ...which the next run removes before it starts.
    let out = out_dir("e3");
    let run = start_run(&[
        e3,
        "--backend",
        "kernel",
        "--duration",
        "25s",
        "--strict",
        "--pcap",
        "b-isp2",
        "--out",
        out.to_str().unwrap(),
    ]);
    let pid = run.id();
    let result = run.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&result.stdout),
        String::from_utf8_lossy(&result.stderr),
    );
    eprintln!("{stdout}{stderr}");
    assert!(
        stderr.contains(&format!(
            "removed a crashed run's netns {}{}-",
            cleanup::PREFIX,
            crashed.id()
        )),
        "the crashed run's namespaces were not reported removed"
    );
    assert!(
        leftovers_of(crashed.id()).is_empty(),
        "{:?}",
        leftovers_of(crashed.id())
    );
    // --strict: every published figure of Table 3 within its tolerance (3 % single path,
    // 5 % MPTCP).
    assert!(result.status.success(), "checks failed on the kernel");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["backend"], "kernel");
    assert_eq!(summary["variants"].as_array().unwrap().len(), 3);
    // Both subflows carried data.
    let mptcp = summary["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "mode=mptcp-balia")
        .unwrap();
    for k in 0..2 {
        let sf = mptcp["metrics"][format!("group.download.sf{k}.goodput_mbps")]["mean"]
            .as_f64()
            .unwrap();
        assert!(sf > 3.0, "subflow {k}: {sf} Mbit/s");
    }
    // The hosts' own counters: host `a` took this variant's one MPTCP handshake and its
    // join, and nothing fell back to TCP.
    let metric = |name: &str| mptcp["metrics"][name]["mean"].as_f64();
    assert_eq!(metric("kernel.a.MPTcpExtMPCapableSYNRX"), Some(1.0));
    assert!(metric("kernel.a.MPTcpExtMPJoinSynRx").unwrap() >= 1.0);
    assert_eq!(metric("kernel.mptcp_fallbacks"), Some(0.0));
    // The Balia variant says how many of its callbacks the kernel skipped (whatever this
    // kernel did); the Reno ones run no program of ours and have no such figure.
    assert!(metric("kernel.cc_repairs").is_some_and(|n| n >= 0.0));
    for v in summary["variants"].as_array().unwrap() {
        if v["name"] != "mode=mptcp-balia" {
            assert!(v["metrics"]["kernel.cc_repairs"].is_null(), "{}", v["name"]);
        }
    }
    // Every variant's run reports the emulator's own losses and lateness apart from the
    // links' drops, with the flag; a run that is flagged says so at the end of the output.
    for v in summary["variants"].as_array().unwrap() {
        let runs = v["emulator"]
            .as_array()
            .expect("an emulator section per variant");
        assert_eq!(runs.len(), 1, "{}: one entry per seed", v["name"]);
        let e = &runs[0];
        assert_eq!(e["seed"], 1);
        assert!(e["offered_pkts"].as_u64().unwrap() > 10_000, "{e}");
        assert_eq!(e["own_loss_bound"], 0.001);
        assert_eq!(e["late_bound_ms"], 5.0);
        let unreliable = e["unreliable"].as_bool().expect("a boolean flag");
        assert_eq!(
            unreliable,
            stderr.contains(&format!(
                "warning: UNRELIABLE run: {} seed {}",
                v["name"].as_str().unwrap(),
                e["seed"]
            )),
            "{e}"
        );
        assert!(
            v["metrics"]["emulator.own_losses"]["mean"]
                .as_f64()
                .is_some()
        );
    }
    // The capture of the ISP-2 access link is there and tshark reads TCP from it.
    let pcap = out.join("pcap").join("mode=tcp-isp2-seed1-b-isp2.pcap");
    let tshark = Command::new("tshark")
        .arg("-r")
        .arg(&pcap)
        .args(["-Y", "tcp", "-c", "100"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&tshark.stdout).lines().count(),
        100,
        "tshark on {}: {}",
        pcap.display(),
        String::from_utf8_lossy(&tshark.stderr)
    );
    // Each variant's segments sent again, from its sender's sockets (`tcpi_total_retrans`):
    // no fewer than the retransmissions the capture saw delivered, no more than its sending
    // host's count (`nstat`'s RetransSegs: the flow is the host's only sender). Timeouts and
    // loss probes the kernel counts per host only, and the group has none rather than zeros.
    let delivered_again = Command::new("tshark")
        .arg("-r")
        .arg(&pcap)
        .args(["-Y", "tcp.analysis.retransmission && tcp.len > 0"])
        .output()
        .unwrap();
    let delivered_again = String::from_utf8_lossy(&delivered_again.stdout)
        .lines()
        .count() as f64;
    for v in summary["variants"].as_array().unwrap() {
        let metric = |name: &str| v["metrics"][name]["mean"].as_f64();
        let resent = metric("group.download.retransmitted_segments")
            .unwrap_or_else(|| panic!("{}: no retransmitted_segments", v["name"]));
        let host = metric("kernel.b.TcpRetransSegs").unwrap();
        assert!(resent <= host, "{}: {resent} > host's {host}", v["name"]);
        if v["name"] == "mode=tcp-isp2" {
            assert!(
                resent >= delivered_again,
                "{resent} < {delivered_again} seen delivered again"
            );
        }
        assert_eq!(metric("group.download.timeouts"), None);
        assert_eq!(metric("group.download.loss_probes"), None);
        // The data level's counts are the kernel's per host (MPTcpExtSubflowStale,
        // MPTcpExtMPTCPRetrans), not per group.
        assert_eq!(metric("group.download.stale_subflows"), None);
        assert_eq!(metric("group.download.data_retransmissions"), None);
    }
    // And the report works on kernel results as on the simulator's.
    let report = Command::new(bin())
        .arg("report")
        .arg(&out)
        .output()
        .unwrap();
    assert!(report.status.success());
    assert!(leftovers_of(pid).is_empty(), "{:?}", leftovers_of(pid));
    // Neither run, the killed one included, left a congestion control in the kernel.
    let held = held_after_run(&baseline);
    assert!(
        held.is_empty(),
        "struct_ops maps still held after the runs: {held:?}"
    );
    let _ = std::fs::remove_dir_all(out);
    let _ = std::fs::remove_dir_all(crashed_out);
}

#[test]
fn ctrl_c_stops_a_kernel_run_and_removes_everything() {
    if !kernel_available("ctrl_c_stops_a_kernel_run") {
        return;
    }
    let _serial = serial();
    let baseline = mptcp_bpf::system::live_struct_ops();
    let out = out_dir("ctrl-c");
    let run = start_run(&[
        scenario("e5-handover.toml").to_str().unwrap(),
        "--backend",
        "kernel",
        "--out",
        out.to_str().unwrap(),
    ]);
    let pid = run.id();
    wait_for_namespaces(pid);
    sleep_ms(2000);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let result = run.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(!result.status.success());
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(leftovers_of(pid).is_empty(), "{:?}", leftovers_of(pid));
    assert!(!out.join("summary.json").exists(), "nothing half-written");
    let held = held_after_run(&baseline);
    assert!(
        held.is_empty(),
        "struct_ops maps still held after Ctrl-C: {held:?}"
    );
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn kernel_runs_refuse_clearly() {
    if !kernel_available("kernel_runs_refuse_clearly") {
        return;
    }
    let _serial = serial();
    let e3 = scenario("e3-aggregation.toml");
    // Not root: say what is needed, before touching anything.
    let out = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            bin(),
            "run",
        ])
        .arg(&e3)
        .args(["--backend", "kernel", "--out", "/tmp/never"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("needs root"), "{err}");
    // A link that does not exist.
    let e3 = e3.to_str().unwrap();
    let out = std::env::temp_dir().join(format!("mptcp-lab-refused-{}", std::process::id()));
    let out_arg = out.to_str().unwrap();
    let err = refused_run(&[
        e3,
        "--backend",
        "kernel",
        "--pcap",
        "nowhere",
        "--out",
        out_arg,
    ]);
    assert!(
        err.contains("--pcap nowhere: no such link; links are"),
        "{err}"
    );
    // A run that made nothing leaves no results folder behind.
    assert!(!out.exists(), "{} was left behind", out.display());
    // A sysctl that is not per namespace is refused before anything is made; one this
    // kernel does not have fails the run once its hosts exist, and they are removed.
    let err = refused_run(&[e3, "--backend", "kernel", "--sysctl", "kernel.panic=1"]);
    assert!(
        err.contains("--sysctl kernel.panic=1: expected KEY=VALUE with a net.* key"),
        "{err}"
    );
    let err = refused_run(&[
        e3,
        "--backend",
        "kernel",
        "--sysctl",
        "net.mptcp.no_such_setting=1",
    ]);
    assert!(
        err.contains("--sysctl on host") && err.contains("setting net.mptcp.no_such_setting=1"),
        "{err}"
    );
    // An unknown backend.
    let out = Command::new(bin())
        .arg("run")
        .arg(e3)
        .args(["--backend", "ns3"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid value 'ns3' for '--backend <BACKEND>'")
            && err.contains("[possible values: sim, kernel]"),
        "{err}"
    );
}

/// Data segments from `from` and pure ACKs from `to` in a capture, read by tshark.
fn segments_and_acks(pcap: &Path, from: &str, to: &str) -> (u64, u64) {
    let out = Command::new("tshark")
        .arg("-r")
        .arg(pcap)
        .args(["-T", "fields", "-e", "ip.src", "-e", "tcp.len"])
        .output()
        .unwrap();
    let (mut data, mut acks) = (0, 0);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut f = line.split('\t');
        let (src, len) = (f.next().unwrap_or(""), f.next().unwrap_or(""));
        match (src, len.parse::<u32>()) {
            (s, Ok(n)) if s == from && n > 0 => data += 1,
            (s, Ok(0)) if s == to => acks += 1,
            _ => {}
        }
    }
    (data, acks)
}

#[test]
fn delayed_ack_false_makes_the_kernel_receiver_acknowledge_every_segment() {
    if !kernel_available("delayed_ack_false_on_the_kernel") {
        return;
    }
    let _serial = serial();
    let dir = out_dir("quickack");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("quickack.toml");
    std::fs::write(
        &file,
        r#"
[scenario]
name = "quickack"
duration = "4s"
[variants]
delayed_ack = [true, false]
[[node]]
name = "a"
kind = "host"
[[node]]
name = "b"
kind = "host"
[[link]]
a = "a"
b = "b"
rate = "10Mbps"
delay = "5ms"
[[flow]]
name = "bulk"
from = "a"
to = "b"
delayed_ack = "${delayed_ack}"
"#,
    )
    .unwrap();
    let out = dir.join("out");
    let result = Command::new(bin())
        .arg("run")
        .arg(&file)
        .args(["--backend", "kernel", "--pcap", "a-b", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let ratio = |variant: &str| {
        let pcap = out
            .join("pcap")
            .join(format!("delayed_ack={variant}-seed1-a-b.pcap"));
        let (data, acks) = segments_and_acks(&pcap, "10.0.0.1", "10.0.0.2");
        assert!(data > 1000, "{variant}: only {data} data segments");
        acks as f64 / data as f64
    };
    // Linux's own policy: about one ACK per two segments (more at the start, in quick-ACK
    // mode). With the route's quickack metric: one per segment.
    let (delayed, quick) = (ratio("true"), ratio("false"));
    assert!(
        delayed < 0.75,
        "delayed ACKs: {delayed:.2} ACKs per segment"
    );
    assert!(quick > 0.95, "quick ACKs: {quick:.2} ACKs per segment");
    // The run's own count, from the receiving socket (`tcpi_segs_out` over
    // `tcpi_data_segs_in`, from the first 100 ms sample on), agrees with the capture's.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    for (variant, captured) in [("true", delayed), ("false", quick)] {
        let v = summary["variants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == format!("delayed_ack={variant}"))
            .unwrap();
        let counted = v["metrics"]["group.bulk.acks_per_data_segment"]["mean"]
            .as_f64()
            .expect("acks_per_data_segment");
        assert!(
            (counted - captured).abs() < 0.05,
            "delayed_ack={variant}: {counted:.3} counted, {captured:.3} captured"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// ndiffports on the kernel (Linux has none; the backend announces the listener's address
/// again with other ports): E5.3 with `subflows = 3` gives its connection three subflows over
/// the one interface, each carrying data and told apart by its port; a scenario whose
/// subflows the kernel's per-host path manager cannot honour is refused, not run with fewer.
#[test]
fn ndiffports_opens_every_subflow_over_one_interface_or_refuses() {
    if !kernel_available("ndiffports_opens_every_subflow_over_one_interface_or_refuses") {
        return;
    }
    let _serial = serial();
    let e53 = scenario("e5-ndiffports.toml");
    let e53 = e53.to_str().unwrap();
    let out = out_dir("ndiffports");
    let run = start_run(&[
        e53,
        "--backend",
        "kernel",
        "--set",
        "subflows=3",
        "--duration",
        "25s",
        "--out",
        out.to_str().unwrap(),
    ]);
    let pid = run.id();
    let result = run.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    eprintln!("{}{stderr}", String::from_utf8_lossy(&result.stdout));
    assert!(result.status.success(), "the run failed");
    assert!(
        !stderr.contains("ndiffports subflows and had at most"),
        "{stderr}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let variant = &summary["variants"][0];
    let metric = |name: &str| variant["metrics"][name]["mean"].as_f64();
    for k in 0..3 {
        let sf = metric(&format!("group.mptcp.sf{k}.goodput_mbps")).unwrap();
        assert!(sf > 0.1, "subflow {k}: {sf} Mbit/s");
    }
    assert_eq!(metric("group.mptcp.sf3.goodput_mbps"), None);
    // The listening host took the connection's two joins, on its announced ports.
    assert_eq!(metric("kernel.client.MPTcpExtMPJoinSynRx"), Some(2.0));
    assert_eq!(metric("kernel.mptcp_fallbacks"), Some(0.0));
    assert!(leftovers_of(pid).is_empty(), "{:?}", leftovers_of(pid));
    let _ = std::fs::remove_dir_all(&out);

    // A second MPTCP group to the same host that is not ndiffports would be offered the
    // extra ports too: refused, with the reason.
    let text = std::fs::read_to_string(e53).unwrap().replace(
        "protocol = \"tcp\"\ncc = \"reno\"",
        "protocol = \"mptcp\"\ncc = \"reno\"",
    );
    let mixed = std::env::temp_dir().join(cleanup::owned_name("mixed.toml"));
    std::fs::write(&mixed, text).unwrap();
    let err = refused_run(&[mixed.to_str().unwrap(), "--backend", "kernel"]);
    assert!(
        err.contains("flow groups `mptcp` and `tcp` both open MPTCP connections to host `client`")
            && err.contains("no variant of this scenario can run on the kernel backend"),
        "{err}"
    );
    let _ = std::fs::remove_file(mixed);
}
