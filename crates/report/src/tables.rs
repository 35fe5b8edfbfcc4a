//! The papers' tables in their own layout (`[[table]]` of the scenario): rows and columns
//! over variant parameters and metrics, each cell our mean over seeds beside the published
//! figure of the `[[expect]]` for the same variant and metric, in Markdown and in HTML.

use crate::html::esc;
use crate::markdown::display;
use crate::names;
use crate::summary::{Summary, VariantSummary};
use scenario::spec::{TableSide, TableSpec};
use std::fmt::Write;

/// One cell: ours (mean, and range over seeds when there are several), the published figure
/// and whether ours lies within its tolerance.
pub struct Cell {
    pub ours: Option<(f64, f64, f64, usize)>,
    pub published: Option<(f64, bool)>,
    /// A convergence time some runs lack: how many did not converge (`ours` is then none).
    pub not_converged: Option<crate::summary::NotConverged>,
}

/// A header line of the table: the labels of its row or column, outermost first.
type Key = Vec<String>;

/// Where a row or column is: its parameters' values, and its metric (on the metrics' side).
type Place = (Vec<(String, String)>, Option<usize>);

/// The table filled in: row keys, column keys, and cells by row then column.
pub struct Filled {
    pub row_heads: Vec<String>,
    pub rows: Vec<Key>,
    pub columns: Vec<Key>,
    pub cells: Vec<Vec<Cell>>,
}

/// The values a parameter takes, in the order the variants run.
fn values_of(s: &Summary, param: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in &s.variants {
        if let Some(x) = v.params.get(param).map(display)
            && !out.contains(&x)
        {
            out.push(x);
        }
    }
    out
}

/// Every combination of the parameters' values, the first parameter outermost; each entry
/// (parameter, value).
fn combinations(s: &Summary, params: &[String]) -> Vec<Vec<(String, String)>> {
    let mut out: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for p in params {
        let values = values_of(s, p);
        out = out
            .into_iter()
            .flat_map(|prefix| {
                values.iter().map(move |v| {
                    let mut next = prefix.clone();
                    next.push((p.clone(), v.clone()));
                    next
                })
            })
            .collect();
    }
    out
}

fn variant<'a>(s: &'a Summary, at: &[(String, String)]) -> Option<&'a VariantSummary> {
    s.variants.iter().find(|v| {
        at.iter()
            .all(|(p, value)| v.params.get(p).map(display).as_deref() == Some(value))
    })
}

fn cell(v: Option<&VariantSummary>, metric: &str) -> Cell {
    let Some(v) = v else {
        return Cell {
            ours: None,
            published: None,
            not_converged: None,
        };
    };
    let not_converged = crate::summary::not_converged(metric, &v.metrics, v.stats.len());
    Cell {
        not_converged,
        ours: v
            .metrics
            .get(metric)
            .filter(|_| not_converged.is_none())
            .map(|m| (m.mean, m.min, m.max, m.runs.len())),
        published: v
            .checks
            .iter()
            .find(|c| c.metric == metric && c.over.is_none() && c.published.is_some())
            .and_then(|c| Some((c.published?, c.pass))),
    }
}

/// Fills `t` from the summary.
pub fn fill(s: &Summary, t: &TableSpec) -> Filled {
    let label = |k: &str| t.labels.get(k).cloned().unwrap_or_else(|| k.to_string());
    let metric_label = |m: &str| t.labels.get(m).cloned().unwrap_or_else(|| names::metric(m));
    let row_combos = combinations(s, &t.rows);
    let col_combos = combinations(s, &t.columns);
    // Keys with the metric innermost on its side: (parameter values, metric index).
    let expand = |combos: &[Vec<(String, String)>], with_metrics: bool| {
        let mut out: Vec<Place> = Vec::new();
        for c in combos {
            if with_metrics {
                out.extend((0..t.metrics.len()).map(|m| (c.clone(), Some(m))));
            } else {
                out.push((c.clone(), None));
            }
        }
        out
    };
    let rows = expand(&row_combos, t.metrics_in == TableSide::Rows);
    let columns = expand(&col_combos, t.metrics_in == TableSide::Columns);
    let key = |(at, m): &Place| -> Key {
        let mut k: Key = at.iter().map(|(_, v)| label(v)).collect();
        if let Some(m) = m {
            k.push(metric_label(&t.metrics[*m]));
        }
        k
    };
    let mut row_heads: Vec<String> = t.rows.iter().map(|r| label(r)).collect();
    if t.metrics_in == TableSide::Rows {
        row_heads.push(label("metric"));
    }
    // A table of one row (no row parameters, metrics across): its row is ours.
    let one_row = row_heads.is_empty();
    if one_row {
        row_heads.push(String::new());
    }
    let cells = rows
        .iter()
        .map(|(r_at, r_m)| {
            columns
                .iter()
                .map(|(c_at, c_m)| {
                    let at: Vec<(String, String)> = r_at.iter().chain(c_at).cloned().collect();
                    let m = r_m.or(*c_m).unwrap_or(0);
                    cell(variant(s, &at), &t.metrics[m])
                })
                .collect()
        })
        .collect();
    Filled {
        row_heads,
        rows: if one_row {
            vec![vec!["ours".to_string()]]
        } else {
            rows.iter().map(key).collect()
        },
        columns: columns.iter().map(key).collect(),
        cells,
    }
}

fn ours_text(c: &Cell) -> String {
    match c.ours {
        Some((mean, min, max, n)) if n > 1 => format!("{mean:.2} [{min:.2}, {max:.2}]"),
        Some((mean, ..)) => format!("{mean:.2}"),
        None => match c.not_converged {
            Some(n) => n.text(),
            None => "–".into(),
        },
    }
}

/// A column's header: its labels joined (`LIA`, or `n1=5 / LIA` with two parameters).
fn column_head(k: &Key) -> String {
    if k.is_empty() {
        "ours".into()
    } else {
        k.join(" / ")
    }
}

/// The table in Markdown: each cell `ours (published)`, a failing one marked.
pub fn markdown(md: &mut String, s: &Summary) -> std::fmt::Result {
    for t in &s.tables {
        let f = fill(s, t);
        writeln!(md, "## {}\n", t.title)?;
        writeln!(
            md,
            "In the paper's layout{}. Each cell: ours, the mean over seeds{} (the published \
             figure in brackets); ✗ marks ours outside the published figure's tolerance.\n",
            if t.source.is_empty() {
                String::new()
            } else {
                format!(" ({})", t.source)
            },
            if s.seeds.len() > 1 {
                " with its range"
            } else {
                ""
            }
        )?;
        let heads: Vec<String> = f
            .row_heads
            .iter()
            .cloned()
            .chain(f.columns.iter().map(column_head))
            .collect();
        writeln!(md, "| {} |", heads.join(" | "))?;
        writeln!(md, "|{}", " --- |".repeat(heads.len()))?;
        for (i, (r, row)) in f.rows.iter().zip(&f.cells).enumerate() {
            // A row header repeated from the row above is left blank, as in the paper.
            let heads: Vec<&str> = r
                .iter()
                .enumerate()
                .map(|(depth, label)| {
                    if i > 0 && f.rows[i - 1][..=depth] == r[..=depth] {
                        ""
                    } else {
                        label.as_str()
                    }
                })
                .collect();
            let cells: Vec<String> = row
                .iter()
                .map(|c| match c.published {
                    Some((p, pass)) => {
                        format!("{} ({p}){}", ours_text(c), if pass { "" } else { " ✗" })
                    }
                    None => ours_text(c),
                })
                .collect();
            writeln!(md, "| {} | {} |", heads.join(" | "), cells.join(" | "))?;
        }
        writeln!(md)?;
    }
    Ok(())
}

/// The table in HTML: ours large, the published figure under it, the cell coloured by
/// whether ours lies within the published tolerance; row headers spanning their rows.
pub fn html(s: &Summary) -> String {
    let mut h = String::new();
    for t in &s.tables {
        let f = fill(s, t);
        let _ = writeln!(h, "<h2>{}</h2>", esc(&t.title));
        let _ = writeln!(
            h,
            "<p>In the paper's layout{}. Each cell: ours, the mean over seeds{}; under it the \
             published figure; green within its tolerance, red outside.</p>",
            if t.source.is_empty() {
                String::new()
            } else {
                format!(" ({})", esc(&t.source))
            },
            if s.seeds.len() > 1 {
                " with its range"
            } else {
                ""
            }
        );
        h.push_str("<table class=\"paper\"><tr>");
        for head in &f.row_heads {
            let _ = write!(h, "<th>{}</th>", esc(head));
        }
        for c in &f.columns {
            let _ = write!(h, "<th>{}</th>", esc(&column_head(c)));
        }
        h.push_str("</tr>\n");
        for (i, (r, row)) in f.rows.iter().zip(&f.cells).enumerate() {
            h.push_str("<tr>");
            for (depth, label) in r.iter().enumerate() {
                // Spans: a header that repeats the one above (with the same outer headers)
                // is merged into it.
                let same = |j: usize| f.rows[j][..=depth] == r[..=depth];
                if i > 0 && same(i - 1) {
                    continue;
                }
                let span = (i..f.rows.len()).take_while(|&j| same(j)).count();
                let _ = write!(h, "<th rowspan=\"{span}\">{}</th>", esc(label));
            }
            for c in row {
                let (class, published) = match c.published {
                    Some((p, pass)) => (
                        if pass { "num pass" } else { "num fail" },
                        format!("<br><span class=\"pub\">published {p}</span>"),
                    ),
                    None => ("num", String::new()),
                };
                let _ = write!(
                    h,
                    "<td class=\"{class}\">{}{published}</td>",
                    esc(&ours_text(c))
                );
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table>\n");
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::{Check, MetricStats};
    use std::collections::BTreeMap;

    fn variant(case: &str, cc: &str, t1: f64, t2: f64, published: f64) -> VariantSummary {
        let metrics: BTreeMap<String, MetricStats> = [
            ("group.type1.goodput_mbps", t1),
            ("group.type2.goodput_mbps", t2),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), MetricStats::of(&[v - 0.1, v + 0.1])))
        .collect();
        VariantSummary {
            name: format!("case={case},type1={cc}"),
            dir: format!("{case}-{cc}"),
            params: [
                ("case".to_string(), serde_json::json!({ "name": case })),
                ("type1".to_string(), serde_json::json!({ "name": cc })),
            ]
            .into_iter()
            .collect(),
            metrics,
            checks: vec![Check {
                metric: "group.type2.goodput_mbps".into(),
                over: None,
                ours: Some(t2),
                published: Some(published),
                tolerance: Some("±10%".into()),
                min: None,
                max: None,
                pass: (t2 - published).abs() <= 0.1 * published,
                source: "Table 1".into(),
                not_converged: None,
            }],
            stats: Vec::new(),
            emulator: Vec::new(),
        }
    }

    fn summary() -> Summary {
        let table: TableSpec = toml::from_str(
            r#"
            title = "Table 1"
            rows = ["case"]
            columns = ["type1"]
            metrics = ["group.type1.goodput_mbps", "group.type2.goodput_mbps"]
            labels = { metric = "type", lia = "LIA", "group.type2.goodput_mbps" = "type2" }
            "#,
        )
        .unwrap();
        Summary {
            format: 1,
            scenario: "e1".into(),
            file: "e1.toml".into(),
            description: String::new(),
            source: String::new(),
            backend: "sim".into(),
            seeds: vec![1, 2],
            variants: vec![
                variant("n1=5", "single-path", 9.4, 9.3, 9.29),
                variant("n1=5", "lia", 9.2, 6.0, 7.55),
                variant("n1=15", "single-path", 9.3, 9.2, 9.29),
                variant("n1=15", "lia", 9.0, 7.0, 6.94),
            ],
            orders: Vec::new(),
            plots: Vec::new(),
            tables: vec![table],
            provenance: None,
            outages: Vec::new(),
        }
    }

    #[test]
    fn markdown_in_the_papers_layout_with_ours_beside_the_published() {
        let mut md = String::new();
        markdown(&mut md, &summary()).unwrap();
        assert!(md.contains("| case | type | single-path | LIA |"), "{md}");
        assert!(
            md.contains(
                "| n1=5 | type1 goodput (Mbit/s) | 9.40 [9.30, 9.50] | 9.20 [9.10, 9.30] |"
            ),
            "{md}"
        );
        // The repeated case is left blank; a value outside the tolerance is marked.
        assert!(
            md.contains("|  | type2 | 9.30 [9.20, 9.40] (9.29) | 6.00 [5.90, 6.10] (7.55) ✗ |"),
            "{md}"
        );
        assert!(md.contains("| n1=15 | type1"), "{md}");
    }

    #[test]
    fn html_spans_the_outer_rows_and_colours_the_cells() {
        let h = html(&summary());
        assert!(h.contains("<th rowspan=\"2\">n1=5</th>"), "{h}");
        assert!(h.contains("class=\"num fail\">6.00 [5.90, 6.10]"), "{h}");
        assert!(h.contains("published 7.55"), "{h}");
    }
}
