//! The applications that use connections: a flow of the scenario writes a bulk stream that
//! never ends, a file of a given size, or bursts separated by idle times (on/off, each
//! burst a new connection); it stops writing at its stop time, and it may give up on a
//! connection that makes no progress and open another over its next path, or the one its
//! path selector picks.

mod selection;

use crate::packet::MSS;
use net::Nanos;
use net::layout::{FlowSlot, LaidOutFlow};
use rand_distr::{Distribution, Exp};
use rand_xoshiro::Xoshiro256PlusPlus;
use scenario::model::FlowGroup;
use scenario::spec::TrafficSpec;

use crate::ids::ConnId;
pub use selection::Selection;

/// One flow of a group: a traffic source and the connection currently serving it.
pub struct FlowSource {
    pub slot: FlowSlot,
    /// The connection serving the source now, if any.
    pub conn: Option<ConnId>,
    /// The source has stopped writing (stop time reached).
    pub stopped: bool,
    /// Its own random stream (burst and idle times), from the shared layout.
    rng: Xoshiro256PlusPlus,
    /// Flow completion time of a finite transfer, seconds.
    pub fct_s: Option<f64>,
    /// Which of the group's paths the next TCP connection uses (moves on a reconnect)
    /// when the group has no path selector.
    pub path: usize,
    /// The source's path selector and what it learnt from its earlier connections (MATCP:
    /// per source, as the paper's model places the choice at the TCP source).
    pub selection: Option<Selection>,
    /// Payload bytes still to deliver for a finite transfer (across reconnects).
    pub remaining: u64,
    /// Payload bytes its closed connections sent again at the data level.
    pub reinjected_bytes: u64,
    /// How its closed connections' TCP senders recovered losses.
    pub loss_recovery: measure::LossRecovery,
    /// What its closed connections' receivers sent and received.
    pub receiver_segments: measure::ReceiverSegments,
}

impl FlowSource {
    /// `select_seed`: the source's stream for its path choices.
    pub fn new(flow: LaidOutFlow, group: &FlowGroup, select_seed: u64) -> Self {
        FlowSource {
            selection: group
                .select
                .as_ref()
                .map(|spec| Selection::new(spec, group.paths.len(), select_seed)),
            slot: flow.slot,
            conn: None,
            stopped: false,
            rng: flow.rng,
            fct_s: None,
            reinjected_bytes: 0,
            loss_recovery: measure::LossRecovery::default(),
            receiver_segments: measure::ReceiverSegments::default(),
            path: 0,
            remaining: match group.traffic {
                TrafficSpec::File { size } => size.bytes(MSS as u64),
                TrafficSpec::Bulk | TrafficSpec::Onoff { .. } => u64::MAX,
            },
        }
    }

    /// Whether the source opens a connection now (it has something to send and none open).
    pub fn wants_connection(&self) -> bool {
        !self.stopped && self.conn.is_none() && self.remaining > 0
    }

    /// How long a burst lasts, drawn when it starts (on/off sources only).
    pub fn burst_length(&mut self, group: &FlowGroup) -> Option<Nanos> {
        match group.traffic {
            TrafficSpec::Onoff { burst, .. } => Some(exponential(&mut self.rng, burst.secs())),
            _ => None,
        }
    }

    /// How long the source stays idle after a burst (on/off sources only).
    pub fn idle_length(&mut self, group: &FlowGroup) -> Option<Nanos> {
        match group.traffic {
            TrafficSpec::Onoff { idle, .. } if !self.stopped => {
                Some(exponential(&mut self.rng, idle.secs()))
            }
            _ => None,
        }
    }

    /// Which of the group's paths a new TCP connection takes.
    pub fn next_path(&mut self, paths: usize) -> usize {
        match &mut self.selection {
            Some(selection) => selection.choose().index(),
            None => self.path % paths,
        }
    }

    /// The application gave up on its connection after it delivered `delivered` bytes: the
    /// next one goes over the next path and sends only what is left.
    pub fn reconnect(&mut self, delivered: u64) {
        self.conn = None;
        self.path += 1;
        if self.remaining != u64::MAX {
            self.remaining -= delivered.min(self.remaining);
        }
    }

    /// A finite transfer finished at `now`; across reconnects, it started when the flow did.
    pub fn completed(&mut self, now: Nanos) {
        self.fct_s
            .get_or_insert((now - self.slot.start) as f64 / 1e9);
    }
}

/// An exponentially distributed time with the given mean (seconds), in nanoseconds.
fn exponential(rng: &mut Xoshiro256PlusPlus, mean_s: f64) -> Nanos {
    let t = Exp::new(1.0 / mean_s)
        .expect("validated: a positive mean")
        .sample(rng);
    (t * 1e9) as Nanos
}
