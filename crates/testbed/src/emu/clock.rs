//! The emulator's time: CLOCK_MONOTONIC in nanoseconds from the start of a run, which every
//! namespace shares, so agents and tests can line their own readings up with it.

use net::Nanos;

#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin: Nanos,
}

/// CLOCK_MONOTONIC now, in nanoseconds.
pub fn monotonic_ns() -> Nanos {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Clock {
    pub fn starting_now() -> Clock {
        Clock {
            origin: monotonic_ns(),
        }
    }
    /// Time since the start, ns.
    pub fn now(&self) -> Nanos {
        monotonic_ns().saturating_sub(self.origin)
    }
    /// The start, as a CLOCK_MONOTONIC reading in ns.
    pub fn origin(&self) -> Nanos {
        self.origin
    }
    /// The wall-clock time (since the Unix epoch) of the start.
    pub fn wall_origin(&self) -> std::time::Duration {
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        wall.saturating_sub(std::time::Duration::from_nanos(self.now()))
    }
    /// Sleeps until `at` (ns since the start); returns at once if that has passed.
    pub fn sleep_until(&self, at: Nanos) {
        let now = self.now();
        if at > now {
            std::thread::sleep(std::time::Duration::from_nanos(at - now));
        }
    }
}
