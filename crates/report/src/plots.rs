//! Charts, each written as PNG (for viewing) and SVG (for papers): line charts of series
//! over time, and ours-versus-published bars.

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Points to mark with a circle (e.g. a convergence instant).
    pub marks: Vec<(f64, f64)>,
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

/// Writes `<stem>.png` and `<stem>.svg`.
pub fn line_chart(
    stem: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    lines: &[Line],
) -> Result<()> {
    let png = stem.with_extension("png");
    let svg = stem.with_extension("svg");
    draw_lines(
        BitMapBackend::new(&png, SIZE).into_drawing_area(),
        title,
        x_label,
        y_label,
        lines,
    )?;
    draw_lines(
        SVGBackend::new(&svg, SIZE).into_drawing_area(),
        title,
        x_label,
        y_label,
        lines,
    )
}

pub(crate) fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("plotting: {e:?}")
}

fn draw_lines<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    lines: &[Line],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let finite = lines
        .iter()
        .flat_map(|l| l.points.iter())
        .filter(|p| p.0.is_finite() && p.1.is_finite());
    let (mut x1, mut y1) = (0.0f64, 0.0f64);
    for &(x, y) in finite {
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    let x1 = if x1 > 0.0 { x1 } else { 1.0 };
    let y1 = if y1 > 0.0 { y1 * 1.1 } else { 1.0 };
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x1, 0.0..y1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .draw()
        .map_err(err)?;
    for (i, l) in lines.iter().enumerate() {
        let color = palette(i);
        // Gaps (NaN) split the line rather than drawing through them.
        let mut segment: Vec<(f64, f64)> = Vec::new();
        let mut first = true;
        let flush = |seg: &mut Vec<(f64, f64)>,
                     chart: &mut ChartContext<'_, DB, _>,
                     first: &mut bool|
         -> Result<()> {
            if seg.is_empty() {
                return Ok(());
            }
            let s = chart
                .draw_series(LineSeries::new(seg.drain(..), color.stroke_width(2)))
                .map_err(err)?;
            if *first {
                s.label(l.label.clone()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
                *first = false;
            }
            Ok(())
        };
        for &p in &l.points {
            if p.1.is_finite() {
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
                    .filter(|p| p.0.is_finite() && p.1.is_finite())
                    .map(|&p| Circle::new(p, 6, color.stroke_width(3))),
            )
            .map_err(err)?;
    }
    if lines.len() > 1 {
        legend_and_present(&root, &mut chart)?;
    } else {
        root.present().map_err(err)?;
    }
    Ok(())
}

/// Draws the series' legend in the upper right corner and finishes the drawing.
fn legend_and_present<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    root: &DrawingArea<DB, Shift>,
    chart: &mut ChartContext<'a, DB, CT>,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

/// Which figure of a bar to draw.
type BarValue = fn(&Bar) -> f64;

pub struct Bar {
    pub label: String,
    pub ours: f64,
    /// Spread of ours over seeds (drawn as min-max whisker).
    pub ours_range: (f64, f64),
    pub published: f64,
}

/// Grouped bars: ours (with the seeds' range) beside the published figure.
pub fn published_bars(stem: &Path, title: &str, bars: &[Bar]) -> Result<()> {
    let png = stem.with_extension("png");
    let svg = stem.with_extension("svg");
    let width = (200 + 90 * bars.len() as u32).max(600);
    draw_bars(
        BitMapBackend::new(&png, (width, 480)).into_drawing_area(),
        title,
        bars,
    )?;
    draw_bars(
        SVGBackend::new(&svg, (width, 480)).into_drawing_area(),
        title,
        bars,
    )
}

fn draw_bars<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    bars: &[Bar],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let top = bars
        .iter()
        .map(|b| b.ours_range.1.max(b.published).max(b.ours))
        .fold(0.0, f64::max)
        * 1.15;
    let top = if top > 0.0 { top } else { 1.0 };
    let n = bars.len();
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(90)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..n as f64, 0.0..top)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .draw()
        .map_err(err)?;
    // One label centred under each pair of bars (the mesh's own labels fall on tick
    // positions, not on bars).
    let style = ("sans-serif", 12)
        .into_font()
        .transform(FontTransform::Rotate90);
    for (i, b) in bars.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        root.draw(&Text::new(b.label.clone(), (x + 6, y + 6), style.clone()))
            .map_err(err)?;
    }
    // Two bars per label: ours on the left half, the published figure on the right.
    let sides: [(&str, f64, BarValue); 2] = [
        ("ours (mean of seeds)", 0.1, |b| b.ours),
        ("published", 0.52, |b| b.published),
    ];
    for (k, (label, offset, value)) in sides.into_iter().enumerate() {
        let color = palette(k);
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| {
                Rectangle::new(
                    [
                        (i as f64 + offset, 0.0),
                        (i as f64 + offset + 0.38, value(b)),
                    ],
                    color.filled(),
                )
            }))
            .map_err(err)?
            .label(label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], color.filled()));
    }
    chart
        .draw_series(bars.iter().enumerate().map(|(i, b)| {
            PathElement::new(
                vec![
                    (i as f64 + 0.29, b.ours_range.0),
                    (i as f64 + 0.29, b.ours_range.1),
                ],
                BLACK.stroke_width(2),
            )
        }))
        .map_err(err)?;
    legend_and_present(&root, &mut chart)
}
