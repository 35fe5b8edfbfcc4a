//! Bad input in the fields that describe MATCP's experiments: group sizes drawn per run,
//! numbered paths and their selector, link delays drawn per scenario, derived metrics and
//! panel figures. Each error names the file, line, column and field.

use scenario::{LoadOptions, load_str};
use std::path::Path;

/// Two routers between two hosts: two paths to choose from.
const GOOD: &str = r#"
[params]
kind = "drops"

[scenario]
name = "m"
duration = "10s"

[variants]
select = [{ kind = "single-path" }, { kind = "weighted-rtt" }]

[[node]]
name = "h1"
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
rate = "100Mbps"
delay = "1ms"
[[link]]
a = "h1"
b = "r2"
rate = "100Mbps"
delay = "1ms"
[[link]]
name = "up1"
a = "r1"
b = "h2"
rate = "10Mbps"
delay = { mean = "30ms", spread = "20ms" }
[[link]]
name = "up2"
a = "r2"
b = "h2"
rate = "10Mbps"
delay = "5ms"

[[flow]]
name = "src"
from = "h1"
to = "h2"
count = { mean = 8, spread = 4 }
paths = [["r1"], ["r2"]]
select = "${select}"
traffic = { kind = "onoff", burst = "2s", idle = "1s" }

[[derived]]
name = "spread"
reduce = "spread"
of = ["link.up1.ab.goodput_share", "link.up2.ab.goodput_share"]

[[order]]
statement = "weighted RTT balances"
metric = "derived.spread"
param = "select"
ascending = ["weighted-rtt", "single-path"]

[[plot]]
kind = "panels"
title = "per path"
x = "select"
panels = "select"
baseline = "single-path"
metrics = ["link.up1.ab.goodput_share"]
band = "all.goodput_std_mbps"
"#;

fn opts() -> LoadOptions {
    LoadOptions::default()
}

/// Replaces `from` (which must occur exactly once) and returns every error, one per line.
fn errors_after(from: &str, to: &str) -> String {
    assert_eq!(GOOD.matches(from).count(), 1, "`{from}` must be unique");
    let text = GOOD.replacen(from, to, 1);
    load_str(&text, Path::new("m.toml"), &opts())
        .expect_err("should be rejected")
        .to_string()
}

/// The line `needle` is on after the replacement, for location checks.
fn line_after(from: &str, to: &str, needle: &str) -> usize {
    let text = GOOD.replacen(from, to, 1);
    text.lines()
        .position(|l| l.contains(needle))
        .expect("needle in text")
        + 1
}

fn assert_has(m: &str, parts: &[&str]) {
    for p in parts {
        assert!(m.contains(p), "expected `{p}` in:\n{m}");
    }
}

#[test]
fn the_good_scenario_loads() {
    let v = load_str(GOOD, Path::new("m.toml"), &opts()).expect("valid");
    assert_eq!(v.len(), 2);
    let g = &v[0].flows[0];
    assert_eq!((g.count, g.count_spread), (8, 4));
    assert_eq!(g.paths.len(), 2);
    assert_eq!(v[0].links[2].delay_spread.secs(), 0.02);
    assert_eq!(v[0].derived.len(), 1);
}

#[test]
fn count_spread_must_stay_below_the_mean() {
    let m = errors_after(
        "count = { mean = 8, spread = 4 }",
        "count = { mean = 8, spread = 8 }",
    );
    let line = line_after(
        "count = { mean = 8, spread = 4 }",
        "count = { mean = 8, spread = 8 }",
        "count =",
    );
    assert_has(
        &m,
        &[
            &format!("m.toml:{line}:"),
            "flow[0].count.spread",
            "spread 8 must be below the mean 8",
        ],
    );
}

#[test]
fn count_tables_are_checked_for_their_keys() {
    let m = errors_after("count = { mean = 8, spread = 4 }", "count = { mean = 8 }");
    assert_has(&m, &["flow[0].count", "missing field `spread`"]);
    let m = errors_after(
        "count = { mean = 8, spread = 4 }",
        "count = { mean = 8, sprad = 4 }",
    );
    assert_has(&m, &["flow[0].count", "unknown field `sprad`", "spread"]);
    let m = errors_after(
        "count = { mean = 8, spread = 4 }",
        "count = { mean = -8, spread = 4 }",
    );
    assert_has(&m, &["flow[0].count.mean", "-8 is out of range"]);
    let m = errors_after("count = { mean = 8, spread = 4 }", "count = \"many\"");
    assert_has(
        &m,
        &[
            "flow[0].count",
            "a number of flows, or `{ mean = 80, spread = 40 }`",
        ],
    );
    let m = errors_after("count = { mean = 8, spread = 4 }", "count = 0");
    assert_has(&m, &["flow[0].count", "at least 1"]);
    let m = errors_after("count = { mean = 8, spread = 4 }", "count = 5000000000");
    assert_has(&m, &["flow[0].count", "out of range"]);
    let m = errors_after(
        "count = { mean = 8, spread = 4 }",
        "count = { mean = 4294967295, spread = 1 }",
    );
    assert_has(&m, &["flow[0].count", "more flows than a group can have"]);
}

#[test]
fn paths_name_routers_that_exist_and_route() {
    let m = errors_after(
        "paths = [[\"r1\"], [\"r2\"]]",
        "paths = [[\"r1\"], [\"r3\"]]",
    );
    assert_has(
        &m,
        &["flow[0].paths[1]", "unknown", "r3", "did you mean `r1`"],
    );
    let m = errors_after(
        "paths = [[\"r1\"], [\"r2\"]]",
        "paths = [[\"r1\"], [\"h1\"]]",
    );
    assert_has(
        &m,
        &[
            "flow[0].paths[1][0]",
            "`h1` is a host: only routers forward",
        ],
    );
    let m = errors_after(
        "paths = [[\"r1\"], [\"r2\"]]",
        "paths = [[\"r1\"], [\"r1\"]]",
    );
    assert_has(&m, &["flow[0].paths[1]", "same route as path 0"]);
}

#[test]
fn paths_and_via_exclude_each_other() {
    let m = errors_after(
        "paths = [[\"r1\"], [\"r2\"]]",
        "paths = [[\"r1\"], [\"r2\"]]\nvia = [\"r1\"]",
    );
    assert_has(&m, &["flow[0].via", "either `via`", "or `paths`"]);
}

#[test]
fn select_needs_paths_to_choose_from() {
    let m = errors_after("paths = [[\"r1\"], [\"r2\"]]\n", "");
    assert_has(&m, &["flow[0].select", "at least two"]);
}

#[test]
fn mptcp_flows_take_neither_paths_nor_select() {
    let m = errors_after("name = \"src\"\n", "name = \"src\"\nprotocol = \"mptcp\"\n");
    assert_has(&m, &["flow[0].paths", "applies to TCP flows"]);
}

#[test]
fn selector_kinds_and_their_refresh() {
    let sel = "select = \"${select}\"";
    let m = errors_after(sel, "select = { kind = \"drops\" }");
    assert_has(&m, &["flow[0].select.kind", "needs `refresh`"]);
    let m = errors_after(sel, "select = { kind = \"drops\", refresh = 0 }");
    assert_has(&m, &["flow[0].select.refresh", "at least 1"]);
    let m = errors_after(sel, "select = { kind = \"weighted-rtt\", refresh = 5 }");
    assert_has(
        &m,
        &[
            "flow[0].select.refresh",
            "only rtt-variation, drops and rtt",
        ],
    );
    let m = errors_after(
        sel,
        "select = { kind = \"drops\", refresh = 5, variation = \"rttvar\" }",
    );
    assert_has(&m, &["flow[0].select.variation", "rtt-variation"]);
    let m = errors_after(sel, "select = { kind = \"fastest\" }");
    assert_has(
        &m,
        &[
            "flow[0].select.kind",
            "unknown variant `fastest`",
            "weighted-rtt",
        ],
    );
    let m = errors_after(sel, "select = { kind = \"rtt\", refresh = 5, r = 3 }");
    assert_has(&m, &["flow[0].select", "unknown field `r`"]);
    let m = errors_after(
        sel,
        "select = { kind = \"rtt-variation\", refresh = 5, variation = \"jitter\" }",
    );
    assert_has(
        &m,
        &["flow[0].select.variation", "unknown variant `jitter`"],
    );
    let m = errors_after(sel, "select = { kind = \"rtt\", refresh = -1 }");
    assert_has(&m, &["flow[0].select.refresh"]);
}

#[test]
fn drawn_delays_are_checked() {
    let d = "delay = { mean = \"30ms\", spread = \"20ms\" }";
    let m = errors_after(d, "delay = { mean = \"30ms\", spread = \"40ms\" }");
    let line = line_after(
        d,
        "delay = { mean = \"30ms\", spread = \"40ms\" }",
        "spread = \"40ms\"",
    );
    assert_has(
        &m,
        &[
            &format!("m.toml:{line}:"),
            "link[2].delay.spread",
            "cannot be negative",
        ],
    );
    let m = errors_after(d, "delay = { mean = \"30ms\" }");
    assert_has(&m, &["link[2].delay", "missing field `spread`"]);
    let m = errors_after(d, "delay = { mean = \"30\", spread = \"20ms\" }");
    assert_has(&m, &["link[2].delay"]);
    let m = errors_after(d, "delay = { average = \"30ms\", spread = \"20ms\" }");
    assert_has(&m, &["link[2].delay", "unknown field `average`"]);
    let m = errors_after(d, "delay = 30");
    assert_has(&m, &["link[2].delay", "has no unit"]);
    let m = errors_after(d, &format!("{d}\nab = {{ delay = \"5ms\" }}"));
    assert_has(&m, &["link[2].ab.delay", "applies to both directions"]);
}

#[test]
fn derived_metrics_are_checked() {
    let m = errors_after("name = \"spread\"", "name = \"spread out\"");
    assert_has(&m, &["derived[0].name", "not a metric name"]);
    let m = errors_after(
        "of = [\"link.up1.ab.goodput_share\", \"link.up2.ab.goodput_share\"]",
        "of = [\"link.up1.ab.goodput_share\"]",
    );
    assert_has(&m, &["derived[0].of", "at least two"]);
    let m = errors_after(
        "of = [\"link.up1.ab.goodput_share\", \"link.up2.ab.goodput_share\"]",
        "of = [\"link.up1.ab.goodput_share\", \"link.up3.ab.goodput_share\"]",
    );
    assert_has(&m, &["derived[0].of[1]", "unknown link `up3`"]);
    let m = errors_after(
        "of = [\"link.up1.ab.goodput_share\", \"link.up2.ab.goodput_share\"]",
        "of = [\"link.up1.ab.goodput_share\", \"link.up2.ab.goodput_sharee\"]",
    );
    assert_has(
        &m,
        &["derived[0].of[1]", "unknown quantity", "goodput_share"],
    );
    let m = errors_after(
        "of = [\"link.up1.ab.goodput_share\", \"link.up2.ab.goodput_share\"]",
        "of = [\"link.up1.ab.goodput_share\", \"link.up2.ab.goodput_share\", \"link.up1.ab.goodput_share\"]",
    );
    assert_has(&m, &["derived[0].of[2]", "listed already (entry 0)"]);
    let m = errors_after("reduce = \"spread\"", "reduce = \"range\"");
    assert_has(&m, &["derived[0].reduce", "unknown variant `range`"]);
    let m = errors_after("metric = \"derived.spread\"", "metric = \"derived.sprad\"");
    assert_has(
        &m,
        &[
            "order[0].metric",
            "unknown derived metric `sprad`",
            "did you mean `spread`",
        ],
    );
    let twice = "[[derived]]\nname = \"spread\"\nreduce = \"max\"\nof = [\"all.jain\", \"all.goodput_mbps\"]\n\n[[order]]";
    let m = errors_after("[[order]]", twice);
    assert_has(&m, &["derived[1].name", "defined twice"]);
}

#[test]
fn panel_figures_are_checked() {
    let m = errors_after("baseline = \"single-path\"", "baseline = \"single\"");
    assert_has(
        &m,
        &[
            "plot[0].baseline",
            "no variant has `select` = `single`",
            "single-path",
        ],
    );
    let m = errors_after("panels = \"select\"", "panels = \"selector\"");
    assert_has(&m, &["plot[0].panels", "unknown parameter `selector`"]);
    let m = errors_after(
        "metrics = [\"link.up1.ab.goodput_share\"]",
        "metrics = [\"link.up1.ab.goodput_share\", \"link.up2.ab.goodput_share\"]",
    );
    assert_has(&m, &["plot[0].band", "single line"]);
    let m = errors_after(
        "metrics = [\"link.up1.ab.goodput_share\"]",
        "metrics = [\"link.up1.ab.goodput_share\", \"link.up1.ab.goodput_share\"]",
    );
    assert_has(&m, &["plot[0].metrics[1]", "listed already (entry 0)"]);
    let m = errors_after("metrics = [\"link.up1.ab.goodput_share\"]", "metrics = []");
    assert_has(&m, &["plot[0].metrics", "at least one metric"]);
    let m = errors_after(
        "band = \"all.goodput_std_mbps\"",
        "band = \"all.goodput_sd_mbps\"",
    );
    assert_has(
        &m,
        &["plot[0].band", "unknown quantity", "goodput_std_mbps"],
    );
}

#[test]
fn order_tolerance_below_one_reads_as_at_least_that_share() {
    let m = errors_after(
        "ascending = [\"weighted-rtt\", \"single-path\"]",
        "ascending = [\"weighted-rtt\", \"single-path\"]\nmin_ratio = -0.5",
    );
    assert_has(&m, &["order[0].min_ratio", "positive factor"]);
}
