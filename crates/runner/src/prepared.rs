//! A scenario loaded and planned as a campaign in its results folder, ready to run.

use crate::backend::{BackendKind, move_captures, pcap_staging};
use anyhow::{Result, bail};
use campaign::folder::{Status, task_name};
use campaign::{CampaignFolder, OtherVersions, Plan, TaskResult};
use scenario::{LoadOptions, Scenario};
use std::path::{Path, PathBuf};

/// Where the scenario comes from.
#[derive(Clone, Copy, Debug)]
pub enum ScenarioSource<'a> {
    File(&'a Path),
    /// The file's text, already read (a Dask worker gets it from the client); `file` names
    /// it in errors.
    Text {
        text: &'a str,
        file: &'a Path,
    },
}

/// What to run: everything that decides the tasks and their results, apart from the
/// scenario itself.
#[derive(Clone, Debug)]
pub struct Request {
    pub backend: BackendKind,
    /// Runs per variant, with seeds base, base + 1, ...
    pub seeds: u32,
    /// `KEY=VALUE` overrides of the scenario's parameters.
    pub set: Vec<String>,
    /// A shorter run than the scenario's, e.g. `60s`.
    pub duration: Option<String>,
    /// `KEY=VALUE` sysctls for the hosts' namespaces (kernel backend).
    pub sysctl: Vec<String>,
    /// Links to capture (kernel backend).
    pub pcap: Vec<String>,
}

impl Request {
    pub fn new(backend: BackendKind, seeds: u32) -> Self {
        Request {
            backend,
            seeds,
            set: Vec::new(),
            duration: None,
            sysctl: Vec::new(),
            pcap: Vec::new(),
        }
    }
}

/// The results folder of a campaign.
#[derive(Clone, Debug)]
pub enum Folder {
    /// `results/<scenario name>` (simulator) or `results/<scenario name>-kernel`, as the
    /// command line's default (`BackendKind::default_folder`).
    Default,
    At(PathBuf),
}

/// A campaign planned: its tasks and its folder; nothing is written before [`Self::run`],
/// [`Self::save`] or [`Self::summarize`].
pub struct Prepared {
    pub request: Request,
    pub plan: Plan,
    pub folder: CampaignFolder,
    /// The scenario file, as given (for messages).
    pub file: PathBuf,
}

/// `--set` arguments as load options.
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

/// The variants `backend` can run (the others are skipped, each saying why on stderr).
fn runnable(backend: BackendKind, variants: Vec<Scenario>) -> Result<Vec<Scenario>> {
    let mut runnable = Vec::new();
    for sc in variants {
        match backend.unsupported(&sc) {
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

impl Prepared {
    /// Loads the scenario (every error located in its file), applies the request and plans
    /// the tasks. Reads nothing but the scenario and writes nothing.
    pub fn new(source: ScenarioSource<'_>, request: Request, folder: Folder) -> Result<Self> {
        if request.seeds == 0 {
            bail!("--seeds must be at least 1");
        }
        let options = load_options(&request.set)?;
        let (file, loaded) = match source {
            ScenarioSource::File(path) => (path, scenario::load_file(path, &options)),
            ScenarioSource::Text { text, file } => (file, scenario::load_str(text, file, &options)),
        };
        let mut variants = loaded?;
        if let Some(d) = &request.duration {
            shorten(&mut variants, d)?;
        }
        if request.backend == BackendKind::Sim && !request.sysctl.is_empty() {
            bail!("--sysctl is for --backend kernel: the simulator has no kernel to tune");
        }
        // Names of links to capture are checked before anything runs.
        for sc in &variants {
            net::capture::capture_files(sc, &request.pcap, Path::new(""), 0)?;
        }
        let out = match folder {
            Folder::Default => request.backend.default_folder(&variants[0].name),
            Folder::At(dir) => dir,
        };
        let variants = runnable(request.backend, variants)?;
        let plan = Plan::new(
            variants,
            request.seeds,
            request.backend.name(),
            &request.sysctl,
        );
        Ok(Prepared {
            request,
            plan,
            folder: CampaignFolder::new(&out, campaign::VERSION),
            file: file.to_path_buf(),
        })
    }

    pub fn out(&self) -> &Path {
        self.folder.dir()
    }

    /// Before anything runs: refuses a folder that cannot be written or is not this
    /// program's, and runs that would not fit in memory `jobs` at a time.
    pub fn check(&self, jobs: usize) -> Result<()> {
        report::store::check_out(self.out())?;
        let at_once = self.request.backend.at_once(jobs, self.plan.tasks.len());
        crate::memory::check_fits(&self.file, &self.plan.variants, at_once)?;
        Ok(())
    }

    /// Which tasks are done and which are to run.
    pub fn status(&self, policy: OtherVersions) -> Result<Status> {
        self.folder.status(&self.plan, policy)
    }

    /// Runs the tasks `todo` (indices into the plan) on `jobs` threads, saving each result
    /// as it finishes. A run that fails before saving any result leaves no folder behind.
    pub fn run(&self, todo: &[usize], jobs: usize) -> Result<()> {
        if let Some(&bad) = todo.iter().find(|&&i| i >= self.plan.tasks.len()) {
            bail!(
                "task {bad}: this run has {} tasks, numbered 0 to {}",
                self.plan.tasks.len(),
                self.plan.tasks.len() - 1
            );
        }
        if todo.is_empty() {
            return Ok(());
        }
        let mut backend = self.start_backend()?;
        let made = self.folder.create()?;
        if backend.real_time() {
            let total_s: f64 = todo
                .iter()
                .map(|&i| self.plan.scenario(&self.plan.tasks[i]).duration.secs())
                .sum();
            eprintln!("{} backend: {total_s:.0} s of real time", backend.name());
        }
        let executed =
            crate::execute::execute(backend.as_mut(), &self.plan, todo, jobs, &self.folder);
        if executed.is_err() {
            // A run that failed may have left its capture half-written: none are kept.
            let _ = std::fs::remove_dir_all(pcap_staging(self.out()));
            if let Some(made) = &made {
                self.folder.remove_if_unused(made);
            }
        }
        executed?;
        move_captures(self.out())
    }

    /// Runs task `index` and returns its result without saving it (a Dask worker's part:
    /// the client saves it).
    pub fn run_detached(&self, index: usize) -> Result<TaskResult> {
        let Some(task) = self.plan.tasks.get(index) else {
            bail!("task {index}: this run has {} tasks", self.plan.tasks.len());
        };
        let mut backend = self.start_backend()?;
        crate::execute::run_task(backend.as_mut(), &self.plan, index, &mut Silent).map(|result| {
            TaskResult {
                key: task.key.clone(),
                version: campaign::VERSION.to_string(),
                result,
            }
        })
    }

    /// Saves a result made elsewhere (by [`Self::run_detached`] on a worker): it must be
    /// one of this plan's tasks, made by this version.
    pub fn save(&self, task: &TaskResult) -> Result<usize> {
        let Some(index) = self.plan.tasks.iter().position(|t| t.key == task.key) else {
            bail!(
                "a result for task {} arrived, which is not a task of this run",
                task.key
            );
        };
        if task.version != campaign::VERSION {
            bail!(
                "{}: made by mptcp-lab {}, this is {}: every worker must run the same build",
                task_name(&self.plan, index, &self.plan.tasks[index]),
                task.version,
                campaign::VERSION
            );
        }
        self.folder.create()?;
        self.folder.save(task)?;
        Ok(index)
    }

    /// Builds `summary.json` and the series from the task results in the folder (every
    /// task must be done) and returns the summary.
    pub fn summarize(&self, policy: OtherVersions) -> Result<report::Summary> {
        let tasks = self.folder.gather(&self.plan, policy)?;
        let runs = campaign::view::runs(&self.plan, tasks);
        let provenance = crate::provenance::current(&self.request.set);
        campaign::view::write(&self.folder, &self.plan, &runs, provenance)
    }

    fn start_backend(&self) -> Result<Box<dyn scenario::Backend>> {
        self.request.backend.start(
            &self.request.sysctl,
            &self.request.pcap,
            pcap_staging(self.out()),
        )
    }
}

/// No progress shown (a worker's run: the client shows progress over tasks).
struct Silent;

impl scenario::Progress for Silent {
    fn fraction(&mut self, _done: f64) {}
    fn note(&mut self, line: &str) {
        eprintln!("{line}");
    }
}
