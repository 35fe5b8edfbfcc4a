//! The tasks of a run: every variant with every seed, in a fixed order (variant by variant,
//! seeds in turn), so that task `i` names the same run for every process that plans the
//! same command (a Slurm job array's index, a Dask worker).

use crate::task::TaskKey;
use scenario::Scenario;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedTask {
    /// Index into the plan's variants.
    pub variant: usize,
    pub seed: u64,
    pub key: TaskKey,
}

#[derive(Clone, Debug)]
pub struct Plan {
    pub variants: Vec<Scenario>,
    pub seeds: u32,
    pub backend: String,
    pub tasks: Vec<PlannedTask>,
}

impl Plan {
    /// Seeds `sc.seed`, `sc.seed + 1`, ... for each variant, as `run --seeds N` always did.
    pub fn new(
        variants: Vec<Scenario>,
        seeds: u32,
        backend: &str,
        backend_options: &[String],
    ) -> Self {
        let tasks = variants
            .iter()
            .enumerate()
            .flat_map(|(i, sc)| {
                (0..u64::from(seeds)).map(move |k| {
                    let seed = sc.seed + k;
                    PlannedTask {
                        variant: i,
                        seed,
                        key: TaskKey::new(sc, seed, backend, backend_options),
                    }
                })
            })
            .collect();
        Plan {
            variants,
            seeds,
            backend: backend.to_string(),
            tasks,
        }
    }

    pub fn scenario(&self, task: &PlannedTask) -> &Scenario {
        &self.variants[task.variant]
    }

    /// How a task is named to a person: its variant (or `default`) and seed.
    pub fn label(&self, task: &PlannedTask) -> String {
        format!("{} seed {}", self.scenario(task).variant_name(), task.seed)
    }
}
