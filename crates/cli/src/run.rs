//! `run`.

use anyhow::{Result, bail};
use campaign::{CampaignFolder, OtherVersions, Plan};
use report::verdict::Verdict;
pub use runner::BackendKind;
use runner::{Folder, Prepared, Request, ScenarioSource};
use scenario::metrics::{Entity, Metric, Quantity};
use std::path::{Path, PathBuf};

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
    /// Run the tasks on this Dask scheduler (`tcp://HOST:8786`) instead of here.
    pub dask: Option<String>,
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

/// Runs every variant with every seed as a campaign in the results folder (only the tasks
/// without a result), then builds the summary from the task results; returns whether all
/// checks passed.
pub fn run(path: &Path, args: &RunArgs) -> Result<bool> {
    let jobs = match args.jobs {
        Some(0) => bail!("--jobs must be at least 1"),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let request = Request {
        backend: args.backend,
        seeds: args.seeds,
        set: args.set.clone(),
        duration: args.duration.clone(),
        sysctl: args.sysctl.clone(),
        pcap: args.pcap.clone(),
    };
    let folder = match &args.out {
        Some(dir) => Folder::At(dir.clone()),
        None => Folder::Default,
    };
    let prepared = Prepared::new(ScenarioSource::File(path), request, folder)?;
    let (plan, out) = (&prepared.plan, prepared.out());
    if args.mode == Mode::ListTasks {
        return list_tasks(plan, out);
    }
    // Before anything runs: a folder that cannot be written, or is not ours, and runs that
    // would not fit in memory.
    prepared.check(jobs)?;
    let status = prepared.status(args.other_versions)?;
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
    if !args.pcap.is_empty() && todo.len() < plan.tasks.len() {
        eprintln!(
            "--pcap: only the {} task(s) that run now are captured; those done before keep \
             their results and are not run again (an empty --out captures them all)",
            todo.len()
        );
    }
    match &args.dask {
        Some(scheduler) if !todo.is_empty() => {
            crate::dask::run_on_dask(path, args, scheduler, out)?;
        }
        _ => prepared.run(&todo, jobs)?,
    }
    if let Mode::Task(i) = args.mode {
        println!(
            "{} in {}",
            campaign::folder::task_name(plan, i, &plan.tasks[i]),
            out.display()
        );
        return Ok(true);
    }
    let summary = prepared.summarize(args.other_versions)?;
    print_table(&summary);
    println!("results in {}", out.display());
    if args.report {
        let p = report::write_report(out)?;
        println!("report in {}", p.display());
    }
    warn_unreliable(&summary);
    Ok(summary.all_pass())
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
                .unwrap_or_else(|| c.absent_text());
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
            match o.verdict() {
                Verdict::Fails => "FAILS".to_string(),
                _ => o.verdict_text(),
            },
            o.statement,
            o.values_text()
        );
        if let (Verdict::Fails, Some(why)) = (o.verdict(), &o.if_fails) {
            println!("    why: {why}");
        }
    }
}

/// `compare A B`: two results folders of one scenario side by side.
pub fn compare(a: &Path, b: &Path, html: Option<&Path>) -> Result<bool> {
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
    if let Some(page) = html {
        report::compare_html::write(&sa, a, &sb, b, page)?;
        eprintln!("wrote {}", page.display());
    }
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
            tables: Vec::new(),
            provenance: None,
            outages: Vec::new(),
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
