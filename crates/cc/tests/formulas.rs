//! The algorithms against the formulas of docs/algorithms.md, on hand-computed cases.

use mptcp_cc::balia::{
    balia_after_loss, balia_increase_per_packet, balia_increase_per_packet_alpha_form,
};
use mptcp_cc::lia::{lia_alpha, lia_increase_per_packet};
use mptcp_cc::olia::{olia_alpha, olia_increase_per_packet, olia_sets};
use mptcp_cc::wvegas::{WvegasParams, WvegasRound, wvegas_round};
use mptcp_cc::{Ack, CaState, CongestionControl, SubflowView, by_name};

fn sf(cwnd: f64, srtt_s: f64) -> SubflowView {
    SubflowView {
        cwnd,
        ssthresh: 1e9,
        srtt_s,
        established: true,
        in_recovery: false,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1e-300)
}

#[test]
fn every_window_algorithm_is_reno_with_one_subflow() {
    for name in ["reno", "ewtcp", "fullycoupled", "lia", "olia", "balia"] {
        let mut reno = by_name("reno").unwrap();
        let mut alg = by_name(name).unwrap();
        // A loss after some growth, so OLIA has loss history too.
        for (cwnd, ssthresh) in [
            (1.0, 1e9),
            (3.0, 2.0),
            (10.0, 5.0),
            (37.5, 20.0),
            (1e6, 1e3),
        ] {
            let v = [SubflowView {
                ssthresh,
                ..sf(cwnd, 0.05)
            }];
            let ack = Ack {
                acked: 2.0,
                snd_una: 100,
                snd_nxt: 120,
                rtt_s: Some(0.05),
                cwnd_limited: true,
            };
            let a = alg.cong_avoid(&v, 0, &ack);
            let b = reno.cong_avoid(&v, 0, &ack);
            assert!(
                close(a.cwnd, b.cwnd),
                "{name} cwnd={cwnd}: {} vs reno {}",
                a.cwnd,
                b.cwnd
            );
            assert_eq!(a.ssthresh, b.ssthresh, "{name}");
            let (la, lb) = (alg.ssthresh(&v, 0), reno.ssthresh(&v, 0));
            assert!(
                close(la, lb),
                "{name} loss at cwnd={cwnd}: {la} vs reno {lb}"
            );
            alg.set_state(0, CaState::Recovery, 100);
            alg.set_state(0, CaState::Open, 120);
        }
    }
}

#[test]
fn lia_alpha_matches_rfc6356_by_hand() {
    // Equal RTTs, equal windows: alpha = 20 * (10/t^2) / (20/t)^2 = 0.5.
    let equal = [sf(10.0, 0.1), sf(10.0, 0.1)];
    assert!(close(lia_alpha(&equal), 0.5));
    assert!(close(lia_increase_per_packet(&equal, 0), 0.5 / 20.0));
    // RTTs 10 ms and 100 ms: max w/t^2 = 1e5, sum w/t = 1100, alpha = 20e5 / 1.21e6.
    let mixed = [sf(10.0, 0.01), sf(10.0, 0.1)];
    let alpha = 20.0 * 1e5 / (1100.0 * 1100.0);
    assert!(close(lia_alpha(&mixed), alpha));
    assert!(close(lia_increase_per_packet(&mixed, 1), alpha / 20.0));
    // The cap 1/w_r binds on a large window over a long path: w = (5 at 10 ms, 100 at 1 s)
    // gives alpha = 105 * 5e4 / 600^2 = 14.58, alpha/W = 0.139 > 1/100.
    let capped = [sf(5.0, 0.01), sf(100.0, 1.0)];
    let a = 105.0 * 5e4 / (600.0 * 600.0);
    assert!(close(lia_alpha(&capped), a));
    assert!(close(lia_increase_per_packet(&capped, 0), a / 105.0));
    assert!(close(lia_increase_per_packet(&capped, 1), 1.0 / 100.0));
}

#[test]
fn lia_stays_coupled_at_windows_the_kernel_code_decouples() {
    // W^2 / w_best > 4096 floors the out-of-tree kernel's alpha to 0; here alpha stays 0.5.
    let big = [sf(1_048_576.0, 0.1), sf(1_048_576.0, 0.1)];
    assert!(close(lia_alpha(&big), 0.5));
    assert!(close(lia_increase_per_packet(&big, 0), 0.5 / 2_097_152.0));
}

#[test]
fn balia_increase_equals_both_forms_of_the_draft() {
    let cases: &[&[SubflowView]] = &[
        &[sf(10.0, 0.1), sf(10.0, 0.1)],
        &[sf(10.0, 0.01), sf(40.0, 0.3)],
        &[sf(1.0, 1e-5), sf(1_048_576.0, 10.0), sf(77.0, 0.2)],
        &[sf(3.0, 0.05)],
    ];
    for subflows in cases {
        for r in 0..subflows.len() {
            let a = balia_increase_per_packet(subflows, r);
            let b = balia_increase_per_packet_alpha_form(subflows, r);
            assert!(
                (a - b).abs() <= 1e-9 * a.abs(),
                "{subflows:?} r={r}: {a} vs {b}"
            );
        }
    }
    // Equal paths: alpha = 1, so the increase is x/(tau X^2) = 1/(4w) and the loss halves.
    let equal = [sf(10.0, 0.1), sf(10.0, 0.1)];
    assert!(close(balia_increase_per_packet(&equal, 0), 1.0 / 40.0));
    assert!(close(balia_after_loss(&equal, 0), 5.0));
    // A path at a third of the best rate: alpha = 3, the loss takes min(3, 1.5) * w/2.
    let uneven = [sf(30.0, 0.1), sf(10.0, 0.1)];
    assert!(close(balia_after_loss(&uneven, 1), 10.0 - 5.0 * 1.5));
    // alpha = 1.2 (not rounded down to 1 as the Linux integer division does).
    let near = [sf(12.0, 0.1), sf(10.0, 0.1)];
    assert!(close(balia_after_loss(&near, 1), 10.0 - 5.0 * 1.2));
    // Minimum ssthresh is one packet with several paths.
    let tiny = [sf(30.0, 0.1), sf(1.0, 0.1)];
    assert_eq!(balia_after_loss(&tiny, 1), 1.0);
}

#[test]
fn olia_sets_and_alpha_by_hand() {
    // Path 0 has the largest window; path 1 the best l/tau^2: path 1 is collected.
    let v = [sf(20.0, 0.1), sf(10.0, 0.1)];
    let l = [500.0, 900.0];
    let sets = olia_sets(&v, &l);
    assert_eq!(sets.max_window, vec![true, false]);
    assert_eq!(sets.best, vec![false, true]);
    assert_eq!(sets.collected, vec![false, true]);
    assert!(close(olia_alpha(&v, &l, 1), 1.0 / 2.0));
    assert!(close(olia_alpha(&v, &l, 0), -1.0 / 2.0));
    // Increase: (w_r/tau^2)/(sum w/tau)^2 + alpha_r/w_r.
    let base0 = 20.0 / 0.01 / (300.0 * 300.0);
    assert!(close(
        olia_increase_per_packet(&v, &l, 0),
        base0 - 0.5 / 20.0
    ));
    let base1 = 10.0 / 0.01 / (300.0 * 300.0);
    assert!(close(
        olia_increase_per_packet(&v, &l, 1),
        base1 + 0.5 / 10.0
    ));

    // No collected path: the best path also has the largest window. All alphas are 0.
    let l = [900.0, 500.0];
    assert_eq!(olia_sets(&v, &l).collected, vec![false, false]);
    assert_eq!(olia_alpha(&v, &l, 0), 0.0);
    assert_eq!(olia_alpha(&v, &l, 1), 0.0);

    // Three paths, two tied for the largest window, the third collected: |M| = 2, |C| = 1.
    let v3 = [sf(20.0, 0.1), sf(20.0, 0.1), sf(5.0, 0.1)];
    let l3 = [100.0, 100.0, 400.0];
    assert!(close(olia_alpha(&v3, &l3, 2), 1.0 / 3.0));
    assert!(close(olia_alpha(&v3, &l3, 0), -1.0 / 6.0));

    // In recovery OLIA compares ssthresh: path 0's window of 20 counts as 8.
    let rec = [
        SubflowView {
            ssthresh: 8.0,
            in_recovery: true,
            ..sf(20.0, 0.1)
        },
        sf(10.0, 0.1),
    ];
    let sets = olia_sets(&rec, &[500.0, 900.0]);
    assert_eq!(sets.max_window, vec![false, true]);
    assert_eq!(sets.collected, vec![false, false]);
}

/// An ACK of one packet up to `una`, 100 ms RTT.
fn ack_at(una: u64) -> Ack {
    Ack {
        acked: 1.0,
        snd_una: una,
        snd_nxt: una + 10,
        rtt_s: Some(0.1),
        cwnd_limited: true,
    }
}

#[test]
fn olia_tracks_inter_loss_distances() {
    let mut olia = mptcp_cc::Olia::default();
    olia.pkts_acked(0, &ack_at(100));
    olia.set_state(0, CaState::Recovery, 100);
    olia.set_state(0, CaState::Open, 130);
    olia.pkts_acked(0, &ack_at(160));
    // l1 = 100 (0..100 before the loss), l2 = 60 since it.
    assert_eq!(olia.inter_loss(1), vec![100.0]);
    olia.set_state(0, CaState::Loss, 400);
    // A second entry with no progress is the same loss event.
    olia.set_state(0, CaState::Loss, 400);
    olia.pkts_acked(0, &ack_at(420));
    assert_eq!(olia.inter_loss(1), vec![300.0]);
}

#[test]
fn a_subflow_without_rtt_or_not_established_is_ignored() {
    let alone = [sf(10.0, 0.1)];
    let with_new = [sf(10.0, 0.1), sf(50.0, 0.0)];
    let with_leaving = [
        sf(10.0, 0.1),
        SubflowView {
            established: false,
            ..sf(50.0, 0.1)
        },
    ];
    for name in ["ewtcp", "fullycoupled", "lia", "olia", "balia"] {
        let mut a = by_name(name).unwrap();
        let want = a.increase(&alone, 0, 1.0);
        assert!(
            close(a.increase(&with_new, 0, 1.0), want),
            "{name} with a new subflow"
        );
        assert!(
            close(a.increase(&with_leaving, 0, 1.0), want),
            "{name} with a leaving subflow"
        );
        assert!(
            close(a.ssthresh(&with_new, 0), a.ssthresh(&alone, 0)),
            "{name}"
        );
        // The new subflow itself grows as Reno until it has an RTT sample.
        assert!(
            close(a.increase(&with_new, 1, 1.0), 50.0 + 1.0 / 50.0),
            "{name}"
        );
    }
}

#[test]
fn joining_a_second_path_slows_the_first() {
    let alone = [sf(10.0, 0.1)];
    let joined = [sf(10.0, 0.1), sf(10.0, 0.1)];
    for name in ["ewtcp", "fullycoupled", "lia", "olia", "balia"] {
        let mut a = by_name(name).unwrap();
        let before = a.increase(&alone, 0, 1.0) - 10.0;
        let after = a.increase(&joined, 0, 1.0) - 10.0;
        assert!(after < before, "{name}: {after} !< {before}");
    }
}

fn round(cwnd: f64, ssthresh: f64, base: f64, rtt: f64, alpha: f64) -> WvegasRound {
    WvegasRound {
        cwnd,
        ssthresh,
        base_rtt_s: base,
        rtt_s: rtt,
        alpha,
        queue_delay_s: 0.0,
        others_rate: 0.0,
    }
}

#[test]
fn wvegas_round_rules() {
    let p = WvegasParams::default();
    // Slow start with 2.5 packets queued (diff > gamma): window to target + 1.
    let d = wvegas_round(&p, &round(20.0, 1e9, 0.1, 0.1 / 0.875, 2.0));
    assert!(close(d.cwnd, 20.0 * 0.875 + 1.0), "{d:?}");
    assert!(close(d.ssthresh, d.cwnd - 1.0), "ssthresh: {d:?}");
    // Slow start with no queueing: keep growing as slow start.
    assert!(wvegas_round(&p, &round(20.0, 1e9, 0.1, 0.1, 2.0)).slow_start);
    // Congestion avoidance, alone (weight 1): alpha = 10; diff = 5 < 10 so +1.
    let d = wvegas_round(&p, &round(50.0, 10.0, 0.1, 0.1 / 0.9, 2.0));
    assert!(close(d.alpha, 10.0) && close(d.cwnd, 51.0), "{d:?}");
    // diff = 20 > 10 with half the connection's rate: alpha = max(2, 5) = 5, window - 1.
    let mut r = round(100.0, 10.0, 0.1, 0.125, 2.0);
    r.others_rate = 100.0 / 0.125;
    r.queue_delay_s = 0.02;
    let d = wvegas_round(&p, &r);
    assert!(close(d.alpha, 5.0) && close(d.cwnd, 99.0), "{d:?}");
    // The queueing delay (25 ms) is not twice the minimum seen (20 ms): no drain.
    assert!(close(d.queue_delay_s, 0.02));
    // Twice the minimum: the window is cut to w base / (2 rtt) and the minimum forgotten.
    r.queue_delay_s = 0.01;
    let d = wvegas_round(&p, &r);
    assert!(
        close(d.cwnd, 99.0 * 0.1 / 0.25) && d.queue_delay_s == 0.0,
        "{d:?}"
    );
}

#[test]
fn wvegas_is_reno_outside_open_and_resets_alpha() {
    let mut w = mptcp_cc::Wvegas::default();
    let v = [SubflowView {
        ssthresh: 10.0,
        ..sf(50.0, 0.1)
    }];
    for (i, rtt) in [0.1, 0.2, 0.2, 0.2, 0.2].into_iter().enumerate() {
        let ack = Ack {
            acked: 1.0,
            snd_una: i as u64,
            snd_nxt: 60,
            rtt_s: Some(rtt),
            cwnd_limited: true,
        };
        w.pkts_acked(0, &ack);
    }
    let _ = w.cong_avoid(
        &v,
        0,
        &Ack {
            acked: 1.0,
            snd_una: 5,
            snd_nxt: 60,
            rtt_s: Some(0.11),
            cwnd_limited: true,
        },
    );
    let alpha_after_round = w.state(0).unwrap().alpha;
    assert!(alpha_after_round > 2.0);
    w.set_state(0, CaState::Recovery, 5);
    let win = w.cong_avoid(
        &v,
        0,
        &Ack {
            acked: 1.0,
            snd_una: 70,
            snd_nxt: 90,
            rtt_s: None,
            cwnd_limited: true,
        },
    );
    assert!(
        close(win.cwnd, 50.0 + 1.0 / 50.0),
        "Reno while off: {win:?}"
    );
    w.set_state(0, CaState::Open, 70);
    assert_eq!(w.state(0).unwrap().alpha, 2.0);
    assert!(
        close(w.state(0).unwrap().base_rtt_s, 0.1),
        "base RTT survives recovery"
    );
}

#[test]
fn coupling_state_reports_each_algorithms_alpha() {
    // Path 0 has the largest window, path 1 the best l / tau^2 once path 0 has lost.
    let v = [sf(20.0, 0.1), sf(10.0, 0.1)];
    let mut olia = mptcp_cc::Olia::default();
    olia.pkts_acked(0, &ack_at(500));
    olia.set_state(0, CaState::Recovery, 500);
    olia.pkts_acked(0, &ack_at(520));
    olia.pkts_acked(1, &ack_at(900));
    let (s0, s1) = (olia.coupling_state(&v, 0), olia.coupling_state(&v, 1));
    assert_eq!((s0.inter_loss_pkts, s1.inter_loss_pkts), (500.0, 900.0));
    assert_eq!((s0.alpha, s1.alpha), (-0.5, 0.5));
    let lia = by_name("lia").unwrap().coupling_state(&v, 1);
    assert!(close(lia.alpha, mptcp_cc::lia::lia_alpha(&v)) && lia.inter_loss_pkts.is_nan());
    let balia = by_name("balia").unwrap().coupling_state(&v, 1);
    assert!(close(balia.alpha, mptcp_cc::balia::balia_alpha(&v, 1)));
    // Reno has no coupling.
    assert!(
        by_name("reno")
            .unwrap()
            .coupling_state(&v, 0)
            .alpha
            .is_nan()
    );
}
