/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* wVegas (Cao, Xu, Fu, ICNP 2012) as the out-of-tree Linux module runs it: delay-based,
 * one decision per round from the round's average RTT against the base RTT, with the
 * subflow's share of the connection's rate setting its queue target. The round's rule
 * is mlab_wvegas_round in mlab_math.h; this file keeps the per-round bookkeeping. */
#include "mlab_kern.h"

static __always_inline void wvegas_reno(struct sock *sk, u32 acked)
{
	struct tcp_sock *tp = mlab_tcp_sk(sk);

	if (!mlab_cwnd_limited(sk))
		return;
	if (tp->snd_cwnd < tp->snd_ssthresh) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
}

static __always_inline void wvegas_publish(struct sock *sk, const struct mlab_set *vs)
{
	struct mlab_ca *ca = mlab_ca_of(sk);

	mlab_publish(sk, vs, MLAB_ALG_WVEGAS, mlab_norm(ca->alpha_q, -MLAB_WVEGAS_ALPHA_SHIFT), 1,
		     0, mlab_reno_increase_q(mlab_tcp_sk(sk)->snd_cwnd));
}

SEC("struct_ops")
void BPF_PROG(wvegas_in_ack_event, struct sock *sk, u32 flags)
{
	mlab_repair(sk, MLAB_ALG_WVEGAS);
}

SEC("struct_ops")
void BPF_PROG(wvegas_init, struct sock *sk)
{
	struct mlab_set vs;

	mlab_init_ca(sk);
	mlab_ca_of(sk)->round_end = mlab_tcp_sk(sk)->snd_nxt;
	mlab_collect(sk, &vs);
	wvegas_publish(sk, &vs);
}

SEC("struct_ops")
void BPF_PROG(wvegas_release, struct sock *sk)
{
	mlab_forget(sk);
}

SEC("struct_ops")
void BPF_PROG(wvegas_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct mlab_ca *ca = mlab_ca_of(sk);
	s32 rtt = sample->rtt_us;

	if (rtt <= 0)
		return;
	if (!ca->base_rtt_us || (u32)rtt < ca->base_rtt_us)
		ca->base_rtt_us = rtt;
	ca->rtt_sum_us += rtt;
	ca->rtt_samples++;
}

/* Off outside the Open state; back on with the initial alpha (the base RTT is kept). */
SEC("struct_ops")
void BPF_PROG(wvegas_set_state, struct sock *sk, u8 new_state)
{
	struct mlab_ca *ca = mlab_ca_of(sk);

	if (new_state != TCP_CA_Open) {
		ca->wvegas_on = 0;
		return;
	}
	if (ca->wvegas_on)
		return;
	ca->wvegas_on = 1;
	ca->alpha_q = MLAB_WVEGAS_INITIAL_ALPHA << MLAB_WVEGAS_ALPHA_SHIFT;
	ca->rtt_sum_us = 0;
	ca->rtt_samples = 0;
	ca->queue_delay_us = 0;
	ca->round_end = mlab_tcp_sk(sk)->snd_nxt;
}

SEC("struct_ops")
void BPF_PROG(wvegas_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = mlab_tcp_sk(sk);
	struct mlab_ca *ca = mlab_ca_of(sk);
	struct mlab_wvegas_decision d;
	struct mlab_wvegas_round in;
	struct mlab_set vs;
	u32 samples, i;
	u64 sum;

	if (!BPF_CORE_READ_BITFIELD(tp, is_mptcp) || !ca->wvegas_on) {
		wvegas_reno(sk, acked);
		return;
	}
	if (!mlab_after(ack, ca->round_end)) {
		if (tp->snd_cwnd < tp->snd_ssthresh)
			wvegas_reno(sk, acked);
		return;
	}
	ca->round_end = tp->snd_nxt;
	sum = ca->rtt_sum_us;
	samples = ca->rtt_samples;
	ca->rtt_sum_us = 0;
	ca->rtt_samples = 0;
	if (samples <= 2) {
		wvegas_reno(sk, acked);
		return;
	}
	mlab_collect(sk, &vs);
	in.others_rate = 0;
	for (i = 0; i < MLAB_MAX_SUBFLOWS && i < vs.n; i++)
		if (i != vs.self && mlab_is_coupled(&vs.sf[i]))
			in.others_rate = mlab_add(in.others_rate, mlab_rate(&vs.sf[i]));
	in.cwnd = tp->snd_cwnd;
	in.ssthresh = tp->snd_ssthresh;
	in.base_rtt_us = ca->base_rtt_us;
	in.rtt_us = sum / samples;
	in.alpha_q = ca->alpha_q;
	in.queue_delay_us = ca->queue_delay_us;
	mlab_wvegas_round(&in, &d);
	ca->alpha_q = d.alpha_q;
	ca->queue_delay_us = d.queue_delay_us;
	wvegas_publish(sk, &vs);
	if (d.slow_start) {
		wvegas_reno(sk, acked);
		return;
	}
	tp->snd_cwnd = d.cwnd < tp->snd_cwnd_clamp ? d.cwnd : tp->snd_cwnd_clamp;
	tp->snd_ssthresh = d.ssthresh;
}

SEC("struct_ops")
u32 BPF_PROG(wvegas_ssthresh, struct sock *sk)
{
	return mlab_ssthresh(sk, MLAB_ALG_WVEGAS);
}

SEC("struct_ops")
u32 BPF_PROG(wvegas_undo_cwnd, struct sock *sk)
{
	return mlab_undo_cwnd(sk);
}

SEC(".struct_ops.link")
struct tcp_congestion_ops wvegas = {
	.init = (void *)wvegas_init,
	.release = (void *)wvegas_release,
	.ssthresh = (void *)wvegas_ssthresh,
	.cong_avoid = (void *)wvegas_cong_avoid,
	.set_state = (void *)wvegas_set_state,
	.pkts_acked = (void *)wvegas_pkts_acked,
	.in_ack_event = (void *)wvegas_in_ack_event,
	.undo_cwnd = (void *)wvegas_undo_cwnd,
	.name = "wvegas",
	.flags = MLAB_CA_FLAGS,
};
