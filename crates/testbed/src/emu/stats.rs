//! What the emulator reports about itself: per-link counters, how late packets left it,
//! what it lost itself (as opposed to what the link model dropped), and for RED links the
//! drop tally by average queue length.

use measure::Measured;
use net::LinkStats;
use scenario::results::EmulatorHealth;

/// Own losses above this fraction of the packets the hosts offered make a run unreliable.
/// The experiments study random loss from 0.1 % (reno-mathis) to a few percent, and
/// queues that drop about as often: an emulator that loses more than 0.1 % itself adds at
/// least as much loss as the smallest of these, so the run measures the machine as much
/// as the model. Below it the run stands, with its own losses reported beside the link's
/// drops for the reader to weigh (a run at 0.1 % random loss wants them far below).
pub const OWN_LOSS_BOUND: f64 = 0.001;

/// A packet handed over more than this after the time the link model gave it is late
/// beyond bound: it arrives, but its TCP sees a delay spike the model did not make. 5 ms
/// is a fifth of the 24 ms round trips of E2's paths, enough to move RACK's reordering
/// window (a quarter of the minimum RTT) and the RTT samples the coupled algorithms weigh
/// paths by; below it, the lateness histogram (p50, p99) tells how exact the run was.
pub const LATE_BOUND_NS: u64 = 5_000_000;

/// Late-beyond-bound packets above this fraction of those handed over make a run
/// unreliable: one packet in a hundred with a spurious delay spike perturbs a TCP's RTT
/// estimate and loss detection every few round trips.
pub const LATE_FRACTION_BOUND: f64 = 0.01;

/// What the emulator lost itself: packets the link model never dropped that did not reach
/// their destination's stack. None of these is part of the experiment: on a real network
/// they would have crossed the links as the model says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OwnLoss {
    /// Dropped by the kernel at a source device because the emulator did not read its ring
    /// in time (the device's `tx_dropped`): the loop was held off its CPU or could not keep
    /// up. The host's TCP sees a loss the model did not make.
    pub not_read: u64,
    /// Read into a buffer shorter than the packet (the kernel truncates silently): the
    /// emulator cannot forward a packet it does not have whole, so it discards it.
    pub truncated: u64,
    /// Writes a destination device refused: the packet crossed every link of the model and
    /// was lost at the last step, the hand-over, which a wire does not have.
    pub refused: u64,
    /// Accepted by the destination device, then dropped by its stack before IP (the
    /// device's `rx_dropped`, beyond the refusals some kernels also count there): the
    /// receive backlog overflowing when the emulator hands over a burst after a stall.
    pub dropped_on_arrival: u64,
}

impl OwnLoss {
    pub fn total(&self) -> u64 {
        self.not_read + self.truncated + self.refused + self.dropped_on_arrival
    }
}

/// `part / whole`, 0 when there is no whole.
fn fraction(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// The emulator's own figures of a run against the bounds: own losses over the packets
/// offered (read, or lost before they could be), late-beyond-bound packets over those
/// handed over.
pub fn assess(
    seed: u64,
    own: OwnLoss,
    offered_pkts: u64,
    handed_over: u64,
    late_beyond_bound: u64,
    link_drops: u64,
) -> EmulatorHealth {
    let own_losses = own.total();
    let own_loss_fraction = fraction(own_losses, offered_pkts);
    let late_fraction = fraction(late_beyond_bound, handed_over);
    let mut why = Vec::new();
    if own_loss_fraction > OWN_LOSS_BOUND {
        why.push(format!(
            "the emulator lost {own_losses} of {offered_pkts} packets itself ({:.3} %, bound \
             {:.1} %): {} not read in time, {} refused by a device, {} dropped on arrival, {} \
             truncated",
            own_loss_fraction * 100.0,
            OWN_LOSS_BOUND * 100.0,
            own.not_read,
            own.refused,
            own.dropped_on_arrival,
            own.truncated
        ));
    }
    if late_fraction > LATE_FRACTION_BOUND {
        why.push(format!(
            "{late_beyond_bound} of {handed_over} packets were handed over more than {} ms late \
             ({:.2} %, bound {:.0} %)",
            LATE_BOUND_NS as f64 / 1e6,
            late_fraction * 100.0,
            LATE_FRACTION_BOUND * 100.0
        ));
    }
    EmulatorHealth {
        seed,
        unreliable: !why.is_empty(),
        why,
        offered_pkts,
        own_losses,
        own_loss_fraction,
        own_loss_bound: OWN_LOSS_BOUND,
        not_read: own.not_read,
        truncated: own.truncated,
        refused: own.refused,
        dropped_on_arrival: own.dropped_on_arrival,
        handed_over,
        late_beyond_bound,
        late_bound_ms: LATE_BOUND_NS as f64 / 1e6,
        late_fraction,
        late_fraction_bound: LATE_FRACTION_BOUND,
        link_drops,
    }
}

/// How late packets were handed to their destination device, relative to the time the
/// link model gave them: a histogram in microseconds.
#[derive(Clone, Debug, Default)]
pub struct Lateness {
    /// `counts[us]`: packets late by `us` microseconds; the last bucket holds all later.
    pub counts: Vec<u64>,
}

impl Lateness {
    const BUCKETS: usize = 20_001;

    pub fn record(&mut self, late_ns: u64) {
        if self.counts.is_empty() {
            self.counts = vec![0; Self::BUCKETS];
        }
        let us = ((late_ns / 1000) as usize).min(Self::BUCKETS - 1);
        self.counts[us] += 1;
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Mean lateness in microseconds (the last bucket counted at its floor); `None`
    /// before any packet.
    pub fn mean_us(&self) -> Option<f64> {
        let total = self.total();
        (total > 0).then(|| {
            let sum: u64 = self
                .counts
                .iter()
                .enumerate()
                .map(|(us, c)| us as u64 * c)
                .sum();
            sum as f64 / total as f64
        })
    }

    /// The latest packet, in microseconds (at least the histogram's cap if it is there).
    pub fn max_us(&self) -> Option<u64> {
        self.counts.iter().rposition(|&c| c > 0).map(|us| us as u64)
    }

    /// The `q` quantile (0..=1) in microseconds; `None` before any packet.
    pub fn quantile_us(&self, q: f64) -> Option<u64> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let want = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for (us, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= want {
                return Some(us as u64);
            }
        }
        None
    }
}

/// Wake-ups that came late: the loop asked the kernel to return after a sleep (often of
/// zero) and got the CPU back more than [`Stalls::THRESHOLD_NS`] later. Lateness comes from
/// these, not from the emulator's own work (its writes take tens of microseconds): on a
/// virtual machine the hypervisor's steal time and the kernel's softirq work on the
/// emulator's CPU hold it off.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stalls {
    pub count: u64,
    /// Sum of the overshoots beyond the requested sleep.
    pub total_ns: u64,
}

impl Stalls {
    pub const THRESHOLD_NS: u64 = 100_000;

    pub fn record(&mut self, asked_ns: u64, took_ns: u64) {
        let over = took_ns.saturating_sub(asked_ns);
        if over > Self::THRESHOLD_NS {
            self.count += 1;
            self.total_ns += over;
        }
    }
}

/// RED's decisions on one link direction, in order: the average queue length each
/// arrival saw and whether RED dropped it early. Kept for the first million arrivals.
#[derive(Clone, Debug, Default)]
pub struct RedLog {
    pub decisions: Vec<(f32, bool)>,
}

impl RedLog {
    const CAP: usize = 1 << 20;

    pub fn record(&mut self, avg: f64, dropped_early: bool) {
        if self.decisions.len() < Self::CAP {
            self.decisions.push((avg as f32, dropped_early));
        }
    }
}

pub struct EmuReport {
    /// Per link direction (`scenario::model::dir_id`).
    pub links: Vec<LinkStats>,
    /// Link metrics and queue series, named as the simulator names them.
    pub measured: Measured,
    pub lateness: Lateness,
    pub stalls: Stalls,
    /// Per link direction; empty for drop-tail links.
    pub red: Vec<RedLog>,
    /// Packets read from the devices.
    pub read_pkts: u64,
    pub read_bytes: u64,
    /// Packets handed to a destination device.
    pub written_pkts: u64,
    pub written_bytes: u64,
    /// Packets with no route (not IPv4, or to an address of no host).
    pub unroutable: u64,
    /// Packets a destination device refused (own loss: [`OwnLoss::refused`]).
    pub device_drops: u64,
    /// Own losses at the devices besides refusals (see [`OwnLoss`]).
    pub not_read: u64,
    pub truncated_reads: u64,
    pub dropped_on_arrival: u64,
    /// Packets handed over more than [`LATE_BOUND_NS`] after their time.
    pub late_beyond_bound: u64,
    /// Seconds the emulator ran.
    pub ran_s: f64,
    /// Whether it ran at real-time priority.
    pub realtime: bool,
}

impl EmuReport {
    /// What the emulator lost itself.
    pub fn own_loss(&self) -> OwnLoss {
        OwnLoss {
            not_read: self.not_read,
            truncated: self.truncated_reads,
            refused: self.device_drops,
            dropped_on_arrival: self.dropped_on_arrival,
        }
    }

    /// Packets the hosts sent into their devices: read, or dropped there unread.
    pub fn offered_pkts(&self) -> u64 {
        self.read_pkts + self.not_read
    }

    /// The link model's drops on every link direction: the experiment's losses.
    pub fn link_drops(&self) -> u64 {
        self.links.iter().map(LinkStats::drops).sum()
    }

    /// The run's own figures against the bounds ([`assess`]).
    pub fn health(&self, seed: u64) -> EmulatorHealth {
        assess(
            seed,
            self.own_loss(),
            self.offered_pkts(),
            self.written_pkts,
            self.late_beyond_bound,
            self.link_drops(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_losses_sum_every_kind_and_count_against_what_was_offered() {
        let own = OwnLoss {
            not_read: 3,
            truncated: 1,
            refused: 2,
            dropped_on_arrival: 4,
        };
        let h = assess(7, own, 100_000, 99_990, 0, 5_000);
        assert_eq!(h.seed, 7);
        assert_eq!(h.own_losses, 10);
        assert!((h.own_loss_fraction - 1e-4).abs() < 1e-12);
        // The link's 5,000 drops are the experiment: beside, never in, the own losses.
        assert_eq!(h.link_drops, 5_000);
        assert!(!h.unreliable, "{:?}", h.why);
        assert!(h.why.is_empty());
    }

    #[test]
    fn own_losses_beyond_the_bound_make_a_run_unreliable() {
        let offered = 10_000;
        let at_bound = (OWN_LOSS_BOUND * offered as f64) as u64;
        let own = |not_read| OwnLoss {
            not_read,
            ..OwnLoss::default()
        };
        assert!(!assess(1, own(at_bound), offered, offered, 0, 0).unreliable);
        let h = assess(1, own(at_bound + 1), offered, offered, 0, 0);
        assert!(h.unreliable);
        assert_eq!(h.why.len(), 1);
        assert!(
            h.why[0].starts_with("the emulator lost 11 of 10000 packets itself (0.110 %"),
            "{}",
            h.why[0]
        );
    }

    #[test]
    fn late_packets_beyond_their_fraction_make_a_run_unreliable_but_are_not_losses() {
        let h = assess(1, OwnLoss::default(), 1000, 1000, 10, 0);
        assert!(!h.unreliable, "1 % exactly is within the bound");
        let h = assess(1, OwnLoss::default(), 1000, 1000, 11, 0);
        assert!(h.unreliable);
        assert_eq!(h.own_losses, 0);
        assert_eq!(h.late_beyond_bound, 11);
        assert!(h.why[0].contains("more than 5 ms late"), "{}", h.why[0]);
    }

    #[test]
    fn a_run_that_saw_no_packet_is_not_unreliable() {
        let h = assess(1, OwnLoss::default(), 0, 0, 0, 0);
        assert_eq!((h.own_loss_fraction, h.late_fraction), (0.0, 0.0));
        assert!(!h.unreliable);
    }

    #[test]
    fn lateness_mean_and_max_come_from_the_histogram() {
        let mut l = Lateness::default();
        assert_eq!((l.mean_us(), l.max_us()), (None, None));
        l.record(1_000);
        l.record(3_000);
        l.record(30_000_000); // beyond the cap: counted at the cap
        assert_eq!(l.max_us(), Some(20_000));
        assert!((l.mean_us().unwrap() - (1.0 + 3.0 + 20_000.0) / 3.0).abs() < 1e-9);
    }

    #[test]
    fn only_wakeups_beyond_the_threshold_count_and_early_ones_never() {
        let mut s = Stalls::default();
        s.record(50_000, 20_000); // woken early by a packet
        s.record(0, Stalls::THRESHOLD_NS); // at the threshold: not a stall
        s.record(40_000, 40_000 + 300_000);
        s.record(0, 1_200_000);
        assert_eq!(s.count, 2);
        assert_eq!(s.total_ns, 1_500_000);
    }

    #[test]
    fn lateness_quantiles_come_from_the_histogram() {
        let mut l = Lateness::default();
        assert_eq!(l.quantile_us(0.99), None);
        for us in 0..100 {
            l.record(us * 1000);
        }
        assert_eq!(l.quantile_us(0.5), Some(49));
        assert_eq!(l.quantile_us(0.99), Some(98));
    }
}
