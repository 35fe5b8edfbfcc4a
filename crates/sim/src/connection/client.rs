//! The end that opens the connection and sends data: the subflows' senders, the data level,
//! the path manager, the scheduler and the congestion control that couples the subflows.

use super::subflow::{ClientSubflow, SubflowState};
use super::timers::{Timer, TimerTable};
use super::{ConnConfig, Path};
use crate::ids::{ConnId, SubflowId};
use crate::jiffies::Jiffies;
use crate::mptcp::retransmit::{self, Retransmission};
use crate::mptcp::{DataSender, PathManager, Queued, Scheduler, linger};
use crate::packet::{HEADER_BYTES, Kind, MSS, Packet, Transmit};
use crate::tcp::prr::Delivery;
use crate::tcp::{CaState, Probe, Sender, TimerAction};
use mptcp_cc::{Ack, CongestionControl, SubflowView};
use net::Nanos;
use scenario::spec::SchedulerKind;
use std::collections::VecDeque;

/// SYN retransmissions before a handshake is given up: Linux's `tcp_syn_retries` default.
pub const MAX_SYN_RETRIES: u32 = 6;

pub struct Client {
    id: ConnId,
    mptcp: bool,
    subflows: Vec<ClientSubflow>,
    cc: Box<dyn CongestionControl>,
    data: DataSender,
    scheduler: Scheduler,
    /// `net.mptcp.stale_loss_cnt` (see `mptcp::stale`).
    stale_loss_cnt: u8,
    path_manager: PathManager,
    total_bytes: u64,
    timers: TimerTable,
    /// Handshake segments waiting to go (data segments are made when polled).
    control: VecDeque<Packet>,
    /// Subflows that sent data in the current sending pass, a bit each.
    pass_sent: u32,
    /// Subflows that sent new data (at their level) in the current sending pass.
    pass_sent_new: u32,
    /// The scheduler placed data-level segments in the current sending pass.
    pass_scheduled: bool,
    /// MPTCP: the scheduler is consulted in the current sending pass with data waiting
    /// (`__mptcp_push_pending()` with a send head), whether or not any can go.
    pass_consulted: bool,
    /// MPTCP: subflows that took an ACK in the current sending pass, a bit each: after the
    /// push, `tcp_check_space()` looks at each (see `linger::expand_sndbuf`).
    pass_acked: u32,
    /// MPTCP: the application waits for room in the connection's send buffer (the socket's
    /// `SOCK_NOSPACE`, which the subflows share: their sockets are grafted onto it).
    writer_waiting: bool,
    /// MPTCP: the data-level timer's interval, read when the scheduler was last consulted.
    data_timer_interval: Jiffies,
    /// MPTCP: what the data-level timer's last expiry re-sends, on its idle subflow.
    data_retransmit: Option<Retransmission>,
    /// MPTCP: expiries of the data-level timer whose re-send went out (`__mptcp_retrans()`);
    /// one the DATA_ACK overtook before it could go, or a later expiry replaced, is not one.
    data_retransmissions: u64,
    /// Scratch space for the congestion control's view of the subflows.
    views: Vec<SubflowView>,
    /// Last time the data level advanced (for an application that gives up and reconnects).
    last_progress: Nanos,
}

impl Client {
    /// Opens a connection at `now` over `paths` (one subflow each; the first opens it) by
    /// sending the first SYN.
    pub fn open(
        id: ConnId,
        cfg: &ConnConfig,
        paths: &[Path],
        cc: Box<dyn CongestionControl>,
        now: Nanos,
    ) -> Self {
        let app_segments = match cfg.total_bytes {
            u64::MAX => u64::MAX,
            bytes => bytes.div_ceil(MSS as u64),
        };
        let mut client = Client {
            id,
            mptcp: cfg.mptcp,
            subflows: paths
                .iter()
                .map(|&p| ClientSubflow::new(Sender::new(cfg.sack, cfg.cwnd_clamp), p))
                .collect(),
            cc,
            data: DataSender::new(app_segments, cfg.rcv_buffer.initial_window_segs()),
            scheduler: Scheduler::new(cfg.scheduler),
            stale_loss_cnt: cfg.stale_loss_cnt,
            path_manager: PathManager::new(paths.len()),
            total_bytes: cfg.total_bytes,
            timers: TimerTable::default(),
            control: VecDeque::new(),
            pass_sent: 0,
            pass_sent_new: 0,
            pass_scheduled: false,
            pass_consulted: false,
            pass_acked: 0,
            writer_waiting: false,
            data_timer_interval: retransmit::MIN_INTERVAL,
            data_retransmit: None,
            data_retransmissions: 0,
            views: Vec::with_capacity(paths.len()),
            last_progress: now,
        };
        client.send_syn(0, now);
        client
    }

    pub fn handle_packet(&mut self, now: Nanos, pkt: &Packet) {
        let s = pkt.subflow.index();
        let Some(sf) = self.subflows.get_mut(s) else {
            return;
        };
        match (pkt.kind, sf.state) {
            (Kind::SynAck, SubflowState::SynSent) => self.on_syn_ack(now, s, pkt),
            (Kind::Ack, SubflowState::PreEstablished) => {
                // The server acknowledged the MP_JOIN's third ACK.
                sf.state = SubflowState::Established;
                self.timers.stop(s);
                self.on_ack(now, s, pkt);
            }
            (Kind::Ack, SubflowState::Established) => self.on_ack(now, s, pkt),
            _ => {} // a duplicate SYN-ACK, or a late packet of a subflow given up
        }
    }

    /// Handles every timer due by `now`.
    pub fn handle_timeout(&mut self, now: Nanos) {
        while let Some(timer) = self.timers.take_expired(now) {
            let Timer::Subflow(s) = timer else {
                self.on_data_level_timeout(now);
                continue;
            };
            match self.subflows[s].state {
                SubflowState::SynSent => self.retransmit_syn(s, now),
                SubflowState::PreEstablished => {
                    self.subflows[s].tx.rtt.backoff += 1;
                    self.send_join_ack(s, now);
                }
                SubflowState::Established => self.on_transmission_timer(s, now),
                SubflowState::Idle | SubflowState::Failed => {}
            }
        }
    }

    /// The next packet to send now, if the windows allow one: handshake segments, then
    /// each subflow's retransmissions, then data-level segments (reinjections, then new
    /// data) on the subflows the scheduler picks. Data segments are made here, one per
    /// call, so nothing waits in a queue. The call that returns `None` ends the sending
    /// pass: it records each subflow's window use and arms the timers of those that sent.
    pub fn poll_transmit(&mut self, now: Nanos) -> Option<Transmit> {
        let packet = match self.control.pop_front() {
            Some(p) => p,
            None => match self.next_data(now) {
                Some(p) => p,
                None => {
                    self.end_pass(now);
                    return None;
                }
            },
        };
        let route = self.subflows[packet.subflow.index()].path.fwd;
        Some(Transmit { route, packet })
    }

    /// Starts loading the state an ACK on subflow `s` reads (see `World::prefetch_pipe`).
    #[inline]
    pub fn prefetch(&self, s: usize) {
        if let Some(sf) = self.subflows.get(s) {
            net::prefetch_lines(sf);
        }
    }

    pub fn poll_timeout(&self) -> Option<Nanos> {
        self.timers.next()
    }

    /// The application writes nothing more: what it wrote is still delivered.
    pub fn stop_writing(&mut self) {
        self.data.app_limit = self.data.app_limit.min(self.data.nxt);
    }

    /// Everything the application wrote is acknowledged at the data level.
    pub fn all_acked(&self) -> bool {
        self.data.all_acked()
    }

    pub fn last_progress(&self) -> Nanos {
        self.last_progress
    }

    pub fn subflows(&self) -> &[ClientSubflow] {
        &self.subflows
    }

    pub fn data(&self) -> &DataSender {
        &self.data
    }

    /// Payload bytes sent again at the data level so far (MPTCP's rewinds and data-level
    /// retransmissions), counted as the kernel backend counts them: the segments the
    /// subflows sent for the first time at their level, less the data segments handed to
    /// subflows at least once (Linux's subflows' `tcpi_bytes_sent - tcpi_bytes_retrans`, less
    /// `mptcpi_bytes_sent`). Data queued on a subflow counts when it goes on the wire, not
    /// when it is queued; data queued and never sent counts against.
    pub fn reinjected_bytes(&self) -> u64 {
        let first_sends: u64 = self.subflows.iter().map(|sf| sf.tx.snd_nxt).sum();
        first_sends.saturating_sub(self.data.nxt) * MSS as u64
    }

    /// How its subflows' TCP senders, and for MPTCP its data level, recovered losses so far.
    pub fn loss_recovery(&self) -> measure::LossRecovery {
        let mut counts = measure::LossRecovery {
            data_retransmissions: self.data_retransmissions,
            ..Default::default()
        };
        for sf in &self.subflows {
            counts += measure::LossRecovery {
                retransmitted_segments: sf.tx.retransmits,
                timeouts: sf.tx.timeouts,
                loss_probes: sf.tx.loss_probes,
                stale_subflows: sf.watch.times_marked().into(),
                data_retransmissions: 0,
            };
        }
        counts
    }

    /// MPTCP: the data-level timer's interval as last read (`msk->timer_ival`).
    pub fn data_timer_interval(&self) -> Jiffies {
        self.data_timer_interval
    }

    /// MPTCP: whether data the application wrote waits for a subflow (Linux's send head),
    /// whatever the peer's window.
    pub fn data_waiting(&self) -> bool {
        self.data.has_send_head(self.write_limit())
    }

    /// When the data-level retransmission timer is due, if it runs.
    pub fn data_level_deadline(&self) -> Option<Nanos> {
        self.timers.get(Timer::Connection)
    }

    fn send_syn(&mut self, s: usize, now: Nanos) {
        let sf = &mut self.subflows[s];
        sf.state = SubflowState::SynSent;
        let mut syn = Packet::control(self.id, SubflowId(s as u8), Kind::Syn);
        syn.ts = now.max(1);
        self.control.push_back(syn);
        self.timers.set(s, now + sf.tx.rtt.rto());
    }

    /// The SYN's timer fired: send it again with the timeout doubled, or give up.
    fn retransmit_syn(&mut self, s: usize, now: Nanos) {
        let sf = &mut self.subflows[s];
        if sf.handshake_retries >= MAX_SYN_RETRIES {
            sf.state = SubflowState::Failed;
            return;
        }
        sf.handshake_retries += 1;
        sf.tx.rtt.backoff += 1;
        self.send_syn(s, now);
    }

    fn on_syn_ack(&mut self, now: Nanos, s: usize, pkt: &Packet) {
        let sf = &mut self.subflows[s];
        sf.ack_tsval_ms = pkt.ack_tsval_ms;
        sf.tx.rtt.backoff = 0;
        sf.tx.rtt.sample(now.saturating_sub(pkt.ts));
        // tcp_init_transfer(): the initial window is cut to one segment when the handshake
        // needed more than one retransmission.
        if sf.handshake_retries > 1 {
            sf.tx.set_cwnd(1.0);
        }
        sf.handshake_retries = 0;
        if s == 0 {
            sf.state = SubflowState::Established;
            self.timers.stop(s);
        } else {
            sf.state = SubflowState::PreEstablished;
            self.send_join_ack(s, now);
        }
    }

    fn send_join_ack(&mut self, s: usize, now: Nanos) {
        let sf = &self.subflows[s];
        let mut ack = Packet::control(self.id, SubflowId(s as u8), Kind::JoinAck);
        ack.ts = now.max(1);
        ack.ack_tsval_ms = sf.ack_tsval_ms;
        self.control.push_back(ack);
        self.timers.set(s, now + sf.tx.rtt.rto());
    }

    /// An ACK on established subflow `s`.
    fn on_ack(&mut self, now: Nanos, s: usize, pkt: &Packet) {
        // Where the data level stood before this ACK, for where the writes had reached.
        let una_before = self.data.una;
        let sf = &mut self.subflows[s];
        let before = sf.tx.state;
        let first_data_ack = sf.tx.snd_una == 0;
        // `tcp_ack()` stamps every ACK that is not older than `snd_una` and acknowledges
        // nothing unsent, duplicates included.
        if (sf.tx.snd_una..=sf.tx.snd_nxt).contains(&pkt.seq) {
            sf.watch.heard_from(now);
        }
        // `tcp_replace_ts_recent()`: every ACK passes, since this end sends no data of its
        // own for the ACK's sequence number to be checked against.
        sf.ack_tsval_ms = pkt.ack_tsval_ms;
        let res = sf.tx.on_ack(now, pkt);
        self.pass_acked |= 1 << s;
        let data_advanced = self.data.on_data_ack(pkt.dsn, pkt.rwnd as u64) > 0;
        let tx = &sf.tx;
        // What the congestion control grows by: what this ACK newly delivered, SACKed
        // segments counted when they were SACKed, not again when the cumulative ACK covers
        // them (`tcp_cong_control()` passes `acked_sacked` to `tcp_cong_avoid()`).
        let ack = Ack {
            acked: res.delivery.map_or(0, |d| d.segments) as f64,
            snd_una: tx.snd_una,
            snd_nxt: tx.snd_nxt,
            rtt_s: res.ca_rtt_ns.map(|r| r as f64 / 1e9),
            cwnd_limited: tx.cwnd_limited(),
        };
        // `tcp_clean_rtx_queue()` calls `pkts_acked` on every ACK not older than
        // `snd_una`, a SACK with nothing newly acknowledged included.
        if res.delivery.is_some() {
            self.cc.pkts_acked(s, &ack);
        }
        if sf.tx.state != before {
            self.cc.set_state(s, sf.tx.state, ack.snd_una);
        }
        if data_advanced {
            self.last_progress = now;
            self.wake_writer(una_before);
        }
        if res.probe_repaired_loss {
            self.reduce_after_probe(s, ack.snd_una);
        }
        if res.loss_detected {
            self.enter_recovery(s, ack.snd_una, res.delivery);
        } else if res.acked > 0 && self.subflows[s].tx.state != CaState::Recovery {
            self.collect_views();
            let w = self.cc.cong_avoid(&self.views, s, &ack);
            let tx = &mut self.subflows[s].tx;
            tx.set_cwnd(w.cwnd);
            tx.ssthresh = w.ssthresh.max(1.0);
        }
        self.sync_timer(s);
        if self.mptcp {
            self.on_dss_ack(now, data_advanced);
        }
        if first_data_ack && res.acked > 0 && s == 0 && self.mptcp {
            for k in self.path_manager.on_fully_established() {
                self.send_syn(k, now);
            }
        }
    }

    /// The transmission timer of established subflow `s` fired: a retransmission
    /// timeout, RACK's reordering timeout, or a tail loss probe.
    fn on_transmission_timer(&mut self, s: usize, now: Nanos) {
        let new_data = self.probe_has_new_data(s);
        let una = self.subflows[s].tx.snd_una;
        match self.subflows[s].tx.on_timer(now, new_data) {
            TimerAction::Timeout => {
                self.collect_views();
                let ssthresh = self.cc.ssthresh(&self.views, s);
                self.subflows[s].tx.on_rto(now, ssthresh);
                self.cc.set_state(s, CaState::Loss, una);
            }
            TimerAction::EnterRecovery => {
                self.enter_recovery(s, una, Some(Delivery::reordering_timeout()))
            }
            TimerAction::Probe | TimerAction::None => {}
        }
        self.sync_timer(s);
    }

    /// Whether subflow `s` has data it has not sent, which a tail loss probe sends rather
    /// than a segment again (`tcp_send_head()` within the peer's window): a plain TCP
    /// connection's unsent data; an MPTCP subflow's queue under Linux's scheduler (the
    /// other schedulers hand a subflow data only as its window opens).
    fn probe_has_new_data(&mut self, s: usize) -> bool {
        if self.mptcp {
            !self.subflows[s].queue.is_empty()
        } else {
            self.data.has_data()
        }
    }

    /// Loss found on subflow `s` outside recovery: the congestion control's threshold, and
    /// fast recovery, its window reduced from what `delivery` delivered on.
    fn enter_recovery(&mut self, s: usize, snd_una: u64, delivery: Option<Delivery>) {
        self.collect_views();
        let ssthresh = self.cc.ssthresh(&self.views, s);
        self.subflows[s].tx.enter_recovery(ssthresh, delivery);
        self.cc.set_state(s, CaState::Recovery, snd_una);
    }

    /// A tail loss probe on subflow `s` repaired a loss: one reduction, in and out of CWR.
    fn reduce_after_probe(&mut self, s: usize, snd_una: u64) {
        self.collect_views();
        let ssthresh = self.cc.ssthresh(&self.views, s);
        self.subflows[s].tx.reduce_after_probe(ssthresh);
        self.cc.set_state(s, CaState::Cwr, snd_una);
        self.cc.set_state(s, CaState::Open, snd_una);
    }

    /// The timer table follows subflow `s`'s transmission timer.
    fn sync_timer(&mut self, s: usize) {
        self.timers.follow(s, self.subflows[s].tx.timer_deadline());
    }

    /// The data level's part of an ACK, after TCP's (`mptcp_incoming_options()` runs after
    /// `tcp_ack()`, so the subflow's own timer is already re-armed). `ack_update_msk()`
    /// consults the scheduler if the peer's window is open and data waits
    /// (`__mptcp_check_push()`), which reads the timer's interval again; then, if the
    /// DATA_ACK advanced, `__mptcp_clean_una()` restarts the timer with that interval, and
    /// the application, woken by the room it freed, writes and pushes
    /// (`mptcp_sendmsg()` → `__mptcp_push_pending()`), consulting the scheduler again.
    fn on_dss_ack(&mut self, now: Nanos, data_advanced: bool) {
        let waiting = self.data.has_send_head(self.write_limit());
        if waiting && self.data.window_open() {
            self.consult_scheduler(now);
        }
        if data_advanced {
            self.restart_data_level_timer(now);
            self.pass_consulted |= waiting;
        }
    }

    /// The connection's send buffer in segments: with Linux's scheduler the sum of its
    /// subflows' (`mptcp_propagate_sndbuf()`); the schedulers that place one segment at a
    /// time model no send buffer.
    fn write_limit(&self) -> u64 {
        if self.scheduler.kind() != SchedulerKind::LinuxDefault {
            return u64::MAX;
        }
        let sndbuf: u64 = self.subflows.iter().map(|sf| sf.sndbuf).sum();
        (sndbuf / MSS as u64).max(1)
    }

    /// Where the application's writes reach, in segments, with the data level acknowledged
    /// up to `una`: it writes as soon as the send buffer has room, up to what it has.
    fn written(&self, una: u64, write_limit: u64) -> u64 {
        self.data.app_limit.min(una.saturating_add(write_limit))
    }

    /// An application with more to write than the send buffer takes has filled it and
    /// waits for room (`sk_stream_wait_memory()` sets `SOCK_NOSPACE`).
    fn mark_writer_if_waiting(&mut self, write_limit: u64) {
        if self.data.app_limit > self.written(self.data.una, write_limit) {
            self.writer_waiting = true;
        }
    }

    /// The DATA_ACK advanced from `una_before`, up to which the application had written
    /// what the buffer took: if the send buffer is now writeable (its free room at least
    /// half of what it holds, `sk_stream_is_writeable()`), `__mptcp_clean_una()`'s
    /// `mptcp_write_space()` wakes the application and `sk_stream_write_space()` clears
    /// `SOCK_NOSPACE`, until the application has filled the buffer again.
    fn wake_writer(&mut self, una_before: u64) {
        let write_limit = self.write_limit();
        let held = self
            .written(una_before, write_limit)
            .saturating_sub(self.data.una);
        if 2 * write_limit.saturating_sub(held) >= held {
            self.writer_waiting = false;
        }
    }

    /// The data level advanced: the timer starts over, or stops when everything written
    /// is acknowledged (`__mptcp_clean_una()`).
    fn restart_data_level_timer(&mut self, now: Nanos) {
        if self.data.una == self.data.nxt && !self.data.has_unsent() {
            self.timers.stop(Timer::Connection);
        } else {
            let deadline = retransmit::deadline(now, self.data_timer_interval);
            self.timers.set(Timer::Connection, deadline);
        }
    }

    /// The data-level timer expired (`__mptcp_retrans()`): stale accounting, perhaps a
    /// re-send of the head fragment on an idle subflow, and the timer armed again unless
    /// nothing is outstanding or waiting. With data waiting, the push that follows
    /// (`mptcp_check_and_set_pending()`, then `__mptcp_push_pending()` from
    /// `mptcp_release_cb()`) consults the scheduler, which reads the interval again.
    fn on_data_level_timeout(&mut self, now: Nanos) {
        #[cfg(feature = "data-timer-trace")]
        super::data_timer_trace::expiry(
            now,
            self.id,
            self.data_timer_interval,
            &self.data,
            self.subflows.iter().map(|sf| sf.sndbuf).sum(),
        );
        let retransmission =
            retransmit::on_expiry(&mut self.subflows, &mut self.data, self.stale_loss_cnt);
        if retransmission.is_some() {
            self.data_retransmit = retransmission;
        }
        if self.data.una < self.data.nxt || self.data.has_unsent() {
            let deadline = retransmit::deadline(now, self.data_timer_interval);
            self.timers.set(Timer::Connection, deadline);
        }
        self.pass_consulted |= self.data.has_send_head(self.write_limit());
    }

    /// What Linux's `mptcp_subflow_get_send()` does each time the scheduler is consulted,
    /// beyond choosing: it reads the data-level timer's interval from the subflows' timers.
    fn consult_scheduler(&mut self, now: Nanos) {
        self.data_timer_interval = retransmit::interval(&self.subflows, &self.timers, now);
        // The kernel's side of the trace reads each subflow's stale state at this point
        // (the mptcp_subflow_get_send tracepoint): the simulator's is read at the same.
        #[cfg(feature = "data-timer-trace")]
        for (s, sf) in self.subflows.iter().enumerate() {
            super::data_timer_trace::subflow_seen(now, self.id, s, sf);
        }
    }

    /// The congestion control's coupling state on subflow `s` now, for traces.
    pub fn coupling_state(&mut self, s: usize) -> mptcp_cc::CouplingState {
        self.collect_views();
        self.cc.coupling_state(&self.views, s)
    }

    fn collect_views(&mut self) {
        self.views.clear();
        self.views
            .extend(self.subflows.iter().map(ClientSubflow::view));
    }

    /// The next data segment the windows allow, if any.
    fn next_data(&mut self, now: Nanos) -> Option<Packet> {
        for s in 0..self.subflows.len() {
            if !self.subflows[s].is_established() {
                continue;
            }
            if self.subflows[s].tx.probe().is_some() {
                if let Some(p) = self.send_probe(s, now) {
                    return Some(p);
                }
                continue;
            }
            if let Some(seq) = self.subflows[s].tx.next_retransmit(now) {
                let dsn = self.subflows[s].tx.dsn_of(seq);
                return Some(self.data_packet(s, seq, dsn, false, now));
            }
        }
        if let Some(p) = self.next_data_retransmission(now) {
            return Some(p);
        }
        if self.mptcp && self.scheduler.kind() == SchedulerKind::LinuxDefault {
            self.fill_send_queues();
            return self.next_queued(now);
        }
        if !self.data.has_data() {
            return None;
        }
        let s = self.scheduler.pick(&self.subflows)?;
        let skb_end = self.subflows[s].take_skb_segment(self.data.sendable());
        let Queued { dsn, push } = self.take_app_data();
        let seq = self.subflows[s].tx.send_new(dsn, push, now);
        self.pass_scheduled = true;
        self.pass_sent_new |= 1 << s;
        Some(self.data_packet(s, seq, dsn, skb_end, now))
    }

    /// The next data-level segment for a scheduler that places one segment at a time
    /// (plain TCP's one subflow, or MPTCP's lowest-RTT and round-robin): PSH where one of
    /// the application's writes ends in new data.
    fn take_app_data(&mut self) -> Queued {
        let new_data = !self.data.is_resending();
        let dsn = self.data.take();
        Queued {
            dsn,
            push: new_data && self.data.ends_write(dsn),
        }
    }

    /// Subflow `s`'s tail loss probe: a new segment whatever its window, if it has one
    /// (taken from its queue, or for plain TCP from the application's data), or its last
    /// segment again. Linux's `tcp_event_new_data_sent()` checks the send buffer after a new
    /// one too; a probe goes only with the window full (new data the window had room for
    /// would have gone already), so that check never grows the buffer and is left out.
    fn send_probe(&mut self, s: usize, now: Nanos) -> Option<Packet> {
        let new_data = match self.subflows[s].tx.probe() {
            Some(Probe::NewData) if self.mptcp => self.subflows[s].queue.pop(),
            Some(Probe::NewData) if self.data.has_data() => Some(self.take_app_data()),
            _ => None,
        };
        let tx = &mut self.subflows[s].tx;
        let (seq, dsn) = match new_data {
            Some(Queued { dsn, push }) => {
                let seq = tx.send_new(dsn, push, now);
                tx.send_probe(now);
                (seq, dsn)
            }
            None => {
                tx.resend_instead_of_new_data();
                let seq = tx.send_probe(now)?;
                (seq, tx.dsn_of(seq))
            }
        };
        Some(self.data_packet(s, seq, dsn, false, now))
    }

    /// Linux's `__mptcp_push_pending()` with its default scheduler: bursts of data copied
    /// into the write queue of the subflow `linger::pick` chooses, until it chooses none,
    /// the data runs out, or the connection's send buffer (the sum of its subflows',
    /// `mptcp_propagate_sndbuf()`) holds all the application may write.
    fn fill_send_queues(&mut self) {
        let write_limit = self.write_limit();
        // `mptcp_sendmsg()` sets `SOCK_NOSPACE` before its `__mptcp_push_pending()`, so the
        // skbs this push sends are checked with the writer waiting.
        self.mark_writer_if_waiting(write_limit);
        while self.data.has_data_within(write_limit) {
            let burst = linger::SEND_BURST_BYTES.min(self.data.window_room() * MSS as u64);
            let Some(s) = linger::pick(&mut self.subflows, burst) else {
                return;
            };
            // `__subflow_push_pending()`: fragments go while the burst lasts and the
            // subflow's send buffer has room.
            let mut left = burst as i64;
            let mut pushed = false;
            while left > 0
                && linger::memory_free(&self.subflows[s])
                && self.data.has_data_within(write_limit)
            {
                let dsn = self.data.take();
                self.subflows[s].queue.push(dsn);
                left -= MSS as i64;
                pushed = true;
            }
            if !pushed {
                return;
            }
            // `mptcp_push_release()`: `tcp_push()` marks the burst's last segment.
            self.subflows[s].queue.end_burst();
            self.pass_scheduled = true;
        }
    }

    /// The next segment a subflow's window lets it send from its queue.
    fn next_queued(&mut self, now: Nanos) -> Option<Packet> {
        let s = self
            .subflows
            .iter()
            .position(|sf| sf.can_send() && !sf.queue.is_empty())?;
        let sf = &mut self.subflows[s];
        let skb_end = sf.take_skb_segment(sf.queue.len());
        let Queued { dsn, push } = sf.queue.pop()?;
        let seq = sf.tx.send_new(dsn, push, now);
        self.pass_sent_new |= 1 << s;
        self.after_new_data_sent(s);
        Some(self.data_packet(s, seq, dsn, skb_end, now))
    }

    /// The next segment the data-level timer re-sends, if its subflow has room.
    fn next_data_retransmission(&mut self, now: Nanos) -> Option<Packet> {
        let r = self.data_retransmit.as_mut()?;
        r.dsns.start = r.dsns.start.max(self.data.una);
        let sf = &self.subflows[r.subflow];
        if r.dsns.is_empty() || !sf.is_established() {
            self.data_retransmit = None;
            return None;
        }
        if !sf.tx.has_room() {
            return None;
        }
        let (s, dsn) = (r.subflow, r.dsns.start);
        if !r.started {
            r.started = true;
            self.data_retransmissions += 1;
        }
        // The re-sent fragment goes through `tcp_write_xmit()` as new data does, in skbs.
        let skb_end = self.subflows[s].take_skb_segment(r.dsns.end - r.dsns.start);
        r.dsns.start += 1;
        // `__mptcp_retrans()` pushes what it re-sent: PSH on the last segment.
        let push = r.dsns.is_empty();
        self.data.count_resent();
        let seq = self.subflows[s].tx.send_new(dsn, push, now);
        self.pass_sent_new |= 1 << s;
        self.after_new_data_sent(s);
        Some(self.data_packet(s, seq, dsn, skb_end, now))
    }

    /// Subflow `s` sent a segment of new data. Once that completes an skb,
    /// `tcp_event_new_data_sent()` (net/ipv4/tcp_output.c) runs `tcp_check_space()`, as
    /// it does since Linux 5.19 (commit 4bfe744ff164, "tcp: fix potential xmit stalls
    /// caused by TCP_NOTSENT_LOWAT"): with the application waiting for room and the window
    /// not yet full, the send buffer grows to twice the window. So while the writer waits,
    /// a push that leaves room after an skb grows it, as in slow start, where each ACK
    /// opens more room than one skb takes.
    fn after_new_data_sent(&mut self, s: usize) {
        let sf = &mut self.subflows[s];
        if self.writer_waiting && sf.skb_sent() {
            linger::expand_sndbuf(sf);
        }
    }

    /// After a sending pass: each established subflow that sent or is held by its window
    /// records its window use (Linux's `tcp_cwnd_validate()` after `tcp_write_xmit()`), and
    /// one that sent new data schedules its tail loss probe; the timer table follows the
    /// timers of those that sent. Each that took an ACK has its send buffer looked at
    /// (`tcp_check_space()` after the ACK's push, before the application, if woken, writes).
    fn end_pass(&mut self, now: Nanos) {
        let sent = std::mem::take(&mut self.pass_sent);
        let sent_new = std::mem::take(&mut self.pass_sent_new);
        let scheduled = std::mem::take(&mut self.pass_scheduled);
        let consulted = std::mem::take(&mut self.pass_consulted);
        let acked = std::mem::take(&mut self.pass_acked);
        if self.mptcp && (scheduled || consulted) {
            // Linux reads the interval whenever it consults the scheduler
            // (`mptcp_subflow_get_send()`), before this pass's segments arm any subflow
            // timer, and arms the data-level timer if it is not running once data went.
            self.consult_scheduler(now);
        }
        if self.mptcp && scheduled {
            let deadline = retransmit::deadline(now, self.data_timer_interval);
            self.timers.arm(Timer::Connection, deadline);
        }
        for (s, sf) in self.subflows.iter_mut().enumerate() {
            if !sf.is_established() {
                continue;
            }
            if acked & (1 << s) != 0 && self.writer_waiting {
                linger::expand_sndbuf(sf);
            }
            sf.end_skb();
            let sent_here = sent & (1 << s) != 0;
            if sent_here || !sf.tx.has_room() {
                sf.tx.cwnd_validate();
            }
            if sent_new & (1 << s) != 0 {
                sf.tx.after_new_data(now);
            }
            if sent_here {
                self.timers.follow(s, sf.tx.timer_deadline());
            }
        }
        // The application has written what the send buffer takes, and waits if it has more.
        if self.mptcp {
            let write_limit = self.write_limit();
            self.mark_writer_if_waiting(write_limit);
        }
    }

    /// Subflow `s`'s segment `seq` as it leaves now: with PSH if the sender marked it
    /// (`tcp_mark_push()`, kept for its retransmissions) or if it ends an skb of several
    /// (`skb_end`: `__tcp_transmit_skb()` sets that PSH on the transmitted clone only, so
    /// a segment sent again alone does not carry it).
    fn data_packet(&mut self, s: usize, seq: u64, dsn: u64, skb_end: bool, now: Nanos) -> Packet {
        self.pass_sent |= 1 << s;
        let payload = match self.total_bytes {
            u64::MAX => MSS as u64,
            total => total.saturating_sub(dsn * MSS as u64).min(MSS as u64),
        };
        let sf = &self.subflows[s];
        let push = sf.tx.pushed(seq) || skb_end;
        Packet {
            seq,
            dsn,
            ts: now.max(1),
            ack_tsval_ms: sf.ack_tsval_ms,
            wire_bytes: payload as u16 + HEADER_BYTES,
            ..Packet::control(self.id, SubflowId(s as u8), Kind::Data { push })
        }
    }
}
