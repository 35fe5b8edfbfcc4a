//! `compare --html`: two results of one scenario side by side as one self-contained page
//! (the same kind as report.html): the two results' time series overlaid per variant (the
//! first solid, the second dashed, a variant picker), a difference table of every metric
//! both results have, with whether the difference lies inside the two runs' seed spread,
//! and the orderings in each.

use crate::html::{Page, Source, esc, fmt_stats, order_verdict, time_series, verdict};
use crate::names;
use crate::summary::{MetricStats, Summary, VariantSummary};
use anyhow::Result;
use std::fmt::Write;
use std::path::Path;

/// Whether a difference lies inside the two runs' seed spread: |b - a| at most the sum of
/// their standard deviations over seeds. `None` when neither has a spread (one seed each).
pub fn within_spread(a: &MetricStats, b: &MetricStats) -> Option<bool> {
    let spread = a.std + b.std;
    (spread > 0.0).then(|| (b.mean - a.mean).abs() <= spread)
}

/// The metrics two variants both have, in the first's order: name, then each one's stats.
pub fn shared_metrics<'a>(
    va: &'a VariantSummary,
    vb: &'a VariantSummary,
) -> impl Iterator<Item = (&'a str, &'a MetricStats, &'a MetricStats)> {
    va.metrics
        .iter()
        .filter_map(|(k, ma)| vb.metrics.get(k).map(|mb| (k.as_str(), ma, mb)))
}

/// Of the metrics two results share: how many, how many have a seed spread, and how many
/// of those differ by more than it (`within_spread`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpreadTally {
    pub both: usize,
    pub judged: usize,
    pub outside: usize,
}

impl SpreadTally {
    /// Counts one shared metric, judged by `within_spread`.
    pub fn count(&mut self, inside: Option<bool>) {
        self.both += 1;
        if let Some(inside) = inside {
            self.judged += 1;
            self.outside += usize::from(!inside);
        }
    }

    /// Every metric both results have, over the variants they share.
    pub fn of(a: &Summary, b: &Summary) -> Self {
        let mut tally = SpreadTally::default();
        for va in &a.variants {
            if let Some(vb) = b.variants.iter().find(|v| v.name == va.name) {
                for (_, ma, mb) in shared_metrics(va, vb) {
                    tally.count(within_spread(ma, mb));
                }
            }
        }
        tally
    }
}

/// The page comparing `a` (in folder `da`) with `b` (in `db`), written to `out`.
pub fn write(a: &Summary, da: &Path, b: &Summary, db: &Path, out: &Path) -> Result<()> {
    let (la, lb) = labels(a, b);
    let mut page = Page::new();
    let seeds = |s: &Summary| {
        s.seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    page.push(&format!(
        "<h1>{}: {} against {}</h1>\n<p>{}</p>\n<p><code>{}</code> ({la}, seeds {}) and \
         <code>{}</code> ({lb}, seeds {}). Difference is {lb} minus {la}; it is inside the \
         seed spread when it is at most the sum of the two standard deviations over seeds.</p>\n",
        esc(&a.scenario),
        esc(&lb),
        esc(&la),
        esc(&a.source),
        esc(&da.display().to_string()),
        seeds(a),
        esc(&db.display().to_string()),
        seeds(b),
    ));
    differences(&mut page, a, b, &la, &lb);
    orders(&mut page, a, b, &la, &lb);
    time_series(
        &mut page,
        &[
            Source {
                label: &la,
                summary: a,
                dir: da,
            },
            Source {
                label: &lb,
                summary: b,
                dir: db,
            },
        ],
        &|_| {},
    )?;
    std::fs::write(
        out,
        page.finish(&format!("{}: {lb} against {la}", a.scenario)),
    )?;
    Ok(())
}

/// How the two results are named: their backends, or `A` and `B` beside them when the
/// backends are the same (two revisions).
fn labels(a: &Summary, b: &Summary) -> (String, String) {
    if a.backend == b.backend {
        (format!("A ({})", a.backend), format!("B ({})", b.backend))
    } else {
        (a.backend.clone(), b.backend.clone())
    }
}

fn differences(page: &mut Page, a: &Summary, b: &Summary, la: &str, lb: &str) {
    let mut h = format!(
        "<h2>Every metric both results have</h2>\n<table><tr><th>variant</th><th>metric</th>\
         <th>{}</th><th>{}</th><th>difference</th><th>relative</th><th>inside the seed \
         spread</th></tr>\n",
        esc(la),
        esc(lb)
    );
    let mut tally = SpreadTally::default();
    for va in &a.variants {
        let Some(vb) = b.variants.iter().find(|v| v.name == va.name) else {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td colspan=\"6\">not in {}</td></tr>",
                esc(&va.name),
                esc(lb)
            );
            continue;
        };
        for (k, ma, mb) in shared_metrics(va, vb) {
            let inside = within_spread(ma, mb);
            tally.count(inside);
            let diff = mb.mean - ma.mean;
            let rel = if ma.mean != 0.0 {
                format!("{:+.1} %", diff / ma.mean.abs() * 100.0)
            } else {
                "–".into()
            };
            let (class, word) = match inside {
                Some(w) => {
                    let (class, _) = verdict(w);
                    (class, if w { "yes" } else { "no" })
                }
                None => ("", "one seed each"),
            };
            let _ = writeln!(
                h,
                "<tr class=\"{class}\"><td>{}</td><td title=\"{}\">{}</td><td class=\"num\">{}\
                 </td><td class=\"num\">{}</td><td class=\"num\">{diff:+.3}</td><td \
                 class=\"num\">{rel}</td><td class=\"verdict\">{word}</td></tr>",
                esc(&va.name),
                esc(k),
                esc(&names::metric(k)),
                esc(&fmt_stats(ma)),
                esc(&fmt_stats(mb)),
            );
        }
    }
    h.push_str("</table>\n");
    let SpreadTally {
        both,
        judged,
        outside,
    } = tally;
    page.push(&format!(
        "<p>{both} metrics in both; of the {judged} with a seed spread, {} differ by less \
         than it.</p>\n",
        judged - outside
    ));
    page.push(&h);
}

fn orders(page: &mut Page, a: &Summary, b: &Summary, la: &str, lb: &str) {
    if a.orders.is_empty() && b.orders.is_empty() {
        return;
    }
    let mut h = format!(
        "<h2>What must hold</h2>\n<table><tr><th>statement</th><th>under</th><th>{}</th>\
         <th>{}</th></tr>\n",
        esc(la),
        esc(lb)
    );
    let cell = |s: &Summary, statement: &str, context: &str| -> String {
        match s
            .orders
            .iter()
            .find(|o| o.statement == statement && o.context == context)
        {
            Some(o) => {
                let (class, word) = order_verdict(o);
                format!(
                    "<td class=\"{class}\">{word}: {}</td>",
                    esc(&o.values_text())
                )
            }
            None => "<td>not run</td>".into(),
        }
    };
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for o in a.orders.iter().chain(&b.orders) {
        let key = (o.statement.as_str(), o.context.as_str());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td>{}{}</tr>",
            esc(&o.statement),
            esc(if o.context.is_empty() {
                "all"
            } else {
                &o.context
            }),
            cell(a, key.0, key.1),
            cell(b, key.0, key.1)
        );
    }
    h.push_str("</table>\n");
    page.push(&h);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One variant, three seeds: each metric's values.
    fn summary(backend: &str, metrics: &[(&str, &[f64])]) -> Summary {
        let mut s = crate::compare::tests::summary_of(
            backend,
            metrics
                .iter()
                .map(|(k, xs)| (k.to_string(), MetricStats::of(xs)))
                .collect(),
        );
        s.seeds = vec![1, 2, 3];
        s
    }

    #[test]
    fn every_metric_both_have_with_its_difference_and_verdict() {
        let a = summary(
            "sim",
            &[
                ("group.web.fct_s", &[1.0, 1.2, 1.4]),
                ("group.web.goodput_mbps", &[9.0, 9.1, 9.2]),
                ("all.jain", &[0.9, 0.9, 0.9]),
            ],
        );
        let b = summary(
            "kernel",
            &[
                ("group.web.fct_s", &[1.1, 1.3, 1.5]),
                ("group.web.goodput_mbps", &[7.0, 7.1, 7.2]),
            ],
        );
        let dir = std::env::temp_dir().join(format!("mptcp-lab-cmp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("c.html");
        write(&a, &dir, &b, &dir, &out).unwrap();
        let page = std::fs::read_to_string(&out).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(page.contains("2 metrics in both"), "jain is only in one");
        let row = |name: &str| {
            let at = page.find(name).unwrap_or_else(|| panic!("no {name}"));
            let start = page[..at].rfind("<tr").unwrap();
            page[start..at + page[at..].find("</tr>").unwrap()].to_string()
        };
        let fct = row("mean flow completion time (s)");
        assert!(
            fct.contains("class=\"pass\"") && fct.contains("+0.100"),
            "{fct}"
        );
        let goodput = row("web goodput (Mbit/s)");
        assert!(
            goodput.contains("class=\"fail\"") && goodput.contains("-2.000"),
            "{goodput}"
        );
    }

    #[test]
    fn a_difference_is_judged_against_both_spreads() {
        let a = MetricStats::of(&[9.0, 10.0, 11.0]);
        let b = MetricStats::of(&[10.5, 11.5, 12.5]);
        assert_eq!(within_spread(&a, &b), Some(true));
        let b = MetricStats::of(&[13.0, 13.1, 13.2]);
        assert_eq!(within_spread(&a, &b), Some(false));
        let one = MetricStats::of(&[1.0]);
        assert_eq!(within_spread(&one, &one), None);
    }
}
