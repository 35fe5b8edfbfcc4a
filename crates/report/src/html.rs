//! `report.html` beside `report.md`: one self-contained page (plotly.js embedded, no network
//! needed) with zoomable time series and a variant picker, the scenario's figures with error
//! bars over seeds, hover values everywhere, and the checks and orderings as tables coloured
//! by pass or fail. Series are decimated for display (at most [`MAX_POINTS`] points a line,
//! each interval's lowest and highest value kept); the full series are linked as CSV.

use crate::markdown::Points;
use crate::names;
use crate::store::read_series;
use crate::summary::{MetricStats, Summary, VariantSummary};
use crate::verdict::Verdict;
use anyhow::Result;
use plotly::color::Rgb;
use plotly::common::{
    DashType, ErrorData, ErrorType, Line, Marker, MarkerSymbol, Mode, Title, Visible,
};
use plotly::layout::update_menu::{Button, ButtonMethod, UpdateMenu, UpdateMenuDirection};
use plotly::layout::{Axis, AxisType, Layout, Shape, ShapeLayer, ShapeLine, ShapeType};
use plotly::{Plot, Scatter};
use scenario::results::Series;
use scenario::spec::PlotSpec;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Points a line keeps at most for display (pairs of lowest and highest per interval).
pub const MAX_POINTS: usize = 400;
/// Lines of one kind a variant draws at most, the busiest (more is unreadable, and heavy).
const MAX_LINES: usize = 12;

/// The page being written: its body, and how many charts it holds.
pub struct Page {
    body: String,
    charts: usize,
}

impl Page {
    pub fn new() -> Self {
        Page {
            body: String::new(),
            charts: 0,
        }
    }

    pub fn push(&mut self, html: &str) {
        self.body.push_str(html);
    }

    pub fn chart(&mut self, plot: &Plot) {
        self.charts += 1;
        let id = format!("chart{}", self.charts);
        let _ = writeln!(
            self.body,
            "<div class=\"chart\">{}</div>",
            plot.to_inline_html(Some(&id))
        );
    }

    /// The whole document; `data-charts` tells a test how many charts to wait for.
    pub fn finish(self, title: &str) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>{}</title>\n\
             <style>{STYLE}</style>\n{}\n</head>\n<body data-charts=\"{}\">\n{}</body></html>\n",
            esc(title),
            plotly_js(),
            self.charts,
            self.body
        )
    }
}

impl Default for Page {
    fn default() -> Self {
        Self::new()
    }
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1200px;margin:1em auto;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:14px}\
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}\
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}\
tr.pass td.verdict,td.pass{background:#d9f2d9}tr.fail td.verdict,td.fail{background:#f8d0d0}\
tr.inconclusive td.verdict,td.inconclusive{background:#fde9b0}\
.pub{color:#666;font-size:12px}.chart{margin:0 0 1.5em}.row{display:flex;flex-wrap:wrap;gap:8px}\
.row .chart{flex:1 1 360px}code{font-size:13px}";

/// plotly.js as the crate embeds it (its MathJax, which the reports do not use, left out).
fn plotly_js() -> String {
    let all = Plot::offline_js_sources();
    match all.find("</script>") {
        Some(end) => all[..end + "</script>".len()].to_string(),
        None => all,
    }
}

/// Text for HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Three decimals: enough for a plot, and a third of the bytes.
fn round(v: f64) -> f64 {
    if v.is_finite() {
        (v * 1000.0).round() / 1000.0
    } else {
        f64::NAN
    }
}

/// At most `max` points: the series cut into `max / 2` intervals, each keeping its lowest
/// and highest point in time order (peaks and troughs survive); gaps (NaN) are kept.
pub fn decimate(times: &[f64], values: &[f64], max: usize) -> (Vec<f64>, Vec<f64>) {
    let n = times.len().min(values.len());
    if n <= max {
        return (
            times[..n].iter().copied().map(round).collect(),
            values[..n].iter().copied().map(round).collect(),
        );
    }
    let buckets = (max / 2).max(1);
    let (mut xs, mut ys) = (Vec::with_capacity(max), Vec::with_capacity(max));
    for b in 0..buckets {
        let (lo, hi) = (
            b * n / buckets,
            ((b + 1) * n / buckets).max(b * n / buckets + 1),
        );
        let range = lo..hi.min(n);
        let finite = range.clone().filter(|&i| values[i].is_finite());
        let min = finite
            .clone()
            .min_by(|&a, &b| values[a].total_cmp(&values[b]));
        let max = finite.max_by(|&a, &b| values[a].total_cmp(&values[b]));
        let mut keep: Vec<usize> = match (min, max) {
            (Some(a), Some(b)) if a != b => vec![a.min(b), a.max(b)],
            (Some(a), _) => vec![a],
            _ => vec![range.start],
        };
        keep.dedup();
        for i in keep {
            xs.push(round(times[i]));
            ys.push(round(values[i]));
        }
    }
    (xs, ys)
}

fn layout(title: &str, x: &str, y: &str) -> Layout {
    Layout::new()
        .title(Title::with_text(title))
        .height(440)
        .x_axis(Axis::new().title(Title::with_text(x)))
        .y_axis(Axis::new().title(Title::with_text(y)))
}

/// A time chart's layout with the links' outages shaded grey behind the lines.
fn time_layout(title: &str, y: &str, outages: &[crate::outages::Outage]) -> Layout {
    let shapes = outages
        .iter()
        .map(|o| {
            Shape::new()
                .shape_type(ShapeType::Rect)
                .x_ref("x")
                .y_ref("paper")
                .x0(o.from_s)
                .x1(o.to_s)
                .y0(0.0)
                .y1(1.0)
                .fill_color("#c8c8c8")
                .opacity(0.4)
                .layer(ShapeLayer::Below)
                .line(ShapeLine::new().width(0.0))
        })
        .collect();
    layout(title, "time (s)", y).shapes(shapes)
}

/// One kind of time series drawn for every variant, one variant shown at a time.
struct Kind {
    title: &'static str,
    series: &'static str,
    prefix: &'static str,
}

const KINDS: &[Kind] = &[
    Kind {
        title: "Goodput per flow group",
        series: "goodput_mbps",
        prefix: "group.",
    },
    Kind {
        title: "Goodput per flow and subflow",
        series: "goodput_mbps",
        prefix: "flow.",
    },
    Kind {
        title: "Congestion window per subflow",
        series: "cwnd_pkts",
        prefix: "flow.",
    },
    Kind {
        title: "Smoothed RTT per subflow",
        series: "rtt_ms",
        prefix: "flow.",
    },
    Kind {
        title: "Queue per link direction",
        series: "queue_pkts",
        prefix: "link.",
    },
];

/// A line of a time series chart: its variant's index, label and points.
struct TraceData {
    variant: usize,
    label: String,
    dashed: bool,
    x: Vec<f64>,
    y: Vec<f64>,
}

/// Writes `report.html` into `dir`; `each_variant` is called once a variant's series are
/// read (for a progress line).
pub fn write_html(dir: &Path, s: &Summary, each_variant: &dyn Fn(&str)) -> Result<PathBuf> {
    let mut page = Page::new();
    header(&mut page, s);
    page.push(&crate::tables::html(s));
    checks_table(&mut page, s);
    published_figure(&mut page, s);
    orders_table(&mut page, s);
    figures(&mut page, s, dir)?;
    let source = Source {
        label: "",
        summary: s,
        dir,
    };
    time_series(&mut page, &[source], each_variant)?;
    metrics_table(&mut page, s);
    let path = dir.join("report.html");
    std::fs::write(&path, page.finish(&s.scenario))?;
    Ok(path)
}

fn header(page: &mut Page, s: &Summary) {
    let seeds: Vec<String> = s.seeds.iter().map(u64::to_string).collect();
    let mut h = format!("<h1>{}</h1>\n", esc(&s.scenario));
    if !s.description.is_empty() {
        let _ = writeln!(h, "<p>{}</p>", esc(s.description.trim()));
    }
    if !s.source.is_empty() {
        let _ = writeln!(h, "<p>Source: {}</p>", esc(s.source.trim()));
    }
    let _ = writeln!(
        h,
        "<p>Scenario file <code>{}</code>, backend <code>{}</code>, seeds {}. Values are means \
         over seeds; ranges are min to max. Charts zoom (drag), reset (double-click) and show \
         values on hover.</p>",
        esc(&s.file),
        esc(&s.backend),
        seeds.join(", ")
    );
    h.push_str("<h2>How these results were made</h2>\n<table class=\"provenance\">\n");
    for (what, value) in crate::provenance::lines(s) {
        let _ = writeln!(
            h,
            "<tr><th>{}</th><td><code>{}</code></td></tr>",
            esc(what),
            esc(&value)
        );
    }
    h.push_str("</table>\n");
    page.push(&h);
}

pub fn fmt_stats(m: &MetricStats) -> String {
    if m.runs.len() > 1 {
        format!("{:.3} ± {:.3} [{:.3}, {:.3}]", m.mean, m.std, m.min, m.max)
    } else {
        format!("{:.3}", m.mean)
    }
}

/// A row class and verdict cell for a pass or a failure.
/// An ordering's row class (its colour: green, red, amber) and its verdict in words.
pub fn order_verdict(o: &crate::summary::OrderCheck) -> (&'static str, String) {
    let class = match o.verdict() {
        Verdict::Holds => "pass",
        Verdict::Fails => "fail",
        Verdict::Inconclusive => "inconclusive",
    };
    (class, o.verdict_text())
}

pub fn verdict(pass: bool) -> (&'static str, &'static str) {
    if pass {
        ("pass", "pass")
    } else {
        ("fail", "FAIL")
    }
}

fn checks_table(page: &mut Page, s: &Summary) {
    let checks: Vec<_> = s.checks().collect();
    if checks.is_empty() {
        return;
    }
    let passed = checks.iter().filter(|(_, c)| c.pass).count();
    let mut h = format!(
        "<h2>Against the published figures and expected bounds</h2>\n<p>{passed} of {} checks \
         pass.</p>\n<table><tr><th>variant</th><th>metric</th><th>ours</th><th>expected</th>\
         <th>pass</th><th>source</th></tr>\n",
        checks.len()
    );
    for (v, c) in checks {
        let metric = match &c.over {
            Some(o) => format!("{} / {}", names::metric(&c.metric), names::metric(o)),
            None => names::metric(&c.metric),
        };
        let ours = match (c.over.is_none(), c.ours) {
            (true, Some(_)) => v.metrics.get(&c.metric).map(fmt_stats).unwrap_or_default(),
            (false, Some(o)) => format!("{o:.3}"),
            (_, None) => c.absent_text(),
        };
        let (class, word) = verdict(c.pass);
        let _ = writeln!(
            h,
            "<tr class=\"{class}\"><td>{}</td><td title=\"{}\">{}</td><td class=\"num\">{}</td>\
             <td>{}</td><td class=\"verdict\">{word}</td><td>{}</td></tr>",
            esc(&v.name),
            esc(&c.metric),
            esc(&metric),
            esc(&ours),
            esc(&crate::markdown::expectation(c)),
            esc(&c.source)
        );
    }
    h.push_str("</table>\n");
    page.push(&h);
}

/// Ours against the published figures: one chart per metric.
fn published_figure(page: &mut Page, s: &Summary) {
    let panels = crate::published::panels(s);
    if panels.is_empty() {
        return;
    }
    page.push(
        "<h2>Ours against the published figures</h2>\n<p>One chart per metric, the variants \
         grouped by their parameters: the published figure with its tolerance as a grey bar, \
         ours (mean, with the range over seeds) blue inside the tolerance and red outside.</p>\n",
    );
    for plot in crate::published::plotly_panels(&panels) {
        page.chart(&plot);
    }
}

fn orders_table(page: &mut Page, s: &Summary) {
    if s.orders.is_empty() {
        return;
    }
    let count = |v: Verdict| s.orders.iter().filter(|o| o.verdict() == v).count();
    let mut h = format!(
        "<h2>What must hold</h2>\n<p>{} of {} orderings hold, {} fail, {} are inconclusive. \
         Each lists the variants from the smallest expected value to the largest, with our \
         means and their standard deviations over seeds. {}</p>\n<table><tr>\
         <th>statement</th><th>metric</th><th>under</th><th>ours, in claimed order</th>\
         <th>holds</th><th>if it fails</th></tr>\n",
        count(Verdict::Holds),
        s.orders.len(),
        count(Verdict::Fails),
        count(Verdict::Inconclusive),
        esc(crate::verdict::RULE),
    );
    for o in &s.orders {
        let (class, word) = order_verdict(o);
        let why = match o.verdict() {
            Verdict::Fails => o.if_fails.as_deref().unwrap_or(""),
            _ => "",
        };
        let _ = writeln!(
            h,
            "<tr class=\"{class}\"><td>{}</td><td title=\"{}\">{}</td><td>{}</td><td>{}</td>\
             <td class=\"verdict\">{word}</td><td>{}</td></tr>",
            esc(&o.statement),
            esc(&o.metric),
            esc(&names::metric(&o.metric)),
            esc(if o.context.is_empty() {
                "all"
            } else {
                &o.context
            }),
            esc(&o.values_text()),
            esc(why)
        );
    }
    h.push_str("</table>\n");
    page.push(&h);
}

fn metrics_table(page: &mut Page, s: &Summary) {
    let mut keys: Vec<&String> = s.variants.iter().flat_map(|v| v.metrics.keys()).collect();
    keys.sort();
    keys.dedup();
    let keys: Vec<&String> = keys
        .into_iter()
        .filter(|k| scenario::metrics::Metric::parse(k).is_some() || k.starts_with("derived."))
        .collect();
    if keys.is_empty() {
        return;
    }
    let mut h = String::from(
        "<h2>Metrics</h2>\n<p>Every metric of every variant: mean ± standard deviation \
         [min, max] over seeds.</p>\n<table><tr><th>metric</th>",
    );
    for v in &s.variants {
        let _ = write!(h, "<th>{}</th>", esc(&v.name));
    }
    h.push_str("</tr>\n");
    for k in keys {
        let _ = write!(
            h,
            "<tr><td title=\"{}\">{}</td>",
            esc(k),
            esc(&names::metric(k))
        );
        for v in &s.variants {
            let cell = v.metrics.get(k).map(fmt_stats).unwrap_or_default();
            let _ = write!(h, "<td class=\"num\">{}</td>", esc(&cell));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
    page.push(&h);
}

/// The first seed's series of a variant, if written.
fn first_series(s: &Summary, v: &VariantSummary, dir: &Path) -> Result<Option<Vec<Series>>> {
    let Some(seed) = s.seeds.first() else {
        return Ok(None);
    };
    let csv = dir.join(&v.dir).join(format!("series-seed{seed}.csv"));
    if !csv.exists() {
        return Ok(None);
    }
    read_series(&csv).map(Some)
}

/// A results folder whose series a page draws: its summary, its folder, and the name its
/// lines carry when there are several (`sim`, `kernel`).
pub struct Source<'a> {
    pub label: &'a str,
    pub summary: &'a Summary,
    pub dir: &'a Path,
}

/// The time series charts: one per kind of series, every variant's lines (of every source,
/// the first solid and the others dashed), one variant shown at a time.
pub fn time_series(
    page: &mut Page,
    sources: &[Source<'_>],
    each_variant: &dyn Fn(&str),
) -> Result<()> {
    let Some(first) = sources.first() else {
        return Ok(());
    };
    let mut kinds: Vec<Vec<TraceData>> = KINDS.iter().map(|_| Vec::new()).collect();
    let mut links = Vec::new();
    for (vi, v) in first.summary.variants.iter().enumerate() {
        each_variant(&v.name);
        for (si, src) in sources.iter().enumerate() {
            let Some(v) = src.summary.variants.iter().find(|w| w.name == v.name) else {
                continue;
            };
            let Some(series) = first_series(src.summary, v, src.dir)? else {
                continue;
            };
            let csv: Vec<String> = src
                .summary
                .seeds
                .iter()
                .map(|k| {
                    let path = src.dir.join(&v.dir).join(format!("series-seed{k}.csv"));
                    // Beside the page, relative; from a comparison page elsewhere, absolute.
                    let href = if sources.len() == 1 {
                        format!("{}/series-seed{k}.csv", v.dir)
                    } else {
                        std::fs::canonicalize(&path)
                            .unwrap_or(path)
                            .display()
                            .to_string()
                    };
                    format!("<a href=\"{}\">{k}</a>", esc(&href).replace(' ', "%20"))
                })
                .collect();
            let whose = if sources.len() > 1 {
                format!("{} ", src.label)
            } else {
                String::new()
            };
            links.push(format!(
                "<li>{whose}{}: seeds {}</li>",
                esc(&v.name),
                csv.join(", ")
            ));
            for (kind, traces) in KINDS.iter().zip(&mut kinds) {
                for x in busiest(
                    series
                        .iter()
                        .filter(|x| x.name == kind.series && x.entity.starts_with(kind.prefix)),
                ) {
                    let (xs, ys) = decimate(&x.times_s, &x.values, MAX_POINTS);
                    traces.push(TraceData {
                        variant: vi,
                        label: format!("{whose}{}", x.entity.trim_start_matches("group.")),
                        dashed: si > 0,
                        x: xs,
                        y: ys,
                    });
                }
            }
        }
    }
    if kinds.iter().all(Vec::is_empty) {
        return Ok(());
    }
    page.push(&format!(
        "<h2>Time series</h2>\n<p>First seed of each variant{}; pick the variant in the menu \
         at the top left of each chart. Lines are decimated for display (each interval's \
         lowest and highest value kept), and of more than 12 lines of a kind the 12 with the \
         highest means are drawn; the full series are in the CSV files below.</p>\n",
        if sources.len() > 1 {
            let names: Vec<&str> = sources.iter().map(|s| s.label).collect();
            format!(", {} solid, {} dashed", names[0], names[1..].join(", "))
        } else {
            String::new()
        }
    ));
    for (kind, traces) in KINDS.iter().zip(kinds) {
        if traces.is_empty() {
            continue;
        }
        page.chart(&variant_chart(first.summary, kind, traces));
    }
    page.push(&format!(
        "<h3>Full data (CSV: time_s, series, entity, value)</h3>\n<ul>{}</ul>\n",
        links.join("\n")
    ));
    Ok(())
}

/// At most [`MAX_LINES`] series, those with the highest means when there are more (an
/// idle link's empty queue says less than a busy one's), in their own order.
fn busiest<'a>(all: impl Iterator<Item = &'a Series>) -> Vec<&'a Series> {
    let mut all: Vec<(usize, f64, &Series)> = all
        .enumerate()
        .map(|(i, x)| {
            let finite = x.values.iter().filter(|v| v.is_finite());
            let n = finite.clone().count().max(1) as f64;
            (i, finite.sum::<f64>() / n, x)
        })
        .collect();
    if all.len() > MAX_LINES {
        all.sort_by(|a, b| b.1.total_cmp(&a.1));
        all.truncate(MAX_LINES);
        all.sort_by_key(|a| a.0);
    }
    all.into_iter().map(|(_, _, x)| x).collect()
}

/// A chart with every variant's lines, one variant visible at a time, and a menu to pick.
fn variant_chart(s: &Summary, kind: &Kind, traces: Vec<TraceData>) -> Plot {
    let variants_of = &s.variants;
    let shown = traces[0].variant;
    let variants: Vec<usize> = {
        let mut v: Vec<usize> = traces.iter().map(|t| t.variant).collect();
        v.dedup();
        v
    };
    let mut plot = Plot::new();
    let owners: Vec<usize> = traces.iter().map(|t| t.variant).collect();
    for t in traces {
        plot.add_trace(
            Scatter::new(t.x, t.y)
                .name(t.label)
                .mode(Mode::Lines)
                .line(if t.dashed {
                    Line::new().width(1.5).dash(plotly::common::DashType::Dash)
                } else {
                    Line::new().width(1.5)
                })
                .visible(if t.variant == shown {
                    Visible::True
                } else {
                    Visible::False
                }),
        );
    }
    let buttons: Vec<Button> = variants
        .iter()
        .map(|&vi| {
            let visible: Vec<bool> = owners.iter().map(|&o| o == vi).collect();
            Button::new()
                .label(&variants_of[vi].name)
                .method(ButtonMethod::Restyle)
                .args(serde_json::json!([{ "visible": visible }]))
        })
        .collect();
    let mut layout = time_layout(kind.title, &names::series(kind.series), &s.outages);
    if variants.len() > 1 {
        layout = layout.update_menus(vec![
            UpdateMenu::new()
                .buttons(buttons)
                .direction(UpdateMenuDirection::Down)
                .x(0.0)
                .y(1.18)
                .x_anchor(plotly::common::Anchor::Left)
                .y_anchor(plotly::common::Anchor::Top),
        ]);
    }
    plot.set_layout(layout.margin(plotly::layout::Margin::new().top(90)));
    plot
}

/// A line through `pts` with one standard deviation over seeds as error bars.
fn line_with_errors(label: &str, pts: &Points, dash: bool) -> Box<Scatter<f64, f64>> {
    let line = if dash {
        Line::new().dash(plotly::common::DashType::Dash)
    } else {
        Line::new()
    };
    Scatter::new(
        pts.iter().map(|p| round(p.0)).collect(),
        pts.iter().map(|p| round(p.1)).collect(),
    )
    .name(label)
    .mode(Mode::LinesMarkers)
    .line(line)
    .marker(Marker::new().size(6))
    .error_y(ErrorData::new(ErrorType::Data).array(pts.iter().map(|p| round(p.2)).collect()))
}

/// A palette entry as plotly's colour, so that a line, its rule's marker and its baseline
/// share one.
fn color(i: usize) -> Rgb {
    let c = crate::plots::palette(i);
    Rgb::new(c.0, c.1, c.2)
}

/// A sweep: each line with error bars, its rule's points as large diamonds on a dotted
/// vertical line, and its baseline dashed in the same colour.
fn sweep_chart(
    title: &str,
    s: &Summary,
    x: &str,
    y_label: &Option<String>,
    metric: &str,
    sweep: &[crate::markdown::SweepLine],
    baseline: Option<&str>,
) -> Plot {
    let mut p = Plot::new();
    let top = sweep
        .iter()
        .flat_map(|l| l.points.iter().chain(&l.baseline))
        .map(|p| p.1 + p.2)
        .fold(0.0, f64::max)
        * 1.05;
    let shared = crate::markdown::shared_baseline(sweep);
    if let (Some(name), Some(pts)) = (baseline, shared) {
        let grey = color(crate::markdown::GREY);
        p.add_trace(
            line_with_errors(name, pts, true)
                .line(Line::new().color(grey).dash(DashType::Dash))
                .marker(Marker::new().size(5).color(grey)),
        );
    }
    for (i, l) in sweep.iter().enumerate() {
        p.add_trace(
            line_with_errors(&l.label, &l.points, false)
                .line(Line::new().color(color(i)))
                .marker(Marker::new().size(6).color(color(i)))
                .legend_group(&l.label),
        );
        for ((xv, y, _), name) in &l.rules {
            p.add_trace(
                Scatter::new(vec![round(*xv); 2], vec![0.0, round(top)])
                    .mode(Mode::Lines)
                    .line(Line::new().color(color(i)).dash(DashType::Dot).width(1.0))
                    .show_legend(false)
                    .hover_info(plotly::common::HoverInfo::Skip)
                    .legend_group(&l.label),
            );
            p.add_trace(
                Scatter::new(vec![round(*xv)], vec![round(*y)])
                    .name(format!("{}, {x}={name}, at {:.3}", l.label, xv))
                    .mode(Mode::Markers)
                    .marker(
                        Marker::new()
                            .size(14)
                            .symbol(MarkerSymbol::Diamond)
                            .color(color(i)),
                    )
                    .legend_group(&l.label),
            );
        }
        if let (Some(name), false, None) = (baseline, l.baseline.is_empty(), shared) {
            p.add_trace(
                line_with_errors(&format!("{name}, {}", l.label), &l.baseline, true)
                    .line(Line::new().color(color(i)).dash(DashType::Dash))
                    .marker(Marker::new().size(5).color(color(i)))
                    .legend_group(&l.label),
            );
        }
    }
    let y = y_label.clone().unwrap_or_else(|| names::metric(metric));
    let axis = crate::markdown::sweep_axis(s, x);
    let mut l = layout(title, &axis.label, &y);
    if axis.log {
        l = l.x_axis(
            Axis::new()
                .title(Title::with_text(&axis.label))
                .type_(AxisType::Log),
        );
    }
    p.set_layout(l);
    p
}

/// The figures the scenario asks for (`[[plot]]`), interactive.
fn figures(page: &mut Page, s: &Summary, dir: &Path) -> Result<()> {
    for plot in &s.plots {
        match plot {
            PlotSpec::Series {
                title,
                series,
                entities,
                mark,
            } => {
                let split = crate::markdown::panel_param(s);
                // Per panel: its name, its chart and how many lines it has.
                let mut panels: Vec<(String, Plot, usize)> = Vec::new();
                for v in &s.variants {
                    let Some(all) = first_series(s, v, dir)? else {
                        continue;
                    };
                    let (panel, name) = crate::markdown::panel_of(v, split.as_deref());
                    if !panels.iter().any(|p| p.0 == panel) {
                        panels.push((panel.clone(), Plot::new(), 0));
                    }
                    let Some((_, p, n)) = panels.iter_mut().find(|p| p.0 == panel) else {
                        continue;
                    };
                    for x in all
                        .iter()
                        .filter(|x| &x.name == series && entities.contains(&x.entity))
                    {
                        let label = if entities.len() > 1 {
                            format!("{name} {}", x.entity)
                        } else {
                            name.clone()
                        };
                        let (xs, ys) = decimate(&x.times_s, &x.values, MAX_POINTS);
                        // A line and its convergence marker in one colour.
                        let c = color(*n);
                        *n += 1;
                        p.add_trace(
                            Scatter::new(xs, ys)
                                .name(&label)
                                .mode(Mode::Lines)
                                .line(Line::new().color(c)),
                        );
                        let at = mark
                            .as_ref()
                            .and_then(|m| v.metrics.get(m))
                            .and_then(|m| m.at_seed(&s.seeds, *s.seeds.first()?))
                            .and_then(|t| {
                                x.times_s
                                    .iter()
                                    .zip(&x.values)
                                    .find(|p| *p.0 >= t)
                                    .map(|(t, v)| (*t, *v))
                            });
                        if let Some((t, y)) = at {
                            p.add_trace(
                                Scatter::new(vec![round(t)], vec![round(y)])
                                    .name(format!("{label} converged"))
                                    .mode(Mode::Markers)
                                    .marker(Marker::new().size(12).color(c)),
                            );
                        }
                    }
                }
                panels.retain(|(_, p, _)| !p.data().is_empty());
                if panels.is_empty() {
                    continue;
                }
                page.push(&format!(
                    "<h2>{}</h2>\n<p>First seed of each variant{}{}.{}</p>\n",
                    esc(title),
                    match &split {
                        Some(k) => format!(", one chart per <code>{}</code>", esc(k)),
                        None => String::new(),
                    },
                    if mark.is_some() {
                        "; the large markers are each line's convergence instant"
                    } else {
                        ""
                    },
                    esc(&crate::markdown::outage_note(s)),
                ));
                for (panel, mut p, _) in panels {
                    let heading = if panel.is_empty() {
                        title.clone()
                    } else {
                        format!("{title}: {panel}")
                    };
                    p.set_layout(time_layout(&heading, &names::series(series), &s.outages));
                    page.chart(&p);
                }
            }
            PlotSpec::Sweep {
                title,
                metric,
                x,
                y_label,
                ..
            } => {
                let Some((sweep, baseline_name)) = crate::markdown::sweep_of(s, plot) else {
                    continue;
                };
                let p = sweep_chart(
                    title,
                    s,
                    x,
                    y_label,
                    metric,
                    &sweep,
                    baseline_name.as_deref(),
                );
                page.push(&format!(
                    "<h2>{}</h2>\n<p>Means over seeds, error bars one standard deviation.{}</p>\n",
                    esc(title),
                    esc(&crate::markdown::sweep_note(
                        &sweep,
                        x,
                        baseline_name.as_deref()
                    ))
                ));
                page.chart(&p);
            }
            PlotSpec::Panels {
                title,
                x,
                panels,
                baseline,
                metrics,
                scale,
                x_label,
                y_label,
                ..
            } => {
                let baseline = baseline.as_ref().map(scenario::load::display_value);
                let mut order: Vec<String> = Vec::new();
                for v in &s.variants {
                    if let Some(p) = v.params.get(panels).map(crate::markdown::display)
                        && !order.contains(&p)
                    {
                        order.push(p);
                    }
                }
                let points = |value: &str, metric: &str| -> Points {
                    let mut pts: Points = s
                        .variants
                        .iter()
                        .filter(|v| {
                            v.params
                                .get(panels)
                                .map(crate::markdown::display)
                                .as_deref()
                                == Some(value)
                        })
                        .filter_map(|v| {
                            let xv = v.params.get(x).and_then(crate::markdown::numeric)?;
                            let m = v.metrics.get(metric)?;
                            Some((xv, m.mean * scale, m.std * scale))
                        })
                        .collect();
                    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                    pts
                };
                let mut charts = Vec::new();
                for value in order
                    .iter()
                    .filter(|v| baseline.as_ref() != Some(*v) || order.len() == 1)
                {
                    let mut p = Plot::new();
                    for metric in metrics {
                        if let Some(b) = &baseline {
                            let pts = points(b, metric);
                            if !pts.is_empty() {
                                let label = format!("{} ({b})", names::metric(metric));
                                p.add_trace(line_with_errors(&label, &pts, false));
                            }
                        }
                        let pts = points(value, metric);
                        if !pts.is_empty() {
                            let label = format!("{} ({value})", names::metric(metric));
                            p.add_trace(line_with_errors(&label, &pts, baseline.is_some()));
                        }
                    }
                    if p.data().is_empty() {
                        continue;
                    }
                    let y = y_label
                        .clone()
                        .unwrap_or_else(|| names::metric_quantity(&metrics[0]));
                    p.set_layout(
                        layout(value, x_label.as_deref().unwrap_or(x), &y).show_legend(true),
                    );
                    charts.push(p);
                }
                if charts.is_empty() {
                    continue;
                }
                page.push(&format!(
                    "<h2>{}</h2>\n<p>Means over seeds, error bars one standard deviation; one \
                     panel per <code>{}</code>{}.</p>\n<div class=\"row\">\n",
                    esc(title),
                    esc(panels),
                    if baseline.is_some() {
                        ", the baseline solid and the panel's own value dashed"
                    } else {
                        ""
                    }
                ));
                for c in &charts {
                    page.chart(c);
                }
                page.push("</div>\n");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimation_keeps_the_extremes_and_the_bound() {
        let t: Vec<f64> = (0..10_000).map(f64::from).collect();
        let mut v: Vec<f64> = t.iter().map(|x| (x / 100.0).sin()).collect();
        v[5_000] = 50.0;
        v[7_000] = f64::NAN;
        let (xs, ys) = decimate(&t, &v, MAX_POINTS);
        assert!(xs.len() <= MAX_POINTS && xs.len() == ys.len());
        assert!(ys.contains(&50.0));
        assert!(xs.windows(2).all(|w| w[0] < w[1]));
        let (xs, _) = decimate(&t[..10], &v[..10], MAX_POINTS);
        assert_eq!(xs.len(), 10);
    }

    #[test]
    fn of_many_lines_the_busiest_are_drawn_in_their_order() {
        let series: Vec<Series> = (0..20)
            .map(|i| Series {
                name: "queue_pkts".into(),
                entity: format!("link.l{i}.ab"),
                times_s: vec![0.0, 1.0],
                values: vec![f64::from(i % 7), f64::NAN],
            })
            .collect();
        let kept: Vec<&str> = busiest(series.iter())
            .iter()
            .map(|x| x.entity.as_str())
            .collect();
        assert_eq!(kept.len(), MAX_LINES);
        assert!(!kept.contains(&"link.l0.ab") && !kept.contains(&"link.l7.ab"));
        assert!(
            kept.windows(2)
                .all(|w| w[0] < w[1] || w[0].len() < w[1].len())
        );
        assert_eq!(busiest(series[..3].iter()).len(), 3);
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
