//! Every kind of bad input gets an error naming the file, line, column and field, and
//! saying what was expected.

use scenario::{LoadOptions, ScenarioErrors, load_str};
use std::path::Path;

const GOOD: &str = r#"
[scenario]
name = "t"
duration = "10s"

[[node]]
name = "h1"
kind = "host"
[[node]]
name = "r1"
kind = "router"
[[node]]
name = "h2"
kind = "host"

[[link]]
a = "h1"
b = "r1"
rate = "10Mbps"
delay = "5ms"

[[link]]
name = "core"
a = "r1"
b = "h2"
rate = "10Mbps"
delay = "5ms"
queue = { kind = "droptail", size = "100pkt" }

[[flow]]
name = "f"
from = "h1"
to = "h2"

[[event]]
at = "5s"
link = "core"
action = "down"
"#;

fn opts() -> LoadOptions {
    LoadOptions {
        overrides: Vec::new(),
    }
}

fn errors(text: &str) -> ScenarioErrors {
    load_str(text, Path::new("bad.toml"), &opts()).expect_err("should be rejected")
}

/// Replaces `from` in GOOD (which must occur exactly once) and returns the single error.
fn error_after(from: &str, to: &str) -> String {
    assert_eq!(
        GOOD.matches(from).count(),
        1,
        "`{from}` must be unique in GOOD"
    );
    let e = errors(&GOOD.replacen(from, to, 1));
    e.to_string()
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .expect("needle in text")
        + 1
}

#[test]
fn the_good_scenario_loads() {
    let v = load_str(GOOD, Path::new("good.toml"), &opts()).unwrap();
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].flows[0].paths[0].hops.len(), 2);
}

#[test]
fn syntax_error_has_line_and_column() {
    let text = GOOD.replacen(
        "delay = \"5ms\"\n\n[[link]]",
        "delay = \"5ms\n\n[[link]]",
        1,
    );
    let e = errors(&text).0.remove(0);
    assert_eq!(e.file, Path::new("bad.toml"));
    assert!(e.line > 0 && e.column > 0, "{e}");
    assert!(e.message.starts_with("TOML syntax"), "{e}");
}

#[test]
fn unknown_key_suggests_the_right_one() {
    let text = GOOD.replacen(
        "rate = \"10Mbps\"\ndelay = \"5ms\"\nqueue",
        "rat = \"10Mbps\"\ndelay = \"5ms\"\nqueue",
        1,
    );
    let e = errors(&text).0.remove(0);
    assert_eq!(e.field, "link[1].rat");
    assert_eq!(e.line, line_of(&text, "rat = "));
    assert!(
        e.message.contains("unknown field `rat`") && e.message.contains("did you mean `rate`?"),
        "{e}"
    );
}

#[test]
fn missing_field_names_the_table() {
    let m = error_after("name = \"f\"\nfrom = \"h1\"", "name = \"f\"");
    assert!(
        m.contains("flow[0]") && m.contains("missing field `from`"),
        "{m}"
    );
}

#[test]
fn bad_units() {
    let m = error_after(
        "name = \"core\"\na = \"r1\"\nb = \"h2\"\nrate = \"10Mbps\"",
        "name = \"core\"\na = \"r1\"\nb = \"h2\"\nrate = \"10Mbit\"",
    );
    assert!(
        m.contains("bad.toml:")
            && m.contains("link[1].rate")
            && m.contains("unknown rate unit `Mbit`")
            && m.contains("10Mbps"),
        "{m}"
    );
    let m = error_after("at = \"5s\"", "at = 5");
    assert!(
        m.contains("event[0].at") && m.contains("has no unit"),
        "{m}"
    );
    let m = error_after("size = \"100pkt\"", "size = \"lots\"");
    assert!(
        m.contains("link[1].queue") && m.contains("expected a size"),
        "{m}"
    );
}

#[test]
fn zero_and_negative_rates() {
    let m = error_after(
        "name = \"core\"\na = \"r1\"\nb = \"h2\"\nrate = \"10Mbps\"",
        "name = \"core\"\na = \"r1\"\nb = \"h2\"\nrate = \"0Mbps\"",
    );
    assert!(m.contains("greater than zero"), "{m}");
    let m = error_after(
        "name = \"core\"\na = \"r1\"\nb = \"h2\"\nrate = \"10Mbps\"",
        "name = \"core\"\na = \"r1\"\nb = \"h2\"\nrate = \"-1Mbps\"",
    );
    assert!(m.contains("must not be negative"), "{m}");
}

#[test]
fn link_to_unknown_node() {
    let text = GOOD.replacen("a = \"r1\"\nb = \"h2\"", "a = \"r1\"\nb = \"h3\"", 1);
    let e = errors(&text);
    let first = &e.0[0];
    assert_eq!(first.field, "link[1].b");
    assert_eq!(first.line, line_of(&text, "b = \"h3\""));
    assert!(
        first.message.contains("unknown node `h3`") && first.message.contains("did you mean `h1`")
            || first.message.contains("`h2`"),
        "{first}"
    );
}

#[test]
fn unreachable_destination() {
    // Take the core link away from h2's side: h2 keeps no link at all.
    let text = GOOD
        .replacen("a = \"r1\"\nb = \"h2\"", "a = \"r1\"\nb = \"h1:second\"", 1)
        .replacen(
            "[[event]]\nat = \"5s\"\nlink = \"core\"\naction = \"down\"",
            "",
            1,
        );
    let e = errors(&text).0.remove(0);
    assert_eq!(e.field, "flow[0].to");
    assert!(e.message.contains("cannot be reached"), "{e}");
}

#[test]
fn hosts_do_not_forward() {
    let text = GOOD.replacen(
        "name = \"r1\"\nkind = \"router\"",
        "name = \"r1\"\nkind = \"host\"",
        1,
    );
    let e = errors(&text);
    assert!(
        e.0.iter().any(|x| x.message.contains("cannot be reached")),
        "{e}"
    );
}

#[test]
fn duplicate_names() {
    let m = error_after(
        "name = \"r1\"\nkind = \"router\"",
        "name = \"h1\"\nkind = \"router\"",
    );
    assert!(
        m.contains("node[1].name") && m.contains("duplicate node name `h1`"),
        "{m}"
    );
    let text = format!("{GOOD}\n[[flow]]\nname = \"f\"\nfrom = \"h1\"\nto = \"h2\"\n");
    let e = errors(&text).0.remove(0);
    assert_eq!(e.field, "flow[1].name");
    assert!(e.message.contains("duplicate flow name"), "{e}");
    let text = format!(
        "{GOOD}\n[[link]]\nname = \"core\"\na = \"h1:x\"\nb = \"r1:y\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n"
    );
    let e = errors(&text).0.remove(0);
    assert!(
        e.field == "link[2].name" && e.message.contains("duplicate link name `core`"),
        "{e}"
    );
}

#[test]
fn event_for_a_link_that_does_not_exist() {
    let text = GOOD.replacen("link = \"core\"", "link = \"cor\"", 1);
    let e = errors(&text).0.remove(0);
    assert_eq!(e.field, "event[0].link");
    assert_eq!(e.line, line_of(&text, "link = \"cor\""));
    assert!(
        e.message
            .contains("unknown link `cor`; did you mean `core`?"),
        "{e}"
    );
}

#[test]
fn event_values_must_fit_the_action() {
    let m = error_after("action = \"down\"", "action = \"set\"");
    assert!(
        m.contains("event[0].action") && m.contains("at least one of rate, delay, loss"),
        "{m}"
    );
    let m = error_after("action = \"down\"", "action = \"explode\"");
    assert!(m.contains("unknown variant `explode`"), "{m}");
}

#[test]
fn unknown_congestion_control() {
    let m = error_after("name = \"f\"\nfrom", "name = \"f\"\ncc = \"lai\"\nfrom");
    assert!(
        m.contains("flow[0].cc") && m.contains("did you mean `lia`?"),
        "{m}"
    );
}

#[test]
fn red_parameters_are_checked() {
    let m = error_after(
        "queue = { kind = \"droptail\", size = \"100pkt\" }",
        "queue = { kind = \"red\", size = \"100pkt\", min_th = 50.0, max_th = 20.0, max_p = 1.5 }",
    );
    assert!(
        m.contains("link[1].queue.min_th") && m.contains("link[1].queue.max_p"),
        "{m}"
    );
}

#[test]
fn all_problems_are_reported_at_once() {
    let text = GOOD
        .replacen("link = \"core\"", "link = \"nope\"", 1)
        .replacen("to = \"h2\"", "to = \"zz\"", 1);
    assert_eq!(errors(&text).0.len(), 2);
}

#[test]
fn parameters_and_variants() {
    let text = GOOD
        .replacen(
            "[[node]]",
            "[params]\nrate = \"5Mbps\"\n[variants]\ncc = [\"reno\", \"lia\"]\n\n[[node]]",
            1,
        )
        .replacen(
            "name = \"f\"\nfrom",
            "name = \"f\"\ncc = \"${cc}\"\nfrom",
            1,
        )
        .replacen(
            "rate = \"10Mbps\"\ndelay = \"5ms\"\nqueue",
            "rate = \"${rate}\"\ndelay = \"5ms\"\nqueue",
            1,
        );
    let v = load_str(&text, Path::new("v.toml"), &opts()).unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!(v[0].variant, "cc=reno");
    assert_eq!(v[1].flows[0].cc.name(), "lia");
    assert_eq!(v[0].links[1].dirs[0].rate.mbps(), 5.0);

    let mut o = opts();
    o.overrides = vec![("cc".into(), "lia".into())];
    let v = load_str(&text, Path::new("v.toml"), &o).unwrap();
    assert_eq!((v.len(), v[0].flows[0].cc.name()), (1, "lia"));

    o.overrides = vec![("cx".into(), "lia".into())];
    let e = load_str(&text, Path::new("v.toml"), &o).unwrap_err();
    assert!(
        e.to_string()
            .contains("unknown parameter `cx`; did you mean `cc`?"),
        "{e}"
    );

    let bad = text.replacen("${rate}", "${rat}", 1);
    let e = errors(&bad).0.remove(0);
    assert!(
        e.field == "link[1].rate" && e.message.contains("did you mean `rate`?"),
        "{e}"
    );
}

#[test]
fn expectations_need_something_to_compare() {
    let m = error_after(
        "[[event]]",
        "[[expect]]\nmetric = \"group.f.goodput_mbps\"\nvalue = 3.0\n\n[[event]]",
    );
    assert!(
        m.contains("expect[0].tolerance") && m.contains("needs a `tolerance`"),
        "{m}"
    );
}

#[test]
fn flows_must_run_and_end_in_time() {
    let m = error_after("to = \"h2\"", "to = \"h2\"\nstop = \"20s\"");
    assert!(
        m.contains("flow[0].stop") && m.contains("after the end"),
        "{m}"
    );
    let m = error_after("to = \"h2\"", "to = \"h2\"\nstart = \"10s\"");
    assert!(m.contains("never run"), "{m}");
    let m = error_after("to = \"h2\"", "to = \"r1\"");
    assert!(m.contains("is a router"), "{m}");
}

#[test]
fn via_forces_the_route_and_interfaces_pin_the_first_hop() {
    let text = r#"
[scenario]
name = "v"
duration = "1s"
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
a = "h1:wifi"
b = "r1"
rate = "10Mbps"
delay = "1ms"
[[link]]
a = "h1:lte"
b = "r2"
rate = "10Mbps"
delay = "30ms"
[[link]]
a = "r1"
b = "h2"
rate = "10Mbps"
delay = "1ms"
[[link]]
a = "r1"
b = "r2"
rate = "10Mbps"
delay = "1ms"
[[flow]]
name = "direct"
from = "h1"
to = "h2"
[[flow]]
name = "detour"
from = "h1:wifi"
to = "h2"
via = ["r2"]
[[flow]]
name = "lte"
from = "h1:lte"
to = "h2"
"#;
    let sc = load_str(text, Path::new("v.toml"), &opts())
        .unwrap()
        .remove(0);
    let names = |g: usize| -> Vec<String> {
        sc.flows[g].paths[0]
            .hops
            .iter()
            .map(|&d| sc.dir_name(d))
            .collect()
    };
    assert_eq!(names(0), vec!["h1-r1:h1>r1", "r1-h2:r1>h2"]);
    assert_eq!(
        names(1),
        vec!["h1-r1:h1>r1", "r1-r2:r1>r2", "r1-r2:r2>r1", "r1-h2:r1>h2"]
    );
    assert_eq!(names(2), vec!["h1-r2:h1>r2", "r1-r2:r2>r1", "r1-h2:r1>h2"]);
    // Unpinned, both interfaces reach h2: two candidate paths, the shorter first.
    assert_eq!(sc.flows[0].paths.len(), 2);
}

#[test]
fn multipath_fields_on_a_tcp_flow_are_refused() {
    let e = error_after("to = \"h2\"\n", "to = \"h2\"\nsubflows = 2\n");
    assert!(
        e.contains("bad.toml:") && e.contains("flow[0].subflows"),
        "{e}"
    );
    assert!(e.contains("MPTCP flows only"), "{e}");
}

#[test]
fn too_many_subflows() {
    let e = error_after(
        "to = \"h2\"\n",
        "to = \"h2\"\nprotocol = \"mptcp\"\npath_manager = \"ndiffports\"\nsubflows = 9\n",
    );
    assert!(
        e.contains("flow[0].subflows") && e.contains("1 to 8"),
        "{e}"
    );
}

#[test]
fn bad_receive_buffer_rule_and_scheduler() {
    let e = error_after("to = \"h2\"\n", "to = \"h2\"\nrcv_buffer = \"-1rule\"\n");
    assert!(
        e.contains("flow[0].rcv_buffer") && e.contains("rule"),
        "{e}"
    );
    let e = error_after(
        "to = \"h2\"\n",
        "to = \"h2\"\nprotocol = \"mptcp\"\nscheduler = \"fastest\"\n",
    );
    assert!(
        e.contains("flow[0].scheduler") && e.contains("lowest-rtt"),
        "{e}"
    );
}

#[test]
fn bad_stale_loss_cnt() {
    let e = error_after(
        "to = \"h2\"\n",
        "to = \"h2\"\nprotocol = \"mptcp\"\nstale_loss_cnt = 300\n",
    );
    assert!(
        e.contains("flow[0].stale_loss_cnt") && e.contains("u8"),
        "{e}"
    );
    let e = error_after("to = \"h2\"\n", "to = \"h2\"\nstale_loss_cnt = 2\n");
    assert!(
        e.contains("flow[0].stale_loss_cnt") && e.contains("MPTCP flows only"),
        "{e}"
    );
}

#[test]
fn an_ordering_names_an_unknown_parameter() {
    let e = error_after(
        "[[event]]",
        "[[order]]\nstatement = \"s\"\nmetric = \"m\"\nparam = \"cc\"\nascending = [\"a\", \"b\"]\n\n[[event]]",
    );
    assert!(
        e.contains("order[0].param") && e.contains("unknown parameter"),
        "{e}"
    );
}

/// The scenario's name becomes the results folder: nothing that could point elsewhere.
#[test]
fn scenario_name_is_a_plain_folder_name() {
    for (bad, says) in [
        ("/some/dir", "`/` is not allowed"),
        ("../../x", "`/` is not allowed"),
        ("..", "starts with a letter"),
        (".hidden", "starts with a letter"),
        ("-rf", "starts with a letter"),
        ("", "1 to 100 characters"),
        ("a b", "` ` is not allowed"),
        // TOML reads `\t` as a tab.
        ("tab\\there", "`\\t` is not allowed"),
    ] {
        let m = error_after("name = \"t\"", &format!("name = \"{bad}\""));
        assert!(
            m.contains(&format!("bad.toml:{}:", line_of(GOOD, "name = \"t\"")))
                && m.contains("scenario.name")
                && m.contains(says),
            "{bad}: {m}"
        );
    }
    let long = "x".repeat(101);
    let m = error_after("name = \"t\"", &format!("name = \"{long}\""));
    assert!(m.contains("1 to 100 characters"), "{m}");
    for good in ["e1-khalili", "t", "a.b_c-9", "_x"] {
        let text = GOOD.replace("name = \"t\"", &format!("name = \"{good}\""));
        load_str(&text, Path::new("ok.toml"), &opts()).unwrap_or_else(|e| panic!("{good}: {e}"));
    }
}

/// Quantities are whole base units (bps, ns, bytes): a value that would round to zero or
/// exceed what the program can count is refused with the limit, never clamped; numbers
/// may carry an exponent.
#[test]
fn quantities_are_never_clamped() {
    let rate = "name = \"core\"\na = \"r1\"\nb = \"h2\"\nrate = \"10Mbps\"";
    let with_rate = |r: &str| rate.replace("10Mbps", r);
    for (bad, says) in [
        ("0.4bps", "below 1 bps"),
        ("1e30bps", "too large: at most 1000000000000000 bps"),
        ("-1e3Mbps", "must not be negative"),
    ] {
        let m = error_after(rate, &with_rate(bad));
        assert!(m.contains("link[1].rate") && m.contains(says), "{bad}: {m}");
    }
    for (bad, says) in [
        (
            "99999999999999999999s",
            "too large: at most 4611686018427387904 ns",
        ),
        ("0.1ns", "below 1 ns"),
    ] {
        let m = error_after("at = \"5s\"", &format!("at = \"{bad}\""));
        assert!(m.contains("event[0].at") && m.contains(says), "{bad}: {m}");
    }
    let m = error_after("size = \"100pkt\"", "size = \"1e20pkt\"");
    assert!(m.contains("too large: at most"), "{m}");
    for good in ["4.1e0Mbps", "1e7bps", "0.01E3Mbps"] {
        let text = GOOD.replacen(rate, &with_rate(good), 1);
        load_str(&text, Path::new("ok.toml"), &opts()).unwrap_or_else(|e| panic!("{good}: {e}"));
    }
}

/// A duplicate node name is reported once, and the name keeps meaning the first node: no
/// panic and no misleading error about the links that use it.
#[test]
fn a_duplicate_node_keeps_the_first_meaning() {
    // The duplicate comes last, after everything that names it.
    let text = GOOD.replacen(
        "[[link]]",
        "[[node]]\nname = \"h2\"\nkind = \"host\"\n\n[[link]]",
        1,
    );
    let e = errors(&text);
    assert_eq!(e.0.len(), 1, "{e}");
    assert_eq!(e.0[0].field, "node[3].name");
    assert!(e.0[0].message.contains("duplicate node name `h2`"), "{e}");
    // An unknown name lists each known name once.
    let text = text.replacen("b = \"h2\"", "b = \"h3\"", 1);
    let m = errors(&text).to_string();
    assert!(
        m.contains("unknown node `h3`") && !m.contains("h2, h2"),
        "{m}"
    );
}

/// `when`, `[[order]]` values and metric names are checked against what the file defines:
/// a misspelling would otherwise make a check or an ordering apply to nothing, silently.
#[test]
fn references_to_variants_and_metrics_must_exist() {
    let with = |extra: &str| format!("{GOOD}\n[variants]\nloss = [0.0, 0.01]\n{extra}");
    let one = |text: &str| {
        let e = errors(text);
        assert_eq!(e.0.len(), 1, "{e}");
        e.0[0].clone()
    };
    let e = one(&with(
        "[[expect]]\nmetric = \"group.f.goodput_mbps\"\nwhen = { loss = 0.02 }\nmin = 1.0\n",
    ));
    assert_eq!(e.field, "expect[0].when.loss");
    assert!(e.message.contains("no variant has `loss` = `0.02`"), "{e}");
    let e = one(&with(
        "[[order]]\nstatement = \"s\"\nmetric = \"group.f.goodput_mbps\"\nparam = \"loss\"\n\
         ascending = [0.01, 0.03]\n",
    ));
    assert_eq!(e.field, "order[0].ascending[1]");
    let e = one(&with(
        "[[expect]]\nmetric = \"group.f.godput_mbps\"\nmin = 1.0\n",
    ));
    assert!(
        e.field == "expect[0].metric" && e.message.contains("did you mean `goodput_mbps`"),
        "{e}"
    );
    let e = one(&with(
        "[[expect]]\nmetric = \"group.g.goodput_mbps\"\nmin = 1.0\n",
    ));
    assert!(e.message.contains("unknown flow group `g`"), "{e}");
    let e = one(&with(
        "[[expect]]\nmetric = \"link.cor.ab.drops\"\nmin = 0.0\n",
    ));
    assert!(e.message.contains("unknown link `cor`"), "{e}");
    // Two values of one parameter with one name would share a results folder.
    let text = format!("{GOOD}\n[variants]\nmode = [{{ name = \"a\" }}, {{ name = \"a\" }}]\n");
    let e = one(&text);
    assert!(
        e.field == "variants.mode[1]" && e.message.contains("both named `a`"),
        "{e}"
    );
}

/// `--set` picks a value by the name the output prints for it.
#[test]
fn set_picks_a_variant_by_its_printed_name() {
    let core = "name = \"core\"\na = \"r1\"\nb = \"h2\"\nrate = \"10Mbps\"";
    let text = GOOD.replacen(core, &core.replace("10Mbps", "${mode.rate}"), 1)
        + "\n[variants]\nmode = [{ name = \"slow\", rate = \"1Mbps\" }, \
           { name = \"fast\", rate = \"50Mbps\" }]\n";
    let opts = LoadOptions {
        overrides: vec![("mode".into(), "fast".into())],
    };
    let variants = load_str(&text, Path::new("set.toml"), &opts).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(variants.len(), 1);
    let rate = variants[0].links[1].dirs[0].rate;
    assert_eq!(rate.bps(), 50_000_000);
}

/// Messages that name the right thing: a missing field of a table-valued parameter, each
/// known parameter once, the key TOML found twice.
#[test]
fn messages_name_the_right_thing() {
    let core = "name = \"core\"\na = \"r1\"\nb = \"h2\"\nrate = \"10Mbps\"";
    let text = GOOD.replacen(core, &core.replace("10Mbps", "${mode.rat}"), 1)
        + "\n[variants]\nmode = [{ name = \"slow\", rate = \"1Mbps\" }]\n";
    let m = errors(&text).to_string();
    assert!(
        m.contains("parameter `mode` has no field `rat`; did you mean `rate`?"),
        "{m}"
    );
    let text = format!("{GOOD}\n[params]\nloss = 0.0\n[variants]\nloss = [0.0, 0.01]\n");
    let opts = LoadOptions {
        overrides: vec![("nosuch".into(), "1".into())],
    };
    let m = load_str(&text, Path::new("bad.toml"), &opts)
        .expect_err("unknown --set")
        .to_string();
    assert!(
        m.contains("parameters are: loss") && !m.contains("loss, loss"),
        "{m}"
    );
    let m = errors(&GOOD.replacen(
        "duration = \"10s\"",
        "duration = \"10s\"\nduration = \"5s\"",
        1,
    ))
    .to_string();
    assert!(m.contains("duplicate key `duration`"), "{m}");
}

/// `--set` with a name no table value has: did-you-mean, not a confusing error later.
#[test]
fn set_names_a_value_that_exists() {
    let text = format!(
        "{GOOD}\n[variants]\nmode = [{{ name = \"slow\", rate = \"1Mbps\" }}, \
         {{ name = \"fast\", rate = \"5Mbps\" }}]\n"
    );
    let opts = LoadOptions {
        overrides: vec![("mode".into(), "fsat".into())],
    };
    let m = load_str(&text, Path::new("set.toml"), &opts)
        .expect_err("no such value")
        .to_string();
    assert!(
        m.contains("--set mode: `mode` has no value named `fsat`; did you mean `fast`?"),
        "{m}"
    );
}

/// A whole table still replaces a table-valued parameter.
#[test]
fn set_takes_a_whole_table() {
    let core = "name = \"core\"\na = \"r1\"\nb = \"h2\"\nrate = \"10Mbps\"";
    let text = GOOD.replacen(core, &core.replace("10Mbps", "${mode.rate}"), 1)
        + "\n[variants]\nmode = [{ name = \"slow\", rate = \"1Mbps\" }]\n";
    let opts = LoadOptions {
        overrides: vec![(
            "mode".into(),
            "{ name = \"mine\", rate = \"7Mbps\" }".into(),
        )],
    };
    let v = load_str(&text, Path::new("set.toml"), &opts).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(v[0].links[1].dirs[0].rate.bps(), 7_000_000);
}
