//! The intervals a link was down, from the scenario's timed events: time-series figures
//! shade them, so that a handover's outage (E5.4) shows where it happened.

use scenario::Scenario;
use scenario::model::EventKind;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Outage {
    pub link: String,
    pub from_s: f64,
    pub to_s: f64,
}

/// Every interval a link of `sc` is down: from each `down` to the link's next `up`, or
/// to the end of the run.
pub fn of(sc: &Scenario) -> Vec<Outage> {
    let mut events: Vec<_> = sc.events.iter().collect();
    events.sort_by_key(|e| e.at);
    let mut down_since: Vec<Option<f64>> = vec![None; sc.links.len()];
    let mut out = Vec::new();
    for e in events {
        let l = e.link.index();
        match e.kind {
            EventKind::Down if down_since[l].is_none() => down_since[l] = Some(e.at.secs()),
            EventKind::Up => {
                if let Some(from_s) = down_since[l].take() {
                    out.push(Outage {
                        link: sc.links[l].name.clone(),
                        from_s,
                        to_s: e.at.secs(),
                    });
                }
            }
            _ => {}
        }
    }
    for (l, from) in down_since.into_iter().enumerate() {
        if let Some(from_s) = from {
            out.push(Outage {
                link: sc.links[l].name.clone(),
                from_s,
                to_s: sc.duration.secs(),
            });
        }
    }
    out
}

/// The intervals to shade, (from, to) in seconds.
pub fn spans(outages: &[Outage]) -> Vec<(f64, f64)> {
    outages.iter().map(|o| (o.from_s, o.to_s)).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_down_until_up_and_a_down_to_the_end_are_both_outages() {
        use crate::summary::tests::{ONE_LINK, load};
        let events = r#"
[[event]]
at = "3s"
link = "wifi"
action = "up"
[[event]]
at = "1s"
link = "wifi"
action = "down"
[[event]]
at = "8s"
link = "wifi"
action = "down"
"#;
        let sc = &load(&format!("{ONE_LINK}{events}"))[0];
        let spans = super::spans(&super::of(sc));
        assert_eq!(spans, [(1.0, 3.0), (8.0, 10.0)]);
    }
}
