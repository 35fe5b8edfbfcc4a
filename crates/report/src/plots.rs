//! Charts, each written as PNG (for viewing) and SVG (for papers): line charts of series
//! over time (ours against the published figures: `published`).

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
