//! `[measure]`: the measurement interval, the warm-up, traces and the convergence window.

use super::{Problems, key};
use crate::spec::MeasureSpec;
use crate::units::Duration;

pub fn check(m: &MeasureSpec, duration: Duration, p: &mut Problems) {
    if m.interval == Duration::ZERO {
        p.push(
            vec![key("measure"), key("interval")],
            "the interval must be greater than zero",
        );
    }
    if m.warmup >= duration && duration != Duration::ZERO {
        p.push(
            vec![key("measure"), key("warmup")],
            format!(
                "warm-up {} leaves nothing to measure in a {duration} run",
                m.warmup
            ),
        );
    }
    for (field, v) in [
        ("trace_interval", m.trace_interval),
        ("convergence_after", m.convergence_after),
    ] {
        match v {
            Some(Duration::ZERO) if field == "trace_interval" => p.push(
                vec![key("measure"), key(field)],
                "the trace interval must be greater than zero",
            ),
            Some(t) if t >= duration && duration != Duration::ZERO => p.push(
                vec![key("measure"), key(field)],
                format!("{t} is not inside the {duration} run"),
            ),
            _ => {}
        }
    }
}
