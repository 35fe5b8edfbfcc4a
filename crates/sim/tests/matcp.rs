//! MATCP's path selection end to end through the simulator: on/off sources whose every
//! connection picks one of two numbered paths, each through its own uplink.

use scenario::{LoadOptions, Scenario, load_str};
use std::collections::BTreeMap;
use std::path::Path;

/// Sources on `h1` reach `h2` over `up1` (through router `r1`) or `up2` (through `r2`);
/// `cross` bulk flows from `h3` load `up1` only.
fn scenario(select: &str, cross: u32) -> Scenario {
    let cross = if cross == 0 {
        String::new()
    } else {
        format!("[[flow]]\nname = \"cross\"\nfrom = \"h3\"\nto = \"h2\"\ncount = {cross}")
    };
    let text = format!(
        r#"
[scenario]
name = "m"
duration = "120s"
[[node]]
name = "h1"
kind = "host"
[[node]]
name = "h3"
kind = "host"
[[node]]
name = "r1"
kind = "router"
[[node]]
name = "r2"
kind = "router"
[[node]]
name = "h2"
kind = "host"
[[link]]
a = "h1"
b = "r1"
rate = "1Gbps"
delay = "1ms"
[[link]]
a = "h1"
b = "r2"
rate = "1Gbps"
delay = "1ms"
[[link]]
a = "h3"
b = "r1"
rate = "1Gbps"
delay = "1ms"
[[link]]
name = "up1"
a = "r1"
b = "h2"
rate = "10Mbps"
delay = "10ms"
queue = {{ kind = "red", size = "100pkt", min_th = 25, max_th = 50, max_p = 0.1 }}
[[link]]
name = "up2"
a = "r2"
b = "h2"
rate = "10Mbps"
delay = "10ms"
queue = {{ kind = "red", size = "100pkt", min_th = 25, max_th = 50, max_p = 0.1 }}
[[flow]]
name = "src"
from = "h1"
to = "h2"
count = 30
paths = [["r1"], ["r2"]]
select = {select}
traffic = {{ kind = "onoff", burst = "2s", idle = "2s" }}
window_limit = "16pkt"
start_jitter = "2s"
{cross}
[measure]
interval = "10s"
warmup = "20s"
per_flow = false
"#
    );
    let opts = LoadOptions {
        overrides: Vec::new(),
    };
    load_str(&text, Path::new("matcp.toml"), &opts)
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0)
}

fn run(select: &str, cross: u32, seed: u64) -> BTreeMap<String, f64> {
    sim::run(&scenario(select, cross), seed, |_| {}).metrics
}

/// The sources' goodput over each uplink, in Mbps (0 if nothing crossed it): the uplink's
/// goodput less the cross traffic's on up1.
fn per_path(m: &BTreeMap<String, f64>) -> [f64; 2] {
    let link = |up: &str| {
        m.get(&format!("link.{up}.ab.goodput_mbps"))
            .copied()
            .unwrap_or(0.0)
    };
    let cross = m.get("group.cross.goodput_mbps").copied().unwrap_or(0.0);
    [link("up1") - cross, link("up2")]
}

#[test]
fn single_path_keeps_every_connection_on_the_first_path() {
    let m = run(r#"{ kind = "single-path" }"#, 0, 1);
    let [up1, up2] = per_path(&m);
    assert!(up1 > 7.0, "up1 carries the sources: {up1:.2} Mbps");
    assert_eq!(up2, 0.0, "nothing may cross up2: {up2:.2} Mbps");
}

#[test]
fn every_selector_spreads_connections_over_both_paths() {
    for select in [
        r#"{ kind = "weighted-rtt" }"#,
        r#"{ kind = "rtt-variation", refresh = 10 }"#,
        r#"{ kind = "rtt-variation", refresh = 10, variation = "rttvar" }"#,
        r#"{ kind = "drops", refresh = 10 }"#,
        r#"{ kind = "rtt", refresh = 10 }"#,
    ] {
        let m = run(select, 0, 1);
        let [up1, up2] = per_path(&m);
        // Two equal idle paths: each gets a fair part of the sources' goodput.
        let share = up1 / (up1 + up2);
        assert!(
            (0.3..=0.7).contains(&share),
            "{select}: up1 {up1:.2}, up2 {up2:.2} Mbps"
        );
        // The per-path shares are of the uplinks' capacity and add up to the sources' total.
        let total = m["group.src.goodput_mbps"];
        assert!(
            ((up1 + up2) - total).abs() <= 0.05 * total,
            "{select}: paths {:.2} against delivered {total:.2} Mbps",
            up1 + up2
        );
        assert!((m["link.up1.ab.goodput_share"] - up1 / 10.0).abs() < 1e-9);
    }
}

#[test]
fn learning_selectors_move_connections_away_from_a_loaded_path() {
    // Four bulk flows fill up1's queue; up2 carries only what the sources send it.
    let single = per_path(&run(r#"{ kind = "single-path" }"#, 4, 1));
    for select in [
        r#"{ kind = "weighted-rtt" }"#,
        r#"{ kind = "rtt-variation", refresh = 10 }"#,
        r#"{ kind = "drops", refresh = 10 }"#,
        r#"{ kind = "rtt", refresh = 10 }"#,
    ] {
        let [up1, up2] = per_path(&run(select, 4, 1));
        assert!(
            up2 > up1,
            "{select}: the idle path must carry more of the sources' goodput: up1 {up1:.2}, up2 {up2:.2} Mbps"
        );
        assert!(
            up1 + up2 > single[0],
            "{select}: the sources must gain over single path's {:.2} Mbps",
            single[0]
        );
    }
}

#[test]
fn a_seed_gives_the_same_run_twice_and_seeds_differ() {
    let select = r#"{ kind = "weighted-rtt" }"#;
    let (a, b, c) = (run(select, 1, 3), run(select, 1, 3), run(select, 1, 4));
    assert_eq!(a, b);
    assert_ne!(a["group.src.goodput_mbps"], c["group.src.goodput_mbps"]);
}
