//! Linux's stale subflows and data-level retransmission, packet by packet on the test wire.
//! What each test pins down, and the kernel function it follows (net/mptcp/protocol.c and
//! pm.c), is in docs/linux-fidelity.md:
//! - a subflow's own retransmission timeouts do nothing at the connection level;
//! - the data-level timer runs on Linux's ticks, at least two apart
//!   (`mptcp_timeout_from_subflow()`, `mptcp_reset_rtx_timer()`);
//! - the data-level timer counts a silent busy subflow, and the expiry that takes the count
//!   past `stale_loss_cnt` (4) marks it stale (`mptcp_pm_subflow_chk_stale()`);
//! - going stale rewinds the data level to the DATA_ACK: everything unacknowledged goes
//!   again, whichever subflow first carried it (`__mptcp_retransmit_pending_data()`);
//! - the timer re-sends the head fragment only on a subflow with nothing outstanding
//!   (`__mptcp_retrans()`, `mptcp_subflow_get_retrans()`);
//! - a stale subflow gets no new data, and any ACK on it makes it usable again
//!   (`mptcp_subflow_active()`).

mod wire;

use net::Nanos;
use sim::connection::ConnConfig;
use sim::jiffies::{JIFFY, Jiffies};
use sim::mptcp::retransmit::MIN_INTERVAL;
use sim::mptcp::stale::is_active;
use sim::packet::MSS;
use std::collections::BTreeSet;
use wire::{MS, Wire, config};

const DEATH: Nanos = 300 * MS;

/// A two-path connection of `total_segments` whose path 1 carries nothing, either way, from
/// `DEATH` until `revival`.
fn wire_losing_path_1(total_segments: u64, revival: Nanos) -> Wire {
    wire_losing_path_1_with(config(true, total_segments * MSS as u64), revival)
}

fn wire_losing_path_1_with(cfg: ConnConfig, revival: Nanos) -> Wire {
    let mut w = Wire::new(cfg, &[10, 10], Box::new(mptcp_cc::Lia));
    w.run_until(DEATH, |_| {});
    assert!(w.data_sent(1).count() > 0, "both subflows in use");
    w.drop = Box::new(move |now, p| (DEATH..revival).contains(&now) && p.subflow.0 == 1);
    w.in_flight.retain(|(_, _, p)| p.subflow.0 != 1);
    w
}

/// What a run after the death of path 1 saw of the data-level timer and the stale mark.
#[derive(Default)]
struct Watch {
    deadline: Option<Nanos>,
    /// Times the data-level timer expired.
    expiries: Vec<Nanos>,
    /// When subflow 1 was first seen stale, with the data level's (una, nxt) then.
    stale_at: Option<(Nanos, u64, u64)>,
    /// When subflow 1 was last seen stale.
    last_stale: Nanos,
}

impl Watch {
    fn step(&mut self, w: &Wire) {
        if let Some(d) = self.deadline
            && w.now >= d
        {
            self.expiries.push(d);
        }
        self.deadline = w.client.data_level_deadline();
        if w.client.subflows()[1].watch.is_stale() {
            let d = w.client.data();
            self.stale_at.get_or_insert((w.now, d.una, d.nxt));
            self.last_stale = w.now;
        }
    }
}

fn run_watching(w: &mut Wire, until: Nanos) -> Watch {
    let mut watch = Watch {
        deadline: w.client.data_level_deadline(),
        ..Watch::default()
    };
    w.run_until(until, |w| watch.step(w));
    watch
}

/// Data segments subflow 1 sent before `t`: their sequence numbers and DSNs.
fn sent_on_1_before(w: &Wire, t: Nanos) -> (u64, BTreeSet<u64>) {
    let mut max_seq = 0;
    let mut dsns = BTreeSet::new();
    for (_, p) in w.data_sent(1).filter(|(at, _)| *at < t) {
        max_seq = max_seq.max(p.seq);
        dsns.insert(p.dsn);
    }
    (max_seq, dsns)
}

#[test]
fn a_silent_subflow_goes_stale_at_the_fifth_data_level_expiry_not_at_its_timeout() {
    let mut w = wire_losing_path_1(u64::MAX / MSS as u64, Nanos::MAX);
    let watch = run_watching(&mut w, 20_000 * MS);
    let (stale_at, _, _) = watch.stale_at.expect("subflow 1 went stale");
    // Subflow 1's first timeout retransmission: its first data segment after the death
    // with a sequence number it had sent before.
    let (max_seq, _) = sent_on_1_before(&w, DEATH);
    let first_rto = w
        .data_sent(1)
        .find(|(t, p)| *t >= DEATH && p.seq <= max_seq)
        .expect("subflow 1 timed out")
        .0;
    assert!(
        first_rto < stale_at,
        "the subflow's own timeout does not mark it stale"
    );
    let after_death: Vec<Nanos> = watch
        .expiries
        .iter()
        .copied()
        .filter(|&t| t > DEATH)
        .collect();
    assert!(after_death.len() >= 5, "expiries: {after_death:?}");
    assert_eq!(
        stale_at, after_death[4],
        "stale at the fifth expiry that found it silent (count 5 > stale_loss_cnt 4)"
    );
    // Never heard from again, so marked once; a bulk transfer keeps both subflows busy, so
    // no expiry re-sent anything (the counts `stale_subflows` and `data_retransmissions`).
    let counts = w.client.loss_recovery();
    assert_eq!(counts.stale_subflows, 1);
    assert_eq!(counts.data_retransmissions, 0);
    // Before that, both subflows had data outstanding at every expiry: nothing was sent
    // again at the data level.
    assert!(
        w.data_sent(0)
            .filter(|(t, _)| *t < stale_at)
            .all(|(_, p)| !sent_on_1_before(&w, stale_at).1.contains(&p.dsn)),
        "no reinjection before the subflow went stale"
    );
}

#[test]
fn the_data_level_timer_runs_on_ticks_and_at_least_two_ticks_apart() {
    // Linux reads the timer's interval in whole ticks (`mptcp_timeout_from_subflow()`:
    // `icsk_timeout - jiffies`, at least one) and arms a `timer_list` for `jiffies +
    // timer_ival` (`mptcp_reset_rtx_timer()`), which runs on a tick and one tick after the
    // one asked for (`calc_index()`, kernel/time/timer.c). So however soon a subflow's own
    // timer is due, the data-level timer expires at most once every two ticks.
    let mut w = wire_losing_path_1(u64::MAX / MSS as u64, Nanos::MAX);
    let watch = run_watching(&mut w, 5_000 * MS);
    assert!(watch.expiries.len() >= 5, "expiries: {:?}", watch.expiries);
    for e in &watch.expiries {
        assert_eq!(e % JIFFY, 0, "an expiry at {e} ns is not on a tick");
    }
    for pair in watch.expiries.windows(2) {
        assert!(
            pair[1] - pair[0] >= 2 * JIFFY,
            "expiries {pair:?} closer than two ticks"
        );
    }
}

#[test]
fn the_interval_is_read_again_when_the_scheduler_is_consulted() {
    // Linux reads the interval in `mptcp_subflow_get_send()` whenever its scheduler is
    // consulted, whether or not anything can go; after an expiry with data waiting
    // (`mptcp_check_and_set_pending()`, then `__mptcp_push_pending()` from
    // `mptcp_release_cb()`) among others. So after such an expiry the interval is the
    // longest time, in ticks, then left on a usable subflow's timer that is not counting
    // towards stale (subflow 1's, once path 1 is dead, is left out), not the one read when
    // data was last placed. An expiry moves no subflow's timer before the scheduler runs,
    // so those timers are the ones the step before left.
    let mut w = wire_losing_path_1(u64::MAX / MSS as u64, Nanos::MAX);
    let timers = |w: &Wire| -> Vec<Option<Nanos>> {
        w.client
            .subflows()
            .iter()
            .map(|sf| sf.tx.timer_deadline())
            .collect()
    };
    let mut deadline = w.client.data_level_deadline();
    let mut timers_before = timers(&w);
    let mut interval_before = w.client.data_timer_interval();
    let (mut checked, mut changed) = (0, 0);
    w.run_until(5_000 * MS, |w| {
        let client = &w.client;
        let expired = deadline == Some(w.now) && w.last_arrival.is_none();
        deadline = client.data_level_deadline();
        let left = std::mem::replace(&mut timers_before, timers(w));
        let interval = client.data_timer_interval();
        let read_before = std::mem::replace(&mut interval_before, interval);
        if !expired || !client.data_waiting() {
            return;
        }
        let jiffies = Jiffies::at(w.now);
        let expected = client
            .subflows()
            .iter()
            .zip(left)
            .filter(|(sf, _)| is_active(sf) && sf.watch.count() == 0)
            .filter_map(|(_, timer)| timer)
            .map(|timer| Jiffies::due_at(timer).0.saturating_sub(jiffies.0))
            .max()
            .filter(|&ticks| ticks > 0)
            .map_or(MIN_INTERVAL, Jiffies);
        assert_eq!(interval, expected, "at {} ns", w.now);
        checked += 1;
        changed += usize::from(interval != read_before);
    });
    assert!(checked >= 3, "only {checked} expiries checked");
    assert!(changed > 0, "the expiries never changed the interval");
}

#[test]
fn a_flow_s_stale_loss_cnt_decides_the_expiry_that_marks_it_stale() {
    // The expiry that takes the count past `stale_loss_cnt` marks the subflow stale if the
    // live subflow is not counting too (its count below max(stale_loss_cnt - 1, 1)); the
    // live one's count goes 1, 0, 1, ... as its ACKs come, so with 2 the mark may wait one
    // expiry more.
    let mut marked_at = Vec::new();
    for loss_cnt in [2u8, 4, 6] {
        let cfg = ConnConfig {
            stale_loss_cnt: loss_cnt,
            ..config(true, u64::MAX)
        };
        let mut w = wire_losing_path_1_with(cfg, Nanos::MAX);
        let watch = run_watching(&mut w, 30_000 * MS);
        let (stale_at, _, _) = watch.stale_at.expect("subflow 1 went stale");
        let index = watch
            .expiries
            .iter()
            .filter(|&&t| t > DEATH)
            .position(|&t| t == stale_at)
            .expect("stale at an expiry");
        let k = loss_cnt as usize;
        assert!(
            index == k || (loss_cnt == 2 && index == k + 1),
            "stale_loss_cnt {loss_cnt}: stale at expiry {} after the death",
            index + 1
        );
        marked_at.push(stale_at);
    }
    assert!(marked_at.windows(2).all(|p| p[0] < p[1]), "{marked_at:?}");
    let cfg = ConnConfig {
        stale_loss_cnt: 0,
        ..config(true, u64::MAX)
    };
    let mut w = wire_losing_path_1_with(cfg, Nanos::MAX);
    let watch = run_watching(&mut w, 30_000 * MS);
    assert!(watch.stale_at.is_none(), "0 never marks a subflow stale");
    assert!(watch.expiries.len() > 10);
    assert_eq!(w.client.loss_recovery().stale_subflows, 0);
}

#[test]
fn going_stale_sends_everything_unacknowledged_again_whichever_subflow_carried_it() {
    let mut w = wire_losing_path_1(u64::MAX / MSS as u64, Nanos::MAX);
    let watch = run_watching(&mut w, 20_000 * MS);
    let (stale_at, una, nxt) = watch.stale_at.expect("subflow 1 went stale");
    let (_, on_1) = sent_on_1_before(&w, stale_at);
    let again: BTreeSet<u64> = w
        .data_sent(0)
        .filter(|(t, p)| *t >= stale_at && p.dsn < nxt)
        .map(|(_, p)| p.dsn)
        .collect();
    // From the DATA_ACK on, in order, until the DATA_ACK overtook the rewind (data the
    // peer acknowledged is freed before it goes again, as `__mptcp_clean_una()` frees it).
    let last = *again.last().expect("data went again");
    let rewound: BTreeSet<u64> = (una..=last).collect();
    assert_eq!(
        again, rewound,
        "every segment from the DATA_ACK on went again"
    );
    assert!(
        w.client.data().una > nxt,
        "until everything was acknowledged"
    );
    let carried_by_0 = rewound.iter().filter(|d| !on_1.contains(d)).count();
    assert!(
        carried_by_0 > 0,
        "the rewind included data subflow 0 had delivered"
    );
    assert!(w.client.data().resent >= last + 1 - una);
}

#[test]
fn the_data_level_timer_resends_the_head_fragment_only_on_an_idle_subflow() {
    // A short transfer: subflow 0 finishes its share and goes idle while subflow 1's last
    // segments are lost with the path.
    let total = 600;
    let mut w = wire_losing_path_1(total, Nanos::MAX);
    let (_, on_1) = sent_on_1_before(&w, DEATH);
    let mut deadline = w.client.data_level_deadline();
    let mut expiry_times = Vec::new();
    // After each step: (time, DATA_ACK, subflow 1 stale).
    let mut steps: Vec<(Nanos, u64, bool)> = Vec::new();
    w.run_until(20_000 * MS, |w| {
        if let Some(d) = deadline
            && w.now >= d
        {
            expiry_times.push(d);
        }
        deadline = w.client.data_level_deadline();
        let stale = w.client.subflows()[1].watch.is_stale();
        steps.push((w.now, w.client.data().una, stale));
    });
    let (t, dsn) = w
        .data_sent(0)
        .find(|(t, p)| *t >= DEATH && on_1.contains(&p.dsn))
        .map(|(t, p)| (*t, p.dsn))
        .expect("subflow 1's data went again on subflow 0");
    let &(_, una, stale) = steps.iter().rfind(|s| s.0 == t).expect("a step then");
    assert!(!stale, "re-sent by the timer, before subflow 1 went stale");
    assert!(
        expiry_times.contains(&t),
        "re-sent at a data-level expiry, {t} not in {expiry_times:?}"
    );
    assert_eq!(dsn, una, "from the first unacknowledged segment");
    // Expiries before subflow 1 went stale at which subflow 0 sent its data again: the
    // timer's re-sends (the expiry that marks it stale re-sends by the rewind instead).
    let stale_from = steps.iter().find(|s| s.2).map_or(Nanos::MAX, |s| s.0);
    let resent_at_expiries = expiry_times
        .iter()
        .filter(|&&e| e < stale_from)
        .filter(|&&e| {
            w.data_sent(0)
                .any(|(t, p)| *t == e && on_1.contains(&p.dsn))
        })
        .count() as u64;
    assert!(resent_at_expiries > 0);
    assert_eq!(
        w.client.loss_recovery().data_retransmissions,
        resent_at_expiries,
        "counted once per expiry that re-sent"
    );
    assert_eq!(w.delivered, total * MSS as u64, "the transfer completed");
    assert!(w.client.all_acked());
}

#[test]
fn a_stale_subflow_gets_no_new_data_until_heard_from_and_then_does() {
    let revival = 4000 * MS;
    let mut w = wire_losing_path_1(u64::MAX / MSS as u64, revival);
    let watch = run_watching(&mut w, 15_000 * MS);
    let (stale_at, _, nxt_at_stale) = watch.stale_at.expect("subflow 1 went stale");
    let (_, on_1) = sent_on_1_before(&w, stale_at);
    let while_stale: Vec<u64> = w
        .data_sent(1)
        .filter(|(t, _)| (stale_at..=watch.last_stale).contains(t))
        .map(|(_, p)| p.dsn)
        .collect();
    assert!(
        while_stale.iter().all(|d| on_1.contains(d)),
        "only its own timeout retransmissions while stale"
    );
    assert!(
        watch.last_stale > revival,
        "stale until heard from after the revival"
    );
    assert!(!w.client.subflows()[1].watch.is_stale());
    assert_eq!(w.client.loss_recovery().stale_subflows, 1);
    assert!(
        w.data_sent(1)
            .any(|(t, p)| *t > watch.last_stale && p.dsn >= nxt_at_stale),
        "new data on subflow 1 once it was heard from"
    );
}
