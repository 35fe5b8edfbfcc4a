//! `mptcp-lab soak`: a short soak of the shipped scenario on the kernel backend holds every
//! check and leaves nothing behind; bad arguments are refused before anything starts.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use support::*;

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name)
}

fn soak(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(bin())
        .arg("soak")
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_minute_of_flaps_keeps_data_flowing_and_leaves_nothing() {
    let _serial = serial();
    if !kernel_available("a_minute_of_flaps_keeps_data_flowing_and_leaves_nothing") {
        return;
    }
    let out = std::env::temp_dir().join(cleanup::owned_name("soak"));
    let file = scenario("soak-flaps.toml");
    // Two cycles of 30 s: the first holds the warm-up, so one whole cycle is checked.
    let (code, stdout, stderr) = soak(&[
        file.to_str().unwrap(),
        "--duration",
        "60s",
        "--sample-every",
        "2s",
        "--out",
        out.to_str().unwrap(),
    ]);
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("soak.json")).expect("soak.json"))
            .unwrap_or_else(|e| panic!("soak.json: {e}\n{stdout}\n{stderr}"));
    // Every check holds, but for one allowance: on this shared 2-core VM a scheduling
    // hiccup now and then hands a few packets over 20 ms late. The soak then fails its stall
    // check and exits with 1, as it should on a machine being measured; here that failure
    // is accepted when it is a hiccup (at most 0.01 % of the packets late), not an emulator
    // that stopped (which would leave thousands late).
    let packets = report["emulator"]["packets"].as_u64().expect("packets");
    let failed: Vec<&serde_json::Value> = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["holds"] != true)
        .collect();
    for c in &failed {
        let measured = c["measured"].as_str().unwrap_or_default();
        let stalled: u64 = measured
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(u64::MAX);
        assert!(
            c["what"] == "emulator stalls" && stalled <= packets / 10_000,
            "{report:#}\n{stdout}\n{stderr}"
        );
        eprintln!("accepted as a VM hiccup: {measured} of {packets} packets");
    }
    assert_eq!(
        code,
        Some(if failed.is_empty() { 0 } else { 1 }),
        "{stdout}\n{stderr}"
    );
    assert_eq!(report["holds"], failed.is_empty(), "{report:#}");
    assert_eq!(report["link_downs"], 4);
    let checks: Vec<&str> = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| c["what"].as_str().expect("what"))
        .collect();
    for what in [
        "lia: data in every cycle",
        "olia: data in every cycle",
        "resident memory",
        "open file descriptors",
        "threads",
        "emulator stalls",
        "left behind after the run",
    ] {
        assert!(checks.contains(&what), "no check {what}: {checks:?}");
    }
    assert!(
        report["delivered_mb"].as_f64().expect("MB") > 10.0,
        "{report:#}"
    );
    let samples = std::fs::read_to_string(out.join("samples.csv")).expect("samples.csv");
    assert!(samples.lines().count() > 20, "{samples}");
    // An ordinary results folder beside them.
    assert!(out.join("summary.json").exists());
    std::fs::remove_dir_all(&out).expect("remove");
}

#[test]
fn a_scenario_with_several_variants_or_a_short_duration_is_refused_before_anything_runs() {
    let (code, _, stderr) = soak(&[scenario("e3-aggregation.toml").to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("a soak runs one variant, this scenario has 3"),
        "{stderr}"
    );
    let file = scenario("soak-flaps.toml");
    let (code, _, stderr) = soak(&[file.to_str().unwrap(), "--duration", "10s"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("shorter than one cycle of soak-flaps (30s)"),
        "{stderr}"
    );
    let (code, _, stderr) = soak(&[file.to_str().unwrap(), "--sample-every", "0s"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--sample-every 0s: expected a duration above zero"),
        "{stderr}"
    );
}
