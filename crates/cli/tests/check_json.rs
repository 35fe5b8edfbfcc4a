//! `mptcp-lab check --json`: every variant as the loader resolved it, and every error placed,
//! in one JSON document (docs/scenario-format.md, "Checking a scenario from a program").

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn check(args: &[&str], files: &[&Path]) -> (Output, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_mptcp-lab"))
        .arg("check")
        .arg("--json")
        .args(args)
        .args(files)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(doc["format"], 1);
    (out, doc)
}

fn scenario(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name)
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mptcp-lab-check-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The named link of a variant.
fn link<'a>(variant: &'a Value, name: &str) -> &'a Value {
    variant["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == name)
        .unwrap_or_else(|| panic!("no link {name} in {variant}"))
}

#[test]
fn every_variant_comes_resolved_in_seconds_and_bits_a_second() {
    let (out, doc) = check(&[], &[&scenario("rfc6356-no-harm.toml")]);
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = &doc["files"][0];
    assert_eq!(file["ok"], true);
    assert!(file["memory_bytes_per_run"].as_u64().unwrap() > 0);
    let variants = file["variants"].as_array().unwrap();
    let names: Vec<&str> = variants
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "cc=reno",
            "cc=ewtcp",
            "cc=fullycoupled",
            "cc=lia",
            "cc=olia",
            "cc=balia",
            "cc=wvegas"
        ]
    );
    let lia = &variants[3];
    assert_eq!(lia["params"]["cc"], "lia");
    assert_eq!(lia["duration_s"], 60.0);
    let bottleneck = link(lia, "bottleneck");
    assert_eq!(
        (&bottleneck["a"], &bottleneck["b"]),
        (&"left".into(), &"server".into())
    );
    let ab = &bottleneck["ab"];
    assert_eq!(ab["entity"], "link.bottleneck.ab");
    assert_eq!(bottleneck["ba"]["entity"], "link.bottleneck.ba");
    assert_eq!(ab["rate_bps"], 20_000_000);
    assert!((ab["delay_s"].as_f64().unwrap() - 0.019).abs() < 1e-12);
    assert_eq!(ab["queue"]["kind"], "droptail");
    assert_eq!(ab["queue"]["packets"], 35);
    assert!(ab["queue"].get("bytes").is_none());
    assert!(
        bottleneck.get("delay_spread_s").is_none(),
        "a fixed delay has no spread"
    );
    let mptcp = &lia["flows"][0];
    assert_eq!(mptcp["cc"], "lia");
    assert_eq!(mptcp["protocol"], "mptcp");
    assert_eq!(
        mptcp["paths"][0],
        serde_json::json!({
            "links": ["link.m-left.ab", "link.bottleneck.ab"],
            "nodes": ["m", "left", "server"]
        })
    );
    assert_eq!(mptcp["start_jitter_s"], 1.0);
    assert_eq!(mptcp["traffic"]["kind"], "bulk");
    assert_eq!(mptcp["mptcp"]["path_manager"], "ndiffports");
    assert_eq!(mptcp["mptcp"]["subflows"], 2);
    assert_eq!(mptcp["mptcp"]["scheduler"], "linux-default");
    let tcp = &lia["flows"][1];
    assert_eq!((&tcp["cc"], &tcp["from"]), (&"reno".into(), &"t".into()));
    assert!(
        tcp.get("mptcp").is_none() && tcp.get("window_limit").is_none(),
        "{tcp}"
    );
}

#[test]
fn set_and_parameters_are_applied_before_the_values_are_given() {
    // A delay given by a parameter, a rate overridden on the command line: what runs use.
    let dir = temp("params");
    let file = dir.join("p.toml");
    let text = std::fs::read_to_string(scenario("rfc6356-no-harm.toml"))
        .unwrap()
        .replace("[params]\n", "[params]\nlate = \"7ms\"\n")
        .replace("delay = \"19ms\"", "delay = \"${late}\"");
    std::fs::write(&file, text).unwrap();
    let (out, doc) = check(&["--set", "cc=olia", "--set", "late=12ms"], &[&file]);
    assert!(out.status.success(), "{doc}");
    let variants = doc["files"][0]["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 1);
    let ab = &link(&variants[0], "bottleneck")["ab"];
    assert!(
        (ab["delay_s"].as_f64().unwrap() - 0.012).abs() < 1e-12,
        "{ab}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_drawn_delay_is_the_one_runs_use_with_its_mean_and_spread() {
    let (out, doc) = check(&[], &[&scenario("e6-delays.toml")]);
    assert!(out.status.success(), "{doc}");
    // The text form prints the draws of the first variant: the JSON gives the same.
    let text = Command::new(env!("CARGO_BIN_EXE_mptcp-lab"))
        .arg("check")
        .arg(scenario("e6-delays.toml"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    let first = &doc["files"][0]["variants"][0];
    let mut drawn = 0;
    for l in first["links"].as_array().unwrap() {
        let Some(spread) = l.get("delay_spread_s") else {
            continue;
        };
        drawn += 1;
        let (mean, spread) = (
            l["delay_mean_s"].as_f64().unwrap(),
            spread.as_f64().unwrap(),
        );
        let delay = l["ab"]["delay_s"].as_f64().unwrap();
        assert_eq!(
            l["ba"]["delay_s"], l["ab"]["delay_s"],
            "one draw for both directions"
        );
        assert!((mean - spread..=mean + spread).contains(&delay), "{l}");
        let line = format!(
            "link {} delay drawn: {:.1} ms (mean {:.1} ms, spread {:.1} ms)",
            l["name"].as_str().unwrap(),
            delay * 1e3,
            mean * 1e3,
            spread * 1e3
        );
        assert!(text.contains(&line), "{line} not in\n{text}");
    }
    assert!(drawn >= 2, "e6-delays draws its uplinks' delays");
    // Its sources: window-limited on/off TCP, placed by a MATCP selector, counts drawn.
    let source = &first["flows"][0];
    assert_eq!(source["window_limit"]["packets"], 16);
    assert_eq!(source["traffic"]["kind"], "onoff");
    assert!(source["select"]["kind"].is_string(), "{source}");
    assert!(source["count_spread"].as_u64().unwrap() > 0);
    assert_eq!(
        source["paths"].as_array().unwrap().len(),
        4,
        "one per uplink"
    );
}

#[test]
fn errors_are_placed_and_the_status_says_a_file_failed() {
    let dir = temp("bad");
    let bad = dir.join("bad.toml");
    let text = std::fs::read_to_string(scenario("reno-fairness.toml"))
        .unwrap()
        .replace("rate = \"100Mbps\"", "rate = \"100Mbit\"");
    std::fs::write(&bad, text).unwrap();
    let missing = dir.join("missing.toml");
    let good = scenario("reno-fairness.toml");
    let (out, doc) = check(&[], &[&good, &bad, &missing]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files = doc["files"].as_array().unwrap();
    assert_eq!(files.len(), 3);
    assert_eq!(files[0]["ok"], true);
    assert_eq!(files[1]["ok"], false);
    assert!(files[1].get("variants").is_none());
    let e = &files[1]["errors"][0];
    assert_eq!(e["field"], "link[1].rate");
    assert!(
        e["line"].as_u64().unwrap() > 0 && e["column"].as_u64().unwrap() > 0,
        "{e}"
    );
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("unknown rate unit `Mbit`"),
        "{e}"
    );
    assert!(e["file"].as_str().unwrap().ends_with("bad.toml"));
    // A file that cannot be read has an error with no place in it.
    assert_eq!(files[2]["ok"], false);
    assert_eq!(files[2]["errors"][0]["line"], 0);
    // Nothing was written beside the inputs.
    let entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, ["bad.toml"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
