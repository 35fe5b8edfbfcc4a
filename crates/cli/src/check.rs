//! `check`: validates scenario files without running them, for a person (one line per file,
//! errors with file, line, column and field) or, with `--json`, for a program: every
//! variant as the loader resolved it (`runner::resolved`, documented in
//! `docs/scenario-format.md`, "Checking a scenario from a program"). Scripts read link
//! rates and delays from there rather than parse the TOML again.

use anyhow::{Result, bail};
use runner::resolved::{self, CheckDocument};
use scenario::Scenario;
use std::path::PathBuf;

/// The delays drawn for links with a spread (fixed by the scenario's seed, the same in
/// every run), so that a reader knows which uplink is the long one.
fn print_drawn_delays(sc: &Scenario) {
    if sc.links.iter().all(|l| l.delay_spread.nanos() == 0) {
        return;
    }
    let drawn = net::draws::for_run(sc, sc.seed);
    for (link, was) in drawn.links.iter().zip(&sc.links) {
        if was.delay_spread.nanos() > 0 {
            let ms = |d: scenario::units::Duration| d.secs() * 1e3;
            println!(
                "  link {} delay drawn: {:.1} ms (mean {:.1} ms, spread {:.1} ms)",
                link.name,
                ms(link.dirs[0].delay),
                ms(was.dirs[0].delay),
                ms(was.delay_spread)
            );
        }
    }
}

/// The scenario files named, folders expanded to the `.toml` files in them.
fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
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
    Ok(files)
}

/// Checks every file; true when all are valid. With `json`, one document on stdout that
/// holds the errors too, and nothing on stderr.
pub fn check(paths: &[PathBuf], set: &[String], json: bool) -> Result<bool> {
    let files = files(paths)?;
    if json {
        let doc = CheckDocument::new(
            files
                .iter()
                .map(|f| resolved::checked_file(f, set))
                .collect(),
        );
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(doc.ok());
    }
    let mut ok = true;
    for f in &files {
        match resolved::load(f, set) {
            Ok((vs, memory)) => {
                let flows: u64 = vs.iter().map(Scenario::total_flows).max().unwrap_or(0);
                println!(
                    "{}: ok ({} variant{}, up to {flows} flows, about {} per run)",
                    f.display(),
                    vs.len(),
                    if vs.len() == 1 { "" } else { "s" },
                    scenario::footprint::human(memory)
                );
                if let Some(first) = vs.first() {
                    print_drawn_delays(first);
                }
            }
            Err(e) => {
                eprintln!("{e:#}");
                ok = false;
            }
        }
    }
    Ok(ok)
}
