//! Properties of the link model over random arrival patterns.

use net::{Enqueued, LinkDir, LinkParams, Packet};
use proptest::prelude::*;
use scenario::model::DirConfig;
use scenario::spec::QueueSpec;
use scenario::units::{Duration, Probability, Rate, Size};

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

fn params(limit: u64, red: bool, loss: f64) -> LinkParams {
    let queue = if red {
        QueueSpec::Red {
            size: Size::Packets(limit),
            min_th: 1.0,
            max_th: (limit as f64).max(2.0),
            max_p: 0.5,
            weight: 0.2,
            gentle: true,
        }
    } else {
        QueueSpec::Droptail {
            size: Size::Packets(limit),
        }
    };
    LinkParams::from_config(&DirConfig {
        rate: Rate(10_000_000),
        delay: Duration(2_000_000),
        queue,
        loss: Probability(loss),
    })
}

/// Drives the link like a simulator; returns (ids delivered in order, drops, max queue).
fn drive(link: &mut LinkDir<Pkt>, arrivals: &[(u64, u32)]) -> (Vec<u32>, usize, usize) {
    let mut wake: Vec<(u64, bool)> = Vec::new();
    let (mut delivered, mut dropped, mut max_q) = (Vec::new(), 0, 0);
    let mut i = 0;
    loop {
        wake.sort_by_key(|w| std::cmp::Reverse(*w));
        let next_arrival = arrivals.get(i).copied();
        match (next_arrival, wake.last().copied()) {
            (Some((t, b)), w) if w.is_none_or(|w| t <= w.0) => {
                match link.enqueue(
                    t,
                    Pkt {
                        id: i as u32,
                        bytes: b,
                    },
                ) {
                    Enqueued::Transmitting(d) => wake.push((d, true)),
                    Enqueued::Dropped(..) => dropped += 1,
                    Enqueued::Queued => {}
                }
                i += 1;
                max_q = max_q.max(link.queue_pkts());
            }
            (_, Some((t, tx))) => {
                wake.pop();
                if tx {
                    let r = link.tx_done(t);
                    wake.extend(r.next_tx.map(|d| (d, true)));
                    wake.extend(r.arrival.map(|d| (d, false)));
                    dropped += r.lost.is_some() as usize;
                } else if let Some((p, next)) = link.deliver(t) {
                    delivered.push(p.id);
                    wake.extend(next.map(|d| (d, false)));
                }
            }
            _ => return (delivered, dropped, max_q),
        }
    }
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
        let mut t = 0;
        let arrivals: Vec<(u64, u32)> = gaps.iter().zip(&sizes).map(|(g, &s)| { t += g; (t, s) }).collect();
        let mut link = LinkDir::new(params(limit, red, loss), seed);
        let (delivered, dropped, max_q) = drive(&mut link, &arrivals);
        prop_assert_eq!(delivered.len() + dropped, arrivals.len());
        prop_assert!(delivered.windows(2).all(|w| w[0] < w[1]), "FIFO order");
        prop_assert!(max_q as u64 <= limit);
        prop_assert_eq!(link.stats.drops() as usize, dropped);
    }
}
