//! `[[event]]`: a change to a link at a time (down, up, or new rate, delay or loss).

use super::links::Links;
use super::{Problems, at, unknown};
use crate::model::{Event, EventKind};
use crate::spec::{EventAction, EventSpec};
use crate::units::Duration;

/// The events that are valid, in time order.
pub fn check(
    specs: &[EventSpec],
    links: &Links,
    duration: Duration,
    p: &mut Problems,
) -> Vec<Event> {
    let mut events = Vec::new();
    for (i, e) in specs.iter().enumerate() {
        let Some(&link) = links.index.get(&e.link) else {
            if links.left_out.contains(&e.link) {
                continue;
            }
            let mut known = links.names();
            known.extend(links.left_out.iter().map(String::as_str));
            p.push(at("event", i, "link"), unknown("link", &e.link, &known));
            continue;
        };
        if e.at > duration {
            p.push(
                at("event", i, "at"),
                format!("{} is after the end of the scenario ({duration})", e.at),
            );
        }
        let Some(kind) = kind(i, e, p) else {
            continue;
        };
        events.push(Event {
            at: e.at,
            link,
            kind,
        });
    }
    events.sort_by_key(|e| e.at);
    events
}

/// What the event does, if its fields fit its action.
fn kind(i: usize, e: &EventSpec, p: &mut Problems) -> Option<EventKind> {
    let has_values = e.rate.is_some() || e.delay.is_some() || e.loss.is_some();
    Some(match e.action {
        EventAction::Down | EventAction::Up if has_values => {
            p.push(
                at("event", i, "action"),
                "`down` and `up` take no rate, delay or loss: use action = \"set\"",
            );
            return None;
        }
        EventAction::Down => EventKind::Down,
        EventAction::Up => EventKind::Up,
        EventAction::Set if !has_values => {
            p.push(
                at("event", i, "action"),
                "`set` needs at least one of rate, delay, loss",
            );
            return None;
        }
        EventAction::Set => EventKind::Set {
            rate: e.rate,
            delay: e.delay,
            loss: e.loss,
        },
    })
}
