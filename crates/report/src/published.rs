//! Ours against the published figures as a figure one can read: one panel per metric, the
//! variants along it grouped by their parameters (the outer parameters' values under the
//! groups, the innermost under each point), the published figure as a bar with its tolerance
//! band shaded, ours as a dot with the seeds' range. Axis labels are the metrics' names in
//! words, with units. As PNG and SVG (plotters) for report.md, and interactive (plotly) for
//! report.html.

use crate::markdown::display;
use crate::names;
use crate::plots::{err, palette};
use crate::summary::{Check, Summary};
use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// One variant's point in a panel.
pub struct Point {
    /// The variant's parameter values, outermost first (the last labels the point).
    pub key: Vec<String>,
    pub ours: f64,
    pub range: (f64, f64),
    pub published: f64,
    /// The published figure's tolerance band (low, high).
    pub band: (f64, f64),
    pub pass: bool,
}

/// One panel: a metric and its points.
pub struct Panel {
    pub metric: String,
    pub points: Vec<Point>,
}

/// The band a check's tolerance allows around its published figure (`±10%`, `±0.5`).
fn band(c: &Check, published: f64) -> (f64, f64) {
    let Some(t) = c.tolerance.as_deref() else {
        return (published, published);
    };
    let t = t.trim_start_matches('±');
    let half = match t.strip_suffix('%') {
        Some(r) => r
            .parse::<f64>()
            .map_or(0.0, |r| r / 100.0 * published.abs()),
        None => t.parse::<f64>().unwrap_or(0.0),
    };
    (published - half, published + half)
}

/// The panels: every metric with a published figure, in the order the checks first name
/// them; the variants in the order they run (so grouped by the outer parameters).
pub fn panels(s: &Summary) -> Vec<Panel> {
    // The parameters that vary, in the variants' order: only these label points.
    let varying: Vec<&String> = s
        .variants
        .first()
        .map(|v| v.params.keys().collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|k| {
            let first = s.variants[0].params.get(*k);
            s.variants.iter().any(|v| v.params.get(*k) != first)
        })
        .collect();
    let order = param_order(s, &varying);
    let mut out: Vec<Panel> = Vec::new();
    for (v, c) in s.checks() {
        let (Some(published), Some(ours), None) = (c.published, c.ours, &c.over) else {
            continue;
        };
        let range = v
            .metrics
            .get(&c.metric)
            .map_or((ours, ours), |m| (m.min, m.max));
        let key: Vec<String> = order
            .iter()
            .filter_map(|k| v.params.get(*k).map(display))
            .collect();
        let point = Point {
            key: if key.is_empty() {
                vec![v.name.clone()]
            } else {
                key
            },
            ours,
            range,
            published,
            band: band(c, published),
            pass: c.pass,
        };
        match out.iter_mut().find(|p| p.metric == c.metric) {
            Some(p) => p.points.push(point),
            None => out.push(Panel {
                metric: c.metric.clone(),
                points: vec![point],
            }),
        }
    }
    out
}

/// The varying parameters, outermost first: the one whose value changes least often along
/// the variants (the matrix's outer loop) first.
fn param_order<'a>(s: &Summary, varying: &[&'a String]) -> Vec<&'a String> {
    let changes = |k: &str| {
        s.variants
            .windows(2)
            .filter(|w| w[0].params.get(k) != w[1].params.get(k))
            .count()
    };
    let mut order = varying.to_vec();
    order.sort_by_key(|k| changes(k));
    order
}

const PANEL_HEIGHT: u32 = 340;
/// Pixels a variant takes along a panel (its label fits in it, cut with an ellipsis if not).
const SLOT: u32 = 96;

/// Writes `<stem>.png` and `<stem>.svg`; false if there is nothing published to compare.
pub fn draw(stem: &Path, title: &str, panels: &[Panel]) -> Result<bool> {
    if panels.is_empty() {
        return Ok(false);
    }
    let most = panels.iter().map(|p| p.points.len()).max().unwrap_or(1) as u32;
    let size = (
        (160 + 70 * most).max(640),
        40 + PANEL_HEIGHT * panels.len() as u32,
    );
    render(
        BitMapBackend::new(&stem.with_extension("png"), size).into_drawing_area(),
        title,
        panels,
    )?;
    render(
        SVGBackend::new(&stem.with_extension("svg"), size).into_drawing_area(),
        title,
        panels,
    )?;
    Ok(true)
}

fn render<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    panels: &[Panel],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let root = root.titled(title, ("sans-serif", 20)).map_err(err)?;
    let areas = root.split_evenly((panels.len(), 1));
    let ours_color = palette(0);
    let band_color = RGBColor(120, 120, 120);
    for (k, (area, panel)) in areas.iter().zip(panels).enumerate() {
        let n = panel.points.len();
        let depth = panel.points.iter().map(|p| p.key.len()).max().unwrap_or(1);
        let top = panel
            .points
            .iter()
            .map(|p| p.range.1.max(p.band.1).max(p.ours))
            .fold(0.0, f64::max)
            * 1.12;
        let top = if top > 0.0 { top } else { 1.0 };
        let mut chart = ChartBuilder::on(area)
            .margin(10)
            .margin_right(20)
            .x_label_area_size(18 + 16 * depth as u32)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..n as f64, 0.0..top)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .light_line_style(TRANSPARENT)
            .y_desc(names::metric(&panel.metric))
            .draw()
            .map_err(err)?;
        // Published: a bar of the figure, its tolerance band shaded behind.
        chart
            .draw_series(panel.points.iter().enumerate().map(|(i, p)| {
                Rectangle::new(
                    [(i as f64 + 0.15, p.band.0), (i as f64 + 0.85, p.band.1)],
                    band_color.mix(0.25).filled(),
                )
            }))
            .map_err(err)?
            .label("published, tolerance shaded")
            .legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 15, y + 5)], band_color.mix(0.4).filled())
            });
        chart
            .draw_series(panel.points.iter().enumerate().map(|(i, p)| {
                PathElement::new(
                    vec![
                        (i as f64 + 0.15, p.published),
                        (i as f64 + 0.85, p.published),
                    ],
                    BLACK.stroke_width(2),
                )
            }))
            .map_err(err)?;
        // Ours: the seeds' range and the mean, red where outside the band.
        chart
            .draw_series(panel.points.iter().enumerate().map(|(i, p)| {
                PathElement::new(
                    vec![(i as f64 + 0.5, p.range.0), (i as f64 + 0.5, p.range.1)],
                    ours_color.stroke_width(2),
                )
            }))
            .map_err(err)?;
        chart
            .draw_series(panel.points.iter().enumerate().map(|(i, p)| {
                let color = if p.pass { ours_color } else { RED };
                Circle::new((i as f64 + 0.5, p.ours), 5, color.filled())
            }))
            .map_err(err)?
            .label("ours (mean; range over seeds); red: outside the tolerance")
            .legend(move |(x, y)| Circle::new((x + 7, y), 5, ours_color.filled()));
        // The labels: the innermost value under each point, the outer values under their
        // groups, a thin line between groups.
        let style = ("sans-serif", 13).into_font();
        // The chart's coordinates are the whole figure's pixels; the area draws in its own.
        let (ox, oy) = area.get_base_pixel();
        let at = |x: f64, y: f64| {
            let (px, py) = chart.backend_coord(&(x, y));
            (px - ox, py - oy)
        };
        for level in 0..depth {
            let inner = level + 1 == depth;
            let mut i = 0;
            while i < n {
                let prefix = &panel.points[i].key[..=level.min(panel.points[i].key.len() - 1)];
                let mut j = i + 1;
                while !inner && j < n && panel.points[j].key.get(..=level) == Some(prefix) {
                    j += 1;
                }
                let label = prefix.last().cloned().unwrap_or_default();
                let mid = (i + j) as f64 / 2.0;
                let (x, y) = at(mid, 0.0);
                let row = (depth - 1 - level) as i32;
                let text = fit(&label, (j - i) as f64 * f64::from(SLOT) - 6.0);
                let w = text.len() as i32 * 7 / 2;
                area.draw(&Text::new(text, (x - w, y + 6 + 16 * row), style.clone()))
                    .map_err(err)?;
                if !inner && i > 0 {
                    let (x0, y0) = at(i as f64, 0.0);
                    let (_, y1) = at(i as f64, top);
                    area.draw(&PathElement::new(
                        vec![(x0, y1), (x0, y0 + 18 * depth as i32)],
                        BLACK.mix(0.3).stroke_width(1),
                    ))
                    .map_err(err)?;
                }
                i = j;
            }
        }
        // One legend, in the first panel.
        if k == 0 {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 12))
                .position(SeriesLabelPosition::LowerRight)
                .draw()
                .map_err(err)?;
        }
    }
    root.present().map_err(err)
}

/// A label cut to fit `width` pixels (about 7 a character at 13 px), with an ellipsis if cut.
fn fit(label: &str, width: f64) -> String {
    let most = ((width / 7.0) as usize).max(3);
    if label.chars().count() <= most {
        label.to_string()
    } else {
        let cut: String = label.chars().take(most - 1).collect();
        format!("{cut}…")
    }
}

/// The same panels for report.html: one chart each, the variants on a grouped (multi-level)
/// axis, the published figure with its tolerance as error bars, ours with the seeds' range.
pub fn plotly_panels(panels: &[Panel]) -> Vec<plotly::Plot> {
    use plotly::common::{ErrorData, ErrorType, Marker, MarkerSymbol, Mode, Title};
    use plotly::layout::{Axis, Layout};
    use plotly::{Plot, Scatter};
    panels
        .iter()
        .map(|panel| {
            let depth = panel.points.iter().map(|p| p.key.len()).max().unwrap_or(1);
            // A multi-level axis (one list per level, outermost first), or plain categories.
            let x: Vec<serde_json::Value> = if depth == 1 {
                panel
                    .points
                    .iter()
                    .map(|p| serde_json::json!(p.key[0]))
                    .collect()
            } else {
                (0..depth)
                    .map(|level| {
                        let level: Vec<String> = panel
                            .points
                            .iter()
                            .map(|p| p.key.get(level).cloned().unwrap_or_default())
                            .collect();
                        serde_json::json!(level)
                    })
                    .collect()
            };
            let mut plot = Plot::new();
            let published: Vec<f64> = panel.points.iter().map(|p| p.published).collect();
            plot.add_trace(
                Scatter::new(x.clone(), published)
                    .name("published (tolerance as bars)")
                    .mode(Mode::Markers)
                    .marker(
                        Marker::new()
                            .symbol(MarkerSymbol::LineEWOpen)
                            .size(30)
                            .color("black")
                            .line(plotly::common::Line::new().width(3.0).color("black")),
                    )
                    .error_y(
                        ErrorData::new(ErrorType::Data)
                            .array(
                                panel
                                    .points
                                    .iter()
                                    .map(|p| p.band.1 - p.published)
                                    .collect(),
                            )
                            .array_minus(
                                panel
                                    .points
                                    .iter()
                                    .map(|p| p.published - p.band.0)
                                    .collect(),
                            )
                            .thickness(10.0)
                            .width(0)
                            .color("rgba(120,120,120,0.35)"),
                    ),
            );
            plot.add_trace(
                Scatter::new(x, panel.points.iter().map(|p| p.ours).collect())
                    .name("ours (mean; range over seeds)")
                    .mode(Mode::Markers)
                    .marker(
                        Marker::new().size(10).color_array(
                            panel
                                .points
                                .iter()
                                .map(|p| if p.pass { "#1f77b4" } else { "#d62728" })
                                .collect(),
                        ),
                    )
                    .error_y(
                        ErrorData::new(ErrorType::Data)
                            .array(panel.points.iter().map(|p| p.range.1 - p.ours).collect())
                            .array_minus(panel.points.iter().map(|p| p.ours - p.range.0).collect()),
                    ),
            );
            plot.set_layout(
                Layout::new()
                    .title(Title::with_text(names::metric(&panel.metric)))
                    .height(380)
                    .y_axis(Axis::new().title(Title::with_text(names::metric(&panel.metric)))),
            );
            plot
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(tolerance: Option<&str>) -> Check {
        Check {
            metric: "group.a.goodput_mbps".into(),
            over: None,
            ours: Some(9.0),
            published: Some(10.0),
            tolerance: tolerance.map(String::from),
            min: None,
            max: None,
            pass: true,
            source: String::new(),
            not_converged: None,
        }
    }

    #[test]
    fn the_band_is_the_published_tolerance() {
        assert_eq!(band(&check(Some("±10%")), 10.0), (9.0, 11.0));
        assert_eq!(band(&check(Some("±0.5")), 10.0), (9.5, 10.5));
        assert_eq!(band(&check(None), 10.0), (10.0, 10.0));
    }

    #[test]
    fn labels_are_cut_to_their_slot() {
        assert_eq!(fit("single-path", 90.0), "single-path");
        assert_eq!(fit("a-very-long-variant-name", 70.0), "a-very-lo…");
    }
}
