//! `report.md` beside `summary.json`: the checks against published figures, the metrics of
//! every variant, and plots of each variant's first run.

use crate::plots::{Axes, Line, line_chart, panel_chart};
use crate::store::{read_series, read_summary};
use crate::summary::{Check, MetricStats, OrderCheck, Summary, VariantSummary};
use crate::verdict::Verdict;
use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use scenario::metrics::{Entity, Metric, Quantity};
use scenario::results::Series;
use scenario::spec::PlotSpec;
use scenario::units::{Duration, Size};
use std::fmt::Write;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// How many flows' window traces one plot shows (more is unreadable).
const MAX_TRACES: usize = 8;

/// Writes `report.md` and its plots into `dir`; returns the report's path.
pub fn write_report(dir: &Path) -> Result<PathBuf> {
    let summary = read_summary(dir)?;
    let mut md = String::new();
    writeln!(md, "# {}\n", summary.scenario)?;
    writeln!(
        md,
        "Interactive version, with zoomable series and hover values: [report.html](report.html).\n"
    )?;
    if !summary.description.is_empty() {
        writeln!(md, "{}\n", summary.description.trim())?;
    }
    if !summary.source.is_empty() {
        writeln!(md, "Source: {}\n", summary.source.trim())?;
    }
    let seeds: Vec<String> = summary.seeds.iter().map(u64::to_string).collect();
    writeln!(
        md,
        "Scenario file `{}`, backend `{}`, seeds {}. Values are means over seeds; ranges are min to max.\n",
        summary.file,
        summary.backend,
        seeds.join(", ")
    )?;
    provenance_section(&mut md, &summary)?;

    // Two steps a variant: its plots for report.md, then its series for report.html.
    let bar = progress_bar(2 * summary.variants.len() as u64);
    crate::tables::markdown(&mut md, &summary)?;
    checks_section(&mut md, &summary)?;
    orders_section(&mut md, &summary)?;
    custom_plots(&mut md, &summary, dir)?;
    metrics_section(&mut md, &summary)?;
    plots_section(&mut md, &summary, dir, &|name| {
        bar.set_message(format!("report.md: {name}"));
        bar.inc(1);
    })?;

    let path = dir.join("report.md");
    std::fs::write(&path, md)?;
    crate::html::write_html(dir, &summary, &|name| {
        bar.set_message(format!("report.html: {name}"));
        bar.inc(1);
    })?;
    bar.finish_and_clear();
    Ok(path)
}

/// A progress line on the terminal while a report renders (nothing when standard error is
/// not a terminal).
fn progress_bar(steps: u64) -> ProgressBar {
    let bar = ProgressBar::new(steps);
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template("{spinner} report [{pos}/{len}] {wide_bar} {msg}")
            .expect("valid template"),
    );
    bar
}

fn fmt_stats(m: &MetricStats) -> String {
    if m.runs.len() > 1 {
        format!("{:.3} ± {:.3} [{:.3}, {:.3}]", m.mean, m.std, m.min, m.max)
    } else {
        format!("{:.3}", m.mean)
    }
}

pub(crate) fn expectation(c: &Check) -> String {
    let mut parts = Vec::new();
    if let Some(p) = c.published {
        parts.push(format!("{p} {}", c.tolerance.clone().unwrap_or_default()));
    }
    if let Some(m) = c.min {
        parts.push(format!(">= {m}"));
    }
    if let Some(m) = c.max {
        parts.push(format!("<= {m}"));
    }
    parts.join(", ")
}

/// How the results were made, as a two-column table.
fn provenance_section(md: &mut String, s: &Summary) -> Result<()> {
    writeln!(md, "## How these results were made\n\n| | |\n| --- | --- |")?;
    for (what, value) in crate::provenance::lines(s) {
        writeln!(md, "| {what} | `{}` |", value.replace('|', "\\|"))?;
    }
    writeln!(md)?;
    Ok(())
}

fn checks_section(md: &mut String, s: &Summary) -> Result<()> {
    let checks: Vec<_> = s.checks().collect();
    if checks.is_empty() {
        return Ok(());
    }
    let passed = checks.iter().filter(|(_, c)| c.pass).count();
    writeln!(
        md,
        "## Against the published figures and expected bounds\n\n{passed} of {} checks pass.\n",
        checks.len()
    )?;
    writeln!(
        md,
        "| variant | metric | ours | expected | pass | source |\n| --- | --- | --- | --- | --- | --- |"
    )?;
    for (v, c) in checks {
        let metric = match &c.over {
            Some(o) => format!("`{}` / `{o}`", c.metric),
            None => format!("`{}`", c.metric),
        };
        let ours = match (c.over.is_none(), c.ours) {
            (true, Some(_)) => v.metrics.get(&c.metric).map(fmt_stats).unwrap_or_default(),
            (false, Some(o)) => format!("{o:.3}"),
            (_, None) => c.absent_text(),
        };
        writeln!(
            md,
            "| {} | {metric} | {ours} | {} | {} | {} |",
            v.name,
            expectation(c),
            if c.pass { "yes" } else { "**no**" },
            c.source
        )?;
    }
    writeln!(md)?;
    Ok(())
}

fn metrics_section(md: &mut String, s: &Summary) -> Result<()> {
    writeln!(md, "## Metrics\n")?;
    let mut names: Vec<&String> = s
        .variants
        .iter()
        .flat_map(|v| v.metrics.keys())
        .filter(|k| {
            Metric::parse(k).is_some_and(|m| matches!(m.entity, Entity::All | Entity::Group(_)))
        })
        .collect();
    names.sort();
    names.dedup();
    writeln!(
        md,
        "| variant | {} |",
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(" | ")
    )?;
    writeln!(md, "| --- |{}", " --- |".repeat(names.len()))?;
    for v in &s.variants {
        let cells: Vec<String> = names
            .iter()
            .map(|n| v.metrics.get(*n).map(fmt_stats).unwrap_or_default())
            .collect();
        writeln!(md, "| {} | {} |", v.name, cells.join(" | "))?;
    }
    writeln!(md)?;
    let mut links: Vec<Entity> = s
        .variants
        .iter()
        .flat_map(|v| v.metrics.keys())
        .filter_map(|k| Metric::parse(k))
        .filter(|m| matches!(m.entity, Entity::Link(..)) && m.quantity == Quantity::Utilisation)
        .map(|m| m.entity)
        .collect();
    links.sort();
    links.dedup();
    if !links.is_empty() {
        writeln!(
            md,
            "Link utilisation (bytes on the wire over capacity, after warm-up) and drops:\n"
        )?;
        writeln!(
            md,
            "| variant | link | utilisation | drops | mean queue (pkts) |\n| --- | --- | --- | --- | --- |"
        )?;
        for v in &s.variants {
            for l in &links {
                let get = |q| {
                    v.metrics
                        .get(&Metric::new(l.clone(), q).to_string())
                        .map(fmt_stats)
                        .unwrap_or_default()
                };
                let Entity::Link(name, _) = l else {
                    continue;
                };
                let side = l.to_string();
                let side = side.rsplit('.').next().unwrap_or_default();
                writeln!(
                    md,
                    "| {} | `{name}.{side}` | {} | {} | {} |",
                    v.name,
                    get(Quantity::Utilisation),
                    get(Quantity::Drops),
                    get(Quantity::MeanQueuePkts)
                )?;
            }
        }
        writeln!(md)?;
    }
    Ok(())
}

fn plots_section(
    md: &mut String,
    s: &Summary,
    dir: &Path,
    each_variant: &dyn Fn(&str),
) -> Result<()> {
    writeln!(md, "## Plots\n")?;
    let panels = crate::published::panels(s);
    if crate::published::draw(
        &dir.join("published"),
        &format!("{}: ours against the published figures", s.scenario),
        &panels,
    )? {
        writeln!(
            md,
            "One panel per metric, the variants grouped by their parameters: the published \
             figure as a black bar in its shaded tolerance band, ours as a dot with the range \
             over seeds (red: outside the tolerance).\n\n\
             ![ours against the published figures](published.png) ([svg](published.svg))\n"
        )?;
    }
    let shaded = crate::outages::spans(&s.outages);
    for v in &s.variants {
        each_variant(&v.name);
        let Some(seed) = s.seeds.first() else {
            continue;
        };
        let csv = dir.join(&v.dir).join(format!("series-seed{seed}.csv"));
        if !csv.exists() {
            continue;
        }
        let series = read_series(&csv)?;
        writeln!(md, "### {}\n", v.name)?;
        let pick = |name: &str, prefix: &str, strip: &str| -> Vec<Line> {
            series
                .iter()
                .filter(|x| x.name == name && x.entity.starts_with(prefix))
                .take(MAX_TRACES)
                .map(|x| Line {
                    label: x.entity.trim_start_matches(strip).to_string(),
                    points: points(x),
                    ..Line::default()
                })
                .collect()
        };
        let vdir = dir.join(&v.dir);
        let groups = pick("goodput_mbps", "group.", "group.");
        if !groups.is_empty() {
            let y = crate::names::series("goodput_mbps");
            line_chart(
                &vdir.join("goodput"),
                &format!("Goodput per flow group, {}", v.name),
                &Axes {
                    shaded: &shaded,
                    ..Axes::new("time (s)", &y)
                },
                &groups,
            )?;
            writeln!(
                md,
                "![goodput]({0}/goodput.png) ([svg]({0}/goodput.svg))\n",
                v.dir
            )?;
        }
        let cwnd = pick("cwnd_pkts", "flow.", "flow.");
        if !cwnd.is_empty() {
            let y = crate::names::series("cwnd_pkts");
            line_chart(
                &vdir.join("cwnd"),
                &format!("Congestion window, {}", v.name),
                &Axes {
                    shaded: &shaded,
                    ..Axes::new("time (s)", &y)
                },
                &cwnd,
            )?;
            writeln!(md, "![cwnd]({0}/cwnd.png) ([svg]({0}/cwnd.svg))\n", v.dir)?;
        }
    }
    Ok(())
}

fn points(x: &Series) -> Vec<(f64, f64)> {
    x.times_s
        .iter()
        .copied()
        .zip(x.values.iter().copied())
        .collect()
}

fn orders_section(md: &mut String, s: &Summary) -> Result<()> {
    if s.orders.is_empty() {
        return Ok(());
    }
    let count = |v: Verdict| s.orders.iter().filter(|o| o.verdict() == v).count();
    writeln!(
        md,
        "## What must hold

{} of {} orderings hold, {} fail, {} are inconclusive. Each lists the variants from the smallest expected value to the largest, with our means and their standard deviations over seeds. {}
",
        count(Verdict::Holds),
        s.orders.len(),
        count(Verdict::Fails),
        count(Verdict::Inconclusive),
        crate::verdict::RULE,
    )?;
    writeln!(
        md,
        "| statement | under | ours, in claimed order | holds |\n| --- | --- | --- | --- |"
    )?;
    for o in &s.orders {
        let metric = match &o.over {
            Some(d) => format!("`{}` / `{d}`", o.metric),
            None => format!("`{}`", o.metric),
        };
        writeln!(
            md,
            "| {} ({metric}) | {} | {} | {} |",
            o.statement,
            if o.context.is_empty() {
                "all"
            } else {
                &o.context
            },
            o.values_text(),
            match o.verdict() {
                Verdict::Holds => o.verdict_text(),
                _ => format!("**{}**", o.verdict_text()),
            }
        )?;
    }
    writeln!(md)?;
    failures_explained(md, s)
}

/// Each ordering that fails somewhere, once, with the scenario's reading of why.
fn failures_explained(md: &mut String, s: &Summary) -> Result<()> {
    let mut failed: Vec<&OrderCheck> = Vec::new();
    for o in s.orders.iter().filter(|o| o.verdict() == Verdict::Fails) {
        if !failed.iter().any(|f| f.statement == o.statement) {
            failed.push(o);
        }
    }
    if failed.is_empty() {
        return Ok(());
    }
    writeln!(md, "Where an ordering does not hold:\n")?;
    for o in failed {
        let points: Vec<&str> = s
            .orders
            .iter()
            .filter(|x| x.verdict() == Verdict::Fails && x.statement == o.statement)
            .map(|x| {
                if x.context.is_empty() {
                    "all"
                } else {
                    x.context.as_str()
                }
            })
            .collect();
        let why = o
            .if_fails
            .as_deref()
            .unwrap_or("the scenario gives no explanation.");
        writeln!(md, "- {} (under {}): {why}", o.statement, points.join("; "))?;
    }
    writeln!(md)?;
    Ok(())
}

/// A parameter value as a number for a sweep's x axis: numbers as they are, sizes in MB,
/// durations in seconds.
pub(crate) fn numeric(v: &serde_json::Value) -> Option<f64> {
    match v {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(t) => t
            .parse()
            .ok()
            .or_else(|| Size::parse(t).ok().map(|s| s.bytes(1500) as f64 / 1e6))
            .or_else(|| Duration::parse(t).ok().map(Duration::secs)),
        _ => None,
    }
}

/// The palette's grey, for a line that belongs to no other (a shared baseline).
pub(crate) const GREY: usize = 7;

/// A sweep's x axis: its label with the unit the values are read in, and whether it is
/// logarithmic (sizes spanning at least a decade, as buffer sweeps do).
pub(crate) struct SweepAxis {
    pub label: String,
    pub log: bool,
}

pub(crate) fn sweep_axis(s: &Summary, x: &str) -> SweepAxis {
    let texts: Vec<&str> = s
        .variants
        .iter()
        .filter_map(|v| v.params.get(x)?.as_str())
        .filter(|t| t.parse::<f64>().is_err())
        .collect();
    let sizes = !texts.is_empty() && texts.iter().any(|t| Size::parse(t).is_ok());
    let durations = !texts.is_empty() && texts.iter().all(|t| Duration::parse(t).is_ok());
    let xs: Vec<f64> = s
        .variants
        .iter()
        .filter_map(|v| v.params.get(x).and_then(numeric))
        .collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(*x), b.max(*x)));
    let label = if sizes {
        format!("{x} (MB)")
    } else if durations {
        format!("{x} (s)")
    } else {
        x.to_string()
    };
    SweepAxis {
        label,
        log: sizes && lo > 0.0 && hi / lo >= 10.0,
    }
}

pub(crate) fn display(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(t) => t.clone(),
        serde_json::Value::Object(o) => o
            .get("name")
            .or_else(|| o.get("kind"))
            .map(display)
            .unwrap_or_else(|| v.to_string()),
        other => other.to_string(),
    }
}

/// Points of a line over a parameter: (x, mean, standard deviation over seeds).
pub(crate) type Points = Vec<(f64, f64, f64)>;

/// What a sweep figure draws, from its `[[plot]] kind = "sweep"` fields.
pub(crate) struct SweepSpec<'a> {
    pub metric: &'a str,
    pub x: &'a str,
    pub by: Option<&'a str>,
    pub scale: f64,
    pub rule_x: Option<&'a str>,
    pub baseline: Option<&'a str>,
}

/// One line of a sweep: its points (x, mean, standard deviation over seeds), those of them
/// that are a rule's (their x from `rule_x`, with the parameter's value: `1rule`), and the
/// baseline metric over the same variants (numeric x only: a rule gives the baseline's
/// connection a buffer of its own).
pub(crate) struct SweepLine {
    pub label: String,
    pub points: Points,
    pub rules: Vec<((f64, f64, f64), String)>,
    pub baseline: Points,
}

/// A sweep's lines: one per value of `by` (labelled `by=value`), or one labelled with the
/// metric in words; scaled, sorted by x. Variants whose `x` is not a number or a size are
/// left out, unless `rule_x` places them.
pub(crate) fn sweep_lines(s: &Summary, spec: &SweepSpec<'_>) -> Vec<SweepLine> {
    let mut groups: Vec<SweepLine> = Vec::new();
    let stat = |v: &VariantSummary, m: &str| {
        v.metrics
            .get(m)
            .map(|m| (m.mean * spec.scale, m.std * spec.scale))
    };
    for v in &s.variants {
        let Some(value) = v.params.get(spec.x) else {
            continue;
        };
        let fixed = numeric(value);
        let rule = || v.metrics.get(spec.rule_x?).map(|m| m.mean);
        let (Some(xv), Some((mean, std))) = (fixed.or_else(rule), stat(v, spec.metric)) else {
            continue;
        };
        let key = match spec.by.and_then(|b| v.params.get(b)) {
            Some(b) => format!("{}={}", spec.by.unwrap_or_default(), display(b)),
            None => crate::names::metric(spec.metric),
        };
        let at = match groups.iter().position(|l| l.label == key) {
            Some(at) => at,
            None => {
                groups.push(SweepLine {
                    label: key,
                    points: Vec::new(),
                    rules: Vec::new(),
                    baseline: Vec::new(),
                });
                groups.len() - 1
            }
        };
        let line = &mut groups[at];
        line.points.push((xv, mean, std));
        if fixed.is_none() {
            line.rules.push(((xv, mean, std), display(value)));
        } else if let Some((b, b_std)) = spec.baseline.and_then(|b| stat(v, b)) {
            line.baseline.push((xv, b, b_std));
        }
    }
    let mut lines = groups;
    for l in &mut lines {
        l.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        l.baseline.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    lines
}

/// A sweep figure's lines and its baseline's name in the legend; None for another kind of
/// figure, or a sweep with nothing to draw.
pub(crate) fn sweep_of(s: &Summary, plot: &PlotSpec) -> Option<(Vec<SweepLine>, Option<String>)> {
    let PlotSpec::Sweep {
        metric,
        x,
        lines: by,
        scale,
        rule_x,
        baseline,
        baseline_label,
        ..
    } = plot
    else {
        return None;
    };
    let spec = SweepSpec {
        metric,
        x,
        by: by.as_deref(),
        scale: *scale,
        rule_x: rule_x.as_deref(),
        baseline: baseline.as_deref(),
    };
    let lines = sweep_lines(s, &spec);
    let name = baseline_label
        .clone()
        .or_else(|| baseline.as_deref().map(crate::names::metric));
    (!lines.is_empty()).then_some((lines, name))
}

/// The baseline's points when every line has the same (a baseline that does not depend on
/// the parameter the lines split by, drawn once rather than once a line).
pub(crate) fn shared_baseline(lines: &[SweepLine]) -> Option<&Points> {
    let first = &lines.first()?.baseline;
    (lines.len() > 1 && !first.is_empty() && lines.iter().all(|l| l.baseline == *first))
        .then_some(first)
}

/// What a sweep's rule points and baseline are, in words for under the figure: the rule's
/// buffer for each line, and the baseline's name.
pub(crate) fn sweep_note(lines: &[SweepLine], x: &str, baseline: Option<&str>) -> String {
    let mut note = String::new();
    let rules: Vec<String> = lines
        .iter()
        .flat_map(|l| {
            l.rules
                .iter()
                .map(move |((xv, _, _), _)| format!("{} {xv:.3}", l.label))
        })
        .collect();
    if !rules.is_empty() {
        let mut names: Vec<&str> = lines
            .iter()
            .flat_map(|l| l.rules.iter().map(|r| r.1.as_str()))
            .collect();
        names.sort();
        names.dedup();
        note += &format!(
            " The large markers on the lines, with a dotted vertical line each, are the variants whose `{x}` is {} (placed at what it gave, in the axis's unit: {}).",
            names.join(", "),
            rules.join("; ")
        );
    }
    if let Some(b) = baseline
        && lines.iter().any(|l| !l.baseline.is_empty())
    {
        note += &match shared_baseline(lines) {
            Some(_) => format!(
                " Dashed grey: {b}, given the same `{x}` (the same in every line's variants, drawn once)."
            ),
            None => format!(" Dashed, in each line's colour: {b}, given the same `{x}`."),
        };
    }
    note
}

/// The figures the scenario file asks for.
/// More lines than this in one time-series figure, over two or more parameters, and the
/// figure gets one panel per value of one of them.
const MAX_LINES: usize = 4;

/// The parameter a time-series figure is split by, one panel per value: with more than
/// `MAX_LINES` variants and two or more parameters varying, the one with the most values
/// (E5.5's four algorithms, each panel with its two loads).
pub(crate) fn panel_param(s: &Summary) -> Option<String> {
    if s.variants.len() <= MAX_LINES {
        return None;
    }
    let mut counts: Vec<(String, usize)> = Vec::new();
    for key in s.variants.iter().flat_map(|v| v.params.keys()) {
        if counts.iter().any(|(k, _)| k == key) {
            continue;
        }
        let mut values: Vec<String> = s
            .variants
            .iter()
            .filter_map(|v| v.params.get(key).map(display))
            .collect();
        values.sort();
        values.dedup();
        counts.push((key.clone(), values.len()));
    }
    let varying: Vec<&(String, usize)> = counts.iter().filter(|c| c.1 > 1).collect();
    if varying.len() < 2 {
        return None;
    }
    varying.iter().max_by_key(|c| c.1).map(|c| c.0.clone())
}

/// A variant's panel (`param=value`, or all in one) and its name within the panel (its
/// other parameters).
pub(crate) fn panel_of(v: &VariantSummary, param: Option<&str>) -> (String, String) {
    let Some(param) = param else {
        return (String::new(), v.name.clone());
    };
    let panel = format!(
        "{param}={}",
        v.params.get(param).map(display).unwrap_or_default()
    );
    let prefix = format!("{param}=");
    let rest: Vec<&str> = v
        .name
        .split(',')
        .filter(|p| !p.starts_with(&prefix))
        .collect();
    (panel, rest.join(","))
}

/// What the shading in time series is: the links down, and when.
pub(crate) fn outage_note(s: &Summary) -> String {
    if s.outages.is_empty() {
        return String::new();
    }
    let spans: Vec<String> = s
        .outages
        .iter()
        .map(|o| format!("{} down {} to {} s", o.link, o.from_s, o.to_s))
        .collect();
    format!(" Shaded: {}.", spans.join("; "))
}

fn custom_plots(md: &mut String, s: &Summary, dir: &Path) -> Result<()> {
    for (i, plot) in s.plots.iter().enumerate() {
        let stem = format!("figure{}", i + 1);
        match plot {
            PlotSpec::Series {
                title,
                series,
                entities,
                mark,
            } => {
                let Some(seed) = s.seeds.first() else {
                    continue;
                };
                let split = panel_param(s);
                let mut panels: Vec<(String, Vec<Line>)> = Vec::new();
                for v in &s.variants {
                    let csv = dir.join(&v.dir).join(format!("series-seed{seed}.csv"));
                    if !csv.exists() {
                        continue;
                    }
                    let (panel, name) = panel_of(v, split.as_deref());
                    for x in read_series(&csv)?
                        .iter()
                        .filter(|x| &x.name == series && entities.contains(&x.entity))
                    {
                        let pts = points(x);
                        let marks = mark
                            .as_ref()
                            .and_then(|m| v.metrics.get(m))
                            .and_then(|m| m.at_seed(&s.seeds, *seed))
                            .and_then(|t| pts.iter().find(|p| p.0 >= t).copied())
                            .into_iter()
                            .collect();
                        let label = if entities.len() > 1 {
                            format!("{name} {}", x.entity)
                        } else {
                            name.clone()
                        };
                        let line = Line {
                            label,
                            points: pts,
                            marks,
                            ..Line::default()
                        };
                        match panels.iter_mut().find(|p| p.0 == panel) {
                            Some(p) => p.1.push(line),
                            None => panels.push((panel.clone(), vec![line])),
                        }
                    }
                }
                if panels.is_empty() {
                    continue;
                }
                let shaded = crate::outages::spans(&s.outages);
                let y = crate::names::series(series);
                let axes = Axes {
                    shaded: &shaded,
                    ..Axes::new("time (s)", &y)
                };
                match (&split, panels.as_slice()) {
                    (None, [(_, lines)]) => line_chart(&dir.join(&stem), title, &axes, lines)?,
                    _ => panel_chart(&dir.join(&stem), title, &axes, &panels)?,
                }
                let mut note = if mark.is_some() {
                    " Circles mark each line's convergence instant (first seed).".to_string()
                } else {
                    String::new()
                };
                note += &outage_note(s);
                if let Some(k) = &split {
                    note += &format!(" One panel per `{k}`.");
                }
                writeln!(
                    md,
                    "## {title}\n\nFirst seed of each variant.{note}\n\n![{title}]({stem}.png) ([svg]({stem}.svg))\n"
                )?;
            }
            PlotSpec::Panels {
                title,
                x,
                panels,
                baseline,
                metrics,
                band,
                scale,
                x_label,
                y_label,
            } => {
                let spec = crate::panels::PanelSpec {
                    title,
                    x,
                    panels,
                    baseline: baseline.as_ref().map(scenario::load::display_value),
                    metrics,
                    band: band.as_deref(),
                    scale: *scale,
                    x_label: x_label.as_deref().unwrap_or(x),
                    y_label: y_label.as_deref().unwrap_or(&metrics[0]),
                };
                if !crate::panels::draw(&dir.join(&stem), s, &spec, display, numeric)? {
                    continue;
                }
                let band_note = match band {
                    Some(b) => format!(" The shading is `{b}` either side."),
                    None => String::new(),
                };
                writeln!(
                    md,
                    "## {title}\n\nMeans over seeds; one panel per `{panels}`, the baseline solid and the panel's own value dashed.{band_note}\n\n![{title}]({stem}.png) ([svg]({stem}.svg))\n"
                )?;
            }
            PlotSpec::Sweep {
                title,
                metric,
                x,
                y_label,
                ..
            } => {
                let Some((sweep, baseline_name)) = sweep_of(s, plot) else {
                    continue;
                };
                let shared = shared_baseline(&sweep);
                let mut lines: Vec<Line> = Vec::new();
                if let (Some(name), Some(pts)) = (&baseline_name, shared) {
                    lines.push(Line {
                        label: name.clone(),
                        points: pts.iter().map(|p| (p.0, p.1)).collect(),
                        color: Some(GREY),
                        dashed: true,
                        ..Line::default()
                    });
                }
                for (i, l) in sweep.iter().enumerate() {
                    let pts: Vec<(f64, f64)> = l.points.iter().map(|p| (p.0, p.1)).collect();
                    lines.push(Line {
                        label: l.label.clone(),
                        marks: pts.clone(),
                        points: pts,
                        rules: l.rules.iter().map(|r| (r.0.0, r.0.1)).collect(),
                        color: Some(i),
                        dashed: false,
                    });
                    if let (Some(name), false, None) =
                        (&baseline_name, l.baseline.is_empty(), shared)
                    {
                        lines.push(Line {
                            label: format!("{name}, {}", l.label),
                            points: l.baseline.iter().map(|p| (p.0, p.1)).collect(),
                            color: Some(i),
                            dashed: true,
                            ..Line::default()
                        });
                    }
                }
                let y = y_label
                    .clone()
                    .unwrap_or_else(|| crate::names::metric(metric));
                let axis = sweep_axis(s, x);
                let axes = Axes {
                    log_x: axis.log,
                    ..Axes::new(&axis.label, &y)
                };
                line_chart(&dir.join(&stem), title, &axes, &lines)?;
                let note = sweep_note(&sweep, x, baseline_name.as_deref());
                writeln!(
                    md,
                    "## {title}\n\nMeans over seeds; variants whose `{x}` is not a number or a size are left out unless placed by a metric.{note}\n\n![{title}]({stem}.png) ([svg]({stem}.svg))\n"
                )?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::summary_of;

    /// E4's shape: buffers 1 MB and 4 MB and the rule, for two RTT differences; a TCP
    /// baseline that is the same in both.
    fn sweep_summary(tcp_differs: bool) -> Summary {
        let mut s = summary_of("sim", Default::default());
        let template = s.variants.pop().expect("one variant");
        for (diff, rule_mb) in [("10ms", 1.0), ("500ms", 25.5)] {
            for (buffer, goodput) in [("1MB", 20.0), ("4MB", 60.0), ("1rule", 160.0)] {
                let mut v = template.clone();
                v.name = format!("buffer={buffer},rtt_diff={diff}");
                v.params.insert("buffer".into(), buffer.into());
                v.params.insert("rtt_diff".into(), diff.into());
                let mb = numeric(&buffer.into()).unwrap_or(rule_mb);
                let tcp = if tcp_differs && diff == "500ms" {
                    90.0
                } else {
                    97.0
                };
                for (m, value) in [
                    ("group.mptcp.goodput_mbps", goodput),
                    ("group.mptcp.rcv_buffer_mb", mb),
                    ("group.tcp.goodput_mbps", tcp),
                ] {
                    v.metrics
                        .insert(m.into(), crate::compare::tests::stats(value));
                }
                s.variants.push(v);
            }
        }
        s
    }

    fn spec<'a>(rule_x: Option<&'a str>) -> SweepSpec<'a> {
        SweepSpec {
            metric: "group.mptcp.goodput_mbps",
            x: "buffer",
            by: Some("rtt_diff"),
            scale: 1.0,
            rule_x,
            baseline: Some("group.tcp.goodput_mbps"),
        }
    }

    #[test]
    fn a_rules_variant_is_placed_at_the_buffer_it_gave_and_marked() {
        let s = sweep_summary(false);
        let lines = sweep_lines(&s, &spec(Some("group.mptcp.rcv_buffer_mb")));
        let labels: Vec<&str> = lines.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(labels, ["rtt_diff=10ms", "rtt_diff=500ms"]);
        let slow = &lines[1];
        let xs: Vec<f64> = slow.points.iter().map(|p| p.0).collect();
        assert_eq!(xs, [1.0, 4.0, 25.5]);
        assert_eq!(slow.rules, [((25.5, 160.0, 0.0), "1rule".to_string())]);
        // The baseline only where the buffer is the same for both connections.
        let bx: Vec<f64> = slow.baseline.iter().map(|p| p.0).collect();
        assert_eq!(bx, [1.0, 4.0]);
        assert!(shared_baseline(&lines).is_some());
        let note = sweep_note(&lines, "buffer", Some("TCP"));
        assert!(note.contains("rtt_diff=500ms 25.500"), "{note}");
        assert!(note.contains("drawn once"), "{note}");
    }

    #[test]
    fn without_a_metric_to_place_it_a_rule_is_left_out_and_baselines_that_differ_stay_apart() {
        let s = sweep_summary(true);
        let lines = sweep_lines(&s, &spec(None));
        assert!(
            lines
                .iter()
                .all(|l| l.rules.is_empty() && l.points.len() == 2)
        );
        assert!(shared_baseline(&lines).is_none());
        assert!(sweep_note(&lines, "buffer", Some("TCP")).contains("each line's colour"));
    }
}
