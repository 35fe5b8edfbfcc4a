//! Charts, each written as PNG (for viewing) and SVG (for papers): line charts of series
//! over time (ours against the published figures: `published`).

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::path::Path;

#[derive(Clone, Debug, Default)]
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Points to mark with a circle (e.g. a convergence instant).
    pub marks: Vec<(f64, f64)>,
    /// Points to mark with a large triangle and a dotted vertical line through the chart
    /// (a rule's point on a sweep).
    pub rules: Vec<(f64, f64)>,
    /// The palette entry to draw in (default: the line's position).
    pub color: Option<usize>,
    /// Dashed (a baseline), and left out of the legend's solid entries.
    pub dashed: bool,
}

const SIZE: (u32, u32) = (900, 480);

pub(crate) fn palette(i: usize) -> RGBColor {
    const C: [RGBColor; 8] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
    ];
    C[i % C.len()]
}

/// What a chart's axes show besides its lines.
#[derive(Clone, Copy, Debug, Default)]
pub struct Axes<'a> {
    pub x_label: &'a str,
    pub y_label: &'a str,
    /// A logarithmic x axis (a sweep over sizes spanning decades).
    pub log_x: bool,
    /// Intervals of x to shade (a link down), drawn behind the lines.
    pub shaded: &'a [(f64, f64)],
}

impl<'a> Axes<'a> {
    pub fn new(x_label: &'a str, y_label: &'a str) -> Self {
        Axes {
            x_label,
            y_label,
            ..Axes::default()
        }
    }
}

/// Writes `<stem>.png` and `<stem>.svg`.
pub fn line_chart(stem: &Path, title: &str, axes: &Axes<'_>, lines: &[Line]) -> Result<()> {
    write_charts(stem, SIZE, None, axes, &[(title, lines)])
}

pub(crate) fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("plotting: {e:?}")
}

/// The axes' ranges from the data, marks included, so that nothing is cut off: y from
/// the lowest value (or 0) to 10 % above the highest; x over the points (from 0 on a linear
/// axis, from the smallest positive x on a logarithmic one).
fn ranges(lines: &[Line], log_x: bool) -> ((f64, f64), (f64, f64)) {
    let finite = lines
        .iter()
        .flat_map(|l| l.points.iter().chain(&l.marks).chain(&l.rules))
        .filter(|p| p.0.is_finite() && p.1.is_finite() && (!log_x || p.0 > 0.0));
    let (mut x0, mut x1) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut y0, mut y1) = (0.0f64, 0.0f64);
    for &(x, y) in finite {
        (x0, x1) = (x0.min(x), x1.max(x));
        (y0, y1) = (y0.min(y), y1.max(y));
    }
    let x = match (log_x, x0 < x1) {
        (true, true) => (x0 / 1.2, x1 * 1.2),
        (true, false) => (1.0, 10.0),
        (false, _) => (0.0, if x1 > 0.0 { x1 } else { 1.0 }),
    };
    let span = y1 - y0;
    let y = if span > 0.0 {
        (
            if y0 < 0.0 { y0 - 0.1 * span } else { 0.0 },
            y1 + 0.1 * span,
        )
    } else {
        (0.0, 1.0)
    };
    (x, y)
}

/// Writes `<stem>.png` and `<stem>.svg` with one panel per entry of `panels` (its title and
/// lines), two across: many lines split by a parameter so that each stays readable.
pub fn panel_chart(
    stem: &Path,
    title: &str,
    axes: &Axes<'_>,
    panels: &[(String, Vec<Line>)],
) -> Result<()> {
    let rows = panels.len().div_ceil(2).max(1) as u32;
    let panels: Vec<(&str, &[Line])> = panels
        .iter()
        .map(|(t, l)| (t.as_str(), l.as_slice()))
        .collect();
    write_charts(stem, (SIZE.0, 60 + rows * 330), Some(title), axes, &panels)
}

/// Both files of a figure of `panels` (one: a plain chart), under `title` if given.
fn write_charts(
    stem: &Path,
    size: (u32, u32),
    title: Option<&str>,
    axes: &Axes<'_>,
    panels: &[(&str, &[Line])],
) -> Result<()> {
    let png = stem.with_extension("png");
    let svg = stem.with_extension("svg");
    let png = BitMapBackend::new(&png, size).into_drawing_area();
    draw_charts(png, title, axes, panels)?;
    draw_charts(
        SVGBackend::new(&svg, size).into_drawing_area(),
        title,
        axes,
        panels,
    )
}

fn draw_charts<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: Option<&str>,
    axes: &Axes<'_>,
    panels: &[(&str, &[Line])],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let inner = match title {
        Some(t) => root.titled(t, ("sans-serif", 22)).map_err(err)?,
        None => root.clone(),
    };
    let cols = if panels.len() > 1 { 2 } else { 1 };
    let rows = panels.len().div_ceil(cols).max(1);
    for (area, (name, lines)) in inner.split_evenly((rows, cols)).iter().zip(panels) {
        draw_on(area, name, axes, lines)?;
    }
    root.present().map_err(err)
}

/// One chart of `lines` in `area`, its axes from the data.
fn draw_on<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    axes: &Axes<'_>,
    lines: &[Line],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let ((x0, x1), (y0, y1)) = ranges(lines, axes.log_x);
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(title, ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60);
    if axes.log_x {
        let chart = builder
            .build_cartesian_2d((x0..x1).log_scale(), y0..y1)
            .map_err(err)?;
        fill(chart, axes, lines, (y0, y1))
    } else {
        let chart = builder.build_cartesian_2d(x0..x1, y0..y1).map_err(err)?;
        fill(chart, axes, lines, (y0, y1))
    }
}

/// Draws the shading, the mesh, the lines and their marks on a chart whose x axis is `X`.
fn fill<'a, DB, X>(
    mut chart: ChartContext<'a, DB, Cartesian2d<X, RangedCoordf64>>,
    axes: &Axes<'_>,
    lines: &[Line],
    (y0, y1): (f64, f64),
) -> Result<()>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    chart
        .draw_series(axes.shaded.iter().map(|&(a, b)| {
            Rectangle::new(
                [(a, y0), (b, y1)],
                RGBColor(200, 200, 200).mix(0.4).filled(),
            )
        }))
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(axes.x_label)
        .y_desc(axes.y_label)
        .draw()
        .map_err(err)?;
    for (i, l) in lines.iter().enumerate() {
        let color = palette(l.color.unwrap_or(i));
        let shown =
            |p: &&(f64, f64)| p.0.is_finite() && p.1.is_finite() && (!axes.log_x || p.0 > 0.0);
        for &(x, _) in l.rules.iter().filter(shown) {
            chart
                .draw_series(DashedLineSeries::new(
                    [(x, y0), (x, y1)],
                    3,
                    4,
                    color.mix(0.7).stroke_width(1),
                ))
                .map_err(err)?;
        }
        // Gaps (NaN) split the line rather than drawing through them.
        let mut segment: Vec<(f64, f64)> = Vec::new();
        let mut first = true;
        let flush = |seg: &mut Vec<(f64, f64)>,
                     chart: &mut ChartContext<'a, DB, Cartesian2d<X, RangedCoordf64>>,
                     first: &mut bool|
         -> Result<()> {
            if seg.is_empty() {
                return Ok(());
            }
            let style = color.stroke_width(2);
            let s = if l.dashed {
                chart
                    .draw_series(DashedLineSeries::new(std::mem::take(seg), 8, 5, style))
                    .map_err(err)?
            } else {
                // A wide line's joins are mitred; at a sharp turn (a sawtooth's drop) the
                // mitre shoots far past the data, so the line is split there.
                let pixels: Vec<(i32, i32)> = seg.iter().map(|p| chart.backend_coord(p)).collect();
                let mut pieces = Vec::new();
                let mut from = 0;
                for at in sharp_turns(&pixels) {
                    pieces.push(seg[from..=at].to_vec());
                    from = at;
                }
                pieces.push(seg[from..].to_vec());
                seg.clear();
                chart
                    .draw_series(pieces.into_iter().map(|p| PathElement::new(p, style)))
                    .map_err(err)?
            };
            if *first {
                let end = if l.dashed { 8 } else { 20 };
                s.label(l.label.clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + end, y)], style));
                *first = false;
            }
            Ok(())
        };
        for &p in &l.points {
            if p.1.is_finite() && (!axes.log_x || p.0 > 0.0) {
                segment.push(p);
            } else {
                flush(&mut segment, &mut chart, &mut first)?;
            }
        }
        flush(&mut segment, &mut chart, &mut first)?;
        chart
            .draw_series(
                l.marks
                    .iter()
                    .filter(shown)
                    .map(|&p| Circle::new(p, 6, color.stroke_width(3))),
            )
            .map_err(err)?;
        chart
            .draw_series(
                l.rules
                    .iter()
                    .filter(shown)
                    .map(|&p| TriangleMarker::new(p, 10, color.filled())),
            )
            .map_err(err)?;
    }
    if lines.len() > 1 {
        let (x0, x1) = (chart.x_range().start, chart.x_range().end);
        let fx = |x: f64| {
            if axes.log_x {
                (x.ln() - x0.ln()) / (x1.ln() - x0.ln())
            } else {
                (x - x0) / (x1 - x0)
            }
        };
        let all = lines
            .iter()
            .flat_map(|l| l.points.iter().chain(&l.rules))
            .copied();
        legend(&mut chart, quiet_corner(all, fx, |y| (y - y0) / (y1 - y0)))?;
    }
    Ok(())
}

/// The points of a polyline (in pixels) at which it turns by more than a right angle, so
/// that a mitred join there would reach beyond the line's width; points that repeat the one
/// before are passed over.
fn sharp_turns(pixels: &[(i32, i32)]) -> Vec<usize> {
    let mut turns = Vec::new();
    let mut last: Option<(i64, i64)> = None;
    for i in 1..pixels.len() {
        let d = (
            i64::from(pixels[i].0 - pixels[i - 1].0),
            i64::from(pixels[i].1 - pixels[i - 1].1),
        );
        if d == (0, 0) {
            continue;
        }
        if let Some(prev) = last
            && prev.0 * d.0 + prev.1 * d.1 < 0
        {
            turns.push(i - 1);
        }
        last = Some(d);
    }
    turns
}

/// Draws the series' legend in the corner with the fewest points under it.
fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    corner: SeriesLabelPosition,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(corner)
        .draw()
        .map_err(err)
}

/// The corner of a chart with the fewest of `points` under it, for the legend: a legend
/// has as many rows as lines, and wherever it is fixed it hides some chart's data. `fx`
/// and `fy` place a point on the chart, 0 to 1 from the lower left.
pub(crate) fn quiet_corner(
    points: impl Iterator<Item = (f64, f64)> + Clone,
    fx: impl Fn(f64) -> f64,
    fy: impl Fn(f64) -> f64,
) -> SeriesLabelPosition {
    let under = |right: bool, upper: bool| {
        points
            .clone()
            .filter(|&(x, y)| {
                let (x, y) = (fx(x), fy(y));
                (if right { x >= 0.55 } else { x <= 0.45 })
                    && (if upper { y >= 0.5 } else { y <= 0.5 })
            })
            .count()
    };
    [
        (SeriesLabelPosition::LowerRight, under(true, false)),
        (SeriesLabelPosition::UpperRight, under(true, true)),
        (SeriesLabelPosition::LowerLeft, under(false, false)),
        (SeriesLabelPosition::UpperLeft, under(false, true)),
    ]
    .into_iter()
    .min_by_key(|&(_, n)| n)
    .map(|(corner, _)| corner)
    .unwrap_or(SeriesLabelPosition::LowerRight)
}

#[cfg(test)]
mod tests {
    use super::sharp_turns;

    #[test]
    fn a_sawtooth_is_split_at_its_peaks_and_troughs_only() {
        // Up gently (y falls in pixels), down at once, up again; a repeated point and a
        // straight run are not turns.
        let tooth = [
            (0, 100),
            (10, 80),
            (20, 60),
            (21, 100),
            (21, 100),
            (30, 80),
            (40, 60),
        ];
        assert_eq!(sharp_turns(&tooth), vec![2, 4]);
        assert!(sharp_turns(&[(0, 0), (5, 0), (10, 1), (15, 3)]).is_empty());
    }
}
