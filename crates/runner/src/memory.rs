//! Whether a run fits in this machine's memory: the scenario's estimated footprint
//! (`scenario::footprint`) against what Linux reports available (`MemAvailable` in
//! /proc/meminfo), so a run too large is refused with both figures before it starts.

use anyhow::{Result, bail};
use scenario::Scenario;
use scenario::footprint::human;
use std::path::Path;

/// Bytes the kernel could give without swapping; `None` where /proc/meminfo is missing.
fn available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Refuses `variants` of `file` if `at_once` runs of the largest would not fit; returns
/// the largest run's estimated bytes.
pub fn check_fits(file: &Path, variants: &[Scenario], at_once: usize) -> Result<u64> {
    let Some(largest) = variants
        .iter()
        .map(Scenario::footprint)
        .max_by_key(|f| f.bytes)
    else {
        return Ok(0);
    };
    let Some(available) = available() else {
        return Ok(largest.bytes);
    };
    let needed = largest.bytes.saturating_mul(at_once.max(1) as u64);
    if needed > available {
        let runs = if at_once > 1 {
            format!(", x {at_once} runs at once ({})", human(needed))
        } else {
            String::new()
        };
        bail!(
            "{}: a run needs {largest}{runs}; this machine has {} available. Make it smaller \
             (fewer flows, a longer measure.interval or trace_interval, a shorter duration){}",
            file.display(),
            human(available),
            if at_once > 1 {
                " or run fewer at once (--jobs)"
            } else {
                ""
            }
        );
    }
    Ok(largest.bytes)
}
