//! Linux's tick clock (`jiffies`) and when its timer wheel runs a timer, for the state the
//! simulator keeps as Linux keeps it: in whole ticks.
//!
//! - `jiffies` counts ticks of `1 / HZ` seconds. Read at a time between two ticks, it is the
//!   earlier one; a remaining time computed from it (`icsk_timeout - jiffies`) is a whole
//!   number of ticks, and two events in the same tick carry the same stamp
//!   (`tcp_jiffies32`).
//! - A `timer_list` armed for tick `expires` runs when the wheel reaches its bucket
//!   (`calc_wheel_index()` and `calc_index()`, kernel/time/timer.c). The level is chosen by
//!   how far ahead `expires` lies (level `n` from `LVL_START(n)` ticks on, in buckets of
//!   `8^n` ticks), and the bucket is the next multiple of the level's granularity strictly
//!   above `expires`, so that a timer armed at the edge of a tick never runs early: armed
//!   for `jiffies + 1`, it runs on the second tick from now; armed 63 to 503 ticks ahead,
//!   up to 8 ticks late, and further ahead up to 64 and more.
//!
//! The wheel's clock (`base->clk`) is taken to be `jiffies`. Linux's may be one tick ahead
//! when a timer is armed after the timer softirq of that tick has run, which moves each
//! level's first distance by one tick; the simulator leaves that out.
//!
//! `HZ` is a kernel build option (`CONFIG_HZ`); the simulator takes Debian's 250, the kernel
//! the kernel backend runs on here. Only MPTCP's data-level timer and the stale accounting
//! run on this clock; the subflows' own TCP timers still run at nanosecond resolution.

use net::Nanos;
use std::ops::Add;

/// Ticks a second (`CONFIG_HZ`).
pub const HZ: u64 = 250;
/// One tick.
pub const JIFFY: Nanos = 1_000_000_000 / HZ;

/// A number of ticks: an instant (`jiffies` at that moment) or a span.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Jiffies(pub u64);

impl Jiffies {
    /// The value of `jiffies` at `now`: the ticks that have happened by then.
    pub fn at(now: Nanos) -> Jiffies {
        Jiffies(now / JIFFY)
    }

    /// A deadline the simulator keeps in nanoseconds, read as the tick its timer is due at:
    /// the first tick at or after it.
    pub fn due_at(deadline: Nanos) -> Jiffies {
        Jiffies(deadline.div_ceil(JIFFY))
    }

    /// When this tick happens.
    pub fn start(self) -> Nanos {
        self.0.saturating_mul(JIFFY)
    }
}

impl Add for Jiffies {
    type Output = Jiffies;
    fn add(self, other: Jiffies) -> Jiffies {
        Jiffies(self.0.saturating_add(other.0))
    }
}

/// `LVL_CLK_SHIFT`: each level's buckets are 8 times as wide as the one below.
const LVL_CLK_SHIFT: u32 = 3;
/// `LVL_BITS`: 64 buckets a level.
const LVL_BITS: u32 = 6;
/// `LVL_DEPTH` for `HZ` above 100.
const LVL_DEPTH: u32 = 9;

/// `LVL_START(n)`: the first distance (in ticks) held by level `n`.
const fn level_start(n: u32) -> u64 {
    ((1 << LVL_BITS) - 1) << ((n - 1) * LVL_CLK_SHIFT)
}

/// `WHEEL_TIMEOUT_CUTOFF`: timers further ahead are capped at `WHEEL_TIMEOUT_MAX`.
const WHEEL_TIMEOUT_CUTOFF: u64 = level_start(LVL_DEPTH);
const WHEEL_TIMEOUT_MAX: u64 = WHEEL_TIMEOUT_CUTOFF - (1 << ((LVL_DEPTH - 1) * LVL_CLK_SHIFT));

/// The tick at which a `timer_list` armed for `expires` runs, armed when the wheel's clock
/// reads `clk` (`calc_wheel_index()`).
pub fn timer_list_runs_at(expires: Jiffies, clk: Jiffies) -> Jiffies {
    let Some(delta) = expires.0.checked_sub(clk.0) else {
        // Already due: the bucket of the current tick.
        return clk;
    };
    let (level, expires) = match (1..LVL_DEPTH).find(|&n| delta < level_start(n)) {
        Some(n) => (n - 1, expires.0),
        None if delta >= WHEEL_TIMEOUT_CUTOFF => (LVL_DEPTH - 1, clk.0 + WHEEL_TIMEOUT_MAX),
        None => (LVL_DEPTH - 1, expires.0),
    };
    let shift = level * LVL_CLK_SHIFT;
    Jiffies(((expires >> shift) + 1) << shift)
}

/// When a `timer_list` armed at `now` for `span` ticks from now (`jiffies + span`) runs.
pub fn timer_list_deadline(now: Nanos, span: Jiffies) -> Nanos {
    let clk = Jiffies::at(now);
    timer_list_runs_at(clk + span, clk).start()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn jiffies_is_the_last_tick_and_a_deadline_its_first_tick() {
        assert_eq!(JIFFY, 4 * MS);
        assert_eq!(Jiffies::at(0), Jiffies(0));
        assert_eq!(Jiffies::at(4 * MS - 1), Jiffies(0));
        assert_eq!(Jiffies::at(4 * MS), Jiffies(1));
        assert_eq!(Jiffies::due_at(4 * MS), Jiffies(1));
        assert_eq!(Jiffies::due_at(4 * MS + 1), Jiffies(2));
        assert_eq!(Jiffies(3).start(), 12 * MS);
    }

    #[test]
    fn level_zero_runs_on_the_tick_after_the_one_asked_for() {
        // `calc_index()` at level 0: `(expires >> 0) + 1`.
        assert_eq!(timer_list_runs_at(Jiffies(101), Jiffies(100)), Jiffies(102));
        assert_eq!(timer_list_runs_at(Jiffies(150), Jiffies(100)), Jiffies(151));
        // LVL_START(1) = 63: the last distance level 0 holds is 62.
        assert_eq!(timer_list_runs_at(Jiffies(162), Jiffies(100)), Jiffies(163));
    }

    #[test]
    fn higher_levels_round_up_to_their_granularity() {
        // 63 to 503 ticks ahead: level 1, buckets of 8 ticks.
        assert_eq!(timer_list_runs_at(Jiffies(163), Jiffies(100)), Jiffies(168));
        assert_eq!(timer_list_runs_at(Jiffies(168), Jiffies(100)), Jiffies(176));
        assert_eq!(timer_list_runs_at(Jiffies(603), Jiffies(100)), Jiffies(608));
        // 504 ticks ahead: level 2, buckets of 64.
        assert_eq!(timer_list_runs_at(Jiffies(604), Jiffies(100)), Jiffies(640));
    }

    #[test]
    fn a_timer_already_due_runs_on_the_current_tick() {
        assert_eq!(timer_list_runs_at(Jiffies(90), Jiffies(100)), Jiffies(100));
    }

    #[test]
    fn the_furthest_timers_are_capped() {
        let clk = Jiffies(0);
        let far = timer_list_runs_at(Jiffies(u64::MAX / 2), clk);
        assert!(
            far.0 > WHEEL_TIMEOUT_MAX && far.0 <= WHEEL_TIMEOUT_CUTOFF,
            "{far:?}"
        );
    }

    #[test]
    fn a_timer_never_runs_before_its_span_has_passed() {
        for now in [0, 1, 4 * MS - 1, 4 * MS, 123_456_789] {
            for span in [1, 2, 50, 63, 64, 600] {
                let at = timer_list_deadline(now, Jiffies(span));
                assert!(at > now + span * JIFFY, "{now} {span}");
                assert_eq!(at % JIFFY, 0, "timers run on ticks");
            }
        }
        // The data-level timer's minimum, 50 ticks, armed 1 ms into a tick: 51 ticks on.
        assert_eq!(timer_list_deadline(MS, Jiffies(50)), 204 * MS);
    }
}
