//! `mptcp-lab`: run scenarios, check them, report on results, benchmark the simulator.

mod agent;
mod bench;
mod cc;
mod cc_bench;
mod check;
mod dask;
mod emu_bench;
mod matcp;
mod run;
mod soak;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "mptcp-lab",
    version = campaign::VERSION,
    about = "Multipath TCP coupled congestion control: simulate, emulate, compare with the papers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run every variant of a scenario and write summary.json, series and a table.
    Run {
        scenario: PathBuf,
        /// Which backend runs it.
        #[arg(long, value_enum, default_value_t = run::BackendKind::Sim)]
        backend: run::BackendKind,
        /// Results folder, default results/<scenario name> on the simulator and
        /// results/<scenario name>-kernel on the kernel backend. It keeps one result per task
        /// (variant x seed): run the same command again and only the missing tasks run.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Runs per variant, with seeds base, base+1, ...
        #[arg(long, default_value_t = 1)]
        seeds: u32,
        /// Runs at once (variants x seeds), default one per core; results do not depend on
        /// it. The kernel backend runs one at a time.
        #[arg(long, short = 'j')]
        jobs: Option<usize>,
        /// Fix a parameter: --set cc=reno --set n=10 (removes it from the variant matrix).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Also write report.md with plots.
        #[arg(long)]
        report: bool,
        /// Exit with status 1 when a check against published figures fails.
        #[arg(long)]
        strict: bool,
        /// Capture this link (repeatable) to OUT/pcap/<variant>-seed<N>-<link>.pcap, each packet
        /// as it reaches the link's far end, with the headers Linux sends (Wireshark, tshark).
        #[arg(long, value_name = "LINK")]
        pcap: Vec<String>,
        /// Run for this long instead of the scenario's duration (e.g. 60s).
        #[arg(long)]
        duration: Option<String>,
        /// Kernel backend: set this net.* sysctl in every host's namespace (repeatable),
        /// e.g. net.mptcp.stale_loss_cnt=1.
        #[arg(long, value_name = "KEY=VALUE")]
        sysctl: Vec<String>,
        /// Run only task I (0-based; --list-tasks numbers them), e.g. one index of a Slurm
        /// job array; no summary (a final `run --gather` builds it).
        #[arg(long, value_name = "I", conflicts_with_all = ["gather", "list_tasks"])]
        task: Option<usize>,
        /// Build the summary from the task results in the folder, running nothing.
        #[arg(long, conflicts_with = "list_tasks")]
        gather: bool,
        /// Print the tasks (index, key, variant, seed) and which are done, running nothing.
        #[arg(long)]
        list_tasks: bool,
        /// Task results in the folder made by another version of mptcp-lab: refuse (stop
        /// and say so), rerun (replace them), or reuse (use them as they are).
        #[arg(long, value_enum, default_value_t = OtherVersionsArg::Refuse)]
        other_versions: OtherVersionsArg,
        /// Run the missing tasks on the workers of this Dask scheduler (e.g.
        /// tcp://SCHEDULER:8786) and gather them here: needs the Python package mptcp_lab
        /// of this same build (in python3, or in $MPTCP_LAB_PYTHON).
        #[arg(long, value_name = "ADDRESS", conflicts_with_all = ["task", "gather", "list_tasks"])]
        dask: Option<String>,
    },
    /// Validate a scenario (or every .toml in a folder) without running it.
    Check {
        scenarios: Vec<PathBuf>,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Print every variant as resolved (parameters substituted; times in seconds,
        /// rates in bit/s) and every error, as one JSON document (docs/scenario-format.md)
        #[arg(long)]
        json: bool,
    },
    /// Write report.md and plots for a results folder.
    Report { dir: PathBuf },
    /// Kernel backend for a long time (root): the scenario's events repeated every cycle
    /// (link flaps); checks that data keeps flowing, memory and descriptors stay flat, the
    /// emulator never stalls and nothing is left behind. Exit status 1 if a check fails.
    Soak {
        #[arg(default_value = "scenarios/soak-flaps.toml")]
        scenario: PathBuf,
        /// How long (e.g. 1h, 10min).
        #[arg(long, default_value = "1h")]
        duration: String,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Results folder (replaced if it is one); default results/soak-<scenario name>.
        #[arg(long)]
        out: Option<PathBuf>,
        /// How often memory, descriptors and threads are sampled.
        #[arg(long, default_value = "10s")]
        sample_every: String,
    },
    /// The real-time emulator.
    Emu {
        #[command(subcommand)]
        action: EmuAction,
    },
    /// Two results folders of one scenario side by side (e.g. sim and kernel), as Markdown.
    Compare {
        a: PathBuf,
        b: PathBuf,
        /// Also write this HTML page: both results' series overlaid per variant, every
        /// metric both have with the difference and whether it lies inside the seed spread.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
    },
    /// Simulator benchmark: packet-hops and events per second, events per hop and peak
    /// memory, on TCP and MPTCP dumbbells and many on/off sources.
    Bench {
        /// Workloads to measure.
        #[arg(
            long,
            value_enum,
            value_delimiter = ',',
            default_value = "tcp,mptcp,onoff"
        )]
        workload: Vec<bench::Workload>,
        /// Numbers of flows (sources) to run, one measurement each.
        #[arg(long, value_delimiter = ',', default_value = "10,100,1000")]
        flows: Vec<u32>,
        /// Simulated seconds per measurement.
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
        /// Print the scenario of one workload and size (to run it with another build).
        #[arg(long)]
        print_scenario: bool,
        /// One JSON line per measurement instead of a table.
        #[arg(long)]
        json: bool,
        /// Internal: run one measurement in this process and print it as JSON.
        #[arg(long, hide = true)]
        child: bool,
    },
    /// The eBPF congestion controls (lia, olia, balia, wvegas, ewtcp, fcoupled) on this kernel.
    Cc {
        #[command(subcommand)]
        action: CcAction,
    },
    /// MATCP path selection per TCP connection on this kernel (eBPF, per cgroup).
    Matcp {
        #[command(subcommand)]
        action: matcp::MatcpAction,
    },
    /// Traffic agent on real sockets (used by the kernel tests and benchmarks).
    #[command(hide = true)]
    Agent {
        #[command(subcommand)]
        role: agent::Role,
    },
}

/// `--other-versions`, as typed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum OtherVersionsArg {
    Refuse,
    Rerun,
    Reuse,
}

impl From<OtherVersionsArg> for campaign::OtherVersions {
    fn from(a: OtherVersionsArg) -> Self {
        match a {
            OtherVersionsArg::Refuse => campaign::OtherVersions::Refuse,
            OtherVersionsArg::Rerun => campaign::OtherVersions::Rerun,
            OtherVersionsArg::Reuse => campaign::OtherVersions::Reuse,
        }
    }
}

#[derive(Subcommand)]
enum EmuAction {
    /// Throughput through one and three hops, and the delay it adds at 100 Mbit/s (root).
    Bench {
        /// Seconds per run.
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        /// Runs per measurement (the median is reported).
        #[arg(long, default_value_t = 3)]
        repeat: u32,
    },
}

#[derive(Subcommand)]
enum CcAction {
    /// Register the algorithms (all if none named) so that they stay after this command.
    Install { names: Vec<String> },
    /// Unregister them (all if none named).
    Remove {
        names: Vec<String>,
        /// Remove even while sockets use it (they keep it until they close).
        #[arg(long)]
        force: bool,
    },
    /// Which are installed, registered and in use.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Each live connection's subflows: window, RTT and the coupling state.
    Show {
        #[arg(long)]
        json: bool,
    },
    /// Throughput and CPU per gigabyte over two unlimited veth paths, against reno and cubic.
    Bench {
        /// Seconds per run.
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        /// Runs per algorithm (interleaved).
        #[arg(long, default_value_t = 5)]
        repeat: u32,
        /// Algorithms to measure.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "reno,cubic,lia,olia,balia,wvegas"
        )]
        algorithms: Vec<String>,
    },
}

fn main() -> ExitCode {
    // `mptcp-lab cc show | head` should end quietly when head closes the pipe, as other
    // command-line tools do, not panic on the failed write.
    // SAFETY: restoring a signal's default disposition before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let cli = Cli::parse();
    let result: Result<bool> = match cli.command {
        Command::Run {
            scenario,
            backend,
            out,
            seeds,
            jobs,
            set,
            report,
            strict,
            pcap,
            duration,
            sysctl,
            task,
            gather,
            list_tasks,
            other_versions,
            dask,
        } => run::run(
            &scenario,
            &run::RunArgs {
                backend,
                out,
                seeds,
                jobs,
                set,
                report,
                pcap,
                duration,
                sysctl,
                mode: match (task, gather, list_tasks) {
                    (Some(i), _, _) => run::Mode::Task(i),
                    (None, true, _) => run::Mode::Gather,
                    (None, false, true) => run::Mode::ListTasks,
                    (None, false, false) => run::Mode::All,
                },
                other_versions: other_versions.into(),
                dask,
            },
        )
        .map(|all_pass| all_pass || !strict),
        Command::Check {
            scenarios,
            set,
            json,
        } => check::check(&scenarios, &set, json),
        Command::Compare { a, b, html } => run::compare(&a, &b, html.as_deref()),
        Command::Emu {
            action: EmuAction::Bench { seconds, repeat },
        } => emu_bench::bench(seconds, repeat),
        Command::Report { dir } => report::write_report(&dir).map(|p| {
            println!("wrote {}", p.display());
            true
        }),
        Command::Bench {
            workload,
            flows,
            seconds,
            print_scenario,
            json,
            child,
        } => bench::bench(&bench::BenchArgs {
            workloads: workload,
            flows,
            seconds,
            print_scenario,
            child,
            json,
        })
        .map(|_| true),
        Command::Cc { action } => match action {
            CcAction::Install { names } => cc::install(&names),
            CcAction::Remove { names, force } => cc::remove(&names, force),
            CcAction::List { json } => cc::list(json),
            CcAction::Show { json } => cc::show(json),
            CcAction::Bench {
                seconds,
                repeat,
                algorithms,
            } => cc_bench::bench(seconds, repeat, &algorithms),
        },
        Command::Matcp { action } => matcp::run(action),
        Command::Soak {
            scenario,
            duration,
            seed,
            out,
            sample_every,
        } => soak::soak(&soak::SoakArgs {
            scenario,
            duration,
            seed,
            out,
            sample_every,
        }),
        Command::Agent { role } => agent::run(role),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            match e.downcast_ref::<scenario::ScenarioErrors>() {
                Some(errors) => eprintln!("{errors}"),
                None => eprintln!("error: {e:#}"),
            }
            ExitCode::from(2)
        }
    }
}
