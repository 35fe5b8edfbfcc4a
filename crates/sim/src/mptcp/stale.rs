//! Stale subflows, decided as Linux's path manager decides them (net/mptcp/pm.c,
//! `mptcp_pm_subflow_chk_stale()` and `mptcp_pm_subflows_chk_stale()`).
//!
//! A subflow's own retransmission timeouts do nothing at the connection level. The count
//! runs on the data-level timer instead: each expiry that finds a subflow with data
//! outstanding counts one more if no ACK has arrived on it since the first such expiry,
//! and starts over if one has. When the count exceeds `net.mptcp.stale_loss_cnt` and
//! another subflow is usable and not itself counting up, the subflow is marked stale: the
//! scheduler gives it no new data until it is heard from again, and the connection sends
//! everything not yet acknowledged at the data level again (`DataSender::rewind`).

use crate::connection::ClientSubflow;
use crate::jiffies::Jiffies;
use crate::mptcp::DataSender;
use net::Nanos;

/// `net.mptcp.stale_loss_cnt`'s default (net/mptcp/ctrl.c): data-level timer expiries
/// without news from a busy subflow before it is marked stale. A flow sets its own with
/// `stale_loss_cnt`.
pub const STALE_LOSS_CNT: u8 = scenario::spec::DEFAULT_STALE_LOSS_CNT;

/// What the stale accounting keeps per subflow.
#[derive(Clone, Copy, Debug, Default)]
pub struct StaleWatch {
    /// When TCP last accepted an ACK on the subflow (`tcp_sk(ssk)->rcv_tstamp`, set in
    /// `tcp_ack()` for every ACK not older than `snd_una`, duplicate ACKs included), in
    /// ticks (`tcp_jiffies32`): an ACK in the same tick as the last is no news.
    rcv_tstamp: Jiffies,
    /// Expiries in a row that found the subflow busy (`stale_count`).
    count: u8,
    /// `rcv_tstamp` at the first of them (`stale_rcv_tstamp`).
    count_stamp: Jiffies,
    /// Marked stale and not heard from since (`subflow->stale`).
    stale: bool,
    /// Times it was marked stale (Linux counts them per host, `MPTcpExtSubflowStale`).
    marked: u32,
}

impl StaleWatch {
    /// TCP accepted an ACK on the subflow. A stale subflow is usable again
    /// (`mptcp_subflow_active()` sees `rcv_tstamp` move and clears `stale`).
    pub fn heard_from(&mut self, now: Nanos) {
        self.rcv_tstamp = Jiffies::at(now);
        if self.stale && self.rcv_tstamp != self.count_stamp {
            self.stale = false;
        }
    }

    pub fn is_stale(&self) -> bool {
        self.stale
    }

    /// Expiries in a row that found the subflow busy and not heard from.
    pub fn count(&self) -> u8 {
        self.count
    }

    /// Times the subflow was marked stale so far.
    pub fn times_marked(&self) -> u32 {
        self.marked
    }

    /// One data-level timer expiry found the subflow with data outstanding
    /// (`mptcp_pm_subflow_chk_stale()`). Returns whether it has now gone more than
    /// `loss_cnt` expiries without news, the condition to mark it stale.
    fn count_expiry(&mut self, loss_cnt: u8) -> bool {
        if self.count == 0 {
            self.count_stamp = self.rcv_tstamp;
            self.count = 1;
            false
        } else if self.count_stamp == self.rcv_tstamp {
            self.count = self.count.saturating_add(1);
            !self.stale && loss_cnt != 0 && self.count > loss_cnt
        } else {
            self.count = 0;
            self.stale = false;
            false
        }
    }
}

/// Whether subflow `s` takes part at the data level: established and, if stale, heard from
/// since (`mptcp_subflow_active()`).
pub fn is_active(sf: &ClientSubflow) -> bool {
    sf.is_established() && !sf.watch.is_stale()
}

/// A data-level timer expiry found busy subflow `s`: counts it, and marks it stale and
/// rewinds the data level if it has been silent for too long while another subflow is
/// usable (`mptcp_pm_subflows_chk_stale()`). Returns whether it was marked stale.
pub fn check(
    subflows: &mut [ClientSubflow],
    s: usize,
    data: &mut DataSender,
    loss_cnt: u8,
) -> bool {
    if !subflows[s].watch.count_expiry(loss_cnt) {
        return false;
    }
    // Another usable subflow that is not losing too: `stale_count` below
    // max(stale_loss_cnt - 1, 1).
    let active_max = loss_cnt.saturating_sub(1).max(1);
    let alternative = subflows
        .iter()
        .enumerate()
        .any(|(i, sf)| i != s && is_active(sf) && sf.watch.count < active_max);
    let sf = &mut subflows[s];
    if !alternative || !sf.is_busy() {
        return false;
    }
    sf.watch.stale = true;
    sf.watch.marked += 1;
    data.rewind();
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jiffies::JIFFY;

    #[test]
    fn the_count_grows_while_silent_and_restarts_when_heard_from() {
        let mut w = StaleWatch::default();
        w.heard_from(10 * JIFFY);
        let expiries: Vec<bool> = (0..6).map(|_| w.count_expiry(STALE_LOSS_CNT)).collect();
        assert_eq!(expiries, [false, false, false, false, true, true]);
        assert_eq!(w.count(), 6);
        w.heard_from(20 * JIFFY);
        assert!(!w.count_expiry(STALE_LOSS_CNT));
        assert_eq!(
            w.count(),
            0,
            "an ACK since the first expiry starts the count over"
        );
        assert!(!w.count_expiry(0) && !w.count_expiry(0) && !w.count_expiry(0));
        assert_eq!(w.count(), 3, "stale_loss_cnt = 0 counts but never marks");
    }

    #[test]
    fn an_ack_in_the_same_tick_is_no_news() {
        let mut w = StaleWatch::default();
        w.heard_from(10 * JIFFY);
        w.count_expiry(STALE_LOSS_CNT);
        w.heard_from(11 * JIFFY - 1);
        w.count_expiry(STALE_LOSS_CNT);
        assert_eq!(w.count(), 2, "Linux stamps ACKs with tcp_jiffies32");
        w.heard_from(11 * JIFFY);
        w.count_expiry(STALE_LOSS_CNT);
        assert_eq!(w.count(), 0, "an ACK in the next tick is news");
    }

    #[test]
    fn any_ack_makes_a_stale_subflow_usable() {
        let mut w = StaleWatch {
            rcv_tstamp: Jiffies(5),
            count: 6,
            count_stamp: Jiffies(5),
            stale: true,
            marked: 1,
        };
        w.heard_from(6 * JIFFY - 1);
        assert!(
            w.is_stale(),
            "the same timestamp is no news (Linux compares jiffies)"
        );
        w.heard_from(6 * JIFFY);
        assert!(!w.is_stale());
    }
}
