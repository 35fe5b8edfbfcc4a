//! MPTCP's data-level retransmission timer, as Linux runs it (net/mptcp/protocol.c).
//!
//! - Its interval (`msk->timer_ival`, `__mptcp_set_timeout()`) is the longest time left on
//!   any usable subflow's pending TCP timer when the scheduler was last consulted
//!   (`mptcp_subflow_get_send()`, `mptcp_timeout_from_subflow()`; a subflow counting
//!   towards stale contributes nothing), or `TCP_RTO_MIN` (200 ms) when none is pending.
//!   There is no backoff. Linux reads that time in whole ticks (`icsk_timeout - jiffies`,
//!   see `crate::jiffies`): a subflow timer due before the next tick gives one tick, one
//!   due at the current tick (`icsk_timeout == jiffies`) gives `TCP_RTO_MIN`.
//! - It is armed when data is pushed and none is pending, restarted whenever the DATA_ACK
//!   advances (`mptcp_reset_rtx_timer()`: `jiffies + timer_ival`), and stopped when
//!   everything written is acknowledged (`__mptcp_clean_una()`). It is a `timer_list`, so it
//!   runs on a tick, after the interval has passed: within a tick of it for intervals
//!   under 63 ticks, later for longer ones (the timer wheel's coarser levels).
//! - On expiry (`__mptcp_retrans()`) each subflow holding data at the TCP level (sent or
//!   queued) is counted towards stale (see `stale`); the first subflow holding none, if
//!   any, is given the sent part of the first unacknowledged data fragment again
//!   (`mptcp_subflow_get_retrans()`). A bulk transfer keeps every subflow busy, so there
//!   the timer only counts.

use super::stale::{self, is_active};
use crate::connection::ClientSubflow;
use crate::connection::timers::TimerTable;
use crate::jiffies::{JIFFY, Jiffies, timer_list_deadline};
use crate::mptcp::DataSender;
use crate::tcp::rtt::MIN_RTO;
use net::Nanos;
use std::ops::Range;

/// `TCP_RTO_MIN` in ticks (`HZ / 5`).
pub const MIN_INTERVAL: Jiffies = Jiffies(MIN_RTO / JIFFY);

/// The interval the timer is (re)armed with, read whenever the scheduler is consulted.
pub fn interval(subflows: &[ClientSubflow], timers: &TimerTable, now: Nanos) -> Jiffies {
    let jiffies = Jiffies::at(now);
    let longest = subflows
        .iter()
        .enumerate()
        .filter(|(_, sf)| is_active(sf) && sf.watch.count() == 0)
        .filter_map(|(s, _)| timers.get(s))
        .map(|deadline| Jiffies::due_at(deadline).0.saturating_sub(jiffies.0))
        .max()
        .unwrap_or(0);
    if longest > 0 {
        Jiffies(longest)
    } else {
        MIN_INTERVAL
    }
}

/// When the timer runs if (re)armed at `now` with `interval`.
pub fn deadline(now: Nanos, interval: Jiffies) -> Nanos {
    timer_list_deadline(now, interval)
}

/// What to send again after an expiry: the subflow and the data segments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retransmission {
    pub subflow: usize,
    pub dsns: Range<u64>,
    /// Some of it went: the expiry counts as one that sent data again.
    pub started: bool,
}

/// The timer expired: counts the busy subflows towards stale, and returns what to re-send
/// on the first idle one, if there is one and anything to re-send.
pub fn on_expiry(
    subflows: &mut [ClientSubflow],
    data: &mut DataSender,
    loss_cnt: u8,
) -> Option<Retransmission> {
    let mut idle = None;
    for s in 0..subflows.len() {
        // `__mptcp_subflow_active()`: stale subflows count too.
        if !subflows[s].is_established() {
            continue;
        }
        if subflows[s].is_busy() {
            stale::check(subflows, s, data, loss_cnt);
        } else if idle.is_none() {
            idle = Some(s);
        }
    }
    let dsns = data.head_fragment();
    (!dsns.is_empty()).then_some(Retransmission {
        subflow: idle?,
        dsns,
        started: false,
    })
}
