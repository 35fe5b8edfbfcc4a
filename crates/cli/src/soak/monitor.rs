//! What a long run costs the machine, sampled while it runs: this process's resident memory,
//! open file descriptors and threads, and the kernel's unreclaimable slab memory (where
//! leaked sockets and their buffers would show).

use anyhow::{Context, Result};
use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Sample {
    /// Milliseconds since the monitor started.
    pub at_ms: u64,
    pub rss_kib: u64,
    pub open_fds: u64,
    pub threads: u64,
    /// `SUnreclaim` of /proc/meminfo: the whole machine's, so other work moves it too.
    pub kernel_unreclaimable_kib: u64,
}

/// The value of `key` (e.g. `VmRSS:`) in a /proc file of `key value [kB]` lines.
fn field(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

pub fn sample(started: Instant) -> Result<Sample> {
    let status =
        std::fs::read_to_string("/proc/self/status").context("reading /proc/self/status")?;
    let meminfo = std::fs::read_to_string("/proc/meminfo").context("reading /proc/meminfo")?;
    // The listing holds its own descriptor while it reads: not one of the program's.
    let open_fds = std::fs::read_dir("/proc/self/fd")
        .context("listing /proc/self/fd")?
        .count()
        .saturating_sub(1) as u64;
    let missing = |what: &str| anyhow::anyhow!("no {what} in /proc");
    Ok(Sample {
        at_ms: started.elapsed().as_millis() as u64,
        rss_kib: field(&status, "VmRSS:").ok_or_else(|| missing("VmRSS"))?,
        open_fds,
        threads: field(&status, "Threads:").ok_or_else(|| missing("Threads"))?,
        kernel_unreclaimable_kib: field(&meminfo, "SUnreclaim:")
            .ok_or_else(|| missing("SUnreclaim"))?,
    })
}

/// Samples every `every` on a thread of its own until dropped or finished.
pub struct Monitor {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<Vec<Sample>>>>,
}

impl Monitor {
    pub fn start(every: Duration) -> Monitor {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let started = Instant::now();
            let mut samples = vec![sample(started)?];
            let mut next = every;
            while !flag.load(Ordering::Relaxed) {
                // Short naps, so that finishing does not wait for a whole period.
                std::thread::sleep(Duration::from_millis(100).min(every));
                if started.elapsed() >= next {
                    samples.push(sample(started)?);
                    next += every;
                }
            }
            Ok(samples)
        });
        Monitor {
            stop,
            thread: Some(thread),
        }
    }

    pub fn finish(mut self) -> Result<Vec<Sample>> {
        self.stop.store(true, Ordering::Relaxed);
        let thread = self.thread.take().expect("finished once");
        thread
            .join()
            .map_err(|_| anyhow::anyhow!("the resource monitor panicked"))?
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_fields_are_read_by_key_and_unit_ignored() {
        let text = "Name:\tx\nVmRSS:\t   2048 kB\nThreads:\t7\n";
        assert_eq!(field(text, "VmRSS:"), Some(2048));
        assert_eq!(field(text, "Threads:"), Some(7));
        assert_eq!(field(text, "VmSwap:"), None);
    }

    #[test]
    fn descriptors_opened_show_in_the_next_sample() {
        let started = Instant::now();
        let before = sample(started).expect("sample");
        let files: Vec<_> = (0..64)
            .map(|_| std::fs::File::open("/proc/self/status").expect("open"))
            .collect();
        let after = sample(started).expect("sample");
        drop(files);
        // Other tests of this binary open and close a few files meanwhile.
        let opened = after.open_fds as i64 - before.open_fds as i64;
        assert!((56..=72).contains(&opened), "{before:?} -> {after:?}");
        assert!(before.rss_kib > 0 && before.threads >= 1);
    }
}
