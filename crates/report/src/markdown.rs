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
                    marks: Vec::new(),
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

/// A sweep's lines: one per value of `by` (labelled `by=value`), or one labelled with the
/// metric in words; each point (x, mean, standard deviation) over seeds, scaled, sorted by
/// x. Variants whose `x` is not a number or a size are left out.
pub(crate) fn sweep_lines(
    s: &Summary,
    metric: &str,
    x: &str,
    by: Option<&str>,
    scale: f64,
) -> Vec<(String, Points)> {
    let mut groups: std::collections::BTreeMap<String, Points> = Default::default();
    for v in &s.variants {
        let (Some(xv), Some(m)) = (v.params.get(x).and_then(numeric), v.metrics.get(metric)) else {
            continue;
        };
        let key = match by.and_then(|b| v.params.get(b)) {
            Some(value) => format!("{}={}", by.unwrap_or_default(), display(value)),
            None => crate::names::metric(metric),
        };
        groups
            .entry(key)
            .or_default()
            .push((xv, m.mean * scale, m.std * scale));
    }
    groups
        .into_iter()
        .map(|(label, mut pts)| {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            (label, pts)
        })
        .collect()
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
                lines: by,
                scale,
                y_label,
            } => {
                let lines: Vec<Line> = sweep_lines(s, metric, x, by.as_deref(), *scale)
                    .into_iter()
                    .map(|(label, pts)| {
                        let pts: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
                        Line {
                            label,
                            marks: pts.clone(),
                            points: pts,
                        }
                    })
                    .collect();
                if lines.is_empty() {
                    continue;
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
                writeln!(
                    md,
                    "## {title}\n\nMeans over seeds; variants whose `{x}` is not a number or a size are left out.\n\n![{title}]({stem}.png) ([svg]({stem}.svg))\n"
                )?;
            }
        }
    }
    Ok(())
}
