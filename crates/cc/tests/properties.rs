//! Random connection states: no panic, no NaN, no window below one packet.

use mptcp_cc::{Ack, CaState, SubflowView, accepted_names, by_name};
use proptest::prelude::*;

fn subflow() -> impl Strategy<Value = SubflowView> {
    (
        prop_oneof![Just(1.0), 1.0f64..1_048_576.0, Just(1_048_576.0)],
        2.0f64..1e7,
        prop_oneof![Just(0.0), 1e-5f64..10.0],
        prop::bool::weighted(0.9),
        prop::bool::weighted(0.2),
    )
        .prop_map(
            |(cwnd, ssthresh, srtt_s, established, in_recovery)| SubflowView {
                cwnd,
                ssthresh,
                srtt_s,
                established,
                in_recovery,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn windows_stay_finite_and_positive(
        subflows in prop::collection::vec(subflow(), 1..=8),
        pick in any::<prop::sample::Index>(),
        acked in 1u32..64,
        rtts in prop::collection::vec(prop::option::of(1e-5f64..10.0), 1..8),
        progress in 1u64..1_000_000,
        cwnd_limited in any::<bool>(),
    ) {
        let r = pick.index(subflows.len());
        for name in accepted_names() {
            let mut cc = by_name(name).unwrap();
            let mut una = 0;
            for rtt in &rtts {
                una += progress;
                let ack = Ack { acked: acked as f64, snd_una: una, snd_nxt: una + 100, rtt_s: *rtt, cwnd_limited };
                cc.pkts_acked(r, &ack);
                let w = cc.cong_avoid(&subflows, r, &ack);
                // A subflow that is not cwnd-limited never grows (wVegas's once-per-round
                // decision aside, which is its own).
                if !cwnd_limited && name != "wvegas" {
                    prop_assert_eq!((w.cwnd, w.ssthresh), (subflows[r].cwnd.max(1.0), subflows[r].ssthresh), "{}", name);
                }
                prop_assert!(w.cwnd.is_finite() && w.cwnd >= 1.0, "{name}: {w:?}");
                prop_assert!(!w.ssthresh.is_nan(), "{name}: {w:?}");
                let inc = cc.increase(&subflows, r, acked as f64);
                prop_assert!(inc.is_finite() && inc >= 1.0, "{name}: increase {inc}");
                let s = cc.ssthresh(&subflows, r);
                prop_assert!(s.is_finite() && s >= 1.0 && s <= subflows[r].cwnd.max(2.0), "{name}: ssthresh {s}");
                cc.set_state(r, CaState::Recovery, una);
                cc.set_state(r, CaState::Open, una);
            }
        }
    }
}
