//! `run` and `check`.

use anyhow::{Result, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use report::{summarize, write_results};
use scenario::{LoadOptions, Scenario, load_file};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

pub fn load_options(set: &[String]) -> Result<LoadOptions> {
    let mut overrides = Vec::new();
    for s in set {
        let Some((k, v)) = s.split_once('=') else {
            bail!("--set {s}: expected KEY=VALUE, e.g. --set cc=lia")
        };
        overrides.push((k.trim().to_string(), v.trim().to_string()));
    }
    Ok(LoadOptions {
        known_cc: sim::algorithms(),
        overrides,
    })
}

fn load(path: &Path, set: &[String]) -> Result<Vec<Scenario>> {
    Ok(load_file(path, &load_options(set)?)?)
}

pub fn check(paths: &[PathBuf], set: &[String]) -> Result<bool> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            files.extend(scenario::load::scenario_files(p)?);
        } else {
            files.push(p.clone());
        }
    }
    if files.is_empty() {
        bail!("no scenario files given");
    }
    let mut ok = true;
    for f in &files {
        match load(f, set) {
            Ok(vs) => {
                let flows: u64 = vs.iter().map(Scenario::total_flows).max().unwrap_or(0);
                println!(
                    "{}: ok ({} variant{}, up to {flows} flows)",
                    f.display(),
                    vs.len(),
                    if vs.len() == 1 { "" } else { "s" }
                );
            }
            Err(e) => {
                eprintln!("{e:#}");
                ok = false;
            }
        }
    }
    Ok(ok)
}

/// Runs every variant with every seed; returns whether all checks passed.
pub fn run(
    path: &Path,
    backend: &str,
    out: Option<PathBuf>,
    seeds: u32,
    set: &[String],
    with_report: bool,
) -> Result<bool> {
    if backend != "sim" {
        bail!("backend `{backend}` is not available in this build; expected `sim`");
    }
    if seeds == 0 {
        bail!("--seeds must be at least 1");
    }
    let variants = load(path, set)?;
    let out = out.unwrap_or_else(|| PathBuf::from("results").join(&variants[0].name));

    let total = variants.len() as u64 * seeds as u64;
    let bar = ProgressBar::new(total * 1000);
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {percent}% {msg}")
            .expect("valid template"),
    );
    let mut runs = Vec::new();
    for (i, sc) in variants.iter().enumerate() {
        let mut rs = Vec::new();
        for k in 0..seeds {
            let seed = sc.seed + k as u64;
            bar.set_message(format!(
                "{} seed {seed}",
                if sc.variant.is_empty() {
                    "default"
                } else {
                    &sc.variant
                }
            ));
            let base = (i as u64 * seeds as u64 + k as u64) * 1000;
            rs.push(sim::run(sc, seed, |f| {
                bar.set_position(base + (f * 1000.0) as u64)
            }));
        }
        runs.push(rs);
    }
    bar.finish_and_clear();

    let summary = summarize(&variants, &runs, backend);
    write_results(&out, &summary, &runs)?;
    print_table(&summary);
    println!("results in {}", out.display());
    if with_report {
        let p = report::write_report(&out)?;
        println!("report in {}", p.display());
    }
    Ok(summary.all_pass())
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
            .filter(|(k, _)| k.starts_with("group.") && k.ends_with(".goodput_mbps"))
            .map(|(k, m)| {
                format!(
                    "{}={:.2}",
                    k.trim_start_matches("group.")
                        .trim_end_matches(".goodput_mbps"),
                    m.mean
                )
            })
            .collect();
        let jain = v
            .metrics
            .get("all.jain")
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
                .unwrap_or_else(|| "missing".into());
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
        let values: Vec<String> = o
            .values
            .iter()
            .map(|(n, v)| match v {
                Some(v) => format!("{n} {v:.3}"),
                None => format!("{n} missing"),
            })
            .collect();
        let under = if o.context.is_empty() {
            String::new()
        } else {
            format!(" [{}]", o.context)
        };
        println!(
            "  {} {}{under}: {}",
            if o.pass { "holds" } else { "FAILS" },
            o.statement,
            values.join(" < ")
        );
    }
}
