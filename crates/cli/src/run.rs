//! `run` and `check`.

use anyhow::{Context, Result, bail};
use campaign::{CampaignFolder, OtherVersions, Plan};
use scenario::metrics::{Entity, Metric, Quantity};
use scenario::{Backend, LoadOptions, Scenario, load_file};
use std::path::{Path, PathBuf};

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

impl BackendKind {
    /// As results name it (`Backend::name`).
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Sim => "sim",
            BackendKind::Kernel => "kernel",
        }
    }
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
    pub mode: Mode,
    pub other_versions: OtherVersions,
}

/// What `run` does with the campaign.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Run the missing tasks, then build the summary.
    All,
    /// Run task I only (a Slurm job array's index), if it has no result; no summary.
    Task(usize),
    /// Build the summary from the results there, running nothing.
    Gather,
    /// Print the tasks and what is done.
    ListTasks,
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

/// Runs every variant with every seed as a campaign in the results folder (only the tasks
/// without a result), then builds the summary from the task results; returns whether all
/// checks passed.
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
    // Before anything runs: a folder that cannot be written, or is not ours, and runs that
    // would not fit in memory.
    report::store::check_out(&out)?;
    let at_once = match args.backend {
        BackendKind::Sim => jobs.min(variants.len() * args.seeds as usize),
        BackendKind::Kernel => 1,
    };
    crate::memory::check_fits(path, &variants, at_once)?;
    if args.backend == BackendKind::Sim && (!args.pcap.is_empty() || !args.sysctl.is_empty()) {
        bail!(
            "--pcap and --sysctl are for --backend kernel: the simulator has no packets to \
             capture and no kernel to tune"
        );
    }
    let backend_name = args.backend.name();
    let runnable = runnable(args.backend, variants)?;
    let plan = Plan::new(runnable, args.seeds, backend_name, &args.sysctl);
    if args.mode == Mode::ListTasks {
        return list_tasks(&plan, &out);
    }
    let folder = CampaignFolder::new(&out, campaign::VERSION);
    let status = folder.status(&plan, args.other_versions)?;
    let todo: Vec<usize> = match args.mode {
        Mode::Task(i) if i >= plan.tasks.len() => bail!(
            "--task {i}: this run has {} tasks, numbered 0 to {} (--list-tasks shows them)",
            plan.tasks.len(),
            plan.tasks.len() - 1
        ),
        Mode::Task(i) => status.missing.iter().copied().filter(|&m| m == i).collect(),
        Mode::Gather => Vec::new(),
        _ => status.missing.clone(),
    };
    eprintln!(
        "{}: {} tasks ({} variant(s) x {} seed(s)); {} done before, {} to run",
        out.display(),
        plan.tasks.len(),
        plan.variants.len(),
        args.seeds,
        status.done.len(),
        todo.len()
    );
    if !todo.is_empty() {
        // The backend first: a kernel run without root is refused before anything is made.
        let mut backend = start_backend(args, &out)?;
        let made = folder.create()?;
        if backend.real_time() {
            let total_s: f64 = todo
                .iter()
                .map(|&i| plan.scenario(&plan.tasks[i]).duration.secs())
                .sum();
            eprintln!("{backend_name} backend: {total_s:.0} s of real time");
        }
        let executed = crate::execute::execute(backend.as_mut(), &plan, &todo, jobs, &folder);
        if let (Err(_), Some(made)) = (&executed, &made) {
            folder.remove_if_unused(made);
        }
        executed?;
        move_captures(&out)?;
    }
    if let Mode::Task(i) = args.mode {
        println!(
            "{} in {}",
            campaign::folder::task_name(&plan, i, &plan.tasks[i]),
            out.display()
        );
        return Ok(true);
    }
    let tasks = folder.gather(&plan, args.other_versions)?;
    let runs = campaign::view::runs(&plan, tasks);
    let summary = campaign::view::write(&folder, &plan, &runs)?;
    print_table(&summary);
    println!("results in {}", out.display());
    if args.report {
        let p = report::write_report(&out)?;
        println!("report in {}", p.display());
    }
    warn_unreliable(&summary);
    Ok(summary.all_pass())
}

/// The variants the backend can run (the others are skipped, each saying why).
fn runnable(backend: BackendKind, variants: Vec<Scenario>) -> Result<Vec<Scenario>> {
    let mut runnable = Vec::new();
    for sc in variants {
        let why = match backend {
            BackendKind::Kernel => testbed::backend::unsupported(&sc),
            BackendKind::Sim => sim::Simulator.unsupported(&sc),
        };
        match why {
            Some(why) => eprintln!("skipping variant {}: {why}", sc.variant_name()),
            None => runnable.push(sc),
        }
    }
    if runnable.is_empty() {
        bail!(
            "no variant of this scenario can run on the {} backend",
            backend.name()
        );
    }
    Ok(runnable)
}

fn start_backend(args: &RunArgs, out: &Path) -> Result<Box<dyn Backend>> {
    Ok(match args.backend {
        BackendKind::Sim => Box::new(sim::Simulator),
        BackendKind::Kernel => Box::new(testbed::backend::KernelBackend::start(
            &args.sysctl,
            args.pcap.clone(),
            pcap_staging(out),
        )?),
    })
}

/// `--list-tasks`: one line per task, numbered as `--task` takes them, with what is done.
fn list_tasks(plan: &Plan, out: &Path) -> Result<bool> {
    let folder = (out.join("campaign.json").exists())
        .then(|| CampaignFolder::open(out, campaign::VERSION))
        .transpose()?;
    println!("task\tkey\tvariant\tseed\tstatus");
    for (i, task) in plan.tasks.iter().enumerate() {
        let status = match folder
            .as_ref()
            .map(|f| f.load(&task.key))
            .transpose()?
            .flatten()
        {
            Some(t) if t.version == campaign::VERSION => "done".to_string(),
            Some(t) => format!("done by {}", t.version),
            None => "to run".to_string(),
        };
        println!(
            "{i}\t{}\t{}\t{}\t{status}",
            task.key,
            plan.scenario(task).variant_name(),
            task.seed
        );
    }
    Ok(true)
}

/// Captures were written beside the results folder during the runs.
fn move_captures(out: &Path) -> Result<()> {
    let staged = pcap_staging(out).join("pcap");
    if !staged.exists() {
        return Ok(());
    }
    let into = out.join("pcap");
    std::fs::create_dir_all(&into).with_context(|| format!("creating {}", into.display()))?;
    for entry in std::fs::read_dir(&staged)? {
        let entry = entry?;
        std::fs::rename(entry.path(), into.join(entry.file_name()))
            .with_context(|| format!("moving captures into {}", into.display()))?;
    }
    let _ = std::fs::remove_dir(&staged);
    let _ = std::fs::remove_dir(pcap_staging(out));
    Ok(())
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
