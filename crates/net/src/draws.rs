//! What a scenario leaves to chance, fixed before a run: a flow group's size drawn within
//! its spread per run, from the run's seed (the MATCP experiments' customers per edge
//! router), and a link's delay drawn within its spread once per scenario, from the
//! scenario's own seed (the uplinks of different delays: each keeps its delay in every run,
//! so that its goodput can be averaged over runs). Every backend runs the scenario this
//! returns, so one seed gives the same draws in the simulator and on real hosts.

use crate::seeds::{Stream, sub_seed};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use scenario::Scenario;
use scenario::units::Duration;
use std::borrow::Cow;

/// `sc` with every drawn number fixed for the run with `seed` (borrowed when nothing is
/// drawn). Each group draws from its own stream, so adding a group changes no other's draw.
pub fn for_run(sc: &Scenario, seed: u64) -> Cow<'_, Scenario> {
    if sc.flows.iter().all(|g| g.count_spread == 0)
        && sc.links.iter().all(|l| l.delay_spread.nanos() == 0)
    {
        return Cow::Borrowed(sc);
    }
    let mut drawn = sc.clone();
    for (l, link) in drawn.links.iter_mut().enumerate() {
        let spread = link.delay_spread.nanos();
        if spread == 0 {
            continue;
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(sub_seed(sc.seed, Stream::Delay, l as u64));
        // Validated: spread <= mean, and both directions have the mean.
        let mean = link.dirs[0].delay.nanos();
        let delay = Duration(rng.random_range(mean - spread..=mean + spread));
        for dir in &mut link.dirs {
            dir.delay = delay;
        }
        link.delay_spread = Duration(0);
    }
    for (g, group) in drawn.flows.iter_mut().enumerate() {
        if group.count_spread == 0 {
            continue;
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(sub_seed(seed, Stream::Draw, g as u64));
        let (mean, spread) = (group.count, group.count_spread);
        // Validated: spread < mean and mean + spread fits.
        group.count = rng.random_range(mean - spread..=mean + spread);
        group.count_spread = 0;
    }
    Cow::Owned(drawn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use scenario::{LoadOptions, load_str};
    use std::path::Path;

    /// Two hosts, one link of `delay`, a group of `count` flows and one of 3.
    fn scenario(seed: u64, delay: &str, count: &str) -> Scenario {
        let text = format!(
            r#"
[scenario]
name = "d"
duration = "10s"
seed = {seed}
[[node]]
name = "a"
kind = "host"
[[node]]
name = "b"
kind = "host"
[[link]]
a = "a"
b = "b"
rate = "10Mbps"
delay = {delay}
[[flow]]
name = "drawn"
from = "a"
to = "b"
count = {count}
[[flow]]
name = "fixed"
from = "a"
to = "b"
count = 3
"#
        );
        load_str(&text, Path::new("d.toml"), &LoadOptions::default())
            .expect("valid")
            .remove(0)
    }

    #[test]
    fn counts_are_drawn_within_the_spread_per_seed_and_reproducibly() {
        let sc = scenario(1, "\"5ms\"", "{ mean = 80, spread = 40 }");
        assert_eq!(sc.total_flows(), 120 + 3);
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..200 {
            let run = for_run(&sc, seed);
            let n = run.flows[0].count;
            assert!((40..=120).contains(&n), "{n}");
            assert_eq!(run.flows[0].count_spread, 0);
            assert_eq!(run.flows[1].count, 3);
            assert_eq!(for_run(&sc, seed).flows[0].count, n);
            seen.insert(n);
        }
        // 200 draws over 81 values reach both ends' neighbourhoods.
        assert!(
            seen.first().unwrap() < &45 && seen.last().unwrap() > &115,
            "{seen:?}"
        );
    }

    #[test]
    fn delays_are_drawn_once_per_scenario_within_the_spread() {
        let load = |seed| scenario(seed, r#"{ mean = "30ms", spread = "25ms" }"#, "1");
        let delay = |sc: &Scenario, run_seed| {
            let run = for_run(sc, run_seed);
            let l = &run.links[0];
            assert_eq!(l.dirs[0].delay, l.dirs[1].delay, "both directions alike");
            assert_eq!(l.delay_spread.nanos(), 0);
            l.dirs[0].delay.nanos()
        };
        let mut seen = Vec::new();
        for scenario_seed in 1..100 {
            let sc = load(scenario_seed);
            let d = delay(&sc, 7);
            assert!((5_000_000..=55_000_000).contains(&d), "{d}");
            // The runs of one scenario share its delays, whatever their seed.
            assert_eq!(delay(&sc, 8), d);
            seen.push(d);
        }
        seen.sort();
        seen.dedup();
        assert!(seen.len() > 90, "scenario seeds draw different delays");
    }

    #[test]
    fn nothing_drawn_borrows() {
        let sc = scenario(1, "\"5ms\"", "2");
        assert!(matches!(for_run(&sc, 7), Cow::Borrowed(_)));
    }
}
