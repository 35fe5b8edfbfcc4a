//! A scenario's timeline played back to back for a long run: its events every cycle (the
//! scenario's duration), its flows once.

use scenario::Scenario;
use scenario::units::Duration;

/// More events than this would be a mistake (a cycle of microseconds over hours), and the
/// emulator keeps them all in its queue.
pub const MAX_EVENTS: u64 = 1_000_000;

/// `sc` stretched to `total`: every event again at the same offset in each later cycle,
/// flows that ran to the end of the cycle running to the end of the whole, the others (a
/// finite transfer, an early stop) as they were.
pub fn repeat(sc: &Scenario, total: Duration) -> Result<Scenario, String> {
    let cycle = sc.duration.nanos();
    if total.nanos() < cycle {
        return Err(format!(
            "the soak's duration {total} is shorter than one cycle of {} ({cycle_text})",
            sc.name,
            cycle_text = sc.duration
        ));
    }
    let cycles = total.nanos().div_ceil(cycle);
    let events = cycles.saturating_mul(sc.events.len() as u64);
    if events > MAX_EVENTS {
        return Err(format!(
            "{cycles} cycles of {} events is {events} events, more than the {MAX_EVENTS} a run \
             may have: choose a shorter duration",
            sc.events.len()
        ));
    }
    let mut long = sc.clone();
    long.duration = total;
    long.events.clear();
    for k in 0..cycles {
        for e in &sc.events {
            let at = Duration(e.at.nanos() + k * cycle);
            if at < total {
                let mut again = e.clone();
                again.at = at;
                long.events.push(again);
            }
        }
    }
    // Within a cycle the file's order may not be time order; the queue needs time order
    // and keeps equal times in this order.
    long.events.sort_by_key(|e| e.at);
    for f in &mut long.flows {
        if f.stop >= sc.duration {
            f.stop = total;
        }
    }
    Ok(long)
}

#[cfg(test)]
mod tests {
    use super::*;
    use scenario::{LoadOptions, load_str};
    use std::path::Path;

    const CYCLE: &str = r#"
[scenario]
name = "c"
duration = "10s"
[[node]]
name = "a"
kind = "host"
[[node]]
name = "b"
kind = "host"
[[link]]
name = "l"
a = "a"
b = "b"
rate = "10Mbps"
delay = "5ms"
[[flow]]
name = "bulk"
from = "a"
to = "b"
[[flow]]
name = "early"
from = "a"
to = "b"
stop = "4s"
[[event]]
at = "7s"
link = "l"
action = "up"
[[event]]
at = "3s"
link = "l"
action = "down"
"#;

    fn cycle() -> Scenario {
        load_str(CYCLE, Path::new("c.toml"), &LoadOptions::default())
            .expect("valid")
            .remove(0)
    }

    fn secs(s: u64) -> Duration {
        Duration(s * 1_000_000_000)
    }

    #[test]
    fn events_repeat_every_cycle_in_time_order_and_stop_at_the_end() {
        let long = repeat(&cycle(), secs(25)).expect("fits");
        let at: Vec<u64> = long
            .events
            .iter()
            .map(|e| e.at.nanos() / 1_000_000_000)
            .collect();
        assert_eq!(at, [3, 7, 13, 17, 23]);
        assert_eq!(long.duration, secs(25));
    }

    #[test]
    fn flows_to_the_end_run_to_the_new_end_and_others_keep_their_stop() {
        let long = repeat(&cycle(), secs(60)).expect("fits");
        assert_eq!(long.flows[0].stop, secs(60));
        assert_eq!(long.flows[1].stop, secs(4));
    }

    #[test]
    fn shorter_than_a_cycle_or_too_many_events_is_refused() {
        let err = repeat(&cycle(), secs(5)).expect_err("shorter");
        assert!(err.contains("shorter than one cycle"), "{err}");
        let err = repeat(&cycle(), secs(10 * MAX_EVENTS)).expect_err("too many");
        assert!(err.contains("more than the 1000000"), "{err}");
    }
}
