/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * What the congestion-control programs share on the kernel side: reading a subflow's
 * siblings, the fractional-window accumulator, Reno's fallback, and the state published
 * for `mptcp-lab cc show`.
 *
 * Siblings are read through bpf_rdonly_cast (bpf_core_cast): the walk from a subflow to
 * its MPTCP connection's subflow list is read-only and fault-safe. It is not synchronised
 * with the connection's lock, exactly as the out-of-tree kernel's coupled algorithms read
 * their siblings' windows; a value may be one ACK old, never a wild read.
 */
#ifndef MLAB_KERN_H
#define MLAB_KERN_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "mlab_math.h"
#include "mlab_info.h"

char _license[] SEC("license") = "Dual MIT/GPL";

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;

/* TCP_CONG_NON_RESTRICTED (include/net/tcp.h): like reno and cubic, any process may pick
 * them, and a network namespace other than the initial one may make them its default
 * (without it, `sysctl net.ipv4.tcp_congestion_control=lia` fails with EPERM there). They
 * are no more aggressive than Reno. */
#define MLAB_CA_FLAGS 0x1

#define MLAB_ALG_LIA 1
#define MLAB_ALG_OLIA 2
#define MLAB_ALG_BALIA 3
#define MLAB_ALG_WVEGAS 4
#define MLAB_ALG_EWTCP 5
#define MLAB_ALG_FULLY_COUPLED 6

/* TCP_INFINITE_SSTHRESH (include/net/tcp.h): no threshold or window the stack sets is
 * above it, so one above it was never computed (see mlab_repair). */
#define MLAB_INFINITE_SSTHRESH 0x7fffffffu

/* Per-subflow state, in the socket's icsk_ca_priv (104 bytes on Linux 6.x). */
struct mlab_ca {
	s64 cnt_q;            /* window growth not yet a whole packet, Q40 */
	s64 inc_q;            /* cached increase per acknowledged packet, Q40 */
	u8 coupled;           /* the cached increase is a coupled one (else Reno's code runs) */
	u32 inc_cwnd;         /* the window the cached increase was computed at */
	u32 refresh_after;    /* recompute (and publish) once snd_una passes this */
	u32 loss1, loss2, loss3; /* OLIA: snd_una at the last two losses and now */
	/* wVegas */
	u32 base_rtt_us;
	u64 rtt_sum_us;
	u32 rtt_samples;
	u32 round_end;
	u32 queue_delay_us;
	u32 alpha_q;
	u8 wvegas_on;
	u8 fresh;             /* nothing computed yet */
	u32 repairs;          /* thresholds and windows restored after a skipped callback */
};

_Static_assert(sizeof(struct mlab_ca) <= sizeof(((struct inet_connection_sock *)0)->icsk_ca_priv),
	       "the per-subflow state must fit the socket's congestion-control area");

/* What `mptcp-lab cc show` prints, one entry per socket using the algorithm (the key is
 * the socket's address). The layout is mirrored in crates/bpf/src/state.rs. */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, u64);
	__type(value, struct mlab_subflow_info);
} mlab_subflows SEC(".maps");

/* Key 0 (no socket's address) holds the algorithm's totals: `repairs` counts every repair
 * (mlab_repair) since the program was loaded, across sockets that are gone; `cc show`
 * skips it, and the kernel backend reports its change over a run. */
#define MLAB_TOTALS_KEY 0

/* The value a new entry starts from (update takes a value; the stack has no room). */
const struct mlab_subflow_info mlab_no_info = {};

static __always_inline struct tcp_sock *mlab_tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *mlab_icsk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

static __always_inline struct mlab_ca *mlab_ca_of(const struct sock *sk)
{
	return (struct mlab_ca *)mlab_icsk(sk)->icsk_ca_priv;
}

/* Sequence comparison, wrap-safe. */
static __always_inline bool mlab_after(u32 a, u32 b)
{
	return (s32)(a - b) > 0;
}

/* TCP's "is the window the limit?" (tcp_is_cwnd_limited), on this socket's fields. */
static __always_inline bool mlab_cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = mlab_tcp_sk(sk);

	return mlab_is_cwnd_limited(tp->snd_cwnd, tp->snd_ssthresh,
				    !!BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited),
				    tp->max_packets_out);
}

static __always_inline u32 mlab_inter_loss(const struct mlab_ca *ca)
{
	u32 a = ca->loss2 - ca->loss1, b = ca->loss3 - ca->loss2;

	return a > b ? a : b;
}

/* One subflow's view, from a socket read through a read-only cast. `own_ops` tells whether
 * its icsk_ca_priv holds our state (a sibling may run another algorithm). */
static __always_inline void mlab_view(struct mlab_subflow *v, const struct sock *ssk,
				      const void *own_ops)
{
	struct tcp_sock *t = bpf_core_cast(ssk, struct tcp_sock);
	struct inet_connection_sock *icsk = bpf_core_cast(ssk, struct inet_connection_sock);
	u8 state = t->inet_conn.icsk_inet.sk.__sk_common.skc_state;
	u8 ca_state = BPF_CORE_READ_BITFIELD(icsk, icsk_ca_state);

	v->cwnd = t->snd_cwnd;
	v->ssthresh = t->snd_ssthresh;
	v->srtt_us = t->srtt_us >> 3;
	v->established = !!((1u << (state & 31)) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT));
	v->in_recovery = ca_state >= TCP_CA_Recovery;
	v->inter_loss = 0;
	if ((const void *)icsk->icsk_ca_ops == own_ops)
		v->inter_loss = mlab_inter_loss((const struct mlab_ca *)icsk->icsk_ca_priv);
}

/* The subflows of sk's connection, walking msk->conn_list; returns how many, or 0 when sk
 * is not an MPTCP subflow or the walk did not find it. A global function: verified once,
 * and what it writes through `vs` is not tracked path by path (eight subflows of
 * branches, inlined, exceed the verifier's budget). */
__attribute__((noinline)) int mlab_walk(struct mlab_set *vs, struct tcp_sock *tp __arg_trusted)
{
	struct mptcp_subflow_context *ctx;
	struct inet_connection_sock *icsk;
	struct mptcp_sock *msk;
	struct list_head *pos;
	const void *own_ops;
	bool found = false;
	u32 i;

	if (!vs || !tp)
		return 0;
	vs->n = 0;
	vs->self = 0;
	vs->token = 0;
	if (!BPF_CORE_READ_BITFIELD(tp, is_mptcp))
		return 0;
	icsk = &tp->inet_conn;
	own_ops = icsk->icsk_ca_ops;
	ctx = bpf_core_cast(icsk->icsk_ulp_data, struct mptcp_subflow_context);
	msk = bpf_core_cast(ctx->conn, struct mptcp_sock);
	if (!msk)
		return 0;
	vs->token = msk->token;
	pos = msk->conn_list.next;
	for (i = 0; i < MLAB_MAX_SUBFLOWS; i++) {
		struct mptcp_subflow_context *sub;

		if (!pos || pos == &msk->conn_list)
			break;
		sub = bpf_core_cast((void *)pos - bpf_core_field_offset(struct mptcp_subflow_context,
									 node),
				    struct mptcp_subflow_context);
		if ((void *)sub->tcp_sock == (void *)tp) {
			vs->self = i;
			found = true;
		}
		mlab_view(&vs->sf[i], sub->tcp_sock, own_ops);
		vs->n = i + 1;
		pos = sub->node.next;
	}
	return found ? vs->n : 0;
}

/* The subflows of sk's connection (sk alone for plain TCP); vs->self is sk. */
static __always_inline void mlab_collect(struct sock *sk, struct mlab_set *vs)
{
	if (mlab_walk(vs, mlab_tcp_sk(sk)) > 0)
		return;
	/* Plain TCP, or the walk did not find sk: sk alone, which every rule turns into Reno. */
	mlab_view(&vs->sf[0], sk, mlab_icsk(sk)->icsk_ca_ops);
	vs->n = 1;
	vs->self = 0;
}

/* Adds inc_q * acked to the window through the Q40 accumulator; never below one packet,
 * never above snd_cwnd_clamp. */
static __always_inline void mlab_grow(struct sock *sk, struct mlab_ca *ca, s64 inc_q, u32 acked)
{
	struct tcp_sock *tp = mlab_tcp_sk(sk);
	s64 whole;
	u64 cwnd = tp->snd_cwnd;

	ca->cnt_q += inc_q * (s64)acked;
	whole = ca->cnt_q >> MLAB_INC_SHIFT; /* floor, also for negative counts */
	if (!whole)
		return;
	ca->cnt_q -= whole << MLAB_INC_SHIFT;
	if (whole < 0)
		cwnd = (u64)-whole >= cwnd ? 1 : cwnd + whole;
	else
		cwnd += whole;
	if (cwnd > tp->snd_cwnd_clamp)
		cwnd = tp->snd_cwnd_clamp;
	tp->snd_cwnd = cwnd ? cwnd : 1;
}

/* The state map's entry under `key`, created empty if missing; NULL when the map is full. */
static __always_inline struct mlab_subflow_info *mlab_info_entry(u64 key)
{
	struct mlab_subflow_info *info = bpf_map_lookup_elem(&mlab_subflows, &key);

	if (info)
		return info;
	bpf_map_update_elem(&mlab_subflows, &key, &mlab_no_info, BPF_NOEXIST);
	return bpf_map_lookup_elem(&mlab_subflows, &key);
}

/* Publishes the subflow's coupling state for `cc show`. */
static __always_inline void mlab_publish(struct sock *sk, const struct mlab_set *vs, u8 alg,
					 mlab_num alpha, s32 alpha_sign, u32 sets,
					 s64 inc_q)
{
	struct tcp_sock *tp = mlab_tcp_sk(sk);
	struct mlab_subflow_info *info;
	struct mlab_coupling c;
	const struct mlab_subflow *me;
	mlab_num rate;
	u64 key = (u64)sk;
	u32 self = vs->self;

	if (self >= MLAB_MAX_SUBFLOWS)
		return;
	info = mlab_info_entry(key);
	if (!info)
		return; /* the map is full: this socket goes unlisted */
	me = &vs->sf[self];
	mlab_couple(vs, &c);
	rate = mlab_is_coupled(me) ? mlab_rate(me) : 0;
	info->updated_ns = bpf_ktime_get_ns();
	info->srtt_us = tp->srtt_us >> 3;
	info->inter_loss = me->inter_loss;
	info->alpha_m = mlab_m(alpha);
	info->alpha_e = mlab_e(alpha);
	info->alpha_sign = alpha_sign;
	info->rate_m = mlab_m(rate);
	info->rate_e = mlab_e(rate);
	info->inc_q = inc_q;
	info->token = vs->token;
	info->cwnd = tp->snd_cwnd;
	info->ssthresh = tp->snd_ssthresh;
	info->n_subflows = vs->n;
	info->n_coupled = c.n;
	info->sets = sets;
	info->self_index = self;
	info->repairs = mlab_ca_of(sk)->repairs;
	info->family = sk->__sk_common.skc_family;
	info->saddr4 = sk->__sk_common.skc_rcv_saddr;
	info->daddr4 = sk->__sk_common.skc_daddr;
	bpf_probe_read_kernel(info->saddr6, 16, &sk->__sk_common.skc_v6_rcv_saddr);
	bpf_probe_read_kernel(info->daddr6, 16, &sk->__sk_common.skc_v6_daddr);
	info->sport = sk->__sk_common.skc_num;
	info->dport = bpf_ntohs(sk->__sk_common.skc_dport);
	info->ca_state = BPF_CORE_READ_BITFIELD(mlab_icsk(sk), icsk_ca_state);
	info->algorithm = alg;
}

static __always_inline void mlab_forget(struct sock *sk)
{
	u64 key = (u64)sk;

	bpf_map_delete_elem(&mlab_subflows, &key);
}

static __always_inline void mlab_init_ca(struct sock *sk)
{
	struct tcp_sock *tp = mlab_tcp_sk(sk);
	struct mlab_ca *ca = mlab_ca_of(sk);

	__builtin_memset(ca, 0, sizeof(*ca));
	ca->loss1 = ca->loss2 = ca->loss3 = tp->snd_una;
	ca->alpha_q = MLAB_WVEGAS_INITIAL_ALPHA << MLAB_WVEGAS_ALPHA_SHIFT;
	ca->wvegas_on = 1;
	ca->fresh = 1;
}

/* Whether the cached increase is stale within a round: the own window moved. */
static __always_inline bool mlab_due(struct sock *sk, struct mlab_ca *ca)
{
	return ca->fresh || ca->inc_cwnd != mlab_tcp_sk(sk)->snd_cwnd;
}

static __always_inline void mlab_mark_computed(struct sock *sk, struct mlab_ca *ca, bool coupled,
					       s64 inc_q)
{
	struct tcp_sock *tp = mlab_tcp_sk(sk);

	ca->coupled = coupled;
	ca->inc_q = inc_q;
	ca->inc_cwnd = tp->snd_cwnd;
	ca->fresh = 0;
}

/* Once per round: refresh the published state (it needs the views, so it rides on a
 * recomputation). */
static __always_inline bool mlab_round_passed(struct sock *sk, struct mlab_ca *ca)
{
	struct tcp_sock *tp = mlab_tcp_sk(sk);

	if (!ca->fresh && !mlab_after(tp->snd_una, ca->refresh_after))
		return false;
	ca->refresh_after = tp->snd_nxt;
	return true;
}

/* Reno's window after a loss and its undo, shared by every program. */
static __always_inline u32 mlab_undo_cwnd(struct sock *sk)
{
	struct tcp_sock *tp = mlab_tcp_sk(sk);

	return tp->snd_cwnd > tp->prior_cwnd ? tp->snd_cwnd : tp->prior_cwnd;
}

/* Grows the window by inc_q per packet (which OLIA may make 0 or negative), or by Reno's
 * own rule outside the coupling. */
static __always_inline void mlab_apply(struct sock *sk, struct mlab_ca *ca, bool coupled, s64 inc_q,
				       u32 acked)
{
	struct tcp_sock *tp = mlab_tcp_sk(sk);

	if (coupled)
		mlab_grow(sk, ca, inc_q, acked);
	else
		tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
}

/* Brings the published threshold, window and repair count up to date after a repair (the
 * rest of the published state changes only with the coupling). */
static __always_inline void mlab_publish_repair(struct sock *sk)
{
	struct tcp_sock *tp = mlab_tcp_sk(sk);
	struct mlab_subflow_info *info;
	u64 key = (u64)sk;

	info = bpf_map_lookup_elem(&mlab_subflows, &key);
	if (!info)
		return;
	info->cwnd = tp->snd_cwnd;
	info->ssthresh = tp->snd_ssthresh;
	info->repairs = mlab_ca_of(sk)->repairs;
	info->updated_ns = bpf_ktime_get_ns();
}

static __always_inline void mlab_count_repair(void)
{
	struct mlab_subflow_info *totals = mlab_info_entry(MLAB_TOTALS_KEY);

	if (totals)
		__sync_fetch_and_add(&totals->repairs, 1);
}

/* The algorithm's threshold after a loss at a window of w packets: what its ssthresh op
 * returns (with w = snd_cwnd) and what mlab_repair restores (with w = prior_cwnd). */
static __always_inline u32 mlab_after_loss_at(struct sock *sk, const u8 alg, u32 w)
{
	struct mlab_set vs;

	if (alg != MLAB_ALG_BALIA && alg != MLAB_ALG_FULLY_COUPLED)
		return mlab_reno_after_loss(w);
	mlab_collect(sk, &vs);
	if (vs.self < MLAB_MAX_SUBFLOWS && vs.self < vs.n)
		vs.sf[vs.self].cwnd = w;
	return alg == MLAB_ALG_BALIA ? mlab_balia_after_loss(&vs) :
				       mlab_fully_coupled_after_loss(&vs);
}

/*
 * Restores a threshold or window that no callback computed. On some kernels a struct_ops
 * callback is now and then not run (seen on 6.18 when the softirq that processes the ACK
 * interrupted certain tasks; docs/kernel-cc.md, "Skipped callbacks"): the trampoline then
 * returns whatever its stack slot held, so ssthresh() or undo_cwnd() hands the stack a
 * kernel address (0x81104110 there) as a threshold or window, above any value TCP sets
 * (TCP_INFINITE_SSTHRESH). Unrepaired, PRR turns such a threshold into a window of hundreds
 * of millions of packets for the rest of the connection. Called first on every ACK,
 * before tcp_fastretrans_alert() and the window's update: the threshold becomes the
 * algorithm's for the window the reduction started from (prior_cwnd, what ssthresh()
 * would have seen), and a window above it becomes that threshold, where PRR would take it.
 * Each repair is counted and published (`cc show`), never silent. The ACK that entered the reduction has already sent with the
 * bad window: this limits the damage to that one ACK. Called from in_ack_event (tcp_ack()
 * calls it through tcp_in_ack_event() before it processes the ACK) and from every ssthresh
 * op (mlab_ssthresh): with the check in pkts_acked alone, one test run still ended with a
 * window of ~10^5 packets and a plausible threshold (docs/kernel-cc.md).
 */
static __always_inline void mlab_repair(struct sock *sk, const u8 alg)
{
	struct tcp_sock *tp = mlab_tcp_sk(sk);
	u32 w = tp->prior_cwnd, ssthresh;

	if (tp->snd_ssthresh <= MLAB_INFINITE_SSTHRESH && tp->snd_cwnd <= MLAB_INFINITE_SSTHRESH)
		return;
	if (!w || w > MLAB_INFINITE_SSTHRESH)
		w = 2;
	ssthresh = tp->snd_ssthresh;
	if (ssthresh > MLAB_INFINITE_SSTHRESH) {
		ssthresh = mlab_after_loss_at(sk, alg, w);
		tp->snd_ssthresh = ssthresh;
	}
	if (tp->snd_cwnd > w)
		tp->snd_cwnd = ssthresh < w ? ssthresh : w;
	mlab_ca_of(sk)->repairs++;
	mlab_publish_repair(sk);
	mlab_count_repair();
}

/* Every algorithm's ssthresh op: the algorithm's threshold after a loss at the current
 * window, once a threshold or window a skipped callback left behind is repaired (an RTO can
 * come before the ACK that would have repaired it, and a threshold computed from a window
 * of 10^8 packets is a plausible number that no later check would catch). */
static __always_inline u32 mlab_ssthresh(struct sock *sk, const u8 alg)
{
	mlab_repair(sk, alg);
	return mlab_after_loss_at(sk, alg, mlab_tcp_sk(sk)->snd_cwnd);
}

#endif /* MLAB_KERN_H */
