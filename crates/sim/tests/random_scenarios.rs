//! Generated scenarios, valid by construction (random topologies of one to three paths,
//! rates from 100 kbit/s to 10 Gbit/s, fixed or drawn delays, drop-tail and RED queues,
//! random loss, TCP and MPTCP groups with every algorithm, fixed or drawn flow counts, window
//! limits, with and without SACK, TCP groups picking among the paths with every MATCP
//! selector, bulk, file and on/off traffic, links going down, up and changing): each must
//! load, run without a panic, and give sane metrics (finite, goodput no more than the paths
//! carry, utilisation, shares and Jain's index within [0, 1]).

use proptest::prelude::*;
use scenario::{LoadOptions, Scenario, load_str};
use std::fmt::Write;
use std::path::Path;

#[derive(Clone, Debug)]
struct PathLink {
    rate_kbps: u64,
    delay_ms: u64,
    /// Drawn uniformly in delay_ms +/- this, when not zero.
    delay_spread_ms: u64,
    queue: String,
    loss: f64,
}

#[derive(Clone, Debug)]
struct Group {
    mptcp: bool,
    cc: &'static str,
    count: u32,
    /// Drawn per run in count +/- this, when not zero (always at least one flow).
    count_spread: u32,
    traffic: String,
    /// Extra fields: `window_limit`, `sack`, and for TCP over several paths `paths` and
    /// `select`.
    options: String,
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
        prop_oneof![3 => Just(0u64), 1 => 0u64..200],
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
        .prop_map(|(rate_kbps, delay_ms, spread, queue, loss)| PathLink {
            rate_kbps,
            delay_ms,
            delay_spread_ms: spread.min(delay_ms),
            queue,
            loss,
        })
}

/// Every MATCP selector, with refresh constants from "every second choice" to "never".
fn selector() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("{ kind = \"single-path\" }".to_string()),
        Just("{ kind = \"weighted-rtt\" }".to_string()),
        (
            prop_oneof![Just("rtt"), Just("drops"), Just("rtt-variation")],
            1u32..2000
        )
            .prop_map(|(kind, refresh)| format!("{{ kind = \"{kind}\", refresh = {refresh} }}")),
        (1u32..50).prop_map(|refresh| format!(
            "{{ kind = \"rtt-variation\", refresh = {refresh}, variation = \"rttvar\" }}"
        )),
    ]
}

fn options(paths: usize) -> impl Strategy<Value = (String, String)> {
    (
        prop_oneof![2 => Just(String::new()), 1 => (1u32..64).prop_map(|w| format!("window_limit = \"{w}pkt\"\n"))],
        prop_oneof![3 => Just(String::new()), 1 => Just("sack = false\n".to_string())],
        prop_oneof![1 => Just(None), 2 => selector().prop_map(Some)],
    )
        .prop_map(move |(window, sack, select)| {
            let base = format!("{window}{sack}");
            // `paths` and `select` are for TCP groups with at least two paths to pick from.
            let select = match select {
                Some(kind) if paths >= 2 => {
                    let list: Vec<String> = (0..paths).map(|i| format!("[\"r{i}\"]")).collect();
                    format!("paths = [{}]\nselect = {kind}\n", list.join(", "))
                }
                _ => String::new(),
            };
            (base, select)
        })
}

fn group(paths: usize) -> impl Strategy<Value = Group> {
    (
        any::<bool>(),
        0usize..6,
        1u32..4,
        prop_oneof![3 => Just(0u32), 1 => 0u32..4],
        prop_oneof![
            Just(String::new()),
            (1u32..2000)
                .prop_map(|kb| format!("traffic = {{ kind = \"file\", size = \"{kb}KB\" }}")),
            (50u32..1000, 50u32..1000).prop_map(|(on, off)| format!(
                "traffic = {{ kind = \"onoff\", burst = \"{on}ms\", idle = \"{off}ms\" }}"
            )),
        ],
        options(paths),
    )
        .prop_map(
            |(mptcp, cc, count, count_spread, traffic, (base, select))| {
                let ccs: &[&str] = if mptcp {
                    &["lia", "olia", "balia", "wvegas", "ewtcp", "fullycoupled"]
                } else {
                    &["reno"]
                };
                Group {
                    mptcp,
                    cc: ccs[cc % ccs.len()],
                    count,
                    count_spread: count_spread.min(count - 1),
                    traffic,
                    options: if mptcp { base } else { base + &select },
                }
            },
        )
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
                proptest::collection::vec(group(paths), 1..4),
                proptest::collection::vec(event(paths, duration_ms), 0..3),
                Just(duration_ms),
                100u64..1000,
                // The scenario's seed draws the links' delays.
                0u64..1_000_000,
                // The hosts' jitter, microseconds: none half the time.
                prop_oneof![Just(0u64), 1u64..2_000],
            )
        })
        .prop_map(|(links, groups, events, duration_ms, interval_ms, draw_seed, jitter_us)| {
            let mut t = format!(
                "[scenario]\nname = \"random\"\nduration = \"{duration_ms}ms\"\nseed = {draw_seed}\n\
                 [[node]]\nname = \"src\"\nkind = \"host\"\njitter = \"{jitter_us}us\"\n\
                 [[node]]\nname = \"dst\"\nkind = \"host\"\njitter = \"{jitter_us}us\"\n"
            );
            for (i, l) in links.iter().enumerate() {
                write!(
                    t,
                    "[[node]]\nname = \"r{i}\"\nkind = \"router\"\n\
                     [[link]]\nname = \"access{i}\"\na = \"src:p{i}\"\nb = \"r{i}\"\n\
                     rate = \"10Gbps\"\ndelay = \"1ms\"\n\
                     [[link]]\nname = \"path{i}\"\na = \"r{i}\"\nb = \"dst:p{i}\"\n\
                     rate = \"{}kbps\"\ndelay = {}\nqueue = {}\nloss = {}\n",
                    l.rate_kbps,
                    delay(l),
                    l.queue,
                    l.loss
                )
                .unwrap();
            }
            for (i, g) in groups.iter().enumerate() {
                write!(
                    t,
                    "[[flow]]\nname = \"g{i}\"\nprotocol = \"{}\"\ncc = \"{}\"\ncount = {}\n\
                     from = \"src\"\nto = \"dst\"\nstagger = \"10ms\"\n{}\n{}",
                    if g.mptcp { "mptcp" } else { "tcp" },
                    g.cc,
                    count(g),
                    g.traffic,
                    g.options
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

fn delay(l: &PathLink) -> String {
    if l.delay_spread_ms == 0 {
        format!("\"{}ms\"", l.delay_ms)
    } else {
        format!(
            "{{ mean = \"{}ms\", spread = \"{}ms\" }}",
            l.delay_ms, l.delay_spread_ms
        )
    }
}

fn count(g: &Group) -> String {
    if g.count_spread == 0 {
        g.count.to_string()
    } else {
        format!("{{ mean = {}, spread = {} }}", g.count, g.count_spread)
    }
}

fn load(text: &str) -> Scenario {
    load_str(text, Path::new("random.toml"), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("a valid scenario was refused:\n{e}\n{text}"))
        .remove(0)
}

/// 48 cases in CI; `PROPTEST_CASES=10000` for the campaign docs/robustness.md reports.
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
            if name.ends_with(".utilisation") || name.ends_with(".goodput_share") {
                prop_assert!(v <= 1.0 + 1e-9, "{name} = {v}\n{text}");
            }
            if name.ends_with(".jain") {
                prop_assert!(v <= 1.0 + 1e-9, "{name} = {v}\n{text}");
            }
        }
    }
}
