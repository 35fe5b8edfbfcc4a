//! `run --dask ADDRESS`: Dask's only client is Python, so the tasks go to the cluster
//! through the Python package (`python -m mptcp_lab sweep`), which saves each result into
//! the same campaign folder; `run` then builds the summary here, as for a local run.

use crate::run::RunArgs;
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::Command;

/// The Python that has the package: `$MPTCP_LAB_PYTHON`, else `python3`.
fn python() -> String {
    std::env::var("MPTCP_LAB_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// The package's build version, or why it cannot be used.
fn package_version(python: &str) -> Result<String> {
    let out = Command::new(python)
        .args([
            "-c",
            "import mptcp_lab, dask.distributed; print(mptcp_lab.VERSION)",
        ])
        .output()
        .with_context(|| format!("starting {python} (set MPTCP_LAB_PYTHON to another Python)"))?;
    if !out.status.success() {
        bail!(
            "--dask needs the Python package mptcp_lab and dask.distributed in {python}: {}\
             install them (scripts/setup makes .venv with both: MPTCP_LAB_PYTHON=.venv/bin/python), \
             or set MPTCP_LAB_PYTHON to a Python that has them",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .map(|l| format!("{l}; "))
                .unwrap_or_default()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Runs the missing tasks of the campaign in `out` on the Dask scheduler `scheduler`.
pub fn run_on_dask(path: &Path, args: &RunArgs, scheduler: &str, out: &Path) -> Result<()> {
    if args.backend != runner::BackendKind::Sim {
        bail!(
            "--dask runs the simulator only: kernel runs are real time and use the host's \
             namespaces, one at a time (run them per machine, e.g. a Slurm job array of \
             `run --task I`)"
        );
    }
    if !args.pcap.is_empty() {
        bail!(
            "--pcap is not passed to Dask workers: capture the runs you want to look at \
             without --dask (or one task at a time with --task I)"
        );
    }
    let python = python();
    let version = package_version(&python)?;
    if version != campaign::VERSION {
        bail!(
            "--dask: the Python package in {python} is mptcp-lab {version}, this is {}: \
             results of different builds are not mixed (rebuild it: scripts/setup)",
            campaign::VERSION
        );
    }
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "mptcp_lab", "sweep"])
        .arg(path)
        .args(["--scheduler", scheduler, "--seeds", &args.seeds.to_string()])
        .arg("--out")
        .arg(out)
        .args([
            "--other-versions",
            other_versions_name(args),
            "--no-summary",
        ]);
    for s in &args.set {
        cmd.args(["--set", s]);
    }
    if let Some(d) = &args.duration {
        cmd.args(["--duration", d]);
    }
    let status = cmd
        .status()
        .with_context(|| format!("starting {python} -m mptcp_lab sweep"))?;
    if !status.success() {
        bail!(
            "the Dask sweep failed ({status}); the tasks it finished are kept in {}",
            out.display()
        );
    }
    Ok(())
}

fn other_versions_name(args: &RunArgs) -> &'static str {
    match args.other_versions {
        campaign::OtherVersions::Refuse => "refuse",
        campaign::OtherVersions::Rerun => "rerun",
        campaign::OtherVersions::Reuse => "reuse",
    }
}
