//! MATCP's C selection arithmetic (matcp_select.h, compiled for the host) against the Rust
//! selectors of crates/matcp, on sequences of choices and observations generated here from
//! a seeded stream and run through both.
//!
//! What must agree, and how closely:
//! - the lowest-measure selectors (RTT, RTT variation both readings, drops), with and
//!   without the refresh constant R, and single path: every choice, exactly (the C code
//!   turns Rust's f64 draw u into the u32 d = u 2^32 and compares fractions exactly;
//!   times here stay below 2^40 ns and counts below 2^20, where f64 is exact too);
//! - weighted RTT: each path's threshold equals ceil(2^32 cum_x / ((n - 1) T)) computed
//!   here in u128, exactly; the probabilities they imply equal Rust's weights() within
//!   2^-31; every choice agrees, except where Rust's f64 cumulative sum rounds across the
//!   draw (a draw within one unit of a threshold), which is counted and must be rare.

use matcp::{Drops, Lowest, PathId, PathSelector, Rtt, RttVariation, SinglePath, VariationReading};
use mptcp_bpf::matcp::host;
use mptcp_bpf::matcp::layout::{Observation, Selection, State};
use mptcp_bpf::matcp::{MAX_PATHS, Selector};
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A seeded stream, so that a failure repeats.
struct Stream(Xoshiro256PlusPlus);

impl Stream {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn draw(&mut self) -> u32 {
        match self.below(10) {
            0 => [0, 1, u32::MAX, u32::MAX - 1, 1 << 31][self.below(5) as usize],
            _ => self.next() as u32,
        }
    }
}

const MS: u64 = 1_000_000;

/// Observations with many ties (a few RTT levels), no-sample timeouts, and zero counts.
fn observation(s: &mut Stream) -> matcp::Observation {
    let levels = [0, 1, 10 * MS, 20 * MS, 20 * MS + 1, 65 * MS, 3_000 * MS];
    let srtt = match s.below(3) {
        0 => levels[s.below(levels.len() as u64) as usize],
        _ => s.below(1 << 40),
    };
    let segments_sent = [0, 1, 10, 100, s.below(1 << 20)][s.below(5) as usize];
    matcp::Observation {
        srtt_ns: srtt,
        rttvar_ns: [0, 5 * MS, s.below(1 << 36)][s.below(3) as usize],
        min_rtt_ns: match s.below(3) {
            0 => 0,
            _ => srtt.saturating_sub(s.below(srtt / 2 + 1)),
        },
        rto_ns: [0, 200 * MS, 1_000 * MS, s.below(1 << 39)][s.below(4) as usize],
        segments_sent,
        retransmits: s.below(segments_sent + 1),
        timeouts: [0, 0, 1, 3][s.below(4) as usize],
    }
}

fn rust_selector(kind: Selector, n: usize, refresh: Option<u32>) -> Box<dyn PathSelector> {
    let variation = |reading| RttVariation { reading };
    match kind {
        Selector::SinglePath => Box::new(SinglePath { path: PathId(0) }),
        Selector::Rtt => Box::new(Lowest::new(Rtt, n, refresh)),
        Selector::RttVariation => Box::new(Lowest::new(
            variation(VariationReading::Queueing),
            n,
            refresh,
        )),
        Selector::Rttvar => Box::new(Lowest::new(variation(VariationReading::Rttvar), n, refresh)),
        Selector::Drops => Box::new(Lowest::new(Drops, n, refresh)),
        Selector::WeightedRtt => Box::new(matcp::WeightedRtt::new(n)),
    }
}

/// Weighted RTT's thresholds in exact arithmetic, from the latest RTT of each path.
fn exact_thresholds(rtts: &[u64]) -> Vec<u64> {
    let total: u128 = rtts.iter().map(|&r| r as u128).sum();
    let den = (rtts.len() as u128 - 1) * total;
    let mut cum = 0u128;
    rtts.iter()
        .map(|&r| {
            cum += total - r as u128;
            (cum << 32).div_ceil(den) as u64
        })
        .collect()
}

#[test]
fn c_selection_matches_the_rust_selectors() {
    let mut s = Stream(Xoshiro256PlusPlus::seed_from_u64(0x006d_6174_6370));
    let mut weighted_rounding = 0;
    let mut choices = 0;
    for case in 0..3000 {
        let kind = Selector::ALL[s.below(6) as usize];
        let n = 1 + s.below(MAX_PATHS as u64) as usize;
        let refresh = match s.below(3) {
            0 => None,
            _ => Some(1 + s.below(6) as u32),
        };
        let refresh = refresh.filter(|_| kind.refreshes());
        let mut rust = rust_selector(kind, n, refresh);
        let mut c = Selection::new(kind, n, refresh);
        let mut rtts: Vec<Option<u64>> = vec![None; n];
        for step in 0..120 {
            if s.below(2) == 0 {
                let draw = s.draw();
                let want = rust.choose(draw as f64 / 4_294_967_296.0).0 as u32;
                let got = host::choose(&mut c, draw);
                choices += 1;
                if got == want {
                    continue;
                }
                // Only weighted RTT may differ, and only at a threshold's edge.
                let measured: Option<Vec<u64>> = rtts.iter().copied().collect();
                let edge = kind == Selector::WeightedRtt
                    && measured.is_some_and(|r| {
                        exact_thresholds(&r)
                            .iter()
                            .any(|&t| (draw as i64 - t as i64).abs() <= 1)
                    });
                assert!(
                    edge,
                    "case {case} step {step}: {kind} over {n} paths, R {refresh:?}, draw {draw}: C chose {got}, Rust {want}\n{c:?}"
                );
                weighted_rounding += 1;
            } else {
                let path = s.below(n as u64 + 1) as usize;
                let o = observation(&mut s);
                rust.observe(PathId(path as u16), &o);
                host::observe(&mut c, path as u32, &o);
                if let (Some(slot), Some(rtt)) = (rtts.get_mut(path), o.rtt_ns()) {
                    *slot = Some(rtt.max(1));
                }
                if kind == Selector::WeightedRtt
                    && n > 1
                    && let Some(r) = rtts.iter().copied().collect::<Option<Vec<u64>>>()
                {
                    let exact = exact_thresholds(&r);
                    let got: Vec<u64> = (0..n as u32)
                        .map(|x| host::weighted_threshold(&c, x))
                        .collect();
                    assert_eq!(got, exact, "case {case}: thresholds for RTTs {r:?}");
                }
            }
        }
    }
    assert!(choices > 100_000, "{choices}");
    assert!(
        weighted_rounding <= 3,
        "{weighted_rounding} choices on a threshold's edge"
    );
}

#[test]
fn weighted_thresholds_give_table_1() {
    // The paper's Table 1: RTTs of 100, 115 and 111 ms give 226/652, 211/652, 215/652.
    let mut c = Selection::new(Selector::WeightedRtt, 3, None);
    let mut w = matcp::WeightedRtt::new(3);
    for (p, rtt) in [100, 115, 111].into_iter().enumerate() {
        let o = matcp::Observation {
            srtt_ns: rtt * MS,
            min_rtt_ns: rtt * MS,
            segments_sent: 10,
            ..Default::default()
        };
        host::observe(&mut c, p as u32, &o);
        w.observe(PathId(p as u16), &o);
    }
    let t: Vec<u64> = (0..3).map(|x| host::weighted_threshold(&c, x)).collect();
    let q32 = |num: u128| ((num << 32).div_ceil(652)) as u64;
    assert_eq!(t, vec![q32(226), q32(226 + 211), 1 << 32]);
    let weights = w.weights().expect("all measured");
    let mut previous = 0;
    for (x, want) in weights.iter().enumerate() {
        let p = (t[x] - previous) as f64 / 4_294_967_296.0;
        assert!((p - want).abs() < 2f64.powi(-31), "path {x}: {p} vs {want}");
        previous = t[x];
    }
    // 652 evenly spread draws: exactly 226, 211 and 215, as the Rust selector gives.
    let mut counts = [0; 3];
    for i in 0..652u64 {
        let draw = (((2 * i + 1) << 32) / (2 * 652)) as u32;
        counts[host::choose(&mut c, draw) as usize] += 1;
    }
    assert_eq!(counts, [226, 211, 215]);
}

#[test]
fn state_layout_matches_the_c_compiler() {
    use mptcp_bpf::matcp::layout::{PathState, PathStats};
    use std::mem::{offset_of, size_of};
    assert_eq!(
        host::state_layout(),
        vec![
            size_of::<State>() as u32,
            offset_of!(State, addr4) as u32,
            offset_of!(State, bind_errors) as u32,
            offset_of!(State, netns_cookie) as u32,
            offset_of!(State, sel) as u32,
            offset_of!(State, stats) as u32,
            offset_of!(State, cwnd_clamp) as u32,
            offset_of!(State, families) as u32,
            offset_of!(State, addr6) as u32,
            size_of::<Selection>() as u32,
            offset_of!(Selection, path) as u32,
            size_of::<PathState>() as u32,
            size_of::<PathStats>() as u32,
            size_of::<Observation>() as u32,
        ]
    );
}
