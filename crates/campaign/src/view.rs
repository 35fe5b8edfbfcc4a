//! What a reader opens: `summary.json` and `<variant>/series-seed<k>.csv`, built from the
//! task results alone, so they are the same however the tasks were run. Each file is
//! replaced atomically, `summary.json` last: while it is being rebuilt, a reader sees the
//! previous complete view or the new one.

use crate::folder::{CampaignFolder, write_atomically};
use crate::plan::Plan;
use crate::task::TaskResult;
use anyhow::{Context, Result};
use report::Summary;
use scenario::RunResult;
use std::collections::BTreeSet;

/// The runs of `plan` grouped per variant (seeds in order), each labelled with the current
/// variant (a reused result may have been made under another variant name) and with the
/// scenario's derived metrics added.
pub fn runs(plan: &Plan, tasks: Vec<TaskResult>) -> Vec<Vec<RunResult>> {
    let mut runs: Vec<Vec<RunResult>> = vec![Vec::new(); plan.variants.len()];
    for (task, stored) in plan.tasks.iter().zip(tasks) {
        let sc = plan.scenario(task);
        let mut r = stored.result;
        r.scenario.clone_from(&sc.name);
        r.variant.clone_from(&sc.variant);
        r.params.clone_from(&sc.params);
        scenario::derived::add(sc, &mut r.metrics);
        runs[task.variant].push(r);
    }
    runs
}

/// Writes the summary and series of `runs` into the campaign folder and returns the
/// summary, with `provenance` (how it was made). Variant folders that the previous summary listed and this one does not (a
/// variant taken out of the scenario) are removed: this program made them.
pub fn write(
    folder: &CampaignFolder,
    plan: &Plan,
    runs: &[Vec<RunResult>],
    provenance: report::provenance::Provenance,
) -> Result<Summary> {
    let mut summary = report::summarize(&plan.variants, runs, &plan.backend);
    summary.provenance = Some(provenance);
    report::provenance::name_fixed_variant(&mut summary);
    let dir = folder.dir();
    let previous = report::read_summary(dir).ok();
    for (v, rs) in summary.variants.iter().zip(runs) {
        let vdir = dir.join(&v.dir);
        std::fs::create_dir_all(&vdir).with_context(|| format!("creating {}", vdir.display()))?;
        for r in rs {
            let path = vdir.join(format!("series-seed{}.csv", r.seed));
            let mut csv = Vec::new();
            report::store::write_series_to(&mut csv, &r.series)?;
            write_atomically(&path, &csv)?;
        }
    }
    let json = serde_json::to_string_pretty(&summary)? + "\n";
    write_atomically(&dir.join("summary.json"), json.as_bytes())?;
    if let Some(previous) = previous {
        let now: BTreeSet<&str> = summary.variants.iter().map(|v| v.dir.as_str()).collect();
        for gone in previous
            .variants
            .iter()
            .filter(|v| !now.contains(v.dir.as_str()))
        {
            // Only a plain folder name of ours, never a path the old summary could point
            // elsewhere with.
            if gone.dir.is_empty() || gone.dir.contains(['/', '\\']) || gone.dir.starts_with('.') {
                continue;
            }
            let path = dir.join(&gone.dir);
            if path.is_dir() {
                std::fs::remove_dir_all(&path)
                    .with_context(|| format!("removing {}", path.display()))?;
            }
        }
    }
    Ok(summary)
}
