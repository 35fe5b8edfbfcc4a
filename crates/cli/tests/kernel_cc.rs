//! The eBPF congestion controls on this machine's kernel, in network namespaces.
//! Run as root; with MPTCP_LAB_REQUIRE_KERNEL=1 (as CI does) a missing kernel feature
//! fails the tests instead of skipping them.

mod support;

use serde_json::Value;
use support::*;

/// Every eBPF algorithm, by the name it registers under (fully coupled is `fcoupled`).
const COUPLED: [&str; 6] = ["lia", "olia", "balia", "wvegas", "ewtcp", "fcoupled"];

/// Client and server joined by two veth pairs, each limited to 20 Mbit/s at the client;
/// the client's second address is an MPTCP `subflow` endpoint, routed out of its own
/// interface by a source rule.
struct TwoPaths {
    client: Netns,
    server: Netns,
}

fn two_paths(tag: &str) -> TwoPaths {
    let client = netns(&format!("{tag}-c"));
    let server = netns(&format!("{tag}-s"));
    veth(&client, "c0", "10.1.1.1/24", &server, "s0", "10.1.1.2/24");
    veth(&client, "c1", "10.1.2.1/24", &server, "s1", "10.1.2.2/24");
    client.ip("rule add from 10.1.2.1 table 102").unwrap();
    client
        .ip("route add 10.1.1.0/24 via 10.1.2.2 dev c1 table 102")
        .unwrap();
    for ns in [&client, &server] {
        ns.ip("mptcp limits set subflows 2 add_addr_accepted 2")
            .unwrap();
    }
    client
        .ip("mptcp endpoint add 10.1.2.1 dev c1 subflow")
        .unwrap();
    tbf(&client, "c0", "20mbit", "50ms");
    tbf(&client, "c1", "20mbit", "50ms");
    TwoPaths { client, server }
}

/// Makes `cc` the namespace's default as well as the socket's choice. Linux 6.18 applies an
/// MPTCP socket's TCP_CONGESTION to the subflows it has, but a subflow that joins later
/// sometimes starts with the namespace's default instead (seen here: the second subflow ran
/// bbr in about half the runs); the default closes that gap.
fn use_everywhere(ns: &Netns, cc: &str) {
    ns.set_default_cc(cc).unwrap();
}

#[test]
fn install_list_remove_and_reinstall_leave_nothing_behind() {
    if !kernel_available("install_list_remove_and_reinstall_leave_nothing_behind") {
        return;
    }
    let _serial = serial();
    let reg = TestRegistry::new("a");
    let registered =
        || std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control").unwrap();

    let (ok, out, err) = reg.cc(&["install", "lia", "balia"]);
    assert!(ok, "{out}{err}");
    assert!(
        out.contains(&format!("{}: installed", reg.name("lia"))),
        "{out}"
    );
    assert!(registered().contains(&reg.name("lia")) && registered().contains(&reg.name("balia")));
    assert!(reg.root.join("lia/link").exists() && reg.root.join("lia/subflows").exists());

    // Twice is harmless.
    let (ok, out, _) = reg.cc(&["install", "lia"]);
    assert!(ok && out.contains("already installed"), "{out}");

    let (ok, out, _) = reg.cc(&["list"]);
    assert!(ok);
    let line = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(&reg.name(name)))
            .unwrap()
            .to_string()
    };
    assert!(
        line("lia").contains("installed") && line("balia").contains("installed"),
        "{out}"
    );
    assert!(
        line("olia").contains(" - "),
        "olia was not installed: {out}"
    );

    // The same name from another registry is somebody else's: refused, clearly.
    let other = reg.sharing_names("other");
    let (ok, _, err) = other.cc(&["install", "lia"]);
    assert!(!ok && err.contains("already taken"), "{err}");

    // In use: a connection running it keeps `remove` from pulling it away.
    let ns = netns("inuse");
    let recv = agent(&ns, &["recv", "--listen", "127.0.0.1:5300"]);
    let send = agent(
        &ns,
        &[
            "send",
            "--to",
            "127.0.0.1:5300",
            "--cc",
            &reg.name("lia"),
            "--seconds",
            "3",
        ],
    );
    sleep_ms(1500);
    let (ok, _, err) = reg.cc(&["remove", "lia"]);
    assert!(
        !ok && err.contains("in use by"),
        "remove while in use: {err}"
    );
    let (_, out, _) = reg.cc(&["list", "--json"]);
    let list: Value = serde_json::from_str(&out).unwrap();
    let lia = list
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == reg.name("lia"))
        .unwrap();
    assert!(lia["sockets"].as_u64().unwrap() >= 1, "{list}");
    assert_eq!(report(send)["cc"], reg.name("lia"));
    report(recv);

    // Closed sockets release their state; then removal goes through and unregisters.
    let (ok, out, err) = reg.cc(&["remove", "all"]);
    assert!(ok, "{out}{err}");
    assert!(
        !registered().contains(&reg.name("lia")),
        "still registered: {}",
        registered()
    );
    assert!(!reg.root.exists(), "pins left in {}", reg.root.display());

    // And back again.
    reg.install_all();
    for name in COUPLED {
        assert!(
            registered().contains(&reg.name(name)),
            "{name} after reinstall"
        );
    }
    drop(ns);

    // The leak check itself: a namespace whose default is the algorithm holds it after
    // `remove`, and the check sees that; once the namespace is gone, nothing is held.
    let holder = netns("holder");
    holder.set_default_cc(&reg.name("lia")).unwrap();
    let (ok, _, err) = reg.cc(&["remove", "all"]);
    assert!(ok, "{err}");
    assert!(
        !reg.held(std::time::Duration::from_secs(2)).is_empty(),
        "a namespace default holds lia, but the check saw nothing held"
    );
    drop(holder);
    reg.finish();
}

#[test]
fn bad_requests_get_clear_errors() {
    if !kernel_available("bad_requests_get_clear_errors") {
        return;
    }
    let reg = TestRegistry::new("b");
    let (ok, _, err) = reg.cc(&["install", "cubic2"]);
    assert!(
        !ok && err.contains("unknown congestion control `cubic2`") && err.contains("lia, olia"),
        "{err}"
    );
    // Not root: say so, before touching anything.
    let out = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            bin(),
            "cc",
            "install",
            "lia",
        ])
        .envs(reg.env())
        .output()
        .expect("setpriv");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("needs root"), "{err}");
    assert!(!reg.root.exists());
}

/// `net.ipv4.NAME` of the calling thread's namespace.
fn read_ipv4(name: &str) -> String {
    std::fs::read_to_string(format!("/proc/sys/net/ipv4/{name}")).unwrap()
}

/// Linux 6.18 answers a namespace that asks for a restricted default algorithm with EPERM
/// and keeps the reference it took: for an eBPF algorithm, a struct_ops map that nothing can
/// free until reboot (how four `lia` maps leaked while the eBPF algorithms were developed). So the
/// request must never reach the kernel: refused by name, the namespace's default unchanged;
/// and defaulting to one of ours and back leaves no struct_ops map held (`finish`).
#[test]
fn a_restricted_default_is_refused_before_the_kernel_sees_it() {
    if !kernel_available("a_restricted_default_is_refused_before_the_kernel_sees_it") {
        return;
    }
    let _serial = serial();
    let allowed = read_ipv4("tcp_allowed_congestion_control");
    let available = read_ipv4("tcp_available_congestion_control");
    let Some(restricted) = available
        .split_whitespace()
        .find(|a| !allowed.split_whitespace().any(|b| b == *a))
    else {
        eprintln!("every registered algorithm is allowed here: no restricted one to ask for");
        return;
    };
    let ns = netns("restricted");
    let default = || {
        ns.enter(|| Ok(read_ipv4("tcp_congestion_control")))
            .unwrap()
            .trim()
            .to_string()
    };
    let before = default();
    let err = ns.set_default_cc(restricted).unwrap_err().to_string();
    assert!(
        err.contains(&format!("{restricted} is restricted")),
        "{err}"
    );
    assert_eq!(default(), before);
    // Our own algorithms are registered unrestricted, so a namespace may default to them,
    // and letting go of the default lets go of the algorithm.
    let reg = TestRegistry::new("r");
    let (ok, out, err) = reg.cc(&["install", "lia"]);
    assert!(ok, "{out}{err}");
    ns.set_default_cc(&reg.name("lia")).unwrap();
    assert_eq!(default(), reg.name("lia"));
    ns.set_default_cc("reno").unwrap();
    drop(ns);
    reg.finish();
}

#[test]
fn mptcp_over_two_paths_uses_both_subflows_with_each_algorithm() {
    if !kernel_available("mptcp_over_two_paths_uses_both_subflows_with_each_algorithm") {
        return;
    }
    let _serial = serial();
    let reg = TestRegistry::new("m");
    reg.install_all();
    let net = two_paths("2p");
    for (i, alg) in COUPLED.iter().enumerate() {
        let name = reg.name(alg);
        use_everywhere(&net.client, &name);
        let port = (5400 + i).to_string();
        let before = (
            net.client.tx_bytes("c0").unwrap(),
            net.client.tx_bytes("c1").unwrap(),
        );
        let recv = agent(
            &net.server,
            &["recv", "--mptcp", "--listen", &format!("0.0.0.0:{port}")],
        );
        let send = agent(
            &net.client,
            &[
                "send",
                "--mptcp",
                "--to",
                &format!("10.1.1.2:{port}"),
                "--cc",
                &name,
                "--seconds",
                "5",
            ],
        );
        sleep_ms(2500);
        // The connection as `cc show` lists it, once both subflows are there (polled for a
        // second: a subflow appears when its congestion control starts).
        let mut conn = Value::Null;
        for _ in 0..10 {
            let show = reg.show();
            conn = show
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["algorithm"] == *alg && c["token"].as_u64() != Some(0))
                .cloned()
                .unwrap_or(Value::Null);
            if conn["subflows"].as_array().is_some_and(|s| s.len() == 2) {
                break;
            }
            sleep_ms(100);
        }
        if conn["subflows"].as_array().is_none_or(|s| s.len() != 2) {
            let ss = std::process::Command::new("ip")
                .args(["netns", "exec", &net.client.name, "ss", "-tinM"])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
                .unwrap_or_default();
            panic!("{alg}: `cc show` lists {conn}\nss -tinM in the client:\n{ss}");
        }
        let subflows = conn["subflows"].as_array().unwrap();
        assert_eq!(subflows.len(), 2, "{alg}: {conn}");
        for s in subflows {
            assert_eq!(
                s["subflows"], 2,
                "{alg}: the program saw {} subflows",
                s["subflows"]
            );
            assert_eq!(s["coupled"], 2, "{alg}: {s}");
            // Fully coupled cuts a path by half the whole connection's window (w_r - tau_r
            // X / 2): a path whose window is below the other's falls to 1 packet, by design.
            let least = if *alg == "fcoupled" { 1 } else { 2 };
            assert!(s["cwnd"].as_u64().unwrap() >= least, "{alg}: {s}");
        }
        report(send);
        let got = report(recv);
        let after = (
            net.client.tx_bytes("c0").unwrap(),
            net.client.tx_bytes("c1").unwrap(),
        );
        let (p0, p1) = (after.0 - before.0, after.1 - before.1);
        let total = got["connections"][0]["bytes"].as_u64().unwrap();
        eprintln!("{alg}: {total} bytes delivered; path 1 carried {p0} B, path 2 {p1} B");
        // Fully coupled can leave a path at one packet, and Linux's MPTCP connection then
        // stalls behind that path's segments for seconds (docs/kernel-backend.md, E2): of
        // five runs here three delivered 24.4 to 25.1 MB and two 3.5 and 3.9 MB. Of it the
        // test asks only that both paths carried data; of the others, two paths' throughput.
        let (per_path, least_total) = if *alg == "fcoupled" {
            (100_000, 500_000)
        } else {
            (2_000_000, 15_000_000)
        };
        assert!(
            p0 > per_path && p1 > per_path,
            "{alg}: path bytes {p0} and {p1}"
        );
        // Two 20 Mbit/s paths for 5 s carry at most 25 MB; far more than one path's share.
        assert!(
            total > least_total,
            "{alg}: only {total} bytes over two paths"
        );
    }
    // The namespace's default holds a reference on the last algorithm until it is gone.
    drop(net);
    reg.finish();
}

/// How long after a repaired skip (see `unset_stretches`) a trace is left out of the window
/// statistics: the ACK that met the unset threshold sent with a window of ~10^7 packets, and
/// the losses of that burst take a recovery or two to clear.
const AFTER_A_REPAIR: f64 = 1.0;

/// The stretches of a trace with an unset threshold, each with `AFTER_A_REPAIR` after it,
/// in the trace's absolute seconds.
fn disturbed(trace: &[Value]) -> Vec<(f64, f64)> {
    unset_stretches(trace)
        .into_iter()
        .map(|(from, to)| (from, to + AFTER_A_REPAIR))
        .collect()
}

/// Window statistics of a TCP_INFO trace after `warmup` seconds: the mean window, and
/// for each loss (entering recovery) the new ssthresh over the largest window of the
/// 200 ms before it, averaged. Reno halves: 0.5. (The window itself is not compared at a
/// single sample: proportional rate reduction lowers it over a round trip.) What a skipped
/// callback disturbed (`disturbed`) is left out: its samples from the mean, and every loss
/// whose 200 ms before it or whose start lies in it. It shows what the kernel did when it
/// skipped a callback (docs/kernel-cc.md, "Skipped callbacks"), not the algorithm; the
/// caller bounds those stretches.
fn window_stats(trace: &[Value], warmup: f64) -> (f64, f64, usize) {
    let t0 = trace[0][0].as_f64().unwrap();
    let left_out: Vec<(f64, f64)> = disturbed(trace)
        .into_iter()
        .map(|(from, to)| (from - t0, to - t0))
        .collect();
    let touches = |from: f64, to: f64| left_out.iter().any(|&(a, b)| from <= b && to >= a);
    let rows: Vec<(f64, f64, f64, f64)> = trace
        .iter()
        .map(|s| {
            let v = |i: usize| s[i].as_f64().unwrap();
            (v(0) - t0, v(1), v(2), v(5))
        })
        .collect();
    let kept: Vec<_> = rows
        .iter()
        .filter(|r| r.0 >= warmup && !touches(r.0, r.0))
        .collect();
    let mean = kept.iter().map(|r| r.1).sum::<f64>() / kept.len() as f64;
    let mut cuts = Vec::new();
    // Losses are found on every sample, so that the first one kept after a left-out
    // stretch, still in the recovery that stretch began, is not taken for a new loss.
    for i in 1..rows.len() {
        let (t, _, ssthresh, state) = rows[i];
        // TCP_CA_Recovery is 3, TCP_CA_Loss 4.
        if t < warmup || state < 3.0 || rows[i - 1].3 >= 3.0 || touches(t - 0.2, t) {
            continue;
        }
        let peak = rows[..i]
            .iter()
            .filter(|r| r.0 >= t - 0.2)
            .map(|r| r.1)
            .fold(0.0, f64::max);
        assert!(
            peak > 0.0,
            "no window in the 200 ms before the loss at {t:.3} s"
        );
        cuts.push(ssthresh / peak);
    }
    let cut = cuts.iter().sum::<f64>() / cuts.len().max(1) as f64;
    (mean, cut, cuts.len())
}

/// A flow's algorithm, receiver and sender agents.
type TracedFlow = (String, Process, Process);

/// One plain TCP flow per entry of `algs`, each over its own client-server veth pair
/// limited to 20 Mbit/s by a `tbf` queue of `queue` at the client, sending for `seconds`
/// with the window traced every 5 ms (more often while the sender catches up with its
/// period, as writes return at once): the namespaces (held for the flows' lifetime) and
/// each flow's (algorithm, receiver, sender).
fn traced_flows(
    tag: &str,
    algs: &[String],
    queue: &str,
    seconds: u64,
) -> (Vec<(Netns, Netns)>, Vec<TracedFlow>) {
    let seconds = seconds.to_string();
    let mut nets = Vec::new();
    let mut agents = Vec::new();
    for (i, cc) in algs.iter().enumerate() {
        let c = netns(&format!("{tag}{i}-c"));
        let s = netns(&format!("{tag}{i}-s"));
        veth(&c, "c0", "10.2.1.1/24", &s, "s0", "10.2.1.2/24");
        tbf(&c, "c0", "20mbit", queue);
        let recv = agent(&s, &["recv", "--listen", "0.0.0.0:5500"]);
        let send = agent(
            &c,
            &[
                "send",
                "--to",
                "10.2.1.2:5500",
                "--cc",
                cc,
                "--seconds",
                &seconds,
                "--trace-ms",
                "5",
            ],
        );
        agents.push((cc.clone(), recv, send));
        nets.push((c, s));
    }
    (nets, agents)
}

/// One traced flow of the plain-TCP test: what its assertions compare with Reno's.
struct PlainTcpFlow {
    cc: String,
    /// Goodput from 3 s to 11 s, outside the second after a repaired skip.
    mbps: f64,
    /// `window_stats`: the mean window, the mean cut, the number of cuts.
    mean: f64,
    cut: f64,
    cuts: usize,
    /// `longest_unset_stretch`, in seconds.
    stretch: f64,
    /// The samples before and after the window first went above 1000 packets, if it did.
    jump: String,
}

#[test]
fn single_path_tcp_with_each_algorithm_behaves_like_reno() {
    if !kernel_available("single_path_tcp_with_each_algorithm_behaves_like_reno") {
        return;
    }
    let _serial = serial();
    let reg = TestRegistry::new("r");
    reg.install_all();
    // One link each, all at once: the same 20 Mbit/s tbf with a 50 ms queue.
    let algs: Vec<String> = std::iter::once("reno".to_string())
        .chain(COUPLED.iter().map(|a| reg.name(a)))
        .collect();
    let (nets, agents) = traced_flows("sp", &algs, "50ms", 12);
    let mut flows = Vec::new();
    for (cc, recv, send) in agents {
        let trace = report(send)["trace"].as_array().unwrap().clone();
        let got = report(recv);
        // Both leave out the second after a repaired skip (window_stats says why).
        let mbps = goodput_mbps_outside(&got["connections"][0], 3.0, 11.0, &disturbed(&trace));
        let (mean, cut, cuts) = window_stats(&trace, 3.0);
        let stretch = longest_unset_stretch(&trace);
        eprintln!(
            "{cc}: goodput {mbps:.2} Mbit/s, mean cwnd {mean:.1}, {cuts} losses, ssthresh \
             {cut:.2} of the window, longest stretch with an unset threshold {:.1} ms",
            stretch * 1e3
        );
        // Where a window left the sawtooth, if one did: the sample before and the one after.
        let jump = trace
            .windows(2)
            .find(|w| w[1][1].as_f64().unwrap() > 1000.0)
            .map(|w| format!("{} {}", w[0], w[1]))
            .unwrap_or_default();
        flows.push(PlainTcpFlow {
            cc,
            mbps,
            mean,
            cut,
            cuts,
            stretch,
            jump,
        });
    }
    let reno = &flows[0];
    for flow in &flows {
        let PlainTcpFlow { cc, mbps, mean, .. } = flow;
        // A callback the kernel skipped is repaired at the next ACK (docs/kernel-cc.md,
        // "Skipped callbacks"); window_stats leaves out the second after it.
        assert!(
            flow.stretch <= 0.05,
            "{cc}: threshold unset for {:.1} ms; [t, cwnd, ssthresh, rtt, retrans, state] \
             around the jump: {}",
            flow.stretch * 1e3,
            flow.jump
        );
        // The same algorithm as Reno on a plain TCP socket: the same sawtooth. Bands allow
        // for the phase of a 12 s run (a cut more or less) on a queue of ~85 packets.
        assert!(
            (mean - reno.mean).abs() <= 0.15 * reno.mean,
            "{cc}: mean cwnd {mean} vs reno {}; [t, cwnd, ssthresh, rtt, retrans, state] \
             around the jump: {}",
            reno.mean,
            flow.jump
        );
        assert!(
            (mbps - reno.mbps).abs() <= 0.05 * reno.mbps,
            "{cc}: {mbps} vs reno {} Mbit/s",
            reno.mbps
        );
        assert!(
            flow.cuts >= 1,
            "{cc}: no window reduction in 9 s at a full queue"
        );
        assert!(
            (0.4..=0.6).contains(&flow.cut),
            "{cc}: ssthresh {} of the window (Reno halves)",
            flow.cut
        );
    }
    drop(nets);
    reg.finish();
}

/// The stretches, as (first, last) sample times, in which the socket had a threshold or
/// window above any TCP sets (TCP_INFINITE_SSTHRESH): what a callback the kernel skipped
/// leaves behind until the program repairs it. Measured between samples: a stretch seen in
/// one sample reads as 0 s, so a bound on it allows one sampling gap more, and one repaired
/// between two samples is not seen (its burst would then show as a window far off Reno's,
/// which `single_path_tcp_with_each_algorithm_behaves_like_reno` reports as such).
fn unset_stretches(trace: &[Value]) -> Vec<(f64, f64)> {
    let mut stretches: Vec<(f64, f64)> = Vec::new();
    let mut open = false;
    for row in trace {
        let (t, cwnd, ssthresh) = (
            row[0].as_f64().unwrap(),
            row[1].as_f64().unwrap(),
            row[2].as_f64().unwrap(),
        );
        let unset = cwnd > i32::MAX as f64 || ssthresh > i32::MAX as f64;
        match stretches.last_mut() {
            Some(last) if unset && open => last.1 = t,
            _ if unset => stretches.push((t, t)),
            _ => {}
        }
        open = unset;
    }
    stretches
}

/// The longest of `unset_stretches`, in seconds; 0 when there is none.
fn longest_unset_stretch(trace: &[Value]) -> f64 {
    unset_stretches(trace)
        .iter()
        .map(|(from, to)| to - from)
        .fold(0.0, f64::max)
}

/// Twelve plain TCP flows, two per algorithm, through 20 Mbit/s queues of 8 ms: a
/// reduction every few round trips. On kernels that now and then skip a struct_ops callback
/// (docs/kernel-cc.md, "Skipped callbacks"; this machine's 6.18 does it to about one flow in
/// two within 30 s here), a skipped ssthresh() leaves the stack's garbage as the threshold,
/// and PRR makes it a window of ~10^8 packets for the rest of the connection unless the
/// programs repair it. Each flow must be back to a plausible window by the next ACK, and
/// its average window must stay that of a queue of ~15 packets.
#[test]
fn a_threshold_no_callback_computed_is_repaired_at_the_next_ack() {
    if !kernel_available("a_threshold_no_callback_computed_is_repaired_at_the_next_ack") {
        return;
    }
    let _serial = serial();
    let reg = TestRegistry::new("k");
    reg.install_all();
    const SECONDS: u64 = 30;
    let algs: Vec<String> = COUPLED
        .iter()
        .chain(COUPLED.iter())
        .map(|a| reg.name(a))
        .collect();
    let (nets, agents) = traced_flows("rp", &algs, "8ms", SECONDS);
    // The sockets' published repair counts, read while they are open.
    std::thread::sleep(std::time::Duration::from_secs(SECONDS - 4));
    let repairs: u64 = reg
        .show()
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["subflows"].as_array().unwrap().clone())
        .map(|s| s["repairs"].as_u64().unwrap())
        .sum();
    let mut failures = Vec::new();
    for (cc, recv, send) in agents {
        let trace = report(send)["trace"].as_array().unwrap().clone();
        let _ = report(recv);
        let stretch = longest_unset_stretch(&trace);
        // The window outside such stretches (the trace samples densely around a reduction,
        // so a fraction of a millisecond of ~10^8 would swamp the mean).
        let set: Vec<f64> = trace
            .iter()
            .filter(|r| r[2].as_f64().unwrap() <= i32::MAX as f64)
            .map(|r| r[1].as_f64().unwrap())
            .collect();
        let mean = set.iter().sum::<f64>() / set.len().max(1) as f64;
        eprintln!(
            "{cc}: longest stretch with an unset threshold {:.1} ms, mean cwnd {mean:.1}",
            stretch * 1e3
        );
        // A round trip here is under 20 ms; the repair comes with the next ACK.
        if stretch > 0.05 || mean > 100.0 {
            failures.push(format!(
                "{cc}: unset for {:.1} ms, mean cwnd {mean:.1}",
                stretch * 1e3
            ));
        }
    }
    // The algorithms' totals keep what the sockets counted after they closed.
    let totals: u64 = mptcp_bpf::Algorithm::ALL
        .iter()
        .map(|a| mptcp_bpf::state::repairs_total(&reg.registry(), *a))
        .sum();
    eprintln!("repairs published by the open sockets: {repairs}; totals after: {totals}");
    assert!(failures.is_empty(), "{failures:?}");
    assert!(
        totals >= repairs,
        "totals {totals} below the sockets' {repairs}"
    );
    drop(nets);
    reg.finish();
}

/// Two MPTCP subflows and one TCP Reno flow through one 20 Mbit/s bottleneck.
struct SharedBottleneck {
    client: Netns,
    tcp: Netns,
    /// Held for its lifetime: dropping it deletes the namespace.
    _router: Netns,
    server: Netns,
}

fn shared_bottleneck(tag: &str) -> SharedBottleneck {
    let client = netns(&format!("{tag}-c"));
    let tcp = netns(&format!("{tag}-t"));
    let router = netns(&format!("{tag}-r"));
    let server = netns(&format!("{tag}-s"));
    veth(&client, "c0", "10.3.1.1/24", &router, "r0", "10.3.1.2/24");
    veth(&client, "c1", "10.3.2.1/24", &router, "r1", "10.3.2.2/24");
    veth(&tcp, "t0", "10.3.3.1/24", &router, "r2", "10.3.3.2/24");
    veth(&router, "r3", "10.3.4.1/24", &server, "s0", "10.3.4.2/24");
    router.sysctl("net.ipv4.ip_forward=1").unwrap();
    client.ip("route add default via 10.3.1.2 dev c0").unwrap();
    client.ip("rule add from 10.3.2.1 table 102").unwrap();
    client
        .ip("route add default via 10.3.2.2 dev c1 table 102")
        .unwrap();
    tcp.ip("route add default via 10.3.3.2").unwrap();
    server.ip("route add default via 10.3.4.1").unwrap();
    for ns in [&client, &server] {
        ns.ip("mptcp limits set subflows 2 add_addr_accepted 2")
            .unwrap();
    }
    client
        .ip("mptcp endpoint add 10.3.2.1 dev c1 subflow")
        .unwrap();
    tbf(&router, "r3", "20mbit", "200ms");
    SharedBottleneck {
        client,
        tcp,
        _router: router,
        server,
    }
}

/// Runs of this many seconds, measured after `HARM_WARMUP`, `HARM_BATCH` at a time on
/// separate bottlenecks, `HARM_BATCHES` times: one run at a drop-tail queue shared by
/// three flows swings from 0.5x to 2x on loss synchronisation alone (a 200 ms queue makes
/// loss cycles of about 10 s: a run sees only a few), so the measure is the ratio of the
/// mean goodputs over all runs.
const HARM_SECONDS: f64 = 90.0;
const HARM_WARMUP: f64 = 15.0;
const HARM_BATCH: usize = 4;
const HARM_BATCHES: usize = 3;

#[test]
fn do_no_harm_at_a_shared_bottleneck() {
    if !kernel_available("do_no_harm_at_a_shared_bottleneck") {
        return;
    }
    let _serial = serial();
    let reg = TestRegistry::new("h");
    reg.install_all();
    let algorithms = ["reno", "lia", "olia", "balia", "wvegas"];
    let mut results: Vec<(String, f64, f64)> = Vec::new();
    for batch in 0..HARM_BATCHES {
        let mut runs = Vec::new();
        for repeat in 0..HARM_BATCH {
            for (i, alg) in algorithms.iter().enumerate() {
                let cc = if *alg == "reno" {
                    "reno".to_string()
                } else {
                    reg.name(alg)
                };
                let net = shared_bottleneck(&format!("h{batch}{repeat}{i}"));
                use_everywhere(&net.client, &cc);
                let mptcp_recv = agent(
                    &net.server,
                    &["recv", "--mptcp", "--listen", "0.0.0.0:5601"],
                );
                let tcp_recv = agent(&net.server, &["recv", "--listen", "0.0.0.0:5602"]);
                let secs = HARM_SECONDS.to_string();
                let mptcp = agent(
                    &net.client,
                    &[
                        "send",
                        "--mptcp",
                        "--to",
                        "10.3.4.2:5601",
                        "--cc",
                        &cc,
                        "--seconds",
                        &secs,
                    ],
                );
                let tcp = agent(
                    &net.tcp,
                    &[
                        "send",
                        "--to",
                        "10.3.4.2:5602",
                        "--cc",
                        "reno",
                        "--seconds",
                        &secs,
                    ],
                );
                runs.push((alg.to_string(), net, mptcp_recv, tcp_recv, mptcp, tcp));
            }
        }
        for (alg, _net, mptcp_recv, tcp_recv, mptcp, tcp) in runs {
            report(mptcp);
            report(tcp);
            let window = (HARM_WARMUP, HARM_SECONDS - 1.0);
            let mptcp_conn = report(mptcp_recv)["connections"][0].clone();
            // A run whose second subflow never came up measures nothing about coupling.
            assert_eq!(
                mptcp_conn["most_subflows"], 2,
                "{alg}: the MPTCP connection had {} subflow(s)",
                mptcp_conn["most_subflows"]
            );
            let m = goodput_mbps(&mptcp_conn, window.0, window.1);
            let t = goodput_mbps(&report(tcp_recv)["connections"][0], window.0, window.1);
            results.push((alg, m, t));
        }
    }
    let mut failures = Vec::new();
    for alg in algorithms {
        let mine: Vec<&(String, f64, f64)> = results.iter().filter(|r| r.0 == alg).collect();
        let ratios: Vec<f64> = mine.iter().map(|r| r.1 / r.2).collect();
        let mptcp: f64 = mine.iter().map(|r| r.1).sum::<f64>() / mine.len() as f64;
        let tcp: f64 = mine.iter().map(|r| r.2).sum::<f64>() / mine.len() as f64;
        let ratio = mptcp / tcp;
        eprintln!(
            "do no harm, {alg} on both subflows: MPTCP {mptcp:.2} Mbit/s, TCP Reno {tcp:.2} Mbit/s, \
             ratio {ratio:.2} (runs: {})",
            ratios
                .iter()
                .map(|r| format!("{r:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        if mptcp + tcp <= 17.0 {
            failures.push(format!(
                "{alg}: the bottleneck ran at {:.1} of 20 Mbit/s",
                mptcp + tcp
            ));
        }
        match alg {
            "olia" | "balia" if ratio > 1.3 => {
                failures.push(format!("{alg}: MPTCP took {ratio:.2}x the TCP flow"))
            }
            // LIA's own fixed point at one shared bottleneck lies above 1 (the simulator's
            // rfc6356-no-harm gives 1.26; Khalili et al. show LIA taking more than TCP where
            // paths share a bottleneck), and the mean of twelve kernel runs moved between
            // 0.81 and 1.34 over repetitions of this test: at 1.3 it would fail one run in
            // five on noise. The margin below keeps it apart from uncoupled Reno.
            "lia" if ratio > 1.5 => {
                failures.push(format!("lia: MPTCP took {ratio:.2}x the TCP flow"))
            }
            // Uncoupled Reno takes more than the TCP flow; how much more swings over
            // repetitions of this test (1.31 to 2.20), so "clearly more" is judged against
            // the coupled algorithms, below, not against a fixed figure.
            "reno" if ratio <= 1.0 => {
                failures.push(format!("uncoupled Reno took only {ratio:.2}x"))
            }
            _ => {} // wVegas: reported; RFC 6356's goal is about the loss-based ones
        }
    }
    // "Clearly more": uncoupled must also stand above every coupled algorithm by a margin.
    // (Upstream MPTCP keeps uncoupled Reno well below the textbook 2x here, between 1.31x
    // and 2.20x over repetitions of this test, so the margin is relative.)
    let ratio_of = |alg: &str| {
        let mine: Vec<_> = results.iter().filter(|r| r.0 == alg).collect();
        mine.iter().map(|r| r.1).sum::<f64>() / mine.iter().map(|r| r.2).sum::<f64>()
    };
    let coupled_max = ["lia", "olia", "balia"]
        .map(ratio_of)
        .into_iter()
        .fold(0.0, f64::max);
    if ratio_of("reno") < coupled_max + 0.25 {
        failures.push(format!(
            "uncoupled Reno ({:.2}x) is not clearly above the coupled ones (up to {coupled_max:.2}x)",
            ratio_of("reno")
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    reg.finish();
}

/// Two runs registering the same algorithm at once: each knows its own registration by the
/// kernel id of its struct_ops map, so the one that removes its copy first finds it gone
/// at once, and the other's copy, still live, is not taken for a leak of its own.
#[test]
fn concurrent_registrations_are_told_apart_by_map_id() {
    if !kernel_available("concurrent_registrations_are_told_apart_by_map_id") {
        return;
    }
    let _serial = serial();
    let (a, b) = (TestRegistry::new("m"), TestRegistry::new("n"));
    let registry = |r: &TestRegistry| mptcp_bpf::Registry {
        root: r.root.clone(),
        prefix: r.prefix.clone(),
    };
    let (ra, rb) = (registry(&a), registry(&b));
    let id = |installed| match installed {
        mptcp_bpf::Installed::Now { struct_ops_map } => struct_ops_map,
        other => panic!("expected a new registration, got {other:?}"),
    };
    let lia = mptcp_bpf::Algorithm::Lia;
    let id_a = id(ra.install(lia).expect("install in a"));
    let id_b = id(rb.install(lia).expect("install in b"));
    assert_ne!(id_a, id_b);
    let zero = std::time::Duration::ZERO;
    assert_eq!(
        mptcp_bpf::system::struct_ops_still_held(&[id_a, id_b], zero).len(),
        2
    );
    assert!(ra.remove(lia, true).expect("remove from a"));
    let patience = std::time::Duration::from_secs(10);
    assert_eq!(
        mptcp_bpf::system::struct_ops_still_held(&[id_a], patience),
        Vec::<u32>::new(),
        "a's registration still held after its removal"
    );
    assert_eq!(
        mptcp_bpf::system::struct_ops_still_held(&[id_b], zero),
        vec![id_b],
        "b's registration is live and must be seen as b's"
    );
    assert!(rb.remove(lia, true).expect("remove from b"));
    a.finish();
    b.finish();
}

/// The plain-TCP test's statistics on a made-up trace and receiver (no kernel needed): a
/// skip at 5 s, repaired 0.5 ms later, is left out with the second after it, and nothing
/// else: the window and the rate change at 7 s, and a loss at 9 s is counted.
#[test]
fn a_repaired_skip_is_left_out_of_the_sawtooth_statistics() {
    const UNSET: f64 = 2_165_326_096.0;
    let t0 = 1000.0;
    // [t, cwnd, ssthresh, rtt, retrans, state] every 5 ms for 12 s: a window of 60 packets,
    // 80 from 7 s; at 5 s an unset threshold with PRR's window (two samples 0.5 ms apart),
    // then the burst's aftermath (a window of 5000) until 5.3 s, and a recovery that goes
    // on past the second left out, to 6.2 s; at 9 s a loss, the threshold half the window.
    let window = |s: f64| if s < 7.0 { 60.0 } else { 80.0 };
    let mut trace = Vec::new();
    for i in 0..2400 {
        let t = t0 + i as f64 * 0.005;
        let row = match t - t0 {
            s if (5.0..5.001).contains(&s) => [t, 49_777_685.0, UNSET, 40e3, 0.0, 3.0],
            s if (5.001..5.3).contains(&s) => [t, 5000.0, 30.0, 40e3, 0.0, 3.0],
            s if (5.3..6.2).contains(&s) => [t, 30.0, 30.0, 40e3, 0.0, 3.0],
            s if (9.0..9.1).contains(&s) => [t, 60.0, 40.0, 40e3, 0.0, 3.0],
            s => [t, window(s), 30.0, 40e3, 0.0, 0.0],
        };
        trace.push(serde_json::json!(row));
    }
    trace.insert(
        1001,
        serde_json::json!([t0 + 5.0005, 49_777_685.0, UNSET, 40e3, 0.0, 3.0]),
    );
    assert!((longest_unset_stretch(&trace) - 0.0005).abs() < 1e-9);
    // Left out: from 5 s to a second after the last unset sample (5.0005 s).
    let left_out = |s: f64| (5.0..=6.0005).contains(&s);
    let kept: Vec<f64> = trace
        .iter()
        .map(|r| (r[0].as_f64().unwrap() - t0, r[1].as_f64().unwrap()))
        .filter(|&(s, _)| s >= 3.0 && !left_out(s))
        .map(|(_, cwnd)| cwnd)
        .collect();
    let expected = kept.iter().sum::<f64>() / kept.len() as f64;
    let (mean, cut, cuts) = window_stats(&trace, 3.0);
    assert!((mean - expected).abs() < 1e-9, "{mean} against {expected}");
    assert!((60.0..80.0).contains(&mean), "{mean}");
    assert_eq!(
        cuts, 1,
        "the loss at 9 s, and not the recovery the skip began"
    );
    assert_eq!(cut, 0.5);
    // A receiver at 20 Mbit/s every 100 ms, at 200 Mbit/s (the burst) from 5.0 to 5.3 s, at
    // 30 Mbit/s from 7 s. Left out: the intervals from 5.0 to 6.1 s.
    let mut bytes = 0.0;
    let samples: Vec<Value> = (0..=120)
        .map(|i| {
            let t = t0 + i as f64 * 0.1;
            let json = serde_json::json!([t, bytes]);
            bytes += match i {
                50..53 => 2.5e6,
                70.. => 0.375e6,
                _ => 0.25e6,
            };
            json
        })
        .collect();
    let receiver = serde_json::json!({ "samples": samples });
    let outside = goodput_mbps_outside(&receiver, 3.0, 11.0, &disturbed(&trace));
    let expected = (29.0 * 20.0 + 40.0 * 30.0) / 69.0;
    assert!(
        (outside - expected).abs() < 1e-6,
        "{outside} against {expected}"
    );
    assert!(goodput_mbps(&receiver, 3.0, 11.0) > 30.0);
}
