//! Cross-reference checks and name resolution: from the file's shape to a runnable model.
//! Every problem is collected (with its field path) so one run of `check` shows them all.
//! One module per table of the file, called in the file's order.

mod events;
mod expect;
mod flows;
mod links;
mod measure;
mod nodes;
mod paths;

use crate::error::suggestion;
use crate::model::Scenario;
use crate::spans::Seg;
use crate::spec::ScenarioSpec;
use crate::units::Duration;
use std::collections::BTreeMap;

/// A problem with its field path; `load` turns the path into a line and column.
pub struct Problem {
    pub path: Vec<Seg>,
    pub message: String,
}

#[derive(Default)]
struct Problems(Vec<Problem>);

impl Problems {
    /// How many problems so far (a check compares before and after to see if it found any).
    fn len(&self) -> usize {
        self.0.len()
    }

    fn push(&mut self, path: Vec<Seg>, message: impl Into<String>) {
        self.0.push(Problem {
            path,
            message: message.into(),
        });
    }
}

fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}
fn at(table: &str, i: usize, field: &str) -> Vec<Seg> {
    vec![key(table), Seg::Index(i), key(field)]
}

fn unknown(what: &str, name: &str, known: &[&str]) -> String {
    if known.is_empty() {
        format!("unknown {what} `{name}` (the scenario defines no {what})")
    } else {
        format!("unknown {what} `{name}`; {}", suggestion(name, known))
    }
}

/// Longest scenario name: it names a folder, and names beyond this are typing accidents.
const MAX_NAME_CHARS: usize = 100;

/// The scenario's name is the default results folder, `results/<name>`: a plain file name,
/// so that no scenario file can choose a folder elsewhere (`/home/me`, `../..`) for `run`
/// to write to or replace.
fn check_name(name: &str) -> Result<(), String> {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return Err(format!(
            "expected a name of 1 to {MAX_NAME_CHARS} characters (it names the results folder)"
        ));
    }
    if let Some(c) = name.chars().find(|&c| !plain(c)) {
        return Err(format!(
            "`{}` is not allowed: the name becomes the results folder `results/<name>`, so \
             it may hold letters, digits, `.`, `_` and `-` only",
            c.escape_default()
        ));
    }
    if name.starts_with(['.', '-']) {
        return Err(
            "expected a name that starts with a letter, digit or `_` (it names the results \
             folder; a leading `.` or `-` would hide it or read as an option)"
                .into(),
        );
    }
    Ok(())
}

pub struct Context {
    pub variant: String,
    pub params: BTreeMap<String, toml::Value>,
    pub file: std::path::PathBuf,
}

pub fn validate(spec: ScenarioSpec, cx: Context) -> Result<Scenario, Vec<Problem>> {
    let mut p = Problems::default();
    if spec.scenario.duration == Duration::ZERO {
        p.push(
            vec![key("scenario"), key("duration")],
            "the duration must be greater than zero",
        );
    }
    if let Err(why) = check_name(&spec.scenario.name) {
        p.push(vec![key("scenario"), key("name")], why);
    }
    let duration = spec.scenario.duration;
    let mut nodes = nodes::check(&spec.nodes, &mut p);
    let links = links::check(&spec.links, &mut nodes, &mut p);
    let flows = flows::check(&spec.flows, &nodes, &links, duration, &mut p);
    let events = events::check(&spec.events, &links, duration, &mut p);
    measure::check(&spec.measure, duration, &mut p);
    let mut names = expect::Names {
        groups: spec.flows.iter().map(|f| f.name.as_str()).collect(),
        links: links
            .list
            .iter()
            .map(|l| l.name.as_str())
            .chain(links.left_out.iter().map(String::as_str))
            .collect(),
        derived: Vec::new(),
    };
    expect::check_derived(&spec.derived, &mut names, &mut p);
    expect::check_plots(&spec.plots, &cx.params, &names, &mut p);
    expect::check_orders(&spec.orders, &cx.params, &names, &mut p);
    expect::check_expects(&spec.expects, &cx.params, &names, &mut p);
    expect::check_tables(&spec.tables, &cx.params, &names, &mut p);
    if !p.0.is_empty() {
        return Err(p.0);
    }
    Ok(Scenario {
        file: cx.file,
        name: spec.scenario.name,
        description: spec.scenario.description,
        source: spec.scenario.source,
        variant: cx.variant,
        params: cx.params,
        duration,
        seed: spec.scenario.seed,
        nodes: nodes.list,
        links: links.list,
        flows,
        events,
        measure: spec.measure,
        expects: spec.expects,
        plots: spec.plots,
        orders: spec.orders,
        derived: spec.derived,
        tables: spec.tables,
    })
}
