//! Running a campaign's tasks: one after another, or on several threads each with its own
//! copy of the backend; every task's result is saved to the campaign folder the moment it
//! finishes, so a run that is killed keeps everything finished before.

use anyhow::{Context, Result};
use campaign::{CampaignFolder, Plan, TaskResult};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use scenario::{Backend, Progress};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};

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

/// Runs the tasks `todo` (indices into `plan.tasks`) on `jobs` threads, saving each.
pub fn execute(
    backend: &mut dyn Backend,
    plan: &Plan,
    todo: &[usize],
    jobs: usize,
    folder: &CampaignFolder,
) -> Result<()> {
    if todo.is_empty() {
        return Ok(());
    }
    let bar = progress_bar(todo.len() as u64);
    let result = if jobs > 1 && todo.len() > 1 && backend.fork().is_some() {
        run_parallel(backend, plan, todo, jobs, folder, &bar)
    } else {
        run_serial(backend, plan, todo, folder, &bar)
    };
    bar.finish_and_clear();
    result
}

/// Runs one task and saves its result.
fn run_one(
    backend: &mut dyn Backend,
    plan: &Plan,
    index: usize,
    folder: &CampaignFolder,
    progress: &mut dyn Progress,
) -> Result<()> {
    let task = &plan.tasks[index];
    let result = backend
        .run(plan.scenario(task), task.seed, progress)
        .with_context(|| campaign::folder::task_name(plan, index, task))?;
    folder.save(&TaskResult {
        key: task.key.clone(),
        version: folder.version().to_string(),
        result,
    })
}

fn run_serial(
    backend: &mut dyn Backend,
    plan: &Plan,
    todo: &[usize],
    folder: &CampaignFolder,
    bar: &ProgressBar,
) -> Result<()> {
    for (n, &i) in todo.iter().enumerate() {
        bar.set_message(plan.label(&plan.tasks[i]));
        let mut progress = Bar {
            bar,
            base: n as u64 * 1000,
        };
        run_one(backend, plan, i, folder, &mut progress)?;
    }
    Ok(())
}

/// Runs `todo` on `jobs` threads, each task with its own copy of the backend. A failed task
/// does not stop the others: what finished is saved, and the first error is returned.
fn run_parallel(
    backend: &dyn Backend,
    plan: &Plan,
    todo: &[usize],
    jobs: usize,
    folder: &CampaignFolder,
    bar: &ProgressBar,
) -> Result<()> {
    use rayon::prelude::*;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("starting the worker threads")?;
    let copies: Vec<Box<dyn Backend + Send>> = todo
        .iter()
        .map(|_| backend.fork().expect("the backend forks"))
        .collect();
    let done = AtomicU64::new(0);
    let finished = AtomicU64::new(0);
    bar.set_message(format!("0 of {} runs, {jobs} at once", todo.len()));
    let results: Vec<Result<()>> = pool.install(|| {
        copies
            .into_par_iter()
            .zip(todo.par_iter())
            .map(|(mut copy, &i)| {
                let mut progress = SharedBar {
                    bar,
                    done: &done,
                    reported: 0,
                };
                let result = run_one(copy.as_mut(), plan, i, folder, &mut progress);
                progress.fraction(1.0);
                let n = finished.fetch_add(1, Ordering::Relaxed) + 1;
                bar.set_message(format!("{n} of {} runs, {jobs} at once", todo.len()));
                result
            })
            .collect()
    });
    results.into_iter().collect()
}

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
