//! The `mptcp-lab` command end to end.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mptcp-lab"))
}

fn scenarios() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

/// Asserts that the command succeeded, showing its standard error if not.
fn assert_succeeded(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A results folder's summary.json.
fn summary(folder: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(folder.join("summary.json")).unwrap()).unwrap()
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mptcp-lab-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn check_accepts_every_shipped_scenario() {
    let out = bin().arg("check").arg(scenarios()).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("reno-fairness.toml: ok"));
}

#[test]
fn a_bad_scenario_is_reported_and_nothing_is_written() {
    let dir = temp("bad");
    let file = dir.join("bad.toml");
    let text = std::fs::read_to_string(scenarios().join("reno-fairness.toml"))
        .unwrap()
        .replace("rate = \"100Mbps\"", "rate = \"100Mbit\"");
    std::fs::write(&file, text).unwrap();
    let out_dir = dir.join("out");
    let out = bin()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.toml:")
            && err.contains("link[1].rate")
            && err.contains("unknown rate unit `Mbit`"),
        "{err}"
    );
    let entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        entries,
        ["bad.toml"],
        "nothing but the input in {}",
        dir.display()
    );
    assert!(!out_dir.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sysctl_is_refused_on_the_simulator() {
    let dir = temp("kernel-only");
    let out_dir = dir.join("out");
    let out = bin()
        .arg("run")
        .arg(scenarios().join("reno-mathis.toml"))
        .args(["--sysctl", "net.ipv4.tcp_wmem=4096 16384 65536"])
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--sysctl is for --backend kernel"),
        "{err}"
    );
    assert!(!out_dir.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_simulator_captures_a_link_into_the_results_folder() {
    let dir = temp("sim-pcap");
    let out_dir = dir.join("out");
    let run = |link: &str| {
        bin()
            .arg("run")
            .arg(scenarios().join("reno-mathis.toml"))
            .args(["--set", "loss=0.01", "--duration", "21s", "--pcap", link])
            .arg("--out")
            .arg(&out_dir)
            .output()
            .unwrap()
    };
    // An unknown link is refused before anything is written, naming the links there are.
    let out = run("no-such-link");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--pcap no-such-link: no such link; links are"),
        "{err}"
    );
    assert!(err.contains("lossy"), "{err}");
    assert!(!out_dir.exists());
    let out = run("lossy");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pcap = out_dir.join("pcap").join("default-seed1-lossy.pcap");
    let file = std::fs::File::open(&pcap).unwrap_or_else(|e| panic!("{}: {e}", pcap.display()));
    let mut reader = pcap_file::pcap::PcapReader::new(file).unwrap();
    let mut packets = 0;
    while let Some(p) = reader.next_packet() {
        let p = p.unwrap();
        assert!(p.timestamp.as_secs_f64() <= 21.0);
        packets += 1;
    }
    assert!(packets > 100, "{packets} packets");
    // The staging folder beside the results is gone.
    let entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, ["out"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn run_writes_summary_series_and_report() {
    let dir = temp("run");
    let out_dir = dir.join("fair");
    let out = bin()
        .args(["run", "--seeds", "2", "--report", "--set"])
        .arg("loss=0.02")
        .arg(scenarios().join("reno-mathis.toml"))
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_succeeded(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("pass group.reno.goodput_mbps"), "{stdout}");
    let summary = summary(&out_dir);
    assert_eq!(summary["seeds"], serde_json::json!([1, 2]));
    let v = &summary["variants"][0];
    // Every parameter fixed by --set: the variant is named by what it fixed, its folder
    // stays `default`.
    assert_eq!(v["name"], "loss=0.02");
    assert_eq!(v["dir"], "default");
    assert_eq!(
        summary["provenance"]["set"],
        serde_json::json!(["loss=0.02"])
    );
    assert_eq!(
        v["metrics"]["group.reno.goodput_mbps"]["runs"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(v["checks"][0]["published"], 1.011);
    for f in [
        "report.md",
        "published.png",
        "published.svg",
        "default/series-seed1.csv",
        "default/series-seed2.csv",
        "default/goodput.png",
        "default/cwnd.svg",
    ] {
        assert!(Path::new(&out_dir.join(f)).exists(), "{f} missing");
    }
    let report = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(
        report.contains("| loss=0.02 | `group.reno.goodput_mbps`"),
        "{report}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_simulator_counts_the_data_level_for_mptcp_groups_only() {
    let dir = temp("data-level");
    let out = bin()
        .args([
            "run",
            "--seeds",
            "1",
            "--duration",
            "15s",
            "--set",
            "cc=lia",
        ])
        .arg(scenarios().join("rfc6356-no-harm.toml"))
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    assert_succeeded(&out);
    let summary = summary(&dir);
    let metrics = &summary["variants"][0]["metrics"];
    for quantity in ["stale_subflows", "data_retransmissions"] {
        assert!(
            metrics[format!("group.mptcp.{quantity}")]["runs"][0].is_number(),
            "{quantity} missing for the MPTCP group"
        );
        assert!(
            metrics.get(format!("group.tcp.{quantity}")).is_none(),
            "{quantity} given for the TCP group"
        );
    }
    assert!(metrics["group.tcp.timeouts"]["runs"][0].is_number());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn strict_fails_when_a_check_fails() {
    let dir = temp("strict");
    let file = dir.join("impossible.toml");
    let text = std::fs::read_to_string(scenarios().join("reno-mathis.toml")).unwrap();
    std::fs::write(&file, format!("{text}\n[[expect]]\nmetric = \"group.reno.jain\"\nmin = 1.5\nsource = \"impossible on purpose\"\n")).unwrap();
    let run = |strict: bool| {
        let mut c = bin();
        c.args(["run", "--set", "loss=0.02"])
            .arg(&file)
            .arg("--out")
            .arg(dir.join("o"));
        if strict {
            c.arg("--strict");
        }
        c.output().unwrap()
    };
    let lenient = run(false);
    assert!(lenient.status.success());
    assert!(String::from_utf8_lossy(&lenient.stdout).contains("FAIL group.reno.jain"));
    assert_eq!(run(true).status.code(), Some(1));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The same runs on one thread or several give the same results file for file (the
/// wall-clock time of each run aside), and `--jobs 0` is refused.
#[test]
fn results_do_not_depend_on_jobs() {
    let dir = temp("jobs");
    let run = |jobs: &str| {
        let out_dir = dir.join(format!("j{jobs}"));
        let out = bin()
            .arg("run")
            .arg(scenarios().join("e2-responsiveness.toml"))
            .args(["--seeds", "2", "--duration", "60s", "--jobs", jobs, "--out"])
            .arg(&out_dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out_dir
    };
    let files = |d: &Path| {
        let mut v: Vec<(String, String)> = Vec::new();
        // The task results (tasks/) hold each run's wall-clock time; the summary and series
        // built from them are compared.
        for entry in walk(d)
            .into_iter()
            .filter(|e| !e.starts_with(d.join("tasks")))
        {
            let text = std::fs::read_to_string(&entry).unwrap();
            let text = if entry.ends_with("summary.json") {
                let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
                strip_wall_time(&mut json);
                json.to_string()
            } else {
                text
            };
            let rel = entry.strip_prefix(d).unwrap().display().to_string();
            v.push((rel, text));
        }
        v.sort();
        v
    };
    let one = files(&run("1"));
    assert!(one.len() > 3, "summary and series: {one:?}");
    for jobs in ["2", "5"] {
        assert!(
            files(&run(jobs)) == one,
            "--jobs {jobs} changed the results"
        );
    }
    let out = bin()
        .arg("run")
        .arg(scenarios().join("reno-fairness.toml"))
        .args(["--jobs", "0", "--out"])
        .arg(dir.join("j0"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--jobs must be at least 1"));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn walk(d: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Without the runs' wall-clock times and the provenance (the command that wrote it).
fn strip_wall_time(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.remove("wall_s");
            m.remove("provenance");
            m.values_mut().for_each(strip_wall_time);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_wall_time),
        _ => {}
    }
}

/// A short run of reno-fairness into `out`: its exit status and standard error.
fn quick_run(out: &Path) -> (Option<i32>, String) {
    let o = bin()
        .args(["run", "--duration", "12s"])
        .arg(scenarios().join("reno-fairness.toml"))
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `run` replaces only a results folder it wrote (or an empty one), refuses anything else
/// before simulating, and never touches a folder that merely looks like its own leftovers.
#[test]
fn output_folders_that_are_not_ours_are_left_alone() {
    let dir = temp("outsafe");
    // A user's folder: refused, its file untouched, nothing beside it.
    let mine = dir.join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("thesis.tex"), "keep").unwrap();
    let (code, err) = quick_run(&mine);
    assert_ne!(code, Some(0));
    assert!(
        err.contains("is not a results folder written by mptcp-lab"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(mine.join("thesis.tex")).unwrap(),
        "keep"
    );
    // Not a folder at all (and nothing written beside it, before or after simulating).
    let (code, err) = quick_run(Path::new("/dev/null"));
    assert_ne!(code, Some(0));
    assert!(
        err.contains("/dev/null exists and is not a folder"),
        "{err}"
    );
    assert!(!Path::new("/dev/.null.partial").exists() && !Path::new("/dev/null.partial").exists());
    // A symbolic link to a folder.
    let link = dir.join("link");
    std::os::unix::fs::symlink(&mine, &link).unwrap();
    let (code, err) = quick_run(&link);
    assert_ne!(code, Some(0));
    assert!(err.contains("is a symbolic link"), "{err}");
    // A results folder of ours is replaced; a user's folder named like a leftover stays.
    let results = dir.join("res");
    let decoy = dir.join("res.partial");
    std::fs::create_dir(&decoy).unwrap();
    std::fs::write(decoy.join("notes"), "keep").unwrap();
    for round in 0..2 {
        let (code, err) = quick_run(&results);
        assert_eq!(code, Some(0), "round {round}: {err}");
        assert!(results.join("summary.json").exists());
    }
    assert_eq!(
        std::fs::read_to_string(decoy.join("notes")).unwrap(),
        "keep"
    );
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    // An empty folder is fine.
    let empty = dir.join("empty");
    std::fs::create_dir(&empty).unwrap();
    let (code, err) = quick_run(&empty);
    assert_eq!(code, Some(0), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A scenario's name cannot make `run` write or replace anything outside `results/`.
#[test]
fn a_scenario_name_cannot_point_outside_results() {
    let dir = temp("name");
    let victim = dir.join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("data"), "keep").unwrap();
    for name in [victim.display().to_string(), "../../x".to_string()] {
        let file = dir.join("evil.toml");
        let text = std::fs::read_to_string(scenarios().join("reno-fairness.toml"))
            .unwrap()
            .replacen("name = \"reno-fairness\"", &format!("name = \"{name}\""), 1);
        std::fs::write(&file, text).unwrap();
        let o = bin()
            .current_dir(&dir)
            .args(["run", "--duration", "1s"])
            .arg(&file)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains("evil.toml:") && err.contains("scenario.name") && err.contains("`/`"),
            "{err}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(victim.join("data")).unwrap(),
        "keep"
    );
    assert!(!dir.join("results").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A scenario whose run would not fit in memory is refused by `check` and `run` before
/// anything starts, with the estimate, its largest part, and what the machine has.
#[test]
fn runs_too_large_for_memory_are_refused_with_the_estimate() {
    let dir = temp("memory");
    let original = std::fs::read_to_string(scenarios().join("reno-fairness.toml")).unwrap();
    for (from, to, says) in [
        ("interval = \"500ms\"", "interval = \"1ns\"", "samples"),
        (
            "count = 10",
            "count = 100000000",
            "connection state: 100000000 flows",
        ),
    ] {
        assert_eq!(original.matches(from).count(), 1, "{from}");
        let file = dir.join("big.toml");
        std::fs::write(&file, original.replacen(from, to, 1)).unwrap();
        for command in ["check", "run"] {
            let out_dir = dir.join("out");
            let o = bin()
                .arg(command)
                .arg(&file)
                .args(if command == "run" {
                    vec!["--out".into(), out_dir.clone().into_os_string()]
                } else {
                    vec![]
                })
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(!o.status.success(), "{command} {to}: accepted");
            assert!(
                err.contains("big.toml: a run needs about")
                    && err.contains(says)
                    && err.contains("available"),
                "{command} {to}: {err}"
            );
            assert!(!out_dir.exists());
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
