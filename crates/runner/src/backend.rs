//! Which backend runs a scenario, and what each can run.

use anyhow::{Result, bail};
use scenario::{Backend, Scenario};
use std::path::{Path, PathBuf};

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

    /// The results folder a run writes when given none: `results/<scenario>` for the
    /// simulator, `results/<scenario>-kernel` for the kernel backend, so that running a
    /// scenario on one backend never overwrites what the other wrote.
    pub fn default_folder(self, scenario: &str) -> PathBuf {
        let name = match self {
            BackendKind::Sim => scenario.to_string(),
            BackendKind::Kernel => format!("{scenario}-kernel"),
        };
        PathBuf::from("results").join(name)
    }

    /// The backend named `name` (`sim` or `kernel`).
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "sim" => Ok(BackendKind::Sim),
            "kernel" => Ok(BackendKind::Kernel),
            other => bail!("backend {other:?}: expected \"sim\" or \"kernel\""),
        }
    }

    /// How many runs may go on at once on this backend, given `jobs` cores to use: the
    /// kernel backend's runs are real time and share the host's namespaces, one at a time.
    pub fn at_once(self, jobs: usize, tasks: usize) -> usize {
        match self {
            BackendKind::Sim => jobs.min(tasks).max(1),
            BackendKind::Kernel => 1,
        }
    }

    /// Why this backend cannot run `sc`, if it cannot.
    pub fn unsupported(self, sc: &Scenario) -> Option<String> {
        match self {
            BackendKind::Kernel => testbed::backend::unsupported(sc),
            BackendKind::Sim => sim::Simulator::default().unsupported(sc),
        }
    }

    /// The backend, started: a kernel run without root is refused here, before anything
    /// is made. Captures of `pcap` links go to `staging` during the runs.
    pub fn start(
        self,
        sysctl: &[String],
        pcap: &[String],
        staging: PathBuf,
    ) -> Result<Box<dyn Backend>> {
        Ok(match self {
            BackendKind::Sim => Box::new(sim::Simulator::capturing(pcap.to_vec(), staging)),
            BackendKind::Kernel => Box::new(testbed::backend::KernelBackend::start(
                sysctl,
                pcap.to_vec(),
                staging,
            )?),
        })
    }
}

/// Where captures go during a run (beside the results folder), until
/// [`move_captures`] puts them into it.
pub fn pcap_staging(out: &Path) -> PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".captures");
    out.with_file_name(name)
}

/// Captures were written beside the results folder during the runs: into `out/pcap`.
pub fn move_captures(out: &Path) -> Result<()> {
    use anyhow::Context;
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

#[cfg(test)]
mod tests {
    use super::BackendKind;
    use std::path::Path;

    #[test]
    fn each_backend_has_its_own_default_folder() {
        let sim = BackendKind::Sim.default_folder("e3-aggregation");
        let kernel = BackendKind::Kernel.default_folder("e3-aggregation");
        assert_eq!(sim, Path::new("results/e3-aggregation"));
        assert_eq!(kernel, Path::new("results/e3-aggregation-kernel"));
    }
}
