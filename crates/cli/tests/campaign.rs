//! `run` as a campaign: every (variant, seed) task's result is kept as it finishes, so a
//! run killed half-way and run again runs only what is missing and ends with the summary an
//! uninterrupted run gives; a changed scenario reruns what it changed; tasks run one by one
//! (`--task I`, as a Slurm job array does) and gathered give the same summary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mptcp-lab"))
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mptcp-lab-campaign-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Four variants (two rates x two algorithms), each run long enough (a few tenths of a
/// second) that a kill lands between tasks; the Python package's tests use it too.
const SCENARIO: &str = include_str!("data/campaign.toml");

fn write_scenario(dir: &Path, text: &str) -> PathBuf {
    let file = dir.join("camp.toml");
    std::fs::write(&file, text).unwrap();
    file
}

/// `mptcp-lab run FILE --out OUT ARGS...`, whatever its outcome.
fn attempt(file: &Path, out: &Path, args: &[&str]) -> Output {
    bin()
        .arg("run")
        .arg(file)
        .arg("--out")
        .arg(out)
        .args(args)
        .output()
        .unwrap()
}

/// A run with 2 seeds that must succeed.
fn run(file: &Path, out: &Path, extra: &[&str]) -> Output {
    let args: Vec<&str> = ["--seeds", "2"].iter().chain(extra).copied().collect();
    let o = attempt(file, out, &args);
    assert!(
        o.status.success(),
        "run {extra:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// `(done before, to run)` from run's line `...: N tasks (...); D done before, R to run`.
fn counts(o: &Output) -> (usize, usize) {
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err
        .lines()
        .find(|l| l.contains(" done before, "))
        .unwrap_or_else(|| panic!("no task counts in:\n{err}"));
    let tail = line.rsplit("; ").next().unwrap();
    let mut n = tail
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap());
    (n.next().unwrap(), n.next().unwrap())
}

fn task_files(out: &Path) -> usize {
    std::fs::read_dir(out.join("tasks")).map_or(0, |d| {
        d.filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().ends_with(".msgpack")
        })
        .count()
    })
}

/// summary.json without the runs' wall-clock times and the provenance (the command that
/// wrote it): the things a rerun changes.
fn summary(out: &Path) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.remove("wall_s");
                m.remove("provenance");
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let text = std::fs::read_to_string(out.join("summary.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    strip(&mut v);
    v
}

#[test]
fn a_killed_campaign_resumes_with_only_the_missing_tasks() {
    let dir = temp("kill");
    let file = write_scenario(&dir, SCENARIO);
    let whole = dir.join("whole");
    let first = run(&file, &whole, &["--jobs", "2"]);
    assert_eq!(counts(&first), (0, 8));

    let killed = dir.join("killed");
    let mut child = bin()
        .arg("run")
        .arg(&file)
        .args(["--seeds", "2", "--jobs", "1", "--out"])
        .arg(&killed)
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while task_files(&killed) < 2 && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    // SIGKILL: no handler runs, nothing is flushed or cleaned.
    child.kill().unwrap();
    child.wait().unwrap();
    let kept = task_files(&killed);
    assert!(
        (2..8).contains(&kept),
        "{kept} tasks done when killed: make the runs longer"
    );
    assert!(!killed.join("summary.json").exists());

    let resumed = run(&file, &killed, &["--jobs", "1"]);
    assert_eq!(counts(&resumed), (kept, 8 - kept));
    assert_eq!(summary(&killed), summary(&whole));
    // Nothing half-written is left behind: no temporary files in the task folder.
    let names: Vec<String> = std::fs::read_dir(killed.join("tasks"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| n.ends_with(".msgpack")), "{names:?}");

    // Run again: nothing to do, the same summary.
    let again = run(&file, &killed, &[]);
    assert_eq!(counts(&again), (8, 0));
    assert_eq!(summary(&killed), summary(&whole));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_changed_scenario_reruns_what_changed_and_only_that() {
    let dir = temp("change");
    let out = dir.join("out");
    let file = write_scenario(&dir, SCENARIO);
    run(&file, &out, &[]);
    // A check is not part of what a run depends on: every result is reused.
    write_scenario(&dir, &SCENARIO.replace("min = 1.0", "min = 2.0"));
    assert_eq!(counts(&run(&file, &out, &[])), (8, 0));
    // A link's delay is: every task runs again.
    write_scenario(
        &dir,
        &SCENARIO.replace("delay = \"20ms\"", "delay = \"25ms\""),
    );
    assert_eq!(counts(&run(&file, &out, &[])), (0, 8));
    // One variant value changed: only its tasks run (lia's 4, reno's 4 kept).
    write_scenario(
        &dir,
        &SCENARIO
            .replace("delay = \"20ms\"", "delay = \"25ms\"")
            .replace("[\"reno\", \"lia\"]", "[\"reno\", \"olia\"]"),
    );
    assert_eq!(counts(&run(&file, &out, &[])), (4, 4));
    // More seeds: only the new ones.
    let o = attempt(&file, &out, &["--seeds", "3"]);
    assert!(o.status.success());
    assert_eq!(counts(&o), (8, 4));
    // The variants taken out are gone from the summary and from the folder.
    let s = summary(&out);
    let names: Vec<&str> = s["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert!(names.iter().all(|n| !n.contains("cc=lia")), "{names:?}");
    assert!(out.join("cc=reno,rate=40Mbps").exists());
    assert!(!out.join("cc=lia,rate=40Mbps").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tasks_run_one_by_one_and_gathered_give_the_same_summary() {
    let dir = temp("array");
    let file = write_scenario(&dir, SCENARIO);
    let whole = dir.join("whole");
    run(&file, &whole, &[]);
    let array = dir.join("array");
    let list = run(&file, &array, &["--list-tasks"]);
    let listed = String::from_utf8_lossy(&list.stdout);
    assert_eq!(listed.lines().count(), 9, "{listed}");
    assert!(
        listed.lines().skip(1).all(|l| l.ends_with("\tto run")),
        "{listed}"
    );

    // A gather before every task is there names what is missing.
    let early = attempt(&file, &array, &["--seeds", "2", "--gather"]);
    assert!(!early.status.success());
    let err = String::from_utf8_lossy(&early.stderr);
    assert!(
        err.contains("8 of 8 tasks have no result yet (task 0 ("),
        "{err}"
    );

    // As the indices of a job array would, in any order, each in its own process.
    for i in [5, 0, 7, 2, 1, 6, 3, 4, 5] {
        run(&file, &array, &["--task", &i.to_string()]);
    }
    assert_eq!(task_files(&array), 8);
    assert!(!array.join("summary.json").exists());
    let gathered = run(&file, &array, &["--gather"]);
    assert_eq!(counts(&gathered), (8, 0));
    assert_eq!(summary(&array), summary(&whole));

    let bad = attempt(&file, &array, &["--seeds", "2", "--task", "8"]);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("--task 8: this run has 8 tasks, numbered 0 to 7"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_damaged_task_file_is_named_and_not_used() {
    let dir = temp("damaged");
    let file = write_scenario(&dir, SCENARIO);
    let out = dir.join("out");
    run(&file, &out, &[]);
    let task = std::fs::read_dir(out.join("tasks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "msgpack"))
        .unwrap();
    std::fs::write(&task, b"not a task").unwrap();
    let o = attempt(&file, &out, &["--seeds", "2"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&task.display().to_string()) && err.contains("remove this file"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_folder_that_is_not_ours_is_refused_before_anything_runs() {
    let dir = temp("foreign");
    let file = write_scenario(&dir, SCENARIO);
    let out = dir.join("mine");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("thesis.tex"), "keep me").unwrap();
    let o = attempt(&file, &out, &[]);
    assert!(!o.status.success());
    assert!(!out.join("tasks").exists());
    assert_eq!(
        std::fs::read_to_string(out.join("thesis.tex")).unwrap(),
        "keep me"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
