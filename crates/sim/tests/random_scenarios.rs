//! Generated scenarios, valid by construction (random topologies of one to three paths,
//! rates from 100 kbit/s to 10 Gbit/s, delays, drop-tail and RED queues, random loss, TCP
//! and MPTCP groups with every algorithm, bulk, file and on/off traffic, links going down,
//! up and changing): each must load, run without a panic, and give sane metrics (finite,
//! goodput no more than the paths carry, utilisation and Jain's index within [0, 1]).

use proptest::prelude::*;
use scenario::{LoadOptions, Scenario, load_str};
use std::fmt::Write;
use std::path::Path;

#[derive(Clone, Debug)]
struct PathLink {
    rate_kbps: u64,
    delay_ms: u64,
    queue: String,
    loss: f64,
}

#[derive(Clone, Debug)]
struct Group {
    mptcp: bool,
    cc: &'static str,
    count: u32,
    traffic: String,
}

#[derive(Clone, Debug)]
struct Event {
    at_ms: u64,
    path: usize,
    action: String,
}

fn path_link() -> impl Strategy<Value = PathLink> {
    (
        prop_oneof![100u64..10_000, 10_000u64..1_000_000, 1_000_000u64..10_000_000],
        0u64..200,
        prop_oneof![
            (1u32..500).prop_map(|n| format!("{{ kind = \"droptail\", size = \"{n}pkt\" }}")),
            (3u32..20, 1u32..4).prop_map(|(min, k)| format!(
                "{{ kind = \"red\", size = \"{}pkt\", min_th = {min}.0, max_th = {}.0, max_p = 0.1 }}",
                4 * min * k,
                2 * min * k
            )),
        ],
        prop_oneof![3 => Just(0.0), 1 => 0.0..0.05],
    )
        .prop_map(|(rate_kbps, delay_ms, queue, loss)| PathLink {
            rate_kbps,
            delay_ms,
            queue,
            loss,
        })
}

fn group() -> impl Strategy<Value = Group> {
    (
        any::<bool>(),
        0usize..6,
        1u32..4,
        prop_oneof![
            Just(String::new()),
            (1u32..2000)
                .prop_map(|kb| format!("traffic = {{ kind = \"file\", size = \"{kb}KB\" }}")),
            (50u32..1000, 50u32..1000).prop_map(|(on, off)| format!(
                "traffic = {{ kind = \"onoff\", burst = \"{on}ms\", idle = \"{off}ms\" }}"
            )),
        ],
    )
        .prop_map(|(mptcp, cc, count, traffic)| {
            let ccs: &[&str] = if mptcp {
                &["lia", "olia", "balia", "wvegas", "ewtcp", "fullycoupled"]
            } else {
                &["reno"]
            };
            Group {
                mptcp,
                cc: ccs[cc % ccs.len()],
                count,
                traffic,
            }
        })
}

fn event(paths: usize, duration_ms: u64) -> impl Strategy<Value = Event> {
    (
        1..duration_ms,
        0..paths,
        prop_oneof![
            Just("action = \"down\"".to_string()),
            Just("action = \"up\"".to_string()),
            (100u64..100_000).prop_map(|k| format!("action = \"set\"\nrate = \"{k}kbps\"")),
            (0u64..300).prop_map(|d| format!("action = \"set\"\ndelay = \"{d}ms\"")),
        ],
    )
        .prop_map(|(at_ms, path, action)| Event {
            at_ms,
            path,
            action,
        })
}

/// A scenario: hosts `src` and `dst` joined by `paths` disjoint paths (access link, then
/// the path's bottleneck), the groups from `src` to `dst`.
fn scenario() -> impl Strategy<Value = (String, u64)> {
    (1usize..4, 1_000u64..4_000)
        .prop_flat_map(|(paths, duration_ms)| {
            (
                proptest::collection::vec(path_link(), paths),
                proptest::collection::vec(group(), 1..4),
                proptest::collection::vec(event(paths, duration_ms), 0..3),
                Just(duration_ms),
                100u64..1000,
            )
        })
        .prop_map(|(links, groups, events, duration_ms, interval_ms)| {
            let mut t = format!(
                "[scenario]\nname = \"random\"\nduration = \"{duration_ms}ms\"\n\
                 [[node]]\nname = \"src\"\nkind = \"host\"\n[[node]]\nname = \"dst\"\nkind = \"host\"\n"
            );
            for (i, l) in links.iter().enumerate() {
                write!(
                    t,
                    "[[node]]\nname = \"r{i}\"\nkind = \"router\"\n\
                     [[link]]\nname = \"access{i}\"\na = \"src:p{i}\"\nb = \"r{i}\"\n\
                     rate = \"10Gbps\"\ndelay = \"1ms\"\n\
                     [[link]]\nname = \"path{i}\"\na = \"r{i}\"\nb = \"dst:p{i}\"\n\
                     rate = \"{}kbps\"\ndelay = \"{}ms\"\nqueue = {}\nloss = {}\n",
                    l.rate_kbps, l.delay_ms, l.queue, l.loss
                )
                .unwrap();
            }
            for (i, g) in groups.iter().enumerate() {
                write!(
                    t,
                    "[[flow]]\nname = \"g{i}\"\nprotocol = \"{}\"\ncc = \"{}\"\ncount = {}\n\
                     from = \"src\"\nto = \"dst\"\nstagger = \"10ms\"\n{}\n",
                    if g.mptcp { "mptcp" } else { "tcp" },
                    g.cc,
                    g.count,
                    g.traffic
                )
                .unwrap();
            }
            for e in &events {
                write!(
                    t,
                    "[[event]]\nat = \"{}ms\"\nlink = \"path{}\"\n{}\n",
                    e.at_ms, e.path, e.action
                )
                .unwrap();
            }
            write!(t, "[measure]\ninterval = \"{interval_ms}ms\"\n").unwrap();
            let capacity_kbps: u64 = links.iter().map(|l| l.rate_kbps).sum::<u64>()
                + events
                    .iter()
                    .filter_map(|e| e.action.strip_prefix("action = \"set\"\nrate = \""))
                    .filter_map(|r| r.trim_end_matches("kbps\"").parse::<u64>().ok())
                    .sum::<u64>();
            (t, capacity_kbps)
        })
}

fn load(text: &str) -> Scenario {
    load_str(text, Path::new("random.toml"), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("a valid scenario was refused:\n{e}\n{text}"))
        .remove(0)
}

/// 48 cases in CI; `PROPTEST_CASES=5000` for a longer campaign.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn generated_scenarios_run_and_give_sane_metrics(
        (text, capacity_kbps) in scenario(),
        seed in 1u64..1000,
    ) {
        let sc = load(&text);
        let result = sim::run(&sc, seed, |_| {});
        prop_assert!(result.stats.packet_hops > 0, "nothing moved\n{text}");
        // Every path's capacity, and any rate a `set` gave it (an upper bound on goodput).
        let capacity_mbps = capacity_kbps as f64 / 1e3;
        for (name, &v) in &result.metrics {
            prop_assert!(!v.is_infinite(), "{name} = {v}\n{text}");
            if v.is_nan() {
                continue;
            }
            prop_assert!(v >= 0.0, "{name} = {v}\n{text}");
            if name.ends_with(".goodput_mbps") && name.starts_with("group.") && !name.contains(".sf") {
                prop_assert!(v <= capacity_mbps * 1.001, "{name} = {v} > {capacity_mbps}\n{text}");
            }
            if name.ends_with(".utilisation") {
                prop_assert!(v <= 1.0 + 1e-9, "{name} = {v}\n{text}");
            }
            if name.ends_with(".jain") {
                prop_assert!(v <= 1.0 + 1e-9, "{name} = {v}\n{text}");
            }
        }
    }
}
