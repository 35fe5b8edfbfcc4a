//! The eBPF programs' C arithmetic (compiled for the host) against the Rust reference on
//! the shared vectors, crates/cc/testdata/vectors.json.
//!
//! Tolerances, and why:
//! - increase per packet: relative 1e-6 plus 2^-38 packets absolute. The C code keeps 31
//!   significant bits through about ten operations (relative error near 1e-8) and returns
//!   Q40; OLIA's +-alpha_r / w_r term is an integer division (error 2^-40).
//! - window after a loss: the kernel's windows are whole packets, rounded down as Reno's
//!   `cwnd >> 1`; the C answer must be floor(reference), or one off only when the
//!   reference lies within 1e-6 of a whole packet.
//! - wVegas: the window as above; the threshold, 3/4 of the whole-packet window rounded
//!   down, may be up to 1.75 packets below the reference's 3/4 of a fractional window;
//!   alpha within 1e-4 (Q16). Where the queue delay is exactly twice its minimum (the
//!   drain's boundary, q >= 2 q_min), the reference decides in f64 seconds
//!   ((base + 2us) - base can come out below 2us) and the C code in exact microseconds:
//!   either outcome is accepted there, and only there.

use mptcp_bpf::host::{self, Rule, Subflow, WvegasInput};
use mptcp_cc::vectors::{VectorFile, VectorSubflow};

fn vectors() -> VectorFile {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../cc/testdata/vectors.json");
    let text = std::fs::read_to_string(path).expect("shared vectors");
    serde_json::from_str(&text).expect("vector file parses")
}

fn to_c(s: &VectorSubflow) -> Subflow {
    Subflow {
        inter_loss: s.inter_loss,
        srtt_us: u32::try_from(s.srtt_us).expect("RTTs fit u32 microseconds"),
        cwnd: s.cwnd,
        ssthresh: s.ssthresh,
        established: s.established as u8,
        in_recovery: s.in_recovery as u8,
        pad: [0; 2],
    }
}

fn whole_packets_match(c: f64, reference: f64, floor: f64) -> bool {
    let expected = reference.floor().max(floor);
    c == expected || ((c - reference).abs() < 1.0 && (reference - reference.round()).abs() < 1e-6)
}

#[test]
fn window_rules_match_the_reference_on_every_shared_vector() {
    let file = vectors();
    let mut checked = 0;
    let mut worst_rel = 0.0f64;
    let mut failures = Vec::new();
    for (i, case) in file.window_cases.iter().enumerate() {
        let rule = Rule::by_name(&case.algorithm)
            .unwrap_or_else(|| panic!("no eBPF rule for {}", case.algorithm));
        let subflows: Vec<Subflow> = case.subflows.iter().map(to_c).collect();
        let inc =
            host::increase_q(rule, &subflows, case.r) as f64 / (1u64 << host::INC_SHIFT) as f64;
        let expected = case.increase_per_packet;
        let tolerance = 1e-6 * expected.abs() + 2f64.powi(-38);
        if (inc - expected).abs() > tolerance {
            failures.push(format!(
                "case {i} ({}): increase {inc:e}, reference {expected:e}",
                case.algorithm
            ));
        }
        if expected.abs() > 1e-9 {
            worst_rel = worst_rel.max((inc - expected).abs() / expected.abs());
        }
        let after = host::after_loss(rule, &subflows, case.r) as f64;
        let floor = match case.algorithm.as_str() {
            "balia" | "fullycoupled" => 1.0,
            _ => 2.0,
        };
        if !whole_packets_match(after, case.cwnd_after_loss, floor) {
            failures.push(format!(
                "case {i} ({}): window after loss {after}, reference {}",
                case.algorithm, case.cwnd_after_loss
            ));
        }
        checked += 1;
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(
        checked,
        6 * 130,
        "every reno, ewtcp, fullycoupled, lia, olia and balia case was checked"
    );
    eprintln!("window cases: {checked}, worst relative error of the increase {worst_rel:e}");
}

#[test]
fn wvegas_round_matches_the_reference_on_every_shared_vector() {
    let file = vectors();
    let mut failures = Vec::new();
    let mut boundaries = 0;
    for (i, case) in file.wvegas_cases.iter().enumerate() {
        let others: Vec<Subflow> = case.others.iter().map(to_c).collect();
        let d = host::wvegas_round(
            &WvegasInput {
                cwnd: case.cwnd,
                ssthresh: case.ssthresh,
                base_rtt_us: case.base_rtt_us,
                rtt_us: case.rtt_us,
                alpha_q: case.alpha << host::ALPHA_SHIFT,
                queue_delay_us: case.queue_delay_us,
            },
            &others,
        );
        let e = &case.expected;
        let alpha = d.alpha_q as f64 / (1u32 << host::ALPHA_SHIFT) as f64;
        let mut wrong = Vec::new();
        if (d.slow_start != 0) != e.slow_start {
            wrong.push(format!("slow start {} vs {}", d.slow_start, e.slow_start));
        }
        let q = case.rtt_us - case.base_rtt_us;
        let q_min = if case.queue_delay_us == 0 || case.queue_delay_us > q {
            q
        } else {
            case.queue_delay_us
        };
        let drain_boundary = q > 0 && q == 2 * q_min;
        boundaries += drain_boundary as usize;
        if !e.slow_start && !drain_boundary {
            if !whole_packets_match(d.cwnd as f64, e.cwnd, 2.0) {
                wrong.push(format!("cwnd {} vs {}", d.cwnd, e.cwnd));
            }
            let below = e.ssthresh - d.ssthresh as f64;
            if !(-1e-9..1.75).contains(&below) && d.ssthresh as f64 != e.ssthresh.floor() {
                wrong.push(format!("ssthresh {} vs {}", d.ssthresh, e.ssthresh));
            }
            if (alpha - e.alpha).abs() > 1e-4 {
                wrong.push(format!("alpha {alpha} vs {}", e.alpha));
            }
            if (d.queue_delay_us as f64 - e.queue_delay_s * 1e6).abs() > 0.5 {
                wrong.push(format!(
                    "queue delay {}us vs {}s",
                    d.queue_delay_us, e.queue_delay_s
                ));
            }
        }
        if !wrong.is_empty() {
            failures.push(format!("case {i}: {}", wrong.join(", ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(file.wvegas_cases.len(), 200);
    assert!(
        boundaries < 10,
        "{boundaries} cases on the drain boundary: the vectors lost their point"
    );
}

#[test]
fn the_cwnd_limited_rule_matches_the_reference_on_every_shared_vector() {
    let file = vectors();
    assert!(!file.cwnd_limited_cases.is_empty());
    for (i, c) in file.cwnd_limited_cases.iter().enumerate() {
        let got = host::is_cwnd_limited(c.cwnd, c.ssthresh, c.is_cwnd_limited, c.max_packets_out);
        assert_eq!(got, c.expected, "case {i}: {c:?}");
    }
}
