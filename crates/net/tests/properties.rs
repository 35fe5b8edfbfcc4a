//! Properties of the link model over random arrival patterns, and its agreement with a
//! reference model that handles every end of transmission as an event of its own.

use net::{Aqm, Arrival, DropReason, Enqueued, LinkDir, LinkParams, LinkStats, Nanos, Packet};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use scenario::model::DirConfig;
use scenario::spec::QueueSpec;
use scenario::units::{Duration, Probability, Rate, Size};
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pkt {
    id: u32,
    bytes: u32,
}
impl Packet for Pkt {
    fn wire_bytes(&self) -> u32 {
        self.bytes
    }
}

fn params(limit: u64, in_bytes: bool, red: bool, loss: f64) -> LinkParams {
    let size = if in_bytes {
        Size::Bytes(limit * 1000)
    } else {
        Size::Packets(limit)
    };
    let queue = if red {
        let unit = if in_bytes { 1000.0 } else { 1.0 };
        QueueSpec::Red {
            size,
            min_th: unit,
            max_th: (limit as f64).max(2.0) * unit,
            max_p: 0.5,
            weight: 0.2,
            gentle: true,
        }
    } else {
        QueueSpec::Droptail { size }
    };
    LinkParams::from_config(&DirConfig {
        rate: Rate(10_000_000),
        delay: Duration(2_000_000),
        queue,
        loss: Probability(loss),
    })
}

/// What became of each packet: delivered at a time, or dropped for a reason.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fate {
    Delivered(Nanos),
    Dropped(DropReason),
}

/// Drives the link as the simulator does (one wake-up at a time, arrivals at the same time
/// as a wake-up first); returns each packet's fate, the largest queue seen, and the
/// statistics synced to `end`.
fn drive(
    link: &mut LinkDir<Pkt>,
    arrivals: &[(Nanos, u32)],
    end: Nanos,
) -> (Vec<Fate>, usize, LinkStats) {
    let mut fates = vec![Fate::Dropped(DropReason::Down); arrivals.len()];
    let mut wake: Option<Nanos> = None;
    let mut max_q = 0;
    let mut i = 0;
    loop {
        match (arrivals.get(i).copied(), wake) {
            (Some((t, bytes)), w) if w.is_none_or(|w| t <= w) => {
                let pkt = Pkt {
                    id: i as u32,
                    bytes,
                };
                match link.enqueue(t, pkt) {
                    Enqueued::Accepted { wake: w } => wake = w.or(wake),
                    Enqueued::Dropped(p, why) => fates[p.id as usize] = Fate::Dropped(why),
                }
                max_q = max_q.max(link.queue_pkts());
                i += 1;
            }
            (_, Some(t)) => {
                let (arrival, next) = link.deliver(t).expect("the wake-up asked for");
                match arrival {
                    Arrival::Delivered(p) => fates[p.id as usize] = Fate::Delivered(t),
                    Arrival::Lost(p) => fates[p.id as usize] = Fate::Dropped(DropReason::Loss),
                }
                wake = next;
            }
            _ => break,
        }
    }
    link.sync_stats(end);
    (fates, max_q, link.stats.clone())
}

/// The link model written the plain way: the end of every transmission is an event, the
/// queue and the pipe are separate, and a transmission ending at the time of an arrival is
/// handled first. The same random stream is drawn in the same order (RED at arrival, loss
/// at the end of transmission).
fn reference(
    p: &LinkParams,
    seed: u64,
    arrivals: &[(Nanos, u32)],
    end: Nanos,
) -> (Vec<Fate>, LinkStats) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut aqm = Aqm::new(&p.aqm);
    let typical_tx = net::tx_time(1500, p.rate_bps);
    let mut fates = vec![Fate::Dropped(DropReason::Down); arrivals.len()];
    let mut st = LinkStats::default();
    let mut queue: VecDeque<usize> = VecDeque::new();
    let mut queued_bytes = 0u64;
    let mut in_service: Option<(usize, Nanos)> = None;
    let mut last_arrival = 0;
    let mut last_change = 0;
    let mut account = |st: &mut LinkStats, q: usize, t: Nanos| {
        st.queue_area += q as u128 * (t - last_change) as u128;
        last_change = t;
    };
    let mut i = 0;
    loop {
        let next_arrival = arrivals.get(i).map(|a| a.0);
        match (in_service, next_arrival) {
            (Some((k, done)), a) if a.is_none_or(|a| done <= a) => {
                let bytes = arrivals[k].1;
                st.tx_pkts += 1;
                st.tx_bytes += bytes as u64;
                if p.loss > 0.0 && rng.random::<f64>() < p.loss {
                    st.drops_loss += 1;
                    fates[k] = Fate::Dropped(DropReason::Loss);
                } else {
                    last_arrival = (done + p.delay).max(last_arrival);
                    fates[k] = Fate::Delivered(last_arrival);
                    st.delivered_pkts += 1;
                }
                in_service = None;
                if let Some(n) = queue.pop_front() {
                    account(&mut st, queue.len() + 1, done);
                    queued_bytes -= arrivals[n].1 as u64;
                    in_service = Some((n, done + net::tx_time(arrivals[n].1, p.rate_bps)));
                }
                if queue.is_empty() {
                    aqm.on_empty(done);
                }
            }
            (_, Some(t)) => {
                let bytes = arrivals[i].1;
                st.arrived_pkts += 1;
                if in_service.is_none() {
                    aqm.early_drop(t, 0.0, typical_tx, &mut rng);
                    in_service = Some((i, t + net::tx_time(bytes, p.rate_bps)));
                } else {
                    let (len, full) = if p.limit_in_bytes {
                        (queued_bytes as f64, queued_bytes + bytes as u64 > p.limit)
                    } else {
                        (queue.len() as f64, queue.len() as u64 >= p.limit)
                    };
                    if aqm.early_drop(t, len, typical_tx, &mut rng) {
                        st.drops_early += 1;
                        fates[i] = Fate::Dropped(DropReason::Early);
                    } else if full {
                        st.drops_overflow += 1;
                        fates[i] = Fate::Dropped(DropReason::Overflow);
                    } else {
                        account(&mut st, queue.len(), t);
                        queued_bytes += bytes as u64;
                        queue.push_back(i);
                        st.max_queue_pkts = st.max_queue_pkts.max(queue.len() as u64);
                    }
                }
                i += 1;
            }
            _ => break,
        }
    }
    account(&mut st, 0, end);
    (fates, st)
}

fn arrivals(gaps: &[u64], sizes: &[u32]) -> Vec<(Nanos, u32)> {
    let mut t = 0;
    gaps.iter()
        .zip(sizes)
        .map(|(g, &s)| {
            t += g;
            (t, s)
        })
        .collect()
}

proptest! {
    #[test]
    fn packets_are_conserved_in_order_and_within_the_limit(
        gaps in prop::collection::vec(0u64..2_000_000, 1..300),
        sizes in prop::collection::vec(40u32..1500, 300),
        limit in 1u64..40,
        red in any::<bool>(),
        loss in 0.0f64..0.3,
        seed in any::<u64>(),
    ) {
        let arrivals = arrivals(&gaps, &sizes);
        let mut link = LinkDir::new(params(limit, false, red, loss), seed);
        let (fates, max_q, stats) = drive(&mut link, &arrivals, u64::MAX / 2);
        let delivered: Vec<Nanos> = fates
            .iter()
            .filter_map(|f| match f { Fate::Delivered(t) => Some(*t), _ => None })
            .collect();
        let dropped = fates.len() - delivered.len();
        prop_assert!(delivered.windows(2).all(|w| w[0] <= w[1]), "FIFO order");
        prop_assert!(max_q as u64 <= limit);
        prop_assert_eq!(stats.drops() as usize, dropped);
        prop_assert_eq!(stats.delivered_pkts as usize, delivered.len());
        prop_assert_eq!(stats.arrived_pkts as usize, arrivals.len());
    }

    /// Computing the times at enqueue and playing the rest back lazily gives, packet by
    /// packet, what the event-per-transmission model gives: fates, arrival times, every
    /// counter and the queue-length integral, with RED and random loss sharing one stream.
    #[test]
    fn agrees_with_the_event_per_transmission_model(
        gaps in prop::collection::vec(
            prop_oneof![Just(0u64), 0u64..3_000_000, Just(1_200_000)], 1..400),
        sizes in prop::collection::vec(prop_oneof![Just(1500u32), 40u32..1500], 400),
        limit in 1u64..30,
        in_bytes in any::<bool>(),
        red in any::<bool>(),
        loss in prop_oneof![Just(0.0f64), 0.0f64..0.2],
        seed in any::<u64>(),
    ) {
        let arrivals = arrivals(&gaps, &sizes);
        let p = params(limit, in_bytes, red, loss);
        let end = arrivals.last().unwrap().0 + 1_000_000_000;
        let mut link = LinkDir::new(p.clone(), seed);
        let (fates, _, stats) = drive(&mut link, &arrivals, end);
        let (want, want_stats) = reference(&p, seed, &arrivals, end);
        prop_assert_eq!(fates, want);
        prop_assert_eq!(stats, want_stats);
    }
}
