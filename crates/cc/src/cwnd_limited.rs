//! When a window may grow: only while the flow is cwnd-limited, as Linux decides it in
//! `tcp_is_cwnd_limited()` (include/net/tcp.h), the idea of RFC 7661. A flow held back by a
//! window cap, the receive window or the application does not grow its window, so a loss
//! halves the window it actually used.
//!
//! The record of how the window was used (`CwndUsage`) is kept by the sender as Linux's
//! `tcp_cwnd_validate()` (net/ipv4/tcp_output.c) keeps it after each `tcp_write_xmit()`.

/// What the sender's last window of transmissions showed (Linux `tcp_sock` fields).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CwndUsage {
    /// Packets in flight reached cwnd in this window of data (`is_cwnd_limited`).
    pub is_cwnd_limited: bool,
    /// The largest flight of this window of data (`max_packets_out`).
    pub max_packets_out: u64,
}

/// Linux's `tcp_is_cwnd_limited()`: cwnd-limited in this window of data, or, in slow start,
/// a window still less than twice the largest flight (so that slow start may double it).
pub fn is_cwnd_limited(cwnd: f64, ssthresh: f64, usage: CwndUsage) -> bool {
    if usage.is_cwnd_limited {
        return true;
    }
    cwnd < ssthresh && cwnd < 2.0 * usage.max_packets_out as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_tcp_is_cwnd_limited() {
        let limited = CwndUsage {
            is_cwnd_limited: true,
            max_packets_out: 0,
        };
        let flight = |n| CwndUsage {
            is_cwnd_limited: false,
            max_packets_out: n,
        };
        assert!(
            is_cwnd_limited(100.0, 10.0, limited),
            "limited in avoidance"
        );
        assert!(
            is_cwnd_limited(100.0, 1000.0, limited),
            "limited in slow start"
        );
        assert!(
            !is_cwnd_limited(20.0, 10.0, flight(10)),
            "avoidance, not limited"
        );
        assert!(
            is_cwnd_limited(19.0, 100.0, flight(10)),
            "slow start below 2x"
        );
        assert!(
            !is_cwnd_limited(20.0, 100.0, flight(10)),
            "slow start at 2x"
        );
        assert!(
            !is_cwnd_limited(20.0, 20.0, flight(100)),
            "cwnd == ssthresh: avoidance"
        );
        assert!(!is_cwnd_limited(1.0, 100.0, flight(0)), "nothing sent");
    }
}
