//! MATCP's eBPF programs on this machine's kernel: two uplinks from a client namespace to a
//! server namespace (veth pairs; the client's second address routed out of its own uplink
//! by a source rule), the programs attached to a cgroup of the test's own that only the
//! probe connections run in, and a private bpffs root. Run as root; with
//! MPTCP_LAB_REQUIRE_KERNEL=1 (as CI does) a missing kernel feature fails the tests instead
//! of skipping them.
//!
//! The loaded uplink is path 1: a token bucket at 1 Mbit/s with a queue of 6,000 bytes on
//! the client's side, so that the probes' own initial windows (40 KB each) queue there for
//! tens of milliseconds and overflow it (retransmissions, often a timeout). Path 0 is an
//! unlimited veth (tens of microseconds) unless a test says otherwise.
//!
//! Both uplinks carry IPv4 and IPv6 (fd00:7:1::/64 and fd00:7:2::/64, the second routed by
//! an `ip -6 rule` as the IPv4 one is), and the sink listens on both.

mod support;

use mptcp_bpf::matcp::install::{live_programs, programs_beyond};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};
use support::*;
use testbed::cgroup::Cgroup;

const SERVER: &str = "10.7.1.2:5301";
/// Nothing listens here: a connection is refused at once, without an RTT sample.
const CLOSED: &str = "10.7.1.2:5399";
const PATH0: &str = "10.7.1.1";
const PATH1: &str = "10.7.2.1";
const SERVER6: &str = "[fd00:7:1::2]:5301";
const PATH0_6: &str = "fd00:7:1::1";
const PATH1_6: &str = "fd00:7:2::1";
/// The server's IPv4 address as a dual-stack AF_INET6 socket names it.
const SERVER_MAPPED: &str = "[::ffff:10.7.1.2]:5301";
/// How long the kernel may take to free a detached program.
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

/// The two uplinks, the cgroup, the sink and a private installation; dropped in this
/// order: the programs first, then the cgroup, then the namespaces.
struct Uplinks {
    root: PathBuf,
    cgroup: Cgroup,
    _sink: Process,
    client: Netns,
    server: Netns,
}

fn uplinks(tag: &str, path0_rate: Option<&str>) -> Uplinks {
    let client = netns(&format!("{tag}-c"));
    let server = netns(&format!("{tag}-s"));
    veth(&client, "c0", "10.7.1.1/24", &server, "s0", "10.7.1.2/24");
    veth(&client, "c1", "10.7.2.1/24", &server, "s1", "10.7.2.2/24");
    client.ip("rule add from 10.7.2.1 table 102").unwrap();
    client
        .ip("route add 10.7.1.0/24 via 10.7.2.2 dev c1 table 102")
        .unwrap();
    add_ipv6(&client, &server);
    client
        .tc("qdisc add dev c1 root tbf rate 1mbit burst 3000 limit 6000")
        .unwrap();
    if let Some(rate) = path0_rate {
        client
            .tc(&format!(
                "qdisc add dev c0 root tbf rate {rate} burst 32kbit latency 200ms"
            ))
            .unwrap();
    }
    let sink = server
        .spawn(bin(), &["matcp", "sink", "--listen", "[::]:5301"], &[])
        .expect("sink");
    std::thread::sleep(std::time::Duration::from_millis(200));
    Uplinks {
        root: PathBuf::from("/sys/fs/bpf").join(cleanup::owned_name(&format!("matcp-{tag}"))),
        cgroup: Cgroup::new(&format!("matcp-{tag}")).expect("cgroup"),
        _sink: sink,
        client,
        server,
    }
}

/// The same uplinks in IPv6: fd00:7:x::1 on the client's cx, fd00:7:x::2 on the server's
/// sx. `nodad`: an address in duplicate address detection is `tentative`, and neither bind
/// nor bpf_bind takes it until that is over (about a second).
fn add_ipv6(client: &Netns, server: &Netns) {
    for x in 1..=2 {
        let dev = x - 1;
        client
            .ip(&format!("-6 addr add fd00:7:{x}::1/64 dev c{dev} nodad"))
            .unwrap();
        server
            .ip(&format!("-6 addr add fd00:7:{x}::2/64 dev s{dev} nodad"))
            .unwrap();
    }
    client.ip("-6 rule add from fd00:7:2::1 table 102").unwrap();
    client
        .ip("-6 route add fd00:7:1::/64 via fd00:7:2::2 dev c1 table 102")
        .unwrap();
}

impl Uplinks {
    /// `mptcp-lab matcp ARGS` in the client's network namespace (nsenter, not `ip netns
    /// exec`: that mounts a fresh /sys, without bpffs and the cgroup hierarchy).
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("nsenter");
        c.arg(format!("--net=/run/netns/{}", self.client.name))
            .arg(bin())
            .arg("matcp")
            .args(args)
            .env("MPTCP_LAB_BPF_ROOT", &self.root);
        c
    }

    fn matcp(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("mptcp-lab matcp")
    }

    fn install(&self, extra: &[&str]) {
        let cgroup = self.cgroup.path.to_string_lossy().to_string();
        let mut args = vec![
            "install",
            "--cgroup",
            &cgroup,
            "--check-dst",
            "10.7.1.2,fd00:7:1::2",
        ];
        args.extend_from_slice(extra);
        let out = self.matcp(&args);
        assert!(
            out.status.success(),
            "install {extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn status(&self) -> Value {
        let out = self.matcp(&["status", "--json"]);
        assert!(
            out.status.success(),
            "status: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("status JSON")
    }

    fn remove(&self) {
        let out = self.matcp(&["remove"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Installs `selector` over `paths` and makes LOADED_RUN connections of 40 KB to `to`,
    /// one after the other; their sources.
    fn loaded_run(&self, selector: &[&str], paths: &str, to: &str) -> Vec<String> {
        let mut args = selector.to_vec();
        args.extend(["--path", paths]);
        self.install(&args);
        sources(&self.connect(to, LOADED_RUN, 40_000))
    }

    /// `count` sequential connections from inside the cgroup, `bytes` each; their sources.
    fn connect(&self, to: &str, count: usize, bytes: usize) -> Value {
        self.connect_from(&self.client, to, count, bytes)
    }

    /// The same from another namespace, in the same cgroup.
    fn connect_from(&self, ns: &Netns, to: &str, count: usize, bytes: usize) -> Value {
        let out = Command::new(bin())
            .args(["matcp", "connect", "--to", to, "--netns", &ns.name])
            .arg("--cgroup")
            .arg(&self.cgroup.path)
            .args(["--count", &count.to_string(), "--bytes", &bytes.to_string()])
            .output()
            .expect("connect");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("connect report")
    }
}

impl Drop for Uplinks {
    fn drop(&mut self) {
        let _ = self.matcp(&["remove"]);
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn sources(report: &Value) -> Vec<String> {
    report["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .map(|s| s.as_str().unwrap_or_default().to_string())
        .collect()
}

/// The fixture, or `None` (the test skipped, saying why) where the kernel cannot run it;
/// with the test's turn at the kernel and the programs of ours live before it.
fn setup(test: &str, tag: &str, path0_rate: Option<&str>) -> Option<(Turn, Vec<u32>, Uplinks)> {
    if !kernel_available(test) {
        return None;
    }
    let turn = serial();
    Some((turn, live_programs(), uplinks(tag, path0_rate)))
}

type Turn = std::sync::MutexGuard<'static, ()>;

/// Drops the fixture (removing the installation) and checks that no program of ours loaded
/// since `baseline` outlived it.
fn assert_nothing_left(up: Uplinks, baseline: &[u32]) {
    drop(up);
    assert_eq!(
        programs_beyond(baseline, PATIENCE),
        Vec::<u32>::new(),
        "programs left after remove"
    );
}

fn path_u64(status: &Value, path: usize, field: &str) -> u64 {
    status["paths"][path][field].as_u64().unwrap_or(0)
}

/// Connections one after the other in the runs over the loaded uplink.
const LOADED_RUN: usize = 30;

/// What `matcp status` and the sources of LOADED_RUN connections of 40 KB must show under a
/// measuring selector: after the first connections measured each path, the unloaded path
/// 0 takes (nearly) all; every connection was counted when chosen and when it ended; path
/// 1 measured as loaded.
fn assert_the_loaded_path_was_left(
    selector: &[&str],
    placed: &[String],
    status: &Value,
    paths: [&str; 2],
) {
    const LATE: usize = 20;
    let n = placed.len();
    eprintln!("{selector:?}: {placed:?}\n{status}");
    assert_eq!(n, LOADED_RUN, "{selector:?}: every connection completes");
    let late_on_path0 = placed[n - LATE..].iter().filter(|s| *s == paths[0]).count();
    assert!(
        late_on_path0 >= 18,
        "{selector:?}: {late_on_path0} of the last {LATE} on the unloaded path: {placed:?}"
    );
    // The statistics outlive the connections: every one was counted when it ended.
    let choices: u64 = (0..2).map(|p| path_u64(status, p, "choices")).sum();
    let ended: u64 = (0..2).map(|p| path_u64(status, p, "connections")).sum();
    assert_eq!((choices, ended), (n as u64, n as u64), "{status}");
    assert_eq!(status["bind_errors"], 0);
    for (p, addr) in paths.iter().enumerate() {
        let on_p = placed.iter().filter(|s| s == addr).count() as u64;
        assert_eq!(path_u64(status, p, "choices"), on_p, "{status}");
    }
    if path_u64(status, 1, "connections") > 0 {
        assert!(
            path_u64(status, 1, "rtt_ns") > 10 * path_u64(status, 0, "rtt_ns"),
            "the loaded uplink measures slower: {status}"
        );
        assert!(path_u64(status, 1, "retransmits") > 0, "{status}");
    }
}

#[test]
fn new_connections_leave_the_loaded_uplink_under_each_selector() {
    let test = "new_connections_leave_the_loaded_uplink_under_each_selector";
    let Some((_turn, baseline, up)) = setup(test, "sel", None) else {
        return;
    };
    let paths = format!("{PATH0},{PATH1}");
    let selectors: [&[&str]; 5] = [
        &["--selector", "rtt"],
        &["--selector", "rtt-variation"],
        &["--selector", "rtt-variation", "--variation", "rttvar"],
        &["--selector", "drops"],
        &["--selector", "weighted-rtt"],
    ];
    for selector in selectors {
        let placed = up.loaded_run(selector, &paths, SERVER);
        let status = up.status();
        up.remove();
        assert_the_loaded_path_was_left(selector, &placed, &status, [PATH0, PATH1]);
    }
    // Single path: every connection on the first path given, here the loaded one.
    up.install(&[
        "--selector",
        "single-path",
        "--path",
        &format!("{PATH1},{PATH0}"),
    ]);
    let placed = sources(&up.connect(SERVER, 5, 1_000));
    // The cgroup's sockets in another namespace (here the server's, to its own address)
    // are neither placed nor counted: the paths' addresses are the client's.
    let elsewhere = sources(&up.connect_from(&up.server, SERVER, 3, 1_000));
    let status = up.status();
    up.remove();
    assert_eq!(placed, vec![PATH1.to_string(); 5]);
    assert_eq!(elsewhere, vec!["10.7.1.2".to_string(); 3]);
    assert_eq!(path_u64(&status, 0, "choices"), 5, "{status}");
    assert_eq!(status["bind_errors"], 0, "{status}");
    assert_nothing_left(up, &baseline);
}

#[test]
fn new_ipv6_connections_leave_the_loaded_uplink_and_share_its_statistics_with_ipv4() {
    let test = "new_ipv6_connections_leave_the_loaded_uplink_and_share_its_statistics_with_ipv4";
    let Some((_turn, baseline, up)) = setup(test, "v6", None) else {
        return;
    };
    // IPv6 paths only (cgroup/connect6): placed and measured as the IPv4 ones are, while
    // IPv4 connections, whose family the paths lack, are neither placed nor counted.
    let paths = format!("{PATH0_6},{PATH1_6}");
    let selectors: [&[&str]; 2] = [&["--selector", "rtt"], &["--selector", "drops"]];
    for selector in selectors {
        let placed = up.loaded_run(selector, &paths, SERVER6);
        // To the server's address on uplink 1: left alone, it leaves from that uplink's
        // own address.
        let ipv4 = sources(&up.connect("10.7.2.2:5301", 2, 1_000));
        let status = up.status();
        up.remove();
        assert_eq!(ipv4, vec![PATH1.to_string(); 2], "IPv4 left alone");
        // Unmeasured, path 1 is tried early: only bpf_bind sends a connection to the
        // server's uplink-0 address out of uplink 1.
        assert!(placed.iter().any(|s| s == PATH1_6), "{placed:?}");
        assert_eq!(status["paths"][0]["addr6"], PATH0_6, "{status}");
        assert!(status["paths"][0]["addr4"].is_null(), "{status}");
        assert_the_loaded_path_was_left(selector, &placed, &status, [PATH0_6, PATH1_6]);
    }

    // One address of each family per uplink: one set of statistics per uplink. IPv6
    // connections measure both, then IPv4 ones (connect4) and IPv4-mapped ones from
    // AF_INET6 sockets (connect6) start on the unloaded uplink at once, never having
    // measured the loaded one themselves.
    let dual = |a4: &str, a6: &str| format!("{a4}+{a6}");
    up.install(&[
        "--selector",
        "rtt",
        "--path",
        &format!("{},{}", dual(PATH0, PATH0_6), dual(PATH1, PATH1_6)),
    ]);
    let over_ipv6 = sources(&up.connect(SERVER6, 6, 40_000));
    let measured = up.status();
    let over_ipv4 = sources(&up.connect(SERVER, 5, 40_000));
    let mapped = sources(&up.connect(SERVER_MAPPED, 5, 40_000));
    let status = up.status();
    up.remove();
    eprintln!("{over_ipv6:?} {over_ipv4:?} {mapped:?}\n{status}");
    assert!(
        path_u64(&measured, 1, "rtt_ns") > 10 * path_u64(&measured, 0, "rtt_ns"),
        "IPv6 connections measured the loaded uplink: {over_ipv6:?} {measured}"
    );
    assert_eq!(over_ipv4, vec![PATH0.to_string(); 5], "{status}");
    assert_eq!(mapped, vec![format!("::ffff:{PATH0}"); 5], "{status}");
    let on_path0 = over_ipv6.iter().filter(|s| *s == PATH0_6).count() as u64 + 10;
    assert_eq!(path_u64(&status, 0, "choices"), on_path0, "{status}");
    let ended: u64 = (0..2).map(|p| path_u64(&status, p, "connections")).sum();
    assert_eq!(
        ended, 16,
        "every connection observed on its uplink: {status}"
    );
    assert_eq!(status["bind_errors"], 0, "{status}");
    assert_nothing_left(up, &baseline);
}

#[test]
fn the_refresh_constant_resets_every_measure_after_r_choices_of_one_path() {
    let test = "the_refresh_constant_resets_every_measure_after_r_choices_of_one_path";
    let Some((_turn, baseline, up)) = setup(test, "refresh", None) else {
        return;
    };
    // R = 3 with `rtt`: once both paths are measured the unloaded path 0 wins, until its
    // third choice in a row resets every measure (the paper's refresh, docs/algorithms.md).
    // That connection then measures path 0 again when it ends, while path 1, unmeasured,
    // counts as 0 and takes the next one: without R it never would (the test above).
    const R: usize = 3;
    const N: usize = 14;
    up.install(&[
        "--selector",
        "rtt",
        "--refresh",
        &R.to_string(),
        "--path",
        &format!("{PATH0},{PATH1}"),
    ]);
    let mut placed: Vec<String> = Vec::new();
    let mut refreshes = 0;
    for _ in 0..N {
        placed.extend(sources(&up.connect(SERVER, 1, 40_000)));
        let status = up.status();
        let run = placed.iter().rev().take_while(|s| *s == PATH0).count();
        assert!(run <= R, "{run} choices of path 0 in a row: {placed:?}");
        if run == R {
            // Reset at the R-th choice; the connection that made it has measured path 0
            // since, path 1 not.
            refreshes += 1;
            assert_eq!(status["in_a_row"], 0, "{status}");
            assert!(status["paths"][1]["measure"].is_null(), "{status}");
            assert!(status["paths"][0]["measure"].is_number(), "{status}");
        } else if placed.len() > R + 2 && placed.ends_with(&[PATH0.to_string()]) {
            assert_eq!(status["in_a_row"], run as u64, "{placed:?} {status}");
        }
    }
    up.remove();
    eprintln!("{placed:?}");
    // After R choices of path 0 the next goes to path 1: the pattern 0, 0, 0, 1 repeats.
    for (i, w) in placed.windows(R + 1).enumerate() {
        if w[..R].iter().all(|s| s == PATH0) && i + R < placed.len() {
            assert_eq!(w[R], PATH1, "after {R} on path 0: {placed:?}");
        }
    }
    assert!(
        refreshes >= 2,
        "{refreshes} refreshes in {N} connections: {placed:?}"
    );
    assert_nothing_left(up, &baseline);
}

#[test]
fn weighted_rtt_frequencies_follow_equation_2() {
    let test = "weighted_rtt_frequencies_follow_equation_2";
    // Path 0 limited too, so that both RTTs are milliseconds and path 1's weight is not
    // vanishingly small.
    let Some((_turn, _, up)) = setup(test, "wrtt", Some("8mbit")) else {
        return;
    };
    up.install(&[
        "--selector",
        "weighted-rtt",
        "--path",
        &format!("{PATH0},{PATH1}"),
    ]);
    // Real connections until both paths have an RTT (unmeasured paths are tried first).
    for _ in 0..10 {
        up.connect(SERVER, 1, 40_000);
        let s = up.status();
        if path_u64(&s, 0, "rtt_ns") > 0 && path_u64(&s, 1, "rtt_ns") > 0 {
            break;
        }
    }
    let before = up.status();
    let (r0, r1) = (
        path_u64(&before, 0, "rtt_ns"),
        path_u64(&before, 1, "rtt_ns"),
    );
    assert!(r0 > 0 && r1 > 0, "both paths measured: {before}");
    // Refused connections take no RTT sample: the weights stay as they are while K
    // connections are placed.
    const K: u64 = 4000;
    let report = up.connect(CLOSED, K as usize, 0);
    assert_eq!(report["refused"].as_u64(), Some(K));
    let after = up.status();
    up.remove();
    assert_eq!(
        (path_u64(&after, 0, "rtt_ns"), path_u64(&after, 1, "rtt_ns")),
        (r0, r1),
        "refused connections left the RTTs alone: {after}"
    );
    let d: Vec<u64> = (0..2)
        .map(|p| path_u64(&after, p, "choices") - path_u64(&before, p, "choices"))
        .collect();
    assert_eq!(d[0] + d[1], K);
    // Equation 2 with two paths: W_1 = (T - r1) / T = r0 / (r0 + r1). The count on path 1
    // is binomial(K, W_1); it must lie within 4 standard deviations (plus one for the
    // count's discreteness) of K W_1: a false alarm about once in 16,000 runs.
    let w1 = r0 as f64 / (r0 + r1) as f64;
    let mean = K as f64 * w1;
    let sd = (K as f64 * w1 * (1.0 - w1)).sqrt();
    eprintln!(
        "RTTs {r0} and {r1} ns: W_1 = {w1:.4}; {} of {K} on path 1 (expected {mean:.1}, sd {sd:.1})",
        d[1]
    );
    assert!(
        (d[1] as f64 - mean).abs() <= 4.0 * sd + 1.0,
        "path 1 chosen {} times, expected {mean:.1} +- {:.1}",
        d[1],
        4.0 * sd + 1.0
    );
}

#[test]
fn errors_and_a_killed_install_leave_nothing_behind() {
    let test = "errors_and_a_killed_install_leave_nothing_behind";
    let Some((_turn, baseline, up)) = setup(test, "err", None) else {
        return;
    };
    let cgroup = up.cgroup.path.to_string_lossy().to_string();
    let refused = |args: &[&str], want: &str| {
        let out = up.matcp(args);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(
            !out.status.success() && err.contains(want),
            "{args:?}: {err}"
        );
    };
    let install = |path: &str, dst: &str, cg: &str| {
        vec![
            "install".to_string(),
            "--selector".into(),
            "rtt".into(),
            "--path".into(),
            path.into(),
            "--check-dst".into(),
            dst.into(),
            "--cgroup".into(),
            cg.into(),
        ]
    };
    let refused_install = |path: &str, dst: &str, cg: &str, want: &str| {
        let args = install(path, dst, cg);
        refused(&args.iter().map(String::as_str).collect::<Vec<_>>(), want);
    };
    refused_install(
        "10.99.99.99",
        "10.7.1.2",
        &cgroup,
        "is not an address of this host",
    );
    refused_install(PATH0, "203.0.113.9", &cgroup, "no route from 10.7.1.1");
    refused_install(
        "fd00:7:99::1",
        "fd00:7:1::2",
        &cgroup,
        "fd00:7:99::1 is not an address of this host",
    );
    refused_install(
        PATH0_6,
        "2001:db8::9",
        &cgroup,
        "no route from fd00:7:1::1 to 2001:db8::9",
    );
    refused_install(
        &format!("{PATH0}+{PATH0_6},{PATH1}"),
        "10.7.1.2",
        &cgroup,
        "differ in address families",
    );
    refused_install(PATH0, "10.7.1.2", "/tmp", "is not a cgroup v2 directory");
    refused_install(
        &format!("{PATH0},{PATH0}"),
        "10.7.1.2",
        &cgroup,
        "given twice",
    );
    refused(&["status"], "not installed");
    if Command::new("setpriv").arg("--version").output().is_ok() {
        let out = Command::new("setpriv")
            .args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
            .args([bin(), "matcp", "status"])
            .output()
            .expect("setpriv");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("needs root"), "{err}");
    }
    assert_eq!(
        programs_beyond(&baseline, PATIENCE),
        Vec::<u32>::new(),
        "a refused install loads nothing"
    );

    up.install(&["--selector", "rtt", "--path", PATH0]);
    refused_install(PATH0, "10.7.1.2", &cgroup, "already installed");
    up.remove();
    assert_eq!(
        programs_beyond(&baseline, PATIENCE),
        Vec::<u32>::new(),
        "programs left after remove"
    );

    // kill -9 at every stage of an install: the next command (here `status`) removes what
    // the killed one left, and what remains is either a whole installation or nothing.
    let mut whole = 0;
    for delay_ms in (0..=600).step_by(40) {
        let args = install(PATH0, "10.7.1.2", &cgroup);
        let mut child = up
            .command(&args.iter().map(String::as_str).collect::<Vec<_>>())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("install");
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let pid = child.id();
        let _ = child.kill();
        let _ = child.wait();
        let staging = PathBuf::from("/sys/fs/bpf").join(format!("mlab-{pid}-matcp-new"));
        let status = up.matcp(&["status", "--json"]);
        assert!(!staging.exists(), "{delay_ms} ms: staging pins left");
        if status.status.success() {
            let s: Value = serde_json::from_slice(&status.stdout).expect("status JSON");
            assert_eq!(s["selector"], "rtt", "{delay_ms} ms: a whole installation");
            whole += 1;
        }
        up.remove();
        assert_eq!(
            programs_beyond(&baseline, PATIENCE),
            Vec::<u32>::new(),
            "{delay_ms} ms: programs left"
        );
        let attached = Command::new("bpftool")
            .args(["cgroup", "show"])
            .arg(&up.cgroup.path)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        assert!(
            attached.is_empty(),
            "{delay_ms} ms: still attached: {attached}"
        );
    }
    eprintln!("killed installs: {whole} of 16 had finished");
    assert!(
        !up.root.exists(),
        "the private root is removed with the last pin"
    );
}

#[test]
fn a_dead_commands_cgroup_and_staging_pins_go_at_the_next_start() {
    let test = "a_dead_commands_cgroup_and_staging_pins_go_at_the_next_start";
    let Some((_turn, _, up)) = setup(test, "dead", None) else {
        return;
    };
    let mut exited = Command::new("true").spawn().expect("true");
    let pid = exited.id();
    exited.wait().expect("true");
    let root = mptcp_bpf::matcp::install::cgroup2_root().expect("cgroup v2");
    let cgroup = root.join(format!("mlab-{pid}-matcp-x"));
    let staging = PathBuf::from("/sys/fs/bpf").join(format!("mlab-{pid}-matcp-new"));
    for dir in [&cgroup, &staging] {
        std::fs::create_dir(dir).expect("a dead process's directory");
    }
    let out = up.matcp(&["status"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not installed"), "{err}");
    assert!(!cgroup.exists(), "the dead process's cgroup is removed");
    assert!(
        !staging.exists(),
        "the dead process's staging pins are removed"
    );
}
