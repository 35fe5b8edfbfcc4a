//! The results folder: `summary.json`, and `<variant>/series-seed<k>.csv` per run.
//! Written into a sibling folder of this process's own (`.<name>.partial-<pid>`, marked as
//! ours) and moved into place at the end, so a folder that exists is always complete. A
//! folder is replaced only if it is a results folder this program wrote (or empty), and
//! then in one atomic exchange; nothing else is ever removed. (`run` writes campaign folders,
//! task by task, through the `campaign` crate; `soak` writes here.)

use crate::summary::Summary;
use anyhow::{Context, Result, bail};
use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
use scenario::results::{RunResult, Series};
use std::path::{Path, PathBuf};

/// The file that marks a folder being written by this program (a leftover of a crashed
/// run is recognised by it, and only then removed).
const PARTIAL_MARK: &str = ".mptcp-lab-partial";

/// Refuses an output folder that cannot be written or replaced safely: a path that exists
/// and is not a folder (`/dev/null`), a symbolic link, or a folder that is neither empty nor
/// a results folder of this program. `run` calls it before simulating anything.
pub fn check_out(out: &Path) -> Result<()> {
    if out.file_name().is_none() {
        bail!(
            "{}: expected a folder path that ends in a name (the results folder)",
            out.display()
        );
    }
    match std::fs::symlink_metadata(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("looking at {}", out.display())),
        Ok(meta) if meta.file_type().is_symlink() => bail!(
            "{} is a symbolic link: results go to a folder of their own (choose another --out)",
            out.display()
        ),
        Ok(meta) if !meta.is_dir() => bail!(
            "{} exists and is not a folder: results go to a folder (choose another --out)",
            out.display()
        ),
        Ok(_) if is_results_folder(out) || is_empty_folder(out) => {}
        Ok(_) => bail!(
            "{} exists and is not a results folder written by mptcp-lab (it has no \
             summary.json of ours); it is left alone: choose another --out, or move it away",
            out.display()
        ),
    }
    Ok(())
}

/// A folder holding a `summary.json` in this program's format, or a campaign folder
/// (`campaign.json` of this program: a run that has not finished yet).
fn is_results_folder(dir: &Path) -> bool {
    is_campaign_folder(dir) || has_summary(dir)
}

fn is_campaign_folder(dir: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(dir.join("campaign.json")) else {
        return false;
    };
    serde_json::from_str::<serde_json::Value>(&text)
        .is_ok_and(|v| v.get("program").and_then(serde_json::Value::as_str) == Some("mptcp-lab"))
}

fn has_summary(dir: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(dir.join("summary.json")) else {
        return false;
    };
    serde_json::from_str::<serde_json::Value>(&text).is_ok_and(|v| {
        v.get("format").is_some_and(serde_json::Value::is_u64)
            && v.get("variants").is_some_and(serde_json::Value::is_array)
    })
}

fn is_empty_folder(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none())
}

pub fn write_results(out: &Path, summary: &Summary, runs: &[Vec<RunResult>]) -> Result<()> {
    check_out(out)?;
    let partial = partial_path(out);
    if partial.exists() {
        // The same process id left it after a crash: ours only if it carries the mark.
        if !partial.join(PARTIAL_MARK).exists() {
            bail!(
                "{} exists and was not made by mptcp-lab; it is left alone (move it away)",
                partial.display()
            );
        }
        std::fs::remove_dir_all(&partial)
            .with_context(|| format!("removing {}", partial.display()))?;
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::create_dir(&partial).with_context(|| format!("creating {}", partial.display()))?;
    let written = (|| -> Result<()> {
        std::fs::write(partial.join(PARTIAL_MARK), "")?;
        for (v, rs) in summary.variants.iter().zip(runs) {
            let dir = partial.join(&v.dir);
            std::fs::create_dir_all(&dir)?;
            for r in rs {
                write_series(&dir.join(format!("series-seed{}.csv", r.seed)), &r.series)?;
            }
        }
        let json = serde_json::to_string_pretty(summary)?;
        std::fs::write(partial.join("summary.json"), json + "\n")?;
        std::fs::remove_file(partial.join(PARTIAL_MARK))?;
        Ok(())
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(e.context(format!("writing results to {}", out.display())));
    }
    move_into_place(&partial, out)
}

/// Moves the complete folder `partial` to `out`. An existing `out` (checked to be ours) is
/// swapped with it in one step (`renameat2(RENAME_EXCHANGE)`), so `out` is never missing or
/// half-written, and the old results, now at `partial`, are removed.
fn move_into_place(partial: &Path, out: &Path) -> Result<()> {
    if !out.exists() {
        return std::fs::rename(partial, out)
            .with_context(|| format!("moving results into {}", out.display()));
    }
    match renameat2(
        AT_FDCWD,
        partial,
        AT_FDCWD,
        out,
        RenameFlags::RENAME_EXCHANGE,
    ) {
        Ok(()) => {}
        // A file system without the exchange: the old folder steps aside first.
        Err(nix::errno::Errno::EINVAL | nix::errno::Errno::ENOSYS) => {
            let old = sibling(out, "old");
            std::fs::rename(out, &old)
                .with_context(|| format!("moving the old {} aside", out.display()))?;
            std::fs::rename(partial, out)
                .with_context(|| format!("moving results into {}", out.display()))?;
            return std::fs::remove_dir_all(&old)
                .with_context(|| format!("removing the old results at {}", old.display()));
        }
        Err(e) => {
            return Err(e).with_context(|| format!("replacing {}", out.display()));
        }
    }
    std::fs::remove_dir_all(partial)
        .with_context(|| format!("removing the old results at {}", partial.display()))
}

/// `.<name>.<what>-<pid>` beside `out`: hidden, and this process's own.
fn sibling(out: &Path, what: &str) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "results".into());
    out.with_file_name(format!(".{name}.{what}-{}", std::process::id()))
}

fn partial_path(out: &Path) -> PathBuf {
    sibling(out, "partial")
}

/// Long format, one row per point: `time_s,series,entity,value` (empty value: no data).
pub fn write_series(path: &Path, series: &[Series]) -> Result<()> {
    let file = std::fs::File::create(path)?;
    write_series_to(std::io::BufWriter::new(file), series)
}

/// [`write_series`] into any writer.
pub fn write_series_to(out: impl std::io::Write, series: &[Series]) -> Result<()> {
    let mut w = csv::Writer::from_writer(out);
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
