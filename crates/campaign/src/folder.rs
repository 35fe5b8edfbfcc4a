//! The campaign folder: the results folder of a scenario, with `campaign.json` (marking it
//! as this program's) and `tasks/<key>.msgpack`, one file per finished task. Task files are
//! written to a hidden temporary name and renamed into place, so a task file that exists is
//! whole, whatever killed the run that wrote it.

use crate::plan::{Plan, PlannedTask};
use crate::task::{TaskKey, TaskResult};
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const MARKER: &str = "campaign.json";
const TASKS: &str = "tasks";
const EXTENSION: &str = "msgpack";

#[derive(Serialize, Deserialize)]
struct Marker {
    format: u32,
    program: String,
}

/// What to do with finished tasks that another program version ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OtherVersions {
    /// Stop before running anything, saying which versions and how many tasks.
    #[default]
    Refuse,
    /// Use them as if this version had run them.
    Reuse,
    /// Run those tasks again with this version, replacing them.
    Rerun,
}

/// Where each planned task stands.
#[derive(Debug, Default)]
pub struct Status {
    /// Index into the plan's tasks -> its stored result, for the tasks to use.
    pub done: BTreeMap<usize, TaskResult>,
    /// Indices of the tasks to run.
    pub missing: Vec<usize>,
    /// Tasks found from other versions: version -> how many (whatever the policy did).
    pub other_versions: BTreeMap<String, usize>,
}

pub struct CampaignFolder {
    dir: PathBuf,
    version: String,
}

impl CampaignFolder {
    /// The campaign folder `dir` for program `version`, read as it is (a folder that does
    /// not exist yet has no task done); nothing is written until [`Self::create`].
    pub fn new(dir: &Path, version: &str) -> Self {
        CampaignFolder {
            dir: dir.to_path_buf(),
            version: version.to_string(),
        }
    }

    /// Makes the folder, if needed, before the first task is saved. A folder that exists
    /// must be this program's (a campaign folder, a results folder it wrote before
    /// campaigns, or empty): anything else is refused and left alone.
    /// Returns the topmost folder it made (the results folder, or an ancestor that did not
    /// exist either), if it made any (see [`Self::remove_if_unused`]).
    pub fn create(&self) -> Result<Option<PathBuf>> {
        report::store::check_out(&self.dir)?;
        let made = self
            .dir
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
            .last()
            .map(Path::to_path_buf);
        let tasks = self.dir.join(TASKS);
        std::fs::create_dir_all(&tasks).with_context(|| format!("creating {}", tasks.display()))?;
        let marker = self.dir.join(MARKER);
        if !marker.exists() {
            let json = serde_json::to_string_pretty(&Marker {
                format: 1,
                program: "mptcp-lab".into(),
            })?;
            write_atomically(&marker, (json + "\n").as_bytes())?;
        }
        Ok(made)
    }

    /// After a failed run: removes the folders that [`Self::create`] made (up to `made`) if
    /// no task result got into them, so that a run that did nothing leaves nothing. Only
    /// what `create` writes is removed, and each folder only if it is then empty.
    pub fn remove_if_unused(&self, made: &Path) {
        let tasks = self.dir.join(TASKS);
        if std::fs::remove_dir(&tasks).is_ok() {
            let _ = std::fs::remove_file(self.dir.join(MARKER));
            for folder in self.dir.ancestors() {
                if std::fs::remove_dir(folder).is_err() || folder == made {
                    break;
                }
            }
        }
    }

    /// [`Self::new`] and [`Self::create`].
    pub fn open(dir: &Path, version: &str) -> Result<Self> {
        let folder = Self::new(dir, version);
        folder.create()?;
        Ok(folder)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn version(&self) -> &str {
        &self.version
    }

    fn task_path(&self, key: &TaskKey) -> PathBuf {
        self.dir.join(TASKS).join(format!("{key}.{EXTENSION}"))
    }

    /// The stored result of `key`, if there is one. A file that does not decode is an
    /// error naming it: renames make torn files impossible, so it was changed by hand.
    pub fn load(&self, key: &TaskKey) -> Result<Option<TaskResult>> {
        let path = self.task_path(key);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let task = TaskResult::decode(&bytes).with_context(|| {
            format!("{}: remove this file to run the task again", path.display())
        })?;
        if task.key != *key {
            bail!(
                "{}: holds the result of task {}, not {key}; remove it to run the task again",
                path.display(),
                task.key
            );
        }
        Ok(Some(task))
    }

    /// Writes a finished task (atomically: a hidden file renamed into place).
    pub fn save(&self, task: &TaskResult) -> Result<()> {
        write_atomically(&self.task_path(&task.key), &task.encode())
    }

    /// Which tasks of `plan` are done and which are to run, under `policy` for results of
    /// other versions; `Refuse` with such results is an error listing them.
    pub fn status(&self, plan: &Plan, policy: OtherVersions) -> Result<Status> {
        let mut status = Status::default();
        for (i, task) in plan.tasks.iter().enumerate() {
            match self.load(&task.key)? {
                Some(found) if found.version == self.version => {
                    status.done.insert(i, found);
                }
                Some(found) => {
                    *status
                        .other_versions
                        .entry(found.version.clone())
                        .or_default() += 1;
                    match policy {
                        OtherVersions::Reuse => {
                            status.done.insert(i, found);
                        }
                        OtherVersions::Rerun | OtherVersions::Refuse => status.missing.push(i),
                    }
                }
                None => status.missing.push(i),
            }
        }
        if policy == OtherVersions::Refuse && !status.other_versions.is_empty() {
            let found: Vec<String> = status
                .other_versions
                .iter()
                .map(|(v, n)| format!("{n} by {v}"))
                .collect();
            bail!(
                "{}: {} of these {} tasks were run by another version of mptcp-lab ({}); this \
                 is {}. Results of different versions are not mixed unless asked: \
                 --other-versions rerun runs them again with this version, --other-versions \
                 reuse uses them as they are; or choose another --out",
                self.dir.display(),
                status.other_versions.values().sum::<usize>(),
                plan.tasks.len(),
                found.join(", "),
                self.version
            );
        }
        Ok(status)
    }

    /// The stored results of every task of `plan`, in plan order; an error naming the
    /// first missing ones if any is not done.
    pub fn gather(&self, plan: &Plan, policy: OtherVersions) -> Result<Vec<TaskResult>> {
        let mut status = self.status(plan, policy)?;
        if !status.missing.is_empty() {
            let names: Vec<String> = status
                .missing
                .iter()
                .take(5)
                .map(|&i| task_name(plan, i, &plan.tasks[i]))
                .collect();
            bail!(
                "{}: {} of {} tasks have no result yet ({}{}); run them first",
                self.dir.display(),
                status.missing.len(),
                plan.tasks.len(),
                names.join(", "),
                if status.missing.len() > 5 {
                    ", ..."
                } else {
                    ""
                }
            );
        }
        Ok((0..plan.tasks.len())
            .map(|i| status.done.remove(&i).expect("every task is done"))
            .collect())
    }
}

/// `task I (variant seed S, key K)`, as the CLI names a task.
pub fn task_name(plan: &Plan, index: usize, task: &PlannedTask) -> String {
    format!("task {index} ({}, {})", plan.label(task), task.key)
}

/// Writes `bytes` to a hidden sibling of `path` of this process and thread, then renames
/// it over `path`: readers see the old file or the new one, never a part.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let thread = format!("{:?}", std::thread::current().id());
    let digits: String = thread.chars().filter(char::is_ascii_digit).collect();
    let tmp = path.with_file_name(format!(".{name}.tmp-{}-{digits}", std::process::id()));
    let written = std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::File::open(&tmp)?.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("writing {}", path.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use scenario::{LoadOptions, RunResult, load_str};

    fn plan() -> Plan {
        let text = "[scenario]\nname = \"v\"\nduration = \"1s\"\n\
                    [[node]]\nname = \"a\"\nkind = \"host\"\n[[node]]\nname = \"b\"\nkind = \"host\"\n\
                    [[link]]\na = \"a\"\nb = \"b\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
                    [[flow]]\nname = \"f\"\nfrom = \"a\"\nto = \"b\"\n";
        let variants = load_str(text, Path::new("v.toml"), &LoadOptions::default()).unwrap();
        Plan::new(variants, 2, "sim", &[])
    }

    fn folder(name: &str, version: &str) -> CampaignFolder {
        let dir =
            std::env::temp_dir().join(format!("mptcp-lab-folder-{}-{name}", std::process::id()));
        CampaignFolder::open(&dir, version).unwrap()
    }

    fn result(plan: &Plan, i: usize, version: &str) -> TaskResult {
        let task = &plan.tasks[i];
        TaskResult {
            key: task.key.clone(),
            version: version.into(),
            result: RunResult {
                scenario: "v".into(),
                variant: String::new(),
                backend: "sim".into(),
                seed: task.seed,
                params: Default::default(),
                metrics: [("all.jain".to_string(), f64::NAN)].into(),
                flow_goodput_mbps: Default::default(),
                series: Vec::new(),
                stats: Default::default(),
                emulator: None,
            },
        }
    }

    #[test]
    fn results_of_another_version_are_refused_rerun_or_reused_as_asked() {
        let plan = plan();
        let old = folder("versions", "0.1.0+git.old");
        old.save(&result(&plan, 0, "0.1.0+git.old")).unwrap();
        let new = folder("versions", "0.1.0+git.new");
        new.save(&result(&plan, 1, "0.1.0+git.new")).unwrap();

        let refused = new.status(&plan, OtherVersions::Refuse).unwrap_err();
        let text = format!("{refused:#}");
        assert!(
            text.contains("1 of these 2 tasks were run by another version of mptcp-lab (1 by 0.1.0+git.old); this is 0.1.0+git.new"),
            "{text}"
        );
        let rerun = new.status(&plan, OtherVersions::Rerun).unwrap();
        assert_eq!(rerun.missing, vec![0]);
        assert_eq!(rerun.done.keys().copied().collect::<Vec<_>>(), vec![1]);
        let reused = new.status(&plan, OtherVersions::Reuse).unwrap();
        assert!(reused.missing.is_empty());
        assert_eq!(reused.done[&0].version, "0.1.0+git.old");
        // Stored exactly, NaN included.
        assert!(reused.done[&0].result.metrics["all.jain"].is_nan());
        std::fs::remove_dir_all(new.dir()).unwrap();
    }

    #[test]
    fn a_task_key_depends_on_the_seed_and_is_stable() {
        let plan = plan();
        assert_ne!(plan.tasks[0].key, plan.tasks[1].key);
        assert_eq!(plan.tasks, self::plan().tasks);
        assert!(TaskKey::parse(&plan.tasks[0].key.to_string()).is_some());
        assert!(TaskKey::parse("../../etc").is_none());
    }
}
