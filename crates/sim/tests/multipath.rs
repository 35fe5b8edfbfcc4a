//! MPTCP in the simulator: the seed experiments' "what must hold" statements, computed here
//! from the runs rather than read from the scenario files' expectations.

use scenario::spec::SchedulerKind;
use scenario::{LoadOptions, Scenario, load_file};
use std::collections::BTreeMap;
use std::path::PathBuf;

const SEEDS: u64 = 2;

fn variants(name: &str) -> Vec<Scenario> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name);
    let opts = LoadOptions {
        overrides: Vec::new(),
    };
    load_file(&path, &opts).unwrap_or_else(|e| panic!("{e}"))
}

/// Mean of each metric over SEEDS runs, per variant name.
fn means(name: &str) -> BTreeMap<String, BTreeMap<String, f64>> {
    variants(name)
        .iter()
        .map(|sc| (sc.variant.clone(), mean_of_seeds(sc)))
        .collect()
}

fn mean_of_seeds(sc: &Scenario) -> BTreeMap<String, f64> {
    let mut sum: BTreeMap<String, f64> = BTreeMap::new();
    for k in 0..SEEDS {
        for (m, v) in sim::run(sc, sc.seed + k, |_| {}).metrics {
            *sum.entry(m).or_default() += v / SEEDS as f64;
        }
    }
    sum
}

#[test]
fn mptcp_aggregates_two_disjoint_paths() {
    let m = means("e3-aggregation.toml");
    let g = |v: &str| m[v]["group.download.goodput_mbps"];
    let sum = g("mode=tcp-isp2") + g("mode=tcp-isp3");
    let mp = g("mode=mptcp-balia");
    assert!(mp >= 0.94 * sum, "MPTCP {mp:.3} < 94 % of {sum:.3}");
    assert!(
        mp <= sum * 1.01,
        "MPTCP {mp:.3} cannot beat the two paths {sum:.3}"
    );
}

#[test]
fn coupled_algorithms_do_no_harm_and_uncoupled_reno_does() {
    let m = means("rfc6356-no-harm.toml");
    let ratio = |cc: &str| {
        let v = &m[&format!("cc={cc}")];
        v["group.mptcp.goodput_mbps"] / v["group.tcp.goodput_mbps"]
    };
    // Each coupled algorithm takes no more than the TCP flow, and uncoupled Reno's two
    // subflows more than it and clearly more than any coupled one (the kernel backend:
    // 0.73, 0.52 and 0.67 against 1.18; docs/kernel-backend.md).
    let coupled = ["lia", "olia", "balia"].map(ratio);
    for (cc, r) in ["lia", "olia", "balia"].iter().zip(coupled) {
        assert!(r <= 1.0, "{cc}: MPTCP/TCP = {r:.2}");
    }
    let uncoupled = ratio("reno");
    let most = coupled.into_iter().fold(0.0, f64::max);
    assert!(
        uncoupled >= 1.1 && uncoupled >= most + 0.4,
        "uncoupled: {uncoupled:.2}, coupled at most {most:.2}"
    );
}

/// Mean of each metric over SEEDS runs, per variant name, with every flow's scheduler set.
fn means_with(name: &str, scheduler: SchedulerKind) -> BTreeMap<String, BTreeMap<String, f64>> {
    let mut out = BTreeMap::new();
    for mut sc in variants(name) {
        for f in &mut sc.flows {
            f.scheduler = scheduler;
        }
        out.insert(sc.variant.clone(), mean_of_seeds(&sc));
    }
    out
}

#[test]
fn coupled_algorithms_move_traffic_off_the_congested_path() {
    let linux = means_with("rfc6356-balance.toml", SchedulerKind::LinuxDefault);
    let textbook = means_with("rfc6356-balance.toml", SchedulerKind::LowestRtt);
    for cc in ["lia", "olia", "balia"] {
        let variant = format!("cc={cc}");
        for m in [&linux, &textbook] {
            let v = &m[&variant];
            let (sf0, sf1) = (
                v["group.mptcp.sf0.goodput_mbps"],
                v["group.mptcp.sf1.goodput_mbps"],
            );
            assert!(sf1 > 2.0 * sf0, "{cc}: congested {sf0:.2}, free {sf1:.2}");
        }
        // RFC 6356's goal 1 (at least the best path's TCP) holds when data waits for
        // window space, as the lowest-RTT scheduler lets it...
        let v = &textbook[&variant];
        assert!(
            v["group.mptcp.goodput_mbps"] >= 9.0,
            "{cc}: no better than one path"
        );
        assert!(v["group.mptcp.min_goodput_mbps"] > 5.0);
        // ...but not with Linux's, which queues bursts on the congested subflow ahead of its
        // window: the connection's goodput then dips for whole seconds, its data there
        // waiting out losses and timeouts while the free path's data fills the
        // connection's send buffer behind it. The kernel backend does the same (LIA 9.27
        // Mbit/s, its worst second 0.44; OLIA 7.23; docs/linux-fidelity.md).
        let linux_worst = linux[&variant]["group.mptcp.min_goodput_mbps"];
        let textbook_worst = v["group.mptcp.min_goodput_mbps"];
        assert!(
            linux_worst < textbook_worst / 4.0,
            "{cc}: worst second {linux_worst:.2} with Linux's scheduler, {textbook_worst:.2} without"
        );
        // Still well above what a TCP flow on the congested path gets (a third of its 10
        // Mbit/s), and below what the textbook scheduler gets.
        let total = linux[&variant]["group.mptcp.goodput_mbps"];
        assert!(
            total >= 5.0 && total < v["group.mptcp.goodput_mbps"],
            "{cc}: {total:.2} with Linux's scheduler"
        );
    }
}

#[test]
fn handover_keeps_mptcp_flowing_and_stalls_tcp() {
    let m = means("e5-handover.toml");
    // Linux keeps sending on the dead WiFi subflow until the data-level timer has found it
    // silent five times, and the shared receive buffer fills behind its lost data meanwhile:
    // MPTCP's worst second dips (the kernel backend measures 0 to 0.55 Mbit/s) but the
    // outage costs it far less than TCP.
    let worst = m["mode=mptcp"]["group.download.min_goodput_mbps"];
    assert!(worst < 1.0, "worst second {worst:.2} Mbit/s");
    // Going stale rewound the data level: some of what went again had been delivered.
    assert!(m["mode=mptcp"]["group.download.reinjected_bytes"] > 0.0);
    assert!(!m["mode=tcp"].contains_key("group.download.reinjected_bytes"));
    assert!(
        m["mode=mptcp"]["group.download.goodput_mbps"]
            > 1.5 * m["mode=tcp"]["group.download.goodput_mbps"]
    );
    assert_eq!(m["mode=tcp"]["group.download.min_goodput_mbps"], 0.0);
    // TCP's application reconnects over 3G: it gets well over the WiFi-only share.
    assert!(m["mode=tcp"]["group.download.goodput_mbps"] > 3.0);
}

#[test]
fn a_one_subflow_mptcp_connection_is_tcp() {
    // The no-harm topology with one subflow and LIA: identical to a Reno TCP flow, because
    // every coupled algorithm reduces to Reno with one subflow. Their receivers acknowledge
    // differently (MPTCP's sender pushes at the end of each scheduler burst, TCP's at the
    // end of each write, and MPTCP's receiver releases held ACKs by the connection's
    // buffer), so both acknowledge every segment here.
    let mut sc = variants("rfc6356-no-harm.toml")[0].clone();
    for group in &mut sc.flows {
        group.delayed_ack = false;
    }
    let sc = &sc;
    let mut one = sc.clone();
    one.flows[0].protocol = scenario::spec::Protocol::Mptcp;
    one.flows[0].cc = mptcp_cc::AlgorithmId::Lia;
    one.flows[0].subflows = Some(1);
    let mut tcp = sc.clone();
    tcp.flows[0].protocol = scenario::spec::Protocol::Tcp;
    tcp.flows[0].cc = mptcp_cc::AlgorithmId::Reno;
    tcp.flows[0].subflows = Some(1);
    let a = sim::run(&one, 7, |_| {}).metrics;
    let b = sim::run(&tcp, 7, |_| {}).metrics;
    let key = "group.mptcp.goodput_mbps";
    assert!((a[key] - b[key]).abs() < 1e-9, "{} vs {}", a[key], b[key]);
}

#[test]
fn responsiveness_orders_the_algorithms() {
    let scenarios = variants("e2-responsiveness.toml");
    let m: BTreeMap<String, BTreeMap<String, f64>> = scenarios
        .iter()
        .filter(|sc| sc.variant != "cc=fullycoupled")
        .map(|sc| (sc.variant.clone(), mean_of_seeds(sc)))
        .collect();
    let t = |cc: &str| m[&format!("cc={cc}")]["flow.mptcp#0.sf1.convergence_s"];
    // Fully coupled's path-2 window seldom settles in its share (the equal-share band rule,
    // docs/results-format.md; the kernel's took 94 s): a seed in which it does converge
    // takes more than twice as long as LIA and Balia, and its window is measured in every
    // seed.
    let coupled = scenarios
        .iter()
        .find(|sc| sc.variant == "cc=fullycoupled")
        .expect("a fully coupled variant");
    for k in 0..SEEDS {
        let run = sim::run(coupled, coupled.seed + k, |_| {}).metrics;
        assert!(run.contains_key("flow.mptcp#0.sf1.mean_cwnd_after_pkts"));
        if let Some(&c) = run.get("flow.mptcp#0.sf1.convergence_s") {
            for fast in ["lia", "balia"] {
                assert!(
                    c > 2.0 * t(fast),
                    "coupled {c:.1} s vs {fast} {:.1} s",
                    t(fast)
                );
            }
        }
    }
    // The others converge within the published bound, and, as on the kernel, neither LIA
    // nor Balia twice as fast as OLIA: Linux's receiver acknowledges each segment of the
    // small-window path while its window grows, so no held ACK doubles that path's RTT
    // samples, which is what slows OLIA (docs/kernel-backend.md, E2).
    for cc in ["lia", "balia", "olia"] {
        assert!(t(cc) <= 40.0, "{cc} {:.1} s", t(cc));
    }
    for fast in ["lia", "balia"] {
        assert!(
            2.0 * t(fast) > t("olia"),
            "{fast} {:.1} s vs olia {:.1} s",
            t(fast),
            t("olia")
        );
    }
}

#[test]
fn khalili_type2_loses_most_with_lia_least_with_balia() {
    let m = means("e1-khalili.toml");
    for case in ["n1=5", "n1=15"] {
        let t2 = |t1: &str| m[&format!("case={case},type1={t1}")]["group.type2.goodput_mbps"];
        let shown = format!(
            "{case}: lia {:.2} olia {:.2} balia {:.2} single {:.2}",
            t2("lia"),
            t2("olia"),
            t2("balia"),
            t2("single-path")
        );
        assert!(
            t2("lia").max(t2("olia")) < t2("balia") && t2("balia") < t2("single-path"),
            "{shown}"
        );
        // LIA below OLIA with five upgraded users; with fifteen the two are level (README,
        // E1).
        if case == "n1=5" {
            assert!(t2("lia") < t2("olia"), "{shown}");
        }
    }
}

#[test]
fn trace_cc_follows_olias_sets_on_every_subflow() {
    // E2 with OLIA, through the competition on path 2 and its end at 80 s.
    let mut sc = variants("e2-responsiveness.toml")
        .into_iter()
        .find(|sc| sc.variant == "cc=olia")
        .expect("an OLIA variant");
    sc.measure.trace_cc = true;
    sc.duration = scenario::units::Duration(85_000_000_000);
    let run = sim::run(&sc, sc.seed, |_| {});
    let series = |name: &str, entity: &str| {
        run.series
            .iter()
            .find(|s| s.name == name && s.entity == entity)
            .unwrap_or_else(|| panic!("no {name} of {entity}"))
    };
    let sf = |k: usize| format!("flow.mptcp#0.sf{k}");
    let cwnd = series("cwnd_pkts", &sf(0));
    let alpha: Vec<&Vec<f64>> = (0..2).map(|k| &series("cc_alpha", &sf(k)).values).collect();
    let inter_loss = &series("cc_inter_loss_pkts", &sf(1)).values;
    assert_eq!(alpha[0].len(), cwnd.values.len(), "sampled with the window");
    // Two paths: alpha_r is +1/2 on the collected path and -1/2 on the other, or 0 on
    // both (OLIA, Khalili et al.: |C| = |M| = 1).
    let mut collected = 0;
    let both_up = |(a0, a1): &(&f64, &f64)| a0.is_finite() && a1.is_finite();
    for (a0, a1) in alpha[0].iter().zip(alpha[1]).filter(both_up) {
        let pair = (*a0, *a1);
        assert!(
            [(0.0, 0.0), (0.5, -0.5), (-0.5, 0.5)].contains(&pair),
            "{pair:?}"
        );
        collected += (pair != (0.0, 0.0)) as usize;
    }
    assert!(collected > 0, "some sample has a collected path");
    // l_r: packets, once path 2 is up.
    let up = inter_loss.iter().skip_while(|l| l.is_nan());
    assert!(up.clone().count() > 0 && up.clone().all(|l| l.is_finite() && *l >= 0.0));
    // Plain TCP's Reno has no coupling state.
    assert!(
        series("cc_alpha", "flow.tcp#0")
            .values
            .iter()
            .all(|a| a.is_nan())
    );
}
