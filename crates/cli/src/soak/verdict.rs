//! What a soak must show, as checks with their bounds: data kept flowing through every
//! cycle, memory and descriptors stayed flat, the emulator never stalled, nothing was left.

use super::monitor::Sample;
use scenario::results::Series;
use serde::Serialize;
use testbed::emu::Lateness;

/// The baseline for "flat" is the first sample after this fraction of the run: by then
/// buffers, histograms and queues have reached their working size.
const SETTLE_FRACTION: f64 = 0.1;
/// Resident memory may grow by this much over the run: the results grow linearly (a few
/// dozen series of one value per measuring interval: well under a megabyte an hour), and
/// the allocator keeps some slack; a leak per packet or per flap would pass it within
/// minutes.
const RSS_GROWTH_KIB: u64 = 16 * 1024;
/// Descriptors: the agents' sockets live for the whole run; a sample may catch the sampler
/// reading a /proc file or two.
const FD_GROWTH: u64 = 4;
/// The kernel's unreclaimable slab, machine-wide: leaked sockets (a few kilobytes each,
/// with their buffers) would show here; other work on the machine moves it too.
const KERNEL_SLAB_GROWTH_KIB: u64 = 32 * 1024;
/// A packet handed over this late (the lateness histogram's last bucket) means the
/// emulator stalled: 20 ms is a tenth of the smallest RTT a soak scenario should have.
const STALL_US: u64 = 20_000;
/// Every cycle must deliver at least this fraction of the median cycle's data: a path down
/// costs some, a connection that stopped delivers nothing.
const CYCLE_FRACTION: f64 = 0.25;

#[derive(Clone, Debug, Serialize)]
pub struct Check {
    pub what: String,
    pub measured: String,
    pub bound: String,
    pub holds: bool,
}

fn check(what: impl Into<String>, measured: String, bound: String, holds: bool) -> Check {
    Check {
        what: what.into(),
        measured,
        bound,
        holds,
    }
}

/// The settled baseline and, per resource, the peak from there on (the last samples may
/// come after the run ended and its agents closed everything: the peak is what a leak
/// raises).
fn settled_and_peak(samples: &[Sample]) -> Option<(Sample, Sample)> {
    let end_ms = samples.last()?.at_ms;
    let settle_ms = (end_ms as f64 * SETTLE_FRACTION) as u64;
    let from = samples.iter().position(|s| s.at_ms >= settle_ms)?;
    let base = samples[from];
    let peak = samples[from..].iter().fold(base, |p, s| Sample {
        at_ms: s.at_ms,
        rss_kib: p.rss_kib.max(s.rss_kib),
        open_fds: p.open_fds.max(s.open_fds),
        threads: p.threads.max(s.threads),
        kernel_unreclaimable_kib: p.kernel_unreclaimable_kib.max(s.kernel_unreclaimable_kib),
    });
    Some((base, peak))
}

/// Memory, descriptors and threads: the settled baseline against the peak after it.
pub fn resources(samples: &[Sample]) -> Vec<Check> {
    let Some((base, peak)) = settled_and_peak(samples) else {
        return vec![check(
            "resource samples",
            "none".into(),
            "at least one".into(),
            false,
        )];
    };
    let grew = |a: u64, b: u64| b.saturating_sub(a);
    let mib = |kib: u64| format!("{:.1} MiB", kib as f64 / 1024.0);
    vec![
        check(
            "resident memory",
            format!("{} settled, peak {}", mib(base.rss_kib), mib(peak.rss_kib)),
            format!("grows at most {}", mib(RSS_GROWTH_KIB)),
            grew(base.rss_kib, peak.rss_kib) <= RSS_GROWTH_KIB,
        ),
        check(
            "open file descriptors",
            format!("{} settled, peak {}", base.open_fds, peak.open_fds),
            format!("grows at most {FD_GROWTH}"),
            grew(base.open_fds, peak.open_fds) <= FD_GROWTH,
        ),
        check(
            "threads",
            format!("{} settled, peak {}", base.threads, peak.threads),
            // A fixed set: agents, sampler, emulator.
            "no growth".into(),
            peak.threads <= base.threads,
        ),
        check(
            "kernel unreclaimable slab (whole machine)",
            format!(
                "{} settled, peak {}",
                mib(base.kernel_unreclaimable_kib),
                mib(peak.kernel_unreclaimable_kib)
            ),
            format!("grows at most {}", mib(KERNEL_SLAB_GROWTH_KIB)),
            grew(base.kernel_unreclaimable_kib, peak.kernel_unreclaimable_kib)
                <= KERNEL_SLAB_GROWTH_KIB,
        ),
    ]
}

/// Data delivered per cycle by one group, from its goodput series (Mbit/s per interval):
/// megabytes in each whole cycle after the warm-up.
pub fn per_cycle_megabytes(series: &Series, cycle_s: f64, warmup_s: f64) -> Vec<f64> {
    let interval_s = match series.times_s.as_slice() {
        [a, b, ..] => b - a,
        _ => return Vec::new(),
    };
    let end_s = series.times_s.last().copied().unwrap_or(0.0) + interval_s;
    let first = (warmup_s / cycle_s).ceil() as usize;
    let whole = (end_s / cycle_s + 1e-9).floor() as usize;
    let mut cycles = vec![0.0; whole.saturating_sub(first)];
    for (t, v) in series.times_s.iter().zip(&series.values) {
        let k = ((t + 1e-9) / cycle_s).floor() as usize;
        if (first..whole).contains(&k) {
            cycles[k - first] += v * interval_s / 8.0;
        }
    }
    cycles
}

fn median(xs: &[f64]) -> f64 {
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    s.get(s.len() / 2).copied().unwrap_or(0.0)
}

/// Every cycle of every group delivered a fair share of the median cycle.
pub fn flowing(group: &str, cycles_mb: &[f64]) -> Check {
    let med = median(cycles_mb);
    let (worst_k, worst) = cycles_mb
        .iter()
        .copied()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((0, 0.0));
    check(
        format!("{group}: data in every cycle"),
        format!(
            "{} cycles, median {med:.1} MB, worst {worst:.1} MB (cycle {})",
            cycles_mb.len(),
            worst_k + 1
        ),
        format!(
            "every cycle at least {:.0} % of the median",
            CYCLE_FRACTION * 100.0
        ),
        !cycles_mb.is_empty() && med > 0.0 && worst >= CYCLE_FRACTION * med,
    )
}

/// The emulator's latest hand-over.
pub fn stalls(lateness: &Lateness) -> Check {
    let stalled: u64 = lateness.counts.iter().skip(STALL_US as usize).sum();
    let max_us = lateness.counts.iter().rposition(|&c| c > 0).unwrap_or(0);
    check(
        "emulator stalls",
        format!(
            "{stalled} packets {} ms late or more; latest {}",
            STALL_US / 1000,
            if max_us as u64 >= STALL_US {
                format!(">= {} ms", STALL_US / 1000)
            } else {
                format!("{max_us} us")
            }
        ),
        "none".into(),
        stalled == 0,
    )
}

/// What was left on the machine after the clean-up.
pub fn leftovers(found: &[String]) -> Check {
    check(
        "left behind after the run",
        if found.is_empty() {
            "nothing".into()
        } else {
            found.join(", ")
        },
        "nothing".into(),
        found.is_empty(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(at_ms: u64, rss_kib: u64, open_fds: u64) -> Sample {
        Sample {
            at_ms,
            rss_kib,
            open_fds,
            threads: 9,
            kernel_unreclaimable_kib: 100_000,
        }
    }

    #[test]
    fn growth_is_measured_from_the_settled_baseline() {
        // Start-up growth (first 10 %) does not count; a steady climb after it does.
        let flat = [
            at(0, 1000, 5),
            at(500, 50_000, 20),
            at(1000, 52_000, 20),
            at(10_000, 60_000, 22),
        ];
        assert!(
            resources(&flat).iter().all(|c| c.holds),
            "{:?}",
            resources(&flat)
        );
        let leak = [
            at(0, 1000, 5),
            at(1000, 50_000, 20),
            at(10_000, 50_000 + RSS_GROWTH_KIB + 1, 30),
        ];
        let checks = resources(&leak);
        assert!(
            !checks[0].holds && !checks[1].holds && checks[2].holds,
            "{checks:?}"
        );
        assert!(!resources(&[])[0].holds);
    }

    fn series(values: &[f64]) -> Series {
        Series {
            name: "goodput_mbps".into(),
            entity: "group.g".into(),
            times_s: (0..values.len()).map(|i| i as f64).collect(),
            values: values.to_vec(),
        }
    }

    #[test]
    fn cycles_count_whole_cycles_after_the_warm_up() {
        // 1 s bins, 8 Mbit/s = 1 MB/s; cycles of 3 s; warm-up 2 s: cycles 1 and 2 whole,
        // the last (t = 9) partial.
        let s = series(&[8.0; 10]);
        assert_eq!(per_cycle_megabytes(&s, 3.0, 2.0), [3.0, 3.0]);
        assert_eq!(per_cycle_megabytes(&s, 3.0, 0.0), [3.0, 3.0, 3.0]);
    }

    #[test]
    fn a_cycle_that_stopped_fails_and_a_dip_passes() {
        assert!(flowing("g", &[3.0, 2.0, 3.0]).holds);
        assert!(!flowing("g", &[3.0, 0.5, 3.0]).holds);
        assert!(!flowing("g", &[]).holds);
        assert!(!flowing("g", &[0.0, 0.0]).holds);
    }

    #[test]
    fn a_packet_in_the_last_bucket_is_a_stall() {
        let mut l = Lateness::default();
        l.record(50_000);
        l.record(19_999_000);
        assert!(stalls(&l).holds, "{:?}", stalls(&l));
        l.record(25_000_000);
        assert!(!stalls(&l).holds);
    }
}
