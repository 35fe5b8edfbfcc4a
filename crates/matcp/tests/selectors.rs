//! The selectors against the paper's definitions: Table 1's weights, the refresh rule, and
//! the degenerate cases (one path, nothing measured yet, equal RTTs, a path that timed out).

use matcp::*;
use proptest::prelude::*;

const MS: u64 = 1_000_000;

fn timed(srtt_ms: u64, min_ms: u64) -> Observation {
    Observation {
        srtt_ns: srtt_ms * MS,
        rttvar_ns: srtt_ms * MS / 4,
        min_rtt_ns: min_ms * MS,
        rto_ns: 200 * MS,
        segments_sent: 100,
        retransmits: 0,
        timeouts: 0,
    }
}

/// Draws spread evenly over [0, 1): frequencies are then exact, not statistical.
fn grid(n: usize) -> impl Iterator<Item = f64> {
    (0..n).map(move |i| (i as f64 + 0.5) / n as f64)
}

#[test]
fn weighted_rtt_gives_table_1() {
    let mut w = WeightedRtt::new(3);
    for (p, rtt) in [100, 115, 111].into_iter().enumerate() {
        w.observe(PathId(p as u16), &timed(rtt, rtt));
    }
    let weights = w.weights().expect("all measured");
    for (got, want) in weights
        .iter()
        .zip([226.0 / 652.0, 211.0 / 652.0, 215.0 / 652.0])
    {
        assert!((got - want).abs() < 1e-12, "{weights:?}");
    }
    // Choices follow the weights: 652 evenly spread draws give 226, 211 and 215.
    let mut counts = [0; 3];
    for u in grid(652) {
        counts[w.choose(u).index()] += 1;
    }
    assert_eq!(counts, [226, 211, 215]);
}

#[test]
fn weighted_rtt_degenerate_cases() {
    // One path: always it, measured or not.
    let mut one = WeightedRtt::new(1);
    assert_eq!(one.choose(0.99), PathId(0));
    one.observe(PathId(0), &timed(50, 50));
    assert_eq!(one.weights(), Some(vec![1.0]));
    assert_eq!(one.choose(0.99), PathId(0));
    // Nothing measured yet: no weights; the unmeasured paths are tried, evenly.
    let mut w = WeightedRtt::new(4);
    assert_eq!(w.weights(), None);
    w.observe(PathId(1), &timed(80, 80));
    let mut seen = [0; 4];
    for u in grid(300) {
        seen[w.choose(u).index()] += 1;
    }
    assert_eq!(seen, [100, 0, 100, 100]);
    // Equal RTTs: equal chances.
    let mut eq = WeightedRtt::new(4);
    for p in 0..4 {
        eq.observe(PathId(p), &timed(65, 65));
    }
    assert_eq!(eq.weights(), Some(vec![0.25; 4]));
    // A path whose connection timed out without a single RTT sample counts at its RTO: it
    // keeps a chance, smaller than the live paths'.
    let mut t = WeightedRtt::new(2);
    t.observe(PathId(0), &timed(100, 100));
    let dead = Observation {
        rto_ns: 3000 * MS,
        segments_sent: 3,
        retransmits: 2,
        timeouts: 2,
        ..Observation::default()
    };
    t.observe(PathId(1), &dead);
    let weights = t.weights().expect("measured");
    assert!((weights[1] - 100.0 / 3100.0).abs() < 1e-12, "{weights:?}");
    // A connection with neither a sample nor a timeout says nothing.
    let mut n = WeightedRtt::new(2);
    n.observe(PathId(0), &Observation::default());
    assert_eq!(n.weights(), None);
}

#[test]
fn lowest_rtt_variation_prefers_least_queueing_and_refreshes_after_r_in_a_row() {
    let mut s = Lowest::new(RttVariation::default(), 3, Some(3));
    // Propagation 60, 40, 20 ms; queueing 30, 5, 25 ms: path 1 has the least.
    for (p, (prop, srtt)) in [(60, 90), (40, 45), (20, 45)].into_iter().enumerate() {
        s.observe(PathId(p as u16), &timed(prop, prop));
        s.observe(PathId(p as u16), &timed(srtt, prop));
    }
    assert_eq!(s.measures()[1], Some(5.0 * MS as f64));
    assert_eq!(s.choose(0.1), PathId(1));
    assert_eq!(s.choose(0.9), PathId(1));
    // The third time in a row: chosen, then every measure goes back to zero.
    assert_eq!(s.choose(0.5), PathId(1));
    assert_eq!(s.measures(), vec![None; 3]);
    // All zero now: a tie, broken by the draw, so every path is tried again.
    assert_eq!(s.choose(0.0), PathId(0));
    assert_eq!(s.choose(0.99), PathId(2));
    // The propagation estimate survives the refresh: path 0 measured again at 70 ms has
    // 10 ms of queueing, not 0.
    s.observe(PathId(0), &timed(70, 70));
    assert_eq!(s.measures()[0], Some(10.0 * MS as f64));
}

#[test]
fn rttvar_reading_uses_tcps_rttvar() {
    let mut s = Lowest::new(
        RttVariation {
            reading: VariationReading::Rttvar,
        },
        2,
        None,
    );
    s.observe(PathId(0), &timed(100, 100)); // RTTVAR 25 ms
    s.observe(PathId(1), &timed(40, 10)); // RTTVAR 10 ms, queueing 30 ms
    assert_eq!(s.choose(0.5), PathId(1));
}

#[test]
fn rtt_prefers_the_shorter_path_until_its_queue_makes_it_slower() {
    let mut s = Lowest::new(Rtt, 2, None);
    s.observe(PathId(0), &timed(40, 20));
    s.observe(PathId(1), &timed(52, 52));
    assert_eq!(s.choose(0.5), PathId(0));
    s.observe(PathId(0), &timed(60, 20));
    assert_eq!(s.choose(0.5), PathId(1));
}

#[test]
fn drops_compare_the_share_lost_not_the_count() {
    let mut s = Lowest::new(Drops, 2, None);
    // A long transfer with 10 losses in 1000 segments against a short one with 5 in 100.
    let long = Observation {
        segments_sent: 1000,
        retransmits: 10,
        ..timed(65, 65)
    };
    let short = Observation {
        segments_sent: 100,
        retransmits: 5,
        ..timed(65, 65)
    };
    s.observe(PathId(0), &long);
    s.observe(PathId(1), &short);
    assert_eq!(s.choose(0.9), PathId(0));
    // Nothing sent: no measure (the path stays as it was).
    s.observe(PathId(1), &Observation::default());
    assert_eq!(s.measures()[1], Some(0.05));
}

#[test]
fn single_path_never_moves() {
    let mut s = SinglePath { path: PathId(2) };
    s.observe(PathId(2), &timed(900, 10));
    assert!(grid(10).all(|u| s.choose(u) == PathId(2)));
}

proptest! {
    #[test]
    fn weights_are_a_distribution_favouring_shorter_rtts(
        rtts in proptest::collection::vec(1u64..10_000_000_000, 1..9),
        draws in proptest::collection::vec(0.0f64..1.0, 1..50),
    ) {
        let mut w = WeightedRtt::new(rtts.len());
        for (p, &r) in rtts.iter().enumerate() {
            w.observe(PathId(p as u16), &Observation { srtt_ns: r, ..Observation::default() });
        }
        let weights = w.weights().unwrap();
        prop_assert!((weights.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        for i in 0..rtts.len() {
            prop_assert!(weights[i] >= 0.0);
            for j in 0..rtts.len() {
                if rtts[i] < rtts[j] {
                    prop_assert!(weights[i] >= weights[j]);
                }
            }
        }
        for u in draws {
            prop_assert!(w.choose(u).index() < rtts.len());
        }
    }

    #[test]
    fn lowest_always_picks_a_smallest_measure(
        srtts in proptest::collection::vec(1u64..1_000, 1..9),
        u in 0.0f64..1.0,
    ) {
        let mut s = Lowest::new(Rtt, srtts.len(), None);
        for (p, &r) in srtts.iter().enumerate() {
            s.observe(PathId(p as u16), &timed(r, r));
        }
        let chosen = s.choose(u).index();
        prop_assert_eq!(srtts[chosen], *srtts.iter().min().unwrap());
    }
}
