//! Bad input in `[[table]]`, a paper's table laid out over variant parameters and metrics:
//! each error names the file, line, column and field.

use scenario::{LoadOptions, ScenarioErrors, load_str};
use std::path::Path;

/// Two parameters vary (two by two variants); the table places both.
const GOOD: &str = r#"
[scenario]
name = "t"
duration = "10s"

[variants]
case = [{ name = "n=1", n = 1 }, { name = "n=2", n = 2 }]
cc = ["lia", "olia"]

[params]
rate = "10Mbps"

[[node]]
name = "a"
kind = "host"
[[node]]
name = "b"
kind = "host"

[[link]]
name = "l"
a = "a"
b = "b"
rate = "${rate}"
delay = "5ms"

[[flow]]
name = "m"
count = "${case.n}"
protocol = "mptcp"
cc = "${cc}"
from = "a"
to = "b"

[[expect]]
metric = "group.m.goodput_mbps"
when = { case = "n=1", cc = "lia" }
value = 9.0
tolerance = "10%"

[[table]]
title = "Table 1"
rows = ["case"]
columns = ["cc"]
metrics = ["group.m.goodput_mbps", "all.jain"]
[table.labels]
metric = "what"
"n=1" = "one flow"
lia = "LIA"
"group.m.goodput_mbps" = "goodput"
"#;

fn errors_after(from: &str, to: &str) -> ScenarioErrors {
    assert_eq!(GOOD.matches(from).count(), 1, "`{from}` must be unique");
    load_str(
        &GOOD.replacen(from, to, 1),
        Path::new("t.toml"),
        &LoadOptions::default(),
    )
    .expect_err("should be rejected")
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .expect("needle in text")
        + 1
}

/// The error about `field` (a change can cause others too: a parameter left out of the
/// table also leaves its values' labels naming nothing).
fn at<'a>(e: &'a ScenarioErrors, field: &str) -> &'a scenario::ScenarioError {
    e.0.iter()
        .find(|x| x.field == field)
        .unwrap_or_else(|| panic!("no error at {field} in:\n{e}"))
}

#[test]
fn the_good_table_loads() {
    let v = load_str(GOOD, Path::new("t.toml"), &LoadOptions::default()).expect("valid");
    assert_eq!(v.len(), 4);
    let t = &v[0].tables[0];
    assert_eq!((t.rows.len(), t.columns.len(), t.metrics.len()), (1, 1, 2));
    assert_eq!(t.labels["lia"], "LIA");
}

#[test]
fn an_unknown_parameter_gets_did_you_mean() {
    let e = errors_after("rows = [\"case\"]", "rows = [\"cas\"]");
    let e = at(&e, "table[0].rows[0]");
    assert_eq!(e.line, line_of(GOOD, "rows = ["));
    assert!(e.column > 0);
    assert!(
        e.message.contains("unknown parameter `cas`") && e.message.contains("case"),
        "{e}"
    );
}

#[test]
fn a_parameter_goes_on_one_side_once() {
    let e = errors_after("columns = [\"cc\"]", "columns = [\"cc\", \"case\"]");
    let msg = e.to_string();
    assert!(
        msg.contains("table[0].columns[1]") && msg.contains("placed already"),
        "{msg}"
    );
}

#[test]
fn every_varying_parameter_is_placed() {
    let e = errors_after("columns = [\"cc\"]", "columns = []");
    let e = at(&e, "table[0]");
    assert_eq!(e.line, line_of(GOOD, "[[table]]"));
    assert!(e.message.contains("`cc` varies but is in neither"), "{e}");
}

#[test]
fn metrics_are_ones_the_runs_produce() {
    let e = errors_after("\"all.jain\"]", "\"all.jian\"]");
    let e = at(&e, "table[0].metrics[1]");
    assert_eq!(e.line, line_of(GOOD, "metrics = [\"group.m"));
    assert!(e.message.contains("jian"), "{e}");
    // No metric (and so no label for one).
    let text = GOOD
        .replace(
            "metrics = [\"group.m.goodput_mbps\", \"all.jain\"]",
            "metrics = []",
        )
        .replace("\"group.m.goodput_mbps\" = \"goodput\"", "");
    let e = load_str(&text, Path::new("t.toml"), &LoadOptions::default())
        .expect_err("should be rejected");
    let e = at(&e, "table[0].metrics");
    assert_eq!(e.line, line_of(&text, "metrics = []"));
    assert!(e.message.contains("at least one metric"), "{e}");
}

#[test]
fn labels_name_what_the_table_shows() {
    let e = errors_after("lia = \"LIA\"", "lai = \"LIA\"");
    let e = at(&e, "table[0].labels.lai");
    assert_eq!(e.line, line_of(GOOD, "lia = \"LIA\""));
    assert!(
        e.message.contains("`lai` is not in this table") && e.message.contains("lia"),
        "{e}"
    );
}

#[test]
fn a_misspelt_side_or_field_is_refused_where_it_is() {
    let e = errors_after(
        "[table.labels]",
        "metrics_in = \"diagonal\"\n[table.labels]",
    );
    let msg = e.to_string();
    assert!(
        msg.contains("t.toml:") && msg.contains("metrics_in") && msg.contains("diagonal"),
        "{msg}"
    );
    let e = errors_after("title = \"Table 1\"", "titel = \"Table 1\"");
    let msg = e.to_string();
    assert!(msg.contains("titel") && msg.contains("title"), "{msg}");
}

#[test]
fn a_single_bracket_table_is_refused_with_the_right_shape() {
    let e = errors_after("[[table]]", "[table]");
    let msg = e.to_string();
    assert!(
        msg.contains("t.toml:") && msg.contains("write [[table]] before each entry"),
        "{msg}"
    );
}
