//! `mptcp-lab`: run scenarios, check them, report on results, benchmark the simulator.

mod bench;
mod run;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "mptcp-lab",
    version,
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
        /// Backend: `sim` (the packet-level simulator).
        #[arg(long, default_value = "sim")]
        backend: String,
        /// Results folder (replaced if it exists); default results/<scenario name>.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Runs per variant, with seeds base, base+1, ...
        #[arg(long, default_value_t = 1)]
        seeds: u32,
        /// Fix a parameter: --set cc=reno --set n=10 (removes it from the variant matrix).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Also write report.md with plots.
        #[arg(long)]
        report: bool,
        /// Exit with status 1 when a check against published figures fails.
        #[arg(long)]
        strict: bool,
    },
    /// Validate a scenario (or every .toml in a folder) without running it.
    Check {
        scenarios: Vec<PathBuf>,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Write report.md and plots for a results folder.
    Report { dir: PathBuf },
    /// Simulator benchmark: packet-hops and events per second, peak memory, on a dumbbell.
    Bench {
        /// Numbers of bulk flows to run, one measurement each.
        #[arg(long, value_delimiter = ',', default_value = "10,100,1000")]
        flows: Vec<u32>,
        /// Simulated seconds per measurement.
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
        /// Internal: run one measurement in this process and print it as JSON.
        #[arg(long, hide = true)]
        child: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<bool> = match cli.command {
        Command::Run {
            scenario,
            backend,
            out,
            seeds,
            set,
            report,
            strict,
        } => run::run(&scenario, &backend, out, seeds, &set, report)
            .map(|all_pass| all_pass || !strict),
        Command::Check { scenarios, set } => run::check(&scenarios, &set),
        Command::Report { dir } => report::write_report(&dir).map(|p| {
            println!("wrote {}", p.display());
            true
        }),
        Command::Bench {
            flows,
            seconds,
            child,
        } => bench::bench(&flows, seconds, child).map(|_| true),
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
