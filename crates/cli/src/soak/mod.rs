//! `mptcp-lab soak`: a kernel-backend scenario played for a long time (an hour by default)
//! with its events repeated every cycle (link flaps), checking at the end that data kept
//! flowing through every cycle, that this process's memory, descriptors and threads and the
//! kernel's unreclaimable memory stayed flat, that the emulator never stalled, and that the
//! clean-up left nothing behind. Results go to a results folder like `run`'s (so `report`
//! and `compare` read it), with `soak.json` (the checks) and `samples.csv` (the resources
//! over time) beside them.

mod monitor;
mod timeline;
mod verdict;

use anyhow::{Context, Result, bail};
use monitor::{Monitor, Sample};
use scenario::Scenario;
use scenario::model::EventKind;
use scenario::units::Duration;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use testbed::backend::KernelSession;
use verdict::Check;

pub struct SoakArgs {
    pub scenario: PathBuf,
    pub duration: String,
    pub seed: u64,
    pub out: Option<PathBuf>,
    pub sample_every: String,
}

#[derive(Serialize)]
struct SoakReport {
    scenario: String,
    seed: u64,
    duration_s: f64,
    cycle_s: f64,
    cycles: u64,
    link_downs: usize,
    delivered_mb: f64,
    emulator: EmulatorFigures,
    checks: Vec<Check>,
    holds: bool,
}

#[derive(Serialize)]
struct EmulatorFigures {
    packets: u64,
    late_p50_us: Option<u64>,
    late_p99_us: Option<u64>,
    late_p999_us: Option<u64>,
    late_wakeups: u64,
    late_wakeup_ms: u64,
    refused_by_full_device: u64,
    /// The emulator's own losses and late hand-overs against their bounds.
    own: scenario::results::EmulatorHealth,
}

fn parse_duration(flag: &str, text: &str) -> Result<Duration> {
    let d = Duration::parse(text).map_err(|e| anyhow::anyhow!("{flag} {text}: {e}"))?;
    if d.nanos() == 0 {
        bail!("{flag} {text}: expected a duration above zero");
    }
    Ok(d)
}

fn load_one(path: &Path) -> Result<Scenario> {
    let mut variants = scenario::load_file(path, &scenario::LoadOptions::default())?;
    if variants.len() != 1 {
        bail!(
            "{}: a soak runs one variant, this scenario has {} (fix its parameters in the file)",
            path.display(),
            variants.len()
        );
    }
    Ok(variants.remove(0))
}

/// Runs the soak; returns whether every check held.
pub fn soak(args: &SoakArgs) -> Result<bool> {
    let cycle = load_one(&args.scenario)?;
    let total = parse_duration("--duration", &args.duration)?;
    let every = parse_duration("--sample-every", &args.sample_every)?;
    let long = timeline::repeat(&cycle, total).map_err(|e| anyhow::anyhow!("--duration: {e}"))?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(format!("soak-{}", cycle.name)));
    report::store::check_out(&out)?;
    let downs = long
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Down))
        .count();
    eprintln!(
        "soak: {} for {} ({} cycles of {}, {downs} link-down events), kernel backend",
        cycle.name,
        total,
        total.nanos().div_ceil(cycle.duration.nanos()),
        cycle.duration
    );

    let mut session = KernelSession::start()?;
    // After the session's start: it leaves the Ctrl-C handler's thread for the process's
    // life, by design.
    let threads_before = monitor::sample(std::time::Instant::now())?.threads;
    if let Some(why) = session.unsupported(&long) {
        bail!("{}: {why}", args.scenario.display());
    }
    session.prepare(&long)?;
    let registered = session.registered_struct_ops();
    let watch = Monitor::start(std::time::Duration::from_nanos(every.nanos()));
    let bar = crate::execute::progress_bar(1);
    let run = session.run(&long, args.seed, Vec::new(), &[], |f| {
        bar.set_position((f * 1000.0) as u64)
    });
    bar.finish_and_clear();
    let samples = watch.finish();
    let interrupted = session
        .interrupted
        .load(std::sync::atomic::Ordering::SeqCst);
    drop(session);
    let left = leftovers(&registered, threads_before);
    let run = run?;
    if interrupted {
        bail!("interrupted: the run was cleaned up and nothing was written");
    }
    let samples = samples?;

    let mut checks = Vec::new();
    let mut delivered_mb = 0.0;
    for group in &long.flows {
        let entity = scenario::metrics::Entity::Group(group.name.clone()).to_string();
        let series = run
            .result
            .series
            .iter()
            .find(|s| s.name == "goodput_mbps" && s.entity == entity)
            .with_context(|| format!("no goodput series for {entity}"))?;
        let per_cycle =
            verdict::per_cycle_megabytes(series, cycle.duration.secs(), long.measure.warmup.secs());
        delivered_mb += series
            .values
            .iter()
            .map(|v| v * long.measure.interval.secs() / 8.0)
            .sum::<f64>();
        checks.push(verdict::flowing(&group.name, &per_cycle));
    }
    checks.extend(verdict::resources(&samples));
    checks.push(verdict::stalls(&run.emulator.lateness));
    checks.push(verdict::leftovers(&left));
    let holds = checks.iter().all(|c| c.holds);
    let e = &run.emulator;
    let soak_report = SoakReport {
        scenario: cycle.name.clone(),
        seed: args.seed,
        duration_s: total.secs(),
        cycle_s: cycle.duration.secs(),
        cycles: total.nanos().div_ceil(cycle.duration.nanos()),
        link_downs: downs,
        delivered_mb,
        emulator: EmulatorFigures {
            packets: e.written_pkts,
            late_p50_us: e.lateness.quantile_us(0.5),
            late_p99_us: e.lateness.quantile_us(0.99),
            late_p999_us: e.lateness.quantile_us(0.999),
            late_wakeups: e.stalls.count,
            late_wakeup_ms: e.stalls.total_ns / 1_000_000,
            refused_by_full_device: e.device_drops,
            own: e.health(args.seed),
        },
        checks,
        holds,
    };

    let runs = vec![vec![run.result]];
    let summary = report::summary::summarize(std::slice::from_ref(&long), &runs, "kernel");
    report::store::write_results(&out, &summary, &runs)
        .and_then(|()| write_beside(&out, "soak.json", &serde_json::to_vec_pretty(&soak_report)?))
        .and_then(|()| write_beside(&out, "samples.csv", &samples_csv(&samples)))?;
    print_report(&soak_report);
    println!("results in {}", out.display());
    Ok(holds)
}

/// What the run left: its namespaces, its bpffs folder, its struct_ops registrations, child
/// processes, threads beyond those before the session.
fn leftovers(registered: &[u32], threads_before: u64) -> Vec<String> {
    let me = std::process::id();
    let mut found = Vec::new();
    let ours = |name: &str| testbed::cleanup::owner_of(name) == Some(me);
    if let Ok(out) = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
    {
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let name = line.split_whitespace().next().unwrap_or("");
            if ours(name) {
                found.push(format!("netns {name}"));
            }
        }
    }
    if let Ok(dir) = std::fs::read_dir("/sys/fs/bpf") {
        for entry in dir.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if ours(&name) {
                found.push(format!("bpffs {name}"));
            }
        }
    }
    for id in mptcp_bpf::system::struct_ops_still_held(registered, std::time::Duration::ZERO) {
        found.push(format!("struct_ops map {id}"));
    }
    found.extend(
        children(me)
            .into_iter()
            .map(|pid| format!("child process {pid}")),
    );
    if let Ok(now) = monitor::sample(std::time::Instant::now())
        && now.threads > threads_before
    {
        found.push(format!(
            "{} threads (before: {threads_before})",
            now.threads
        ));
    }
    found
}

/// Processes whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&p| {
            std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|stat| {
                // The command name (field 2) is in parentheses and may hold spaces.
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                    == Some(pid)
            })
        })
        .collect()
}

fn samples_csv(samples: &[Sample]) -> Vec<u8> {
    let mut text = String::from("at_s,rss_kib,open_fds,threads,kernel_unreclaimable_kib\n");
    for s in samples {
        text += &format!(
            "{:.1},{},{},{},{}\n",
            s.at_ms as f64 / 1000.0,
            s.rss_kib,
            s.open_fds,
            s.threads,
            s.kernel_unreclaimable_kib
        );
    }
    text.into_bytes()
}

/// A file written whole or not at all: into a temporary name in the folder, then renamed.
fn write_beside(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let tmp = dir.join(format!(".{name}.partial"));
    let mut f =
        std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, dir.join(name))
        .with_context(|| format!("writing {}", dir.join(name).display()))
}

fn print_report(r: &SoakReport) {
    let e = &r.emulator;
    let us = |v: Option<u64>| v.map_or("-".into(), |v| v.to_string());
    println!(
        "{} for {:.0} s ({} cycles, {} link-down events): {:.0} MB delivered",
        r.scenario, r.duration_s, r.cycles, r.link_downs, r.delivered_mb
    );
    println!(
        "emulator: {} packets, late p50 {} us, p99 {} us, p99.9 {} us; {} late wake-ups ({} ms); {} refused by a full device",
        e.packets,
        us(e.late_p50_us),
        us(e.late_p99_us),
        us(e.late_p999_us),
        e.late_wakeups,
        e.late_wakeup_ms,
        e.refused_by_full_device
    );
    println!(
        "emulator's own losses: {} of {} packets ({:.3} %; {} not read in time), {} handed over more than {} ms late{}",
        e.own.own_losses,
        e.own.offered_pkts,
        e.own.own_loss_fraction * 100.0,
        e.own.not_read,
        e.own.late_beyond_bound,
        e.own.late_bound_ms,
        if e.own.unreliable {
            format!(": UNRELIABLE ({})", e.own.why.join("; "))
        } else {
            String::new()
        }
    );
    println!("| check | measured | bound | holds |");
    println!("| --- | --- | --- | --- |");
    for c in &r.checks {
        println!(
            "| {} | {} | {} | {} |",
            c.what,
            c.measured,
            c.bound,
            if c.holds { "yes" } else { "NO" }
        );
    }
}
