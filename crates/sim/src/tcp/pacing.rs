//! A subflow's pacing rate as Linux computes it whether or not a pacing qdisc uses it
//! (`tcp_update_pacing_rate()`, net/ipv4/tcp_input.c). MPTCP's default scheduler reads it to
//! estimate how long a subflow's queued data takes to drain.

use super::Sender;
use crate::packet::MSS;

/// `net.ipv4.tcp_pacing_ss_ratio`: the rate's percentage of cwnd/SRTT in slow start.
const PACING_SS_RATIO: u64 = 200;
/// `net.ipv4.tcp_pacing_ca_ratio`: the same in congestion avoidance.
const PACING_CA_RATIO: u64 = 120;

/// Bytes per second: MSS × max(cwnd, packets out) / SRTT, times 2 while the window is below
/// half of ssthresh (slow start's doubling) and 1.2 after. Before the first RTT sample
/// Linux divides by nothing, which makes the rate very large; so does this.
pub fn pacing_rate(tx: &Sender) -> u64 {
    let cwnd = tx.send_window();
    let ratio = if (cwnd as f64) < tx.ssthresh / 2.0 {
        PACING_SS_RATIO
    } else {
        PACING_CA_RATIO
    };
    let bytes_per_rtt = MSS as u64 * cwnd.max(tx.outstanding()) * ratio / 100;
    match tx.rtt.srtt {
        0 => bytes_per_rtt.saturating_mul(1_000_000),
        srtt_ns => (bytes_per_rtt as u128 * 1_000_000_000 / srtt_ns as u128) as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sender(cwnd: f64, ssthresh: f64, srtt_ms: u64) -> Sender {
        let mut tx = Sender::new(true, 10_000);
        tx.set_cwnd(cwnd);
        tx.ssthresh = ssthresh;
        tx.rtt.srtt = srtt_ms * 1_000_000;
        tx
    }

    #[test]
    fn twice_the_window_per_rtt_in_slow_start_and_1_2_times_after() {
        // 10 segments per 100 ms is 146,000 B/s.
        assert_eq!(pacing_rate(&sender(10.0, f64::INFINITY, 100)), 292_000);
        assert_eq!(pacing_rate(&sender(10.0, 20.0, 100)), 175_200);
        // At half of ssthresh the doubling stops (`cwnd < ssthresh / 2`).
        assert_eq!(pacing_rate(&sender(10.0, 21.0, 100)), 292_000);
    }

    #[test]
    fn without_an_rtt_sample_the_rate_is_not_divided() {
        assert!(pacing_rate(&sender(10.0, f64::INFINITY, 0)) > 10_000_000_000);
    }
}
