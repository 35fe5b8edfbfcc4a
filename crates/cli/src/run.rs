//! `run` and `check`.

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use report::{summarize, write_results};
use scenario::metrics::{Entity, Metric, Quantity};
use scenario::{Backend, LoadOptions, Progress, Scenario, load_file};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

pub fn load_options(set: &[String]) -> Result<LoadOptions> {
    let mut overrides = Vec::new();
    for s in set {
        let Some((k, v)) = s.split_once('=') else {
            bail!("--set {s}: expected KEY=VALUE, e.g. --set cc=lia")
        };
        overrides.push((k.trim().to_string(), v.trim().to_string()));
    }
    Ok(LoadOptions { overrides })
}

/// The delays drawn for links with a spread (fixed by the scenario's seed, the same in
/// every run), so that a reader knows which uplink is the long one.
fn print_drawn_delays(sc: &Scenario) {
    if sc.links.iter().all(|l| l.delay_spread.nanos() == 0) {
        return;
    }
    let drawn = net::draws::for_run(sc, sc.seed);
    for (link, was) in drawn.links.iter().zip(&sc.links) {
        if was.delay_spread.nanos() > 0 {
            let ms = |d: scenario::units::Duration| d.secs() * 1e3;
            println!(
                "  link {} delay drawn: {:.1} ms (mean {:.1} ms, spread {:.1} ms)",
                link.name,
                ms(link.dirs[0].delay),
                ms(was.dirs[0].delay),
                ms(was.delay_spread)
            );
        }
    }
}

fn load(path: &Path, set: &[String]) -> Result<Vec<Scenario>> {
    Ok(load_file(path, &load_options(set)?)?)
}

pub fn check(paths: &[PathBuf], set: &[String]) -> Result<bool> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            files.extend(scenario::load::scenario_files(p)?);
        } else {
            files.push(p.clone());
        }
    }
    if files.is_empty() {
        bail!("no scenario files given");
    }
    let mut ok = true;
    for f in &files {
        match load(f, set).and_then(|vs| Ok((crate::memory::check_fits(f, &vs, 1)?, vs))) {
            Ok((memory, vs)) => {
                let flows: u64 = vs.iter().map(Scenario::total_flows).max().unwrap_or(0);
                println!(
                    "{}: ok ({} variant{}, up to {flows} flows, about {} per run)",
                    f.display(),
                    vs.len(),
                    if vs.len() == 1 { "" } else { "s" },
                    scenario::footprint::human(memory)
                );
                if let Some(first) = vs.first() {
                    print_drawn_delays(first);
                }
            }
            Err(e) => {
                eprintln!("{e:#}");
                ok = false;
            }
        }
    }
    Ok(ok)
}

/// Which backend runs the scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendKind {
    /// The packet-level simulator: deterministic, faster than real time, no privileges.
    Sim,
    /// Real Linux TCP and MPTCP in network namespaces through the real-time emulator
    /// (root; each run takes the scenario's duration).
    Kernel,
}

/// How `run` was asked to run.
pub struct RunArgs {
    pub backend: BackendKind,
    pub out: Option<PathBuf>,
    pub seeds: u32,
    /// Runs at once; `None`: one per core.
    pub jobs: Option<usize>,
    pub set: Vec<String>,
    pub report: bool,
    /// Links to capture (kernel backend).
    pub pcap: Vec<String>,
    /// A shorter run than the scenario's.
    pub duration: Option<String>,
    /// `KEY=VALUE` sysctls for the hosts' namespaces (kernel backend).
    pub sysctl: Vec<String>,
}

/// Cuts every variant to `duration` (flows that would stop later stop then).
fn shorten(variants: &mut [Scenario], duration: &str) -> Result<()> {
    let d = scenario::units::Duration::parse(duration)
        .map_err(|e| anyhow::anyhow!("--duration {duration}: {e}"))?;
    for sc in variants {
        if d.0 <= sc.measure.warmup.0 {
            bail!(
                "--duration {duration}: {} measures nothing before its warm-up of {}",
                sc.name,
                sc.measure.warmup
            );
        }
        sc.duration = d;
        for f in &mut sc.flows {
            f.stop = f.stop.min(d);
            if f.start >= d {
                bail!(
                    "--duration {duration}: flow {} of {} would not start",
                    f.name,
                    sc.name
                );
            }
        }
        sc.events.retain(|e| e.at < d);
    }
    Ok(())
}

pub(crate) fn progress_bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total * 1000);
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {percent}% {msg}")
            .expect("valid template"),
    );
    bar
}

fn label(sc: &Scenario) -> &str {
    if sc.variant.is_empty() {
        "default"
    } else {
        &sc.variant
    }
}

/// Runs every variant with every seed; returns whether all checks passed.
pub fn run(path: &Path, args: &RunArgs) -> Result<bool> {
    if args.seeds == 0 {
        bail!("--seeds must be at least 1");
    }
    let jobs = match args.jobs {
        Some(0) => bail!("--jobs must be at least 1"),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let mut variants = load(path, &args.set)?;
    if let Some(d) = &args.duration {
        shorten(&mut variants, d)?;
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(&variants[0].name));
    // Before anything runs: a folder that cannot be written, or is not ours to replace,
    // and runs that would not fit in memory.
    report::store::check_out(&out)?;
    let at_once = match args.backend {
        BackendKind::Sim => jobs.min(variants.len() * args.seeds as usize),
        BackendKind::Kernel => 1,
    };
    crate::memory::check_fits(path, &variants, at_once)?;
    let mut backend: Box<dyn Backend> = match args.backend {
        BackendKind::Sim => {
            if !args.pcap.is_empty() || !args.sysctl.is_empty() {
                bail!(
                    "--pcap and --sysctl are for --backend kernel: the simulator has no packets \
                     to capture and no kernel to tune"
                );
            }
            Box::new(sim::Simulator)
        }
        BackendKind::Kernel => Box::new(testbed::backend::KernelBackend::start(
            &args.sysctl,
            args.pcap.clone(),
            pcap_staging(&out),
        )?),
    };
    let (variants, runs) = run_all(backend.as_mut(), variants, args.seeds, jobs)?;

    let summary = summarize(&variants, &runs, backend.name());
    write_results(&out, &summary, &runs)?;
    // Captures were written beside the results folder, which write_results replaces.
    let staged = pcap_staging(&out).join("pcap");
    if staged.exists() {
        std::fs::rename(&staged, out.join("pcap"))
            .with_context(|| format!("moving captures into {}", out.display()))?;
        let _ = std::fs::remove_dir(pcap_staging(&out));
    }
    print_table(&summary);
    println!("results in {}", out.display());
    if args.report {
        let p = report::write_report(&out)?;
        println!("report in {}", p.display());
    }
    warn_unreliable(&summary);
    Ok(summary.all_pass())
}

/// The last lines of a kernel run: every run whose emulator lost or delayed too many
/// packets itself, so that its figures are not taken for the network's.
fn warn_unreliable(summary: &report::Summary) {
    for line in unreliable_warnings(summary) {
        eprintln!("{line}");
    }
}

fn unreliable_warnings(summary: &report::Summary) -> Vec<String> {
    summary
        .unreliable_runs()
        .map(|(v, e)| {
            format!(
                "warning: UNRELIABLE run: {} seed {}: {} (summary.json: variants[].emulator)",
                v.name,
                e.seed,
                e.why.join("; ")
            )
        })
        .collect()
}

/// Where captures go during a run: the results folder is replaced when results are written.
fn pcap_staging(out: &Path) -> PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".captures");
    out.with_file_name(name)
}

type Runs = (Vec<Scenario>, Vec<Vec<scenario::RunResult>>);

/// A progress bar over all runs; notes are printed above it.
struct Bar<'a> {
    bar: &'a ProgressBar,
    base: u64,
}

impl Progress for Bar<'_> {
    fn fraction(&mut self, done: f64) {
        self.bar.set_position(self.base + (done * 1000.0) as u64);
    }
    fn note(&mut self, line: &str) {
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }
}

/// Every variant the backend can run, each with every seed.
fn run_all(
    backend: &mut dyn Backend,
    variants: Vec<Scenario>,
    seeds: u32,
    jobs: usize,
) -> Result<Runs> {
    let mut runnable = Vec::new();
    for sc in variants {
        match backend.unsupported(&sc) {
            Some(why) => eprintln!("skipping variant {}: {why}", label(&sc)),
            None => runnable.push(sc),
        }
    }
    if runnable.is_empty() {
        bail!(
            "no variant of this scenario can run on the {} backend",
            backend.name()
        );
    }
    if backend.real_time() {
        let total_s: f64 = runnable.iter().map(|v| v.duration.secs()).sum::<f64>() * seeds as f64;
        eprintln!(
            "{} backend: {} variant(s) x {seeds} seed(s), {:.0} s of real time",
            backend.name(),
            runnable.len(),
            total_s
        );
    }
    let bar = progress_bar(runnable.len() as u64 * seeds as u64);
    let tasks: Vec<(usize, u64)> = runnable
        .iter()
        .enumerate()
        .flat_map(|(i, sc)| (0..seeds as u64).map(move |k| (i, sc.seed + k)))
        .collect();
    let results = if jobs > 1 && tasks.len() > 1 && backend.fork().is_some() {
        run_parallel(backend, &runnable, &tasks, jobs, &bar)?
    } else {
        let mut results = Vec::new();
        for (n, &(i, seed)) in tasks.iter().enumerate() {
            let sc = &runnable[i];
            bar.set_message(format!("{} seed {seed}", label(sc)));
            let mut progress = Bar {
                bar: &bar,
                base: n as u64 * 1000,
            };
            results.push(
                backend
                    .run(sc, seed, &mut progress)
                    .with_context(|| format!("{} seed {seed}", label(sc)))?,
            );
        }
        results
    };
    bar.finish_and_clear();
    let mut results = results;
    for (result, &(i, _)) in results.iter_mut().zip(&tasks) {
        scenario::derived::add(&runnable[i], &mut result.metrics);
    }
    let mut results = results.into_iter();
    let runs = runnable
        .iter()
        .map(|_| results.by_ref().take(seeds as usize).collect())
        .collect();
    Ok((runnable, runs))
}

/// Runs `tasks` (variant, seed) on `jobs` threads, each with its own copy of the backend;
/// the results come back in the order of `tasks`, whatever order they finish in.
fn run_parallel(
    backend: &dyn Backend,
    runnable: &[Scenario],
    tasks: &[(usize, u64)],
    jobs: usize,
    bar: &ProgressBar,
) -> Result<Vec<scenario::RunResult>> {
    use rayon::prelude::*;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("starting the worker threads")?;
    let copies: Vec<Box<dyn Backend + Send>> = tasks
        .iter()
        .map(|_| backend.fork().expect("the backend forks"))
        .collect();
    let done = AtomicU64::new(0);
    let finished = AtomicU64::new(0);
    bar.set_message(format!("0 of {} runs, {jobs} at once", tasks.len()));
    let results: Vec<Result<scenario::RunResult>> = pool.install(|| {
        copies
            .into_par_iter()
            .zip(tasks.par_iter())
            .map(|(mut copy, &(i, seed))| {
                let sc = &runnable[i];
                let mut progress = SharedBar {
                    bar,
                    done: &done,
                    reported: 0,
                };
                let result = copy
                    .run(sc, seed, &mut progress)
                    .with_context(|| format!("{} seed {seed}", label(sc)));
                progress.fraction(1.0);
                let n = finished.fetch_add(1, Ordering::Relaxed) + 1;
                bar.set_message(format!("{n} of {} runs, {jobs} at once", tasks.len()));
                result
            })
            .collect()
    });
    results.into_iter().collect()
}

/// The progress of one of several runs going on at once: the bar shows their sum.
struct SharedBar<'a> {
    bar: &'a ProgressBar,
    /// Thousandths of a run done, all runs together.
    done: &'a AtomicU64,
    /// What this run has added to `done`.
    reported: u64,
}

impl Progress for SharedBar<'_> {
    fn fraction(&mut self, done: f64) {
        let now = (done.clamp(0.0, 1.0) * 1000.0) as u64;
        if now > self.reported {
            let delta = now - self.reported;
            let before = self.done.fetch_add(delta, Ordering::Relaxed);
            self.reported = now;
            self.bar.set_position(before + delta);
        }
    }
    fn note(&mut self, line: &str) {
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }
}

fn print_table(s: &report::Summary) {
    println!(
        "{} ({} variant{}, {} seed{})",
        s.scenario,
        s.variants.len(),
        if s.variants.len() == 1 { "" } else { "s" },
        s.seeds.len(),
        if s.seeds.len() == 1 { "" } else { "s" }
    );
    for v in &s.variants {
        let goodputs: Vec<String> = v
            .metrics
            .iter()
            .filter_map(|(k, m)| {
                let metric = Metric::parse(k)?;
                if metric.quantity != Quantity::GoodputMbps {
                    return None;
                }
                let who = match metric.entity {
                    Entity::Group(g) => g,
                    Entity::GroupSubflow(g, k) => format!("{g}.sf{k}"),
                    _ => return None,
                };
                Some(format!("{who}={:.2}", m.mean))
            })
            .collect();
        let jain = v
            .metrics
            .get(&Metric::new(Entity::All, Quantity::Jain).to_string())
            .map(|m| format!(" jain={:.3}", m.mean))
            .unwrap_or_default();
        println!(
            "  {:<28} goodput Mbps: {}{jain}",
            v.name,
            goodputs.join(" ")
        );
        for c in &v.checks {
            let ours = c
                .ours
                .map(|o| format!("{o:.3}"))
                .unwrap_or_else(|| "missing".into());
            let want = match (c.published, &c.tolerance) {
                (Some(p), Some(t)) => format!("{p} {t}"),
                _ => [
                    c.min.map(|m| format!(">= {m}")),
                    c.max.map(|m| format!("<= {m}")),
                ]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(", "),
            };
            let over = c
                .over
                .as_ref()
                .map(|o| format!(" / {o}"))
                .unwrap_or_default();
            println!(
                "    {} {}{over}: {ours} (expected {want})",
                if c.pass { "pass" } else { "FAIL" },
                c.metric
            );
        }
    }
    for o in &s.orders {
        let under = if o.context.is_empty() {
            String::new()
        } else {
            format!(" [{}]", o.context)
        };
        println!(
            "  {} {}{under}: {}",
            if o.pass { "holds" } else { "FAILS" },
            o.statement,
            o.values_text()
        );
        if let (false, Some(why)) = (o.pass, &o.if_fails) {
            println!("    why: {why}");
        }
    }
}

/// `compare A B`: two results folders of one scenario side by side.
pub fn compare(a: &Path, b: &Path) -> Result<bool> {
    let (sa, sb) = (report::read_summary(a)?, report::read_summary(b)?);
    if sa.scenario != sb.scenario {
        bail!(
            "{} holds {} and {} holds {}: compare results of one scenario",
            a.display(),
            sa.scenario,
            b.display(),
            sb.scenario
        );
    }
    print!("{}", report::compare::compare(&sa, &sb));
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use report::VariantSummary;
    use scenario::results::EmulatorHealth;

    #[test]
    fn each_unreliable_run_gets_a_warning_that_says_why() {
        let variant = |name: &str, emulator: Vec<EmulatorHealth>| VariantSummary {
            name: name.into(),
            dir: name.into(),
            params: Default::default(),
            metrics: Default::default(),
            checks: Vec::new(),
            stats: Vec::new(),
            emulator,
        };
        let bad = EmulatorHealth {
            seed: 3,
            unreliable: true,
            why: vec![
                "the emulator lost 20 of 1000 packets itself (2.000 %, bound 0.1 %)".into(),
                "15 of 980 packets were handed over more than 5 ms late".into(),
            ],
            ..EmulatorHealth::default()
        };
        let summary = report::Summary {
            format: 1,
            scenario: "s".into(),
            file: "s.toml".into(),
            description: String::new(),
            source: String::new(),
            backend: "kernel".into(),
            seeds: vec![1, 3],
            variants: vec![
                variant("cc=lia", vec![EmulatorHealth::default()]),
                variant("cc=olia", vec![EmulatorHealth::default(), bad]),
            ],
            orders: Vec::new(),
            plots: Vec::new(),
        };
        let seed = summary.variants[1].emulator[1].seed;
        assert_eq!(
            unreliable_warnings(&summary),
            vec![format!(
                "warning: UNRELIABLE run: cc=olia seed {seed}: the emulator lost 20 of 1000 \
                 packets itself (2.000 %, bound 0.1 %); 15 of 980 packets were handed over more \
                 than 5 ms late (summary.json: variants[].emulator)"
            )]
        );
    }
}
