use crate::{CongestionControl, SubflowView};

/// RFC 5681 congestion avoidance: one packet per window per RTT; halve on loss.
/// Used uncoupled, one instance per subflow, it is also the baseline multipath algorithm.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reno;

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn on_ack(&mut self, subflows: &[SubflowView], r: usize, acked: f64) -> f64 {
        let w = subflows[r].cwnd.max(1.0);
        w + acked / w
    }
    fn on_loss(&mut self, subflows: &[SubflowView], r: usize) -> f64 {
        (subflows[r].cwnd / 2.0).max(2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(cwnd: f64) -> SubflowView {
        SubflowView {
            cwnd,
            ssthresh: 1e9,
            srtt_s: 0.1,
            established: true,
            in_recovery: false,
        }
    }

    #[test]
    fn one_packet_per_window_of_acks() {
        let mut cc = Reno;
        let mut w = 10.0;
        for _ in 0..10 {
            w = cc.on_ack(&[view(w)], 0, 1.0);
        }
        // Ten ACKs of one packet each grow the window by a little less than one packet.
        assert!(w > 10.9 && w < 11.0, "{w}");
        assert_eq!(cc.on_loss(&[view(10.0)], 0), 5.0);
        assert_eq!(cc.on_loss(&[view(3.0)], 0), 2.0);
    }
}
