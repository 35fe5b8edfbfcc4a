//! Shared test vectors: inputs and the reference's answers, for every other implementation
//! of these algorithms (the eBPF C code) to check against. Format: `testdata/README.md`.
//!
//! Inputs are integers as a kernel holds them (windows in packets, RTTs in microseconds);
//! outputs are the exact real-valued answers, which an integer implementation matches
//! within its stated precision.

use crate::wvegas::{WvegasDecision, WvegasParams, WvegasRound, wvegas_round};
use crate::{SubflowView, balia, coupled, ewtcp, lia, olia};
use serde::{Deserialize, Serialize};

pub const FORMAT: &str = "mptcp-lab cc vectors 2";

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct VectorFile {
    pub format: String,
    pub description: String,
    pub window_cases: Vec<WindowCase>,
    pub wvegas_cases: Vec<WvegasCase>,
    pub cwnd_limited_cases: Vec<CwndLimitedCase>,
}

/// Whether a window may grow now (Linux's `tcp_is_cwnd_limited()`), for a sender whose last
/// window of data showed `is_cwnd_limited` and `max_packets_out`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct CwndLimitedCase {
    pub cwnd: u32,
    pub ssthresh: u32,
    pub is_cwnd_limited: bool,
    pub max_packets_out: u32,
    pub expected: bool,
}

/// One subflow as a kernel sees it.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct VectorSubflow {
    pub cwnd: u32,
    pub ssthresh: u32,
    /// Smoothed RTT, microseconds; 0 = no sample yet.
    pub srtt_us: u64,
    pub established: bool,
    pub in_recovery: bool,
    /// OLIA's l_r, packets (0 elsewhere).
    pub inter_loss: u64,
}

impl VectorSubflow {
    pub fn view(&self) -> SubflowView {
        SubflowView {
            cwnd: self.cwnd as f64,
            ssthresh: self.ssthresh as f64,
            srtt_s: self.srtt_us as f64 / 1e6,
            established: self.established,
            in_recovery: self.in_recovery,
        }
    }
}

/// A window-based algorithm's answer for subflow `r` of a connection.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct WindowCase {
    pub algorithm: String,
    pub subflows: Vec<VectorSubflow>,
    pub r: usize,
    /// Congestion-avoidance increase of w_r per acknowledged packet (negative for OLIA's
    /// max-window paths).
    pub increase_per_packet: f64,
    /// Window (and ssthresh) of r after a loss event.
    pub cwnd_after_loss: f64,
}

/// One end-of-round decision of wVegas.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct WvegasCase {
    pub cwnd: u32,
    pub ssthresh: u32,
    pub base_rtt_us: u64,
    /// The round's mean RTT.
    pub rtt_us: u64,
    pub alpha: u32,
    pub queue_delay_us: u64,
    /// The other coupled subflows.
    pub others: Vec<VectorSubflow>,
    pub expected: WvegasDecision,
}

/// The algorithms with window vectors, under their kernel names.
pub const WINDOW_ALGORITHMS: &[&str] = &["reno", "ewtcp", "fullycoupled", "lia", "olia", "balia"];

/// The reference answer for one window case.
pub fn window_answer(algorithm: &str, subflows: &[VectorSubflow], r: usize) -> (f64, f64) {
    let views: Vec<SubflowView> = subflows.iter().map(VectorSubflow::view).collect();
    let inter_loss: Vec<f64> = subflows.iter().map(|s| s.inter_loss as f64).collect();
    let w = views[r].cwnd;
    let reno = (1.0 / w.max(1.0), crate::reno_ssthresh(w));
    if !views[r].is_coupled() {
        return reno;
    }
    match algorithm {
        "reno" => reno,
        "ewtcp" => (ewtcp::ewtcp_increase_per_packet(&views, r), reno.1),
        "fullycoupled" => (
            coupled::fully_coupled_increase_per_packet(&views, r),
            coupled::fully_coupled_after_loss(&views, r),
        ),
        "lia" => (lia::lia_increase_per_packet(&views, r), reno.1),
        "olia" => (
            olia::olia_increase_per_packet(&views, &inter_loss, r),
            reno.1,
        ),
        "balia" => (
            balia::balia_increase_per_packet(&views, r),
            balia::balia_after_loss(&views, r),
        ),
        other => panic!("no window vectors for {other}"),
    }
}

pub fn wvegas_answer(case: &WvegasCase) -> WvegasDecision {
    let others_rate = case
        .others
        .iter()
        .map(VectorSubflow::view)
        .filter(SubflowView::is_coupled)
        .map(|v| v.rate())
        .sum();
    wvegas_round(
        &WvegasParams::default(),
        &WvegasRound {
            cwnd: case.cwnd as f64,
            ssthresh: case.ssthresh as f64,
            base_rtt_s: case.base_rtt_us as f64 / 1e6,
            rtt_s: case.rtt_us as f64 / 1e6,
            alpha: case.alpha as f64,
            queue_delay_s: case.queue_delay_us as f64 / 1e6,
            others_rate,
        },
    )
}

/// splitmix64: a fixed generator, so the vectors are the same on every machine and version.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Log-uniform in [lo, hi]: extremes are as likely as typical values.
    fn log_uniform(&mut self, lo: u64, hi: u64) -> u64 {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        let v = ((lo as f64).ln() + u * ((hi as f64).ln() - (lo as f64).ln())).exp();
        (v.round() as u64).clamp(lo, hi)
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

const MAX_CWND: u64 = 1 << 20;
const MIN_RTT_US: u64 = 10;
const MAX_RTT_US: u64 = 10_000_000;

fn random_subflow(g: &mut Gen) -> VectorSubflow {
    let cwnd = match g.below(8) {
        0 => g.pick(&[1, 2, MAX_CWND as u32]),
        _ => g.log_uniform(1, MAX_CWND) as u32,
    };
    let srtt_us = match g.below(10) {
        0 => 0,
        1 => g.pick(&[MIN_RTT_US, MAX_RTT_US]),
        _ => g.log_uniform(MIN_RTT_US, MAX_RTT_US),
    };
    VectorSubflow {
        cwnd,
        ssthresh: g.log_uniform(2, MAX_CWND) as u32,
        srtt_us,
        established: g.below(12) != 0,
        in_recovery: g.below(5) == 0,
        inter_loss: g.log_uniform(1, 1 << 40),
    }
}

/// Hand-shaped cases first (one subflow, equal paths, ties), then random ones.
fn window_inputs(g: &mut Gen, random: usize) -> Vec<(Vec<VectorSubflow>, usize)> {
    let sf = |cwnd: u32, srtt_us: u64, inter_loss: u64| VectorSubflow {
        cwnd,
        ssthresh: u32::MAX,
        srtt_us,
        established: true,
        in_recovery: false,
        inter_loss,
    };
    let mut out = vec![
        (vec![sf(10, 100_000, 1000)], 0),
        (vec![sf(1, 10, 1)], 0),
        (vec![sf(MAX_CWND as u32, MAX_RTT_US, 1 << 40)], 0),
        (vec![sf(10, 100_000, 500), sf(10, 100_000, 500)], 0),
        (vec![sf(20, 100_000, 500), sf(10, 100_000, 900)], 0),
        (vec![sf(20, 100_000, 500), sf(10, 100_000, 900)], 1),
        (vec![sf(10, 10_000, 50), sf(10, 100_000, 50)], 1),
        (
            vec![sf(MAX_CWND as u32, 10, 1), sf(1, MAX_RTT_US, 1 << 40)],
            0,
        ),
        (
            vec![sf(MAX_CWND as u32, 10, 1), sf(1, MAX_RTT_US, 1 << 40)],
            1,
        ),
        (vec![sf(10, 100_000, 500), sf(10, 0, 500)], 0),
    ];
    for _ in 0..random {
        let n = 1 + g.below(8) as usize;
        let mut subflows: Vec<VectorSubflow> = (0..n).map(|_| random_subflow(g)).collect();
        let r = g.below(n as u64) as usize;
        // The subflow being acked is live: an ACK means it is established and has an RTT.
        subflows[r].established = true;
        if subflows[r].srtt_us == 0 {
            subflows[r].srtt_us = g.log_uniform(MIN_RTT_US, MAX_RTT_US);
        }
        out.push((subflows, r));
    }
    out
}

fn wvegas_inputs(g: &mut Gen, random: usize) -> Vec<WvegasCase> {
    let mut out = Vec::new();
    for i in 0..random {
        let base = g.log_uniform(MIN_RTT_US, MAX_RTT_US / 2);
        // Round RTTs from no queueing to several times the base.
        let rtt = if i % 7 == 0 {
            base
        } else {
            base + g.log_uniform(1, base * 3)
        };
        let cwnd = g.log_uniform(2, MAX_CWND) as u32;
        let ssthresh = if g.below(3) == 0 {
            cwnd + 1 + g.below(100) as u32
        } else {
            g.log_uniform(2, cwnd as u64) as u32
        };
        let others = (0..g.below(8)).map(|_| random_subflow(g)).collect();
        let mut case = WvegasCase {
            cwnd,
            ssthresh,
            base_rtt_us: base,
            rtt_us: rtt,
            alpha: g.pick(&[2, 2, 3, 5, 10]),
            queue_delay_us: if g.below(2) == 0 {
                0
            } else {
                g.log_uniform(1, base * 2)
            },
            others,
            expected: WvegasDecision {
                cwnd: 0.0,
                ssthresh: 0.0,
                alpha: 0.0,
                queue_delay_s: 0.0,
                slow_start: false,
            },
        };
        case.expected = wvegas_answer(&case);
        out.push(case);
    }
    out
}

/// The reference answer for one cwnd-limited case.
pub fn cwnd_limited_answer(c: &CwndLimitedCase) -> bool {
    crate::is_cwnd_limited(
        c.cwnd as f64,
        c.ssthresh as f64,
        crate::CwndUsage {
            is_cwnd_limited: c.is_cwnd_limited,
            max_packets_out: c.max_packets_out as u64,
        },
    )
}

/// The edges first (cwnd at ssthresh, at twice the flight, nothing sent, the largest
/// values a kernel holds), then random ones.
fn cwnd_limited_inputs(g: &mut Gen, random: usize) -> Vec<CwndLimitedCase> {
    let case = |cwnd, ssthresh, is_cwnd_limited, max_packets_out| CwndLimitedCase {
        cwnd,
        ssthresh,
        is_cwnd_limited,
        max_packets_out,
        expected: false,
    };
    let mut out = Vec::new();
    for limited in [false, true] {
        out.extend([
            case(10, 10, limited, 10),
            case(10, 11, limited, 5),
            case(10, 11, limited, 6),
            case(20, u32::MAX, limited, 10),
            case(19, u32::MAX, limited, 10),
            case(1, u32::MAX, limited, 0),
            case(1, 2, limited, 1),
            case(u32::MAX - 1, u32::MAX, limited, u32::MAX),
            case(u32::MAX, u32::MAX, limited, u32::MAX),
            case(MAX_CWND as u32, 2, limited, MAX_CWND as u32),
        ]);
    }
    for _ in 0..random {
        let cwnd = g.log_uniform(1, MAX_CWND) as u32;
        out.push(case(
            cwnd,
            match g.below(3) {
                0 => u32::MAX,
                _ => g.log_uniform(2, MAX_CWND) as u32,
            },
            g.below(3) == 0,
            g.log_uniform(1, MAX_CWND) as u32 - (g.below(2) as u32),
        ));
    }
    for c in &mut out {
        c.expected = cwnd_limited_answer(c);
    }
    out
}

/// The vector file, generated from the reference with a fixed seed.
pub fn generate() -> VectorFile {
    let mut g = Gen(0x6d70_7463_702d_6c61);
    let mut window_cases = Vec::new();
    for &alg in WINDOW_ALGORITHMS {
        for (subflows, r) in window_inputs(&mut g, 120) {
            let (inc, after) = window_answer(alg, &subflows, r);
            window_cases.push(WindowCase {
                algorithm: alg.to_string(),
                subflows,
                r,
                increase_per_packet: inc,
                cwnd_after_loss: after,
            });
        }
    }
    VectorFile {
        format: FORMAT.to_string(),
        description: "Reference answers of crates/cc (Rust, f64) for the algorithms of \
                      docs/algorithms.md; regenerate with `cargo run -p mptcp-cc --example export-vectors`."
            .to_string(),
        window_cases,
        wvegas_cases: wvegas_inputs(&mut g, 200),
        // Drawn last, so the earlier sections do not change with it.
        cwnd_limited_cases: cwnd_limited_inputs(&mut g, 200),
    }
}

/// JSON with one case per line: small enough to commit, easy to diff and to grep.
pub fn to_json(file: &VectorFile) -> String {
    fn lines<T: Serialize>(items: &[T]) -> String {
        items
            .iter()
            .map(|c| format!("    {}", serde_json::to_string(c).expect("case serialises")))
            .collect::<Vec<_>>()
            .join(",\n")
    }
    format!(
        "{{\n  \"format\": {},\n  \"description\": {},\n  \"window_cases\": [\n{}\n  ],\n  \"wvegas_cases\": [\n{}\n  ],\n  \"cwnd_limited_cases\": [\n{}\n  ]\n}}\n",
        serde_json::to_string(&file.format).expect("string"),
        serde_json::to_string(&file.description).expect("string"),
        lines(&file.window_cases),
        lines(&file.wvegas_cases),
        lines(&file.cwnd_limited_cases),
    )
}
