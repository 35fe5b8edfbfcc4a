//! The results folder: `summary.json`, and `<variant>/series-seed<k>.csv` per run.
//! Written into a sibling `.partial` folder and renamed at the end, so a folder that exists
//! is always complete.

use crate::summary::Summary;
use anyhow::{Context, Result};
use scenario::results::{RunResult, Series};
use std::path::{Path, PathBuf};

pub fn write_results(out: &Path, summary: &Summary, runs: &[Vec<RunResult>]) -> Result<()> {
    let partial = partial_path(out);
    if partial.exists() {
        std::fs::remove_dir_all(&partial)
            .with_context(|| format!("removing {}", partial.display()))?;
    }
    std::fs::create_dir_all(&partial).with_context(|| format!("creating {}", partial.display()))?;
    let written = (|| -> Result<()> {
        for (v, rs) in summary.variants.iter().zip(runs) {
            let dir = partial.join(&v.dir);
            std::fs::create_dir_all(&dir)?;
            for r in rs {
                write_series(&dir.join(format!("series-seed{}.csv", r.seed)), &r.series)?;
            }
        }
        let json = serde_json::to_string_pretty(summary)?;
        std::fs::write(partial.join("summary.json"), json + "\n")?;
        Ok(())
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(e.context(format!("writing results to {}", out.display())));
    }
    if out.exists() {
        std::fs::remove_dir_all(out).with_context(|| format!("replacing {}", out.display()))?;
    }
    std::fs::rename(&partial, out)
        .with_context(|| format!("moving results into {}", out.display()))?;
    Ok(())
}

fn partial_path(out: &Path) -> PathBuf {
    let mut name = out
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "results".into());
    name.push(".partial");
    out.with_file_name(name)
}

/// Long format, one row per point: `time_s,series,entity,value` (empty value: no data).
pub fn write_series(path: &Path, series: &[Series]) -> Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    w.write_record(["time_s", "series", "entity", "value"])?;
    for s in series {
        for (t, v) in s.times_s.iter().zip(&s.values) {
            let v = if v.is_finite() {
                format!("{v:.6}")
            } else {
                String::new()
            };
            w.write_record([format!("{t:.6}"), s.name.clone(), s.entity.clone(), v])?;
        }
    }
    w.flush()?;
    Ok(())
}

pub fn read_series(path: &Path) -> Result<Vec<Series>> {
    let mut r =
        csv::Reader::from_path(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out: Vec<Series> = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.with_context(|| format!("{}: row {}", path.display(), i + 2))?;
        let field = |k: usize| rec.get(k).unwrap_or("");
        let t: f64 = field(0)
            .parse()
            .with_context(|| format!("{}:{}: time_s: expected a number", path.display(), i + 2))?;
        let v: f64 = field(3).parse().unwrap_or(f64::NAN);
        let (name, entity) = (field(1), field(2));
        match out.last_mut() {
            Some(s) if s.name == name && s.entity == entity => {
                s.times_s.push(t);
                s.values.push(v);
            }
            _ => out.push(Series {
                name: name.into(),
                entity: entity.into(),
                times_s: vec![t],
                values: vec![v],
            }),
        }
    }
    Ok(out)
}

pub fn read_summary(dir: &Path) -> Result<Summary> {
    let path = dir.join("summary.json");
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "reading {} (is this a folder written by `mptcp-lab run`?)",
            path.display()
        )
    })?;
    serde_json::from_str(&text)
        .with_context(|| format!("{}: not a summary of this format", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_round_trip() {
        let dir = std::env::temp_dir().join(format!("mptcp-lab-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let s = vec![
            Series {
                name: "goodput_mbps".into(),
                entity: "group.a".into(),
                times_s: vec![1.0, 2.0],
                values: vec![3.5, f64::NAN],
            },
            Series {
                name: "cwnd_pkts".into(),
                entity: "flow.a#0".into(),
                times_s: vec![1.0],
                values: vec![10.0],
            },
        ];
        let p = dir.join("s.csv");
        write_series(&p, &s).unwrap();
        let back = read_series(&p).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[0].values[0], 3.5);
        assert!(back[0].values[1].is_nan());
        assert_eq!(back[1], s[1]);
    }
}
