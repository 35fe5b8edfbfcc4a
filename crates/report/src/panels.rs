//! Figures in the layout of a paper's sweep figures: one panel per value of a parameter (the
//! MATCP paper's columns, one per path selector), metrics against the swept parameter, the
//! baseline's lines solid in every panel and the panel's own dashed, an optional band of
//! one standard deviation either side. Written as PNG and SVG.

use crate::plots::{err, palette};
use crate::summary::{Summary, VariantSummary};
use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// What a panel figure draws (the `[[plot]] kind = "panels"` fields).
pub struct PanelSpec<'a> {
    pub title: &'a str,
    pub x: &'a str,
    pub panels: &'a str,
    pub baseline: Option<String>,
    pub metrics: &'a [String],
    pub band: Option<&'a str>,
    pub scale: f64,
    pub x_label: &'a str,
    pub y_label: &'a str,
}

struct PanelLine {
    label: String,
    /// (x, y, band half-width); the band is 0 without one.
    points: Vec<(f64, f64, f64)>,
    dashed: bool,
    color: usize,
}

struct Panel {
    title: String,
    lines: Vec<PanelLine>,
}

/// The short name of a metric's entity for a legend: `link.uplink1.ab.goodput_share` is
/// `uplink1`, `all.goodput_mbps_per_flow` is `all`.
fn legend_name(metric: &str) -> String {
    if let Some(name) = metric.strip_prefix(scenario::derived::DERIVED_PREFIX) {
        return name.to_string();
    }
    let parts: Vec<&str> = metric.split('.').collect();
    match parts.as_slice() {
        ["link", name, _side, _q] => (*name).to_string(),
        [entity, _q] => (*entity).to_string(),
        [_kind, name, ..] => (*name).to_string(),
        _ => metric.to_string(),
    }
}

/// One line per metric for the variants whose `panels` value is `value`, against `x`.
fn lines_of(
    spec: &PanelSpec<'_>,
    variants: &[&VariantSummary],
    value: &str,
    dashed: bool,
    numeric: impl Fn(&serde_json::Value) -> Option<f64>,
) -> Vec<PanelLine> {
    spec.metrics
        .iter()
        .enumerate()
        .map(|(color, metric)| {
            let mut points: Vec<(f64, f64, f64)> = variants
                .iter()
                .filter_map(|v| {
                    let x = v.params.get(spec.x).and_then(&numeric)?;
                    let y = v.metrics.get(metric)?.mean * spec.scale;
                    let band = spec
                        .band
                        .and_then(|b| v.metrics.get(b))
                        .map_or(0.0, |b| b.mean * spec.scale);
                    Some((x, y, band))
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            PanelLine {
                label: format!("{} ({value})", legend_name(metric)),
                points,
                dashed,
                // One metric: the panel's own line in a colour of its own, so that its band
                // stands apart from the baseline's.
                color: if dashed && spec.metrics.len() == 1 {
                    1
                } else {
                    color
                },
            }
        })
        .collect()
}

/// Builds the panels from the summary and draws them to `<stem>.png` and `.svg`. Returns
/// false when no variant has a number for `x` (nothing drawn).
pub fn draw(
    stem: &Path,
    s: &Summary,
    spec: &PanelSpec<'_>,
    display: impl Fn(&serde_json::Value) -> String,
    numeric: impl Fn(&serde_json::Value) -> Option<f64> + Copy,
) -> Result<bool> {
    // The panel values in the order the variants run.
    let mut by_value: BTreeMap<String, Vec<&VariantSummary>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for v in &s.variants {
        let Some(value) = v.params.get(spec.panels).map(&display) else {
            continue;
        };
        if !order.contains(&value) {
            order.push(value.clone());
        }
        by_value.entry(value).or_default().push(v);
    }
    let baseline = spec
        .baseline
        .as_ref()
        .and_then(|b| by_value.get(b).map(|v| (b, v)));
    let panels: Vec<Panel> = order
        .iter()
        .filter(|value| baseline.is_none_or(|(b, _)| b != *value) || order.len() == 1)
        .map(|value| {
            let mut lines = Vec::new();
            if let Some((b, variants)) = baseline {
                lines.extend(lines_of(spec, variants, b, false, numeric));
            }
            lines.extend(lines_of(
                spec,
                &by_value[value],
                value,
                baseline.is_some(),
                numeric,
            ));
            Panel {
                title: value.clone(),
                lines,
            }
        })
        .collect();
    if panels
        .iter()
        .all(|p| p.lines.iter().all(|l| l.points.is_empty()))
    {
        return Ok(false);
    }
    let size = (380 * panels.len().max(1) as u32, 440);
    let png = stem.with_extension("png");
    let svg = stem.with_extension("svg");
    render(
        BitMapBackend::new(&png, size).into_drawing_area(),
        spec,
        &panels,
    )?;
    render(
        SVGBackend::new(&svg, size).into_drawing_area(),
        spec,
        &panels,
    )?;
    Ok(true)
}

fn render<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    spec: &PanelSpec<'_>,
    panels: &[Panel],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let root = root.titled(spec.title, ("sans-serif", 18)).map_err(err)?;
    let all = || panels.iter().flat_map(|p| &p.lines).flat_map(|l| &l.points);
    let x0 = all().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let x1 = all().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    let y1 = all().map(|p| p.1 + p.2).fold(0.0, f64::max);
    let (x0, x1) = if x1 > x0 {
        (x0, x1)
    } else {
        (x0 - 1.0, x0 + 1.0)
    };
    let y1 = if y1 > 0.0 { y1 * 1.1 } else { 1.0 };
    let whole_x = all().all(|p| p.0.fract() == 0.0);
    let x_tick = |x: &f64| {
        if whole_x {
            format!("{x:.0}")
        } else {
            format!("{x}")
        }
    };
    let areas = root.split_evenly((1, panels.len().max(1)));
    for (area, panel) in areas.iter().zip(panels) {
        let mut chart = ChartBuilder::on(area)
            .caption(&panel.title, ("sans-serif", 16))
            .margin(8)
            .x_label_area_size(36)
            .y_label_area_size(48)
            .build_cartesian_2d(x0..x1, 0.0..y1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(spec.x_label)
            .y_desc(spec.y_label)
            .x_label_formatter(&x_tick)
            .draw()
            .map_err(err)?;
        for line in &panel.lines {
            let color = palette(line.color);
            if line.points.iter().any(|p| p.2 > 0.0) {
                let mut outline: Vec<(f64, f64)> =
                    line.points.iter().map(|p| (p.0, p.1 + p.2)).collect();
                outline.extend(
                    line.points
                        .iter()
                        .rev()
                        .map(|p| (p.0, (p.1 - p.2).max(0.0))),
                );
                let shade = if line.dashed { 0.12 } else { 0.2 };
                chart
                    .draw_series(std::iter::once(Polygon::new(outline, color.mix(shade))))
                    .map_err(err)?;
            }
            let pts: Vec<(f64, f64)> = line.points.iter().map(|p| (p.0, p.1)).collect();
            let style = color.stroke_width(2);
            let drawn = if line.dashed {
                chart
                    .draw_series(DashedLineSeries::new(pts.clone(), 8, 5, style))
                    .map_err(err)?
            } else {
                chart
                    .draw_series(LineSeries::new(pts.clone(), style))
                    .map_err(err)?
            };
            let dashed = line.dashed;
            drawn.label(line.label.clone()).legend(move |(x, y)| {
                let end = if dashed { x + 8 } else { x + 20 };
                PathElement::new(vec![(x, y), (end, y)], color.stroke_width(2))
            });
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(err)?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 11))
            .position(crate::plots::quiet_corner(
                panel
                    .lines
                    .iter()
                    .flat_map(|l| &l.points)
                    .map(|p| (p.0, p.1)),
                |x| (x - x0) / (x1 - x0),
                |y| y / y1,
            ))
            .draw()
            .map_err(err)?;
    }
    root.present().map_err(err)
}

#[cfg(test)]
mod tests {
    use super::legend_name;

    #[test]
    fn legends_name_the_entity() {
        assert_eq!(legend_name("link.uplink1.ab.goodput_share"), "uplink1");
        assert_eq!(legend_name("all.goodput_mbps_per_flow"), "all");
        assert_eq!(legend_name("group.edge1.goodput_mbps"), "edge1");
        assert_eq!(
            legend_name("derived.path_goodput_spread"),
            "path_goodput_spread"
        );
    }
}
