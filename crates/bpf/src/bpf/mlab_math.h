/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The arithmetic of mptcp-lab's coupled congestion controls (docs/algorithms.md),
 * shared by the eBPF programs and, in tests, compiled for the host and checked against the
 * Rust reference (crates/cc) on crates/cc/testdata/vectors.json.
 *
 * Integer only. Rates are packets per microsecond as mlab_num; the scale cancels in every
 * rule. Window increases are returned per acknowledged packet in Q40 (1 << 40 is one
 * packet): the smallest increase any rule here makes at windows up to 2^20 over 8 subflows
 * is far above 2^-40, so nothing floors to 0 the way the out-of-tree kernel's 2^10 and
 * 2^12 scales do. No input (zero window, no RTT sample, one subflow) divides by zero.
 *
 * The functions marked MLAB_FUNC are separate global functions in BPF, each verified once;
 * they take the subflows as one struct (a global function may only read the memory its
 * pointer argument's type spans) and check their pointers (the verifier lets any of them
 * be NULL).
 */
#ifndef MLAB_MATH_H
#define MLAB_MATH_H

#include "mlab_num.h"

#define MLAB_MAX_SUBFLOWS 8
#define MLAB_INC_SHIFT 40
#define MLAB_ONE_PACKET ((s64)1 << MLAB_INC_SHIFT)

/* One subflow as the algorithms see it (the Rust reference's SubflowView). */
struct mlab_subflow {
	u64 inter_loss; /* OLIA's l_r: bytes between the last two losses or since the last */
	u32 srtt_us;    /* smoothed RTT; 0 before the first sample */
	u32 cwnd;
	u32 ssthresh;
	u8 established; /* established and able to send */
	u8 in_recovery; /* fast recovery or loss recovery */
	u8 pad[2];
};

/* A connection's subflows and the one a rule is asked about. */
struct mlab_set {
	struct mlab_subflow sf[MLAB_MAX_SUBFLOWS];
	u32 n;    /* subflows in sf */
	u32 self; /* the subflow the rule is for */
	u32 token; /* MPTCP connection token (0: plain TCP); not used by the rules */
	u32 pad;
};

/* A subflow takes part in the coupling once established with an RTT sample; one in loss
 * recovery still counts. */
MLAB_INLINE bool mlab_is_coupled(const struct mlab_subflow *s)
{
	return s->established && s->srtt_us > 0 && s->cwnd > 0;
}

/* x_r = w_r / tau_r. */
MLAB_INLINE mlab_num mlab_rate(const struct mlab_subflow *s)
{
	return mlab_div(mlab_from_u64(s->cwnd), mlab_from_u64(s->srtt_us));
}

/* Sums over the coupled subflows. */
struct mlab_coupling {
	mlab_num total_rate;       /* X */
	mlab_num max_rate;         /* M */
	mlab_num max_cwnd_by_rtt2; /* max w / tau^2, LIA's numerator */
	u64 total_cwnd;            /* W */
	u32 n;
	u32 pad;
};

MLAB_FUNC int mlab_couple_one(struct mlab_coupling *c, const struct mlab_subflow *s)
{
	mlab_num x;

	if (!c || !s || !mlab_is_coupled(s))
		return 0;
	x = mlab_rate(s);
	c->n++;
	c->total_cwnd += s->cwnd;
	c->total_rate = mlab_add(c->total_rate, x);
	c->max_rate = mlab_max(c->max_rate, x);
	c->max_cwnd_by_rtt2 = mlab_max(c->max_cwnd_by_rtt2, mlab_div(x, mlab_from_u64(s->srtt_us)));
	return 1;
}

MLAB_FUNC int mlab_couple(const struct mlab_set *set, struct mlab_coupling *c)
{
	u32 i;

	if (!set || !c)
		return 0;
	c->n = 0;
	c->total_cwnd = 0;
	c->total_rate = 0;
	c->max_rate = 0;
	c->max_cwnd_by_rtt2 = 0;
	for (i = 0; i < MLAB_MAX_SUBFLOWS; i++) {
		if (i >= set->n)
			break;
		mlab_couple_one(c, &set->sf[i]);
	}
	return c->n;
}

/* Reno: one packet per window per RTT, i.e. 1 / w per acknowledged packet. */
MLAB_INLINE s64 mlab_reno_increase_q(u32 cwnd)
{
	return MLAB_ONE_PACKET / (cwnd ? cwnd : 1);
}

/* Reno's threshold after a loss: half the window, at least two packets. */
MLAB_INLINE u32 mlab_reno_after_loss(u32 cwnd)
{
	return cwnd >> 1 > 2 ? cwnd >> 1 : 2;
}

MLAB_INLINE s64 mlab_q(mlab_num a)
{
	return (s64)mlab_to_fixed(a, MLAB_INC_SHIFT);
}

/* The subflow a rule is for, or NULL when `self` is out of range. */
MLAB_INLINE const struct mlab_subflow *mlab_self(const struct mlab_set *set)
{
	if (set->self >= set->n || set->self >= MLAB_MAX_SUBFLOWS)
		return 0;
	return &set->sf[set->self];
}

/* Reno's increase for a subflow outside the coupling (no RTT sample yet). Alone in the
 * coupling, every rule is Reno's too; the functions below then return Reno's exact
 * integer rather than the same value through the coupled arithmetic. */
MLAB_INLINE s64 mlab_uncoupled_increase_q(const struct mlab_subflow *me)
{
	return mlab_reno_increase_q(me ? me->cwnd : 1);
}

/* The subflow a coupled rule is for, with the connection's sums in *c; NULL when the rule
 * is Reno's (no such subflow, no RTT sample yet, or alone in the coupling), with Reno's
 * increase in *reno. */
MLAB_INLINE const struct mlab_subflow *mlab_coupled_self(const struct mlab_set *set,
							 struct mlab_coupling *c, s64 *reno)
{
	const struct mlab_subflow *me;

	*reno = MLAB_ONE_PACKET;
	if (!set)
		return 0;
	me = mlab_self(set);
	*reno = mlab_uncoupled_increase_q(me);
	if (!me || !mlab_is_coupled(me) || mlab_couple(set, c) <= 1)
		return 0;
	return me;
}

/* max(w - cut, 1) in whole packets, rounded down as Reno's halving is: the cut is rounded
 * up (to 2^-20). A cut at or above w - 1 leaves 1 packet; it is compared before the
 * fixed-point step, which so only sees cuts below 2^32 packets. */
MLAB_INLINE u32 mlab_window_less(u64 w, mlab_num cut)
{
	u64 cut_q;

	if (w <= 1 || mlab_cmp(cut, mlab_from_u64(w - 1)) >= 0)
		return 1;
	cut_q = mlab_to_fixed(cut, 20);
	cut_q = (cut_q + ((1u << 20) - 1)) >> 20;
	if (cut_q + 1 > w)
		return 1;
	return (u32)(w - cut_q);
}

/* ---- LIA, RFC 6356 ---------------------------------------------------------------- */

/* alpha = W * max_r (w_r / tau_r^2) / X^2 */
MLAB_INLINE mlab_num mlab_lia_alpha(const struct mlab_coupling *c)
{
	if (!c->n)
		return mlab_from_u64(1);
	return mlab_div(mlab_mul(mlab_from_u64(c->total_cwnd), c->max_cwnd_by_rtt2),
			mlab_mul(c->total_rate, c->total_rate));
}

/* min(alpha / W, 1 / w_r) = min(max_r (w_r / tau_r^2) / X^2, 1 / w_r) */
MLAB_FUNC s64 mlab_lia_increase_q(const struct mlab_set *set)
{
	const struct mlab_subflow *me;
	struct mlab_coupling c;
	s64 coupled, own, reno;

	me = mlab_coupled_self(set, &c, &reno);
	if (!me)
		return reno;
	coupled = mlab_q(mlab_div(c.max_cwnd_by_rtt2, mlab_mul(c.total_rate, c.total_rate)));
	own = mlab_reno_increase_q(me->cwnd);
	return coupled < own ? coupled : own;
}

/* ---- OLIA, Khalili et al. ----------------------------------------------------------- */

/* The window OLIA compares: in recovery the threshold it is heading to. */
MLAB_INLINE u32 mlab_olia_window(const struct mlab_subflow *s)
{
	if (s->in_recovery && s->ssthresh < s->cwnd)
		return s->ssthresh;
	return s->cwnd;
}

/* l_r / tau_r^2, the path quality OLIA ranks by. */
MLAB_INLINE mlab_num mlab_olia_quality(const struct mlab_subflow *s)
{
	mlab_num tau = mlab_from_u64(s->srtt_us);

	return mlab_div(mlab_from_u64(s->inter_loss), mlab_mul(tau, tau));
}

#define MLAB_SET_MAX_WINDOW 1u
#define MLAB_SET_BEST 2u
#define MLAB_SET_COLLECTED 4u

/* Largest window and best quality over the coupled subflows. */
struct mlab_olia_best {
	mlab_num quality;
	u32 window;
	u32 pad;
};

MLAB_FUNC int mlab_olia_best_one(struct mlab_olia_best *b, const struct mlab_subflow *s)
{
	if (!b || !s || !mlab_is_coupled(s))
		return 0;
	if (mlab_olia_window(s) > b->window)
		b->window = mlab_olia_window(s);
	b->quality = mlab_max(b->quality, mlab_olia_quality(s));
	return 1;
}

/* Bits of one subflow: in M (largest window), in B (best quality), in C = B \ M. */
MLAB_FUNC u32 mlab_olia_bits(const struct mlab_olia_best *b, const struct mlab_subflow *s)
{
	u32 bits = 0;

	if (!b || !s || !mlab_is_coupled(s))
		return 0;
	if (mlab_olia_window(s) == b->window)
		bits |= MLAB_SET_MAX_WINDOW;
	if (mlab_cmp(mlab_olia_quality(s), b->quality) == 0)
		bits |= MLAB_SET_BEST;
	if (bits == MLAB_SET_BEST)
		bits |= MLAB_SET_COLLECTED;
	return bits;
}

/* Bits 4r, 4r+1, 4r+2: subflow r is in M, B, C. */
MLAB_FUNC u32 mlab_olia_sets(const struct mlab_set *set)
{
	struct mlab_olia_best best = { 0, 0, 0 };
	u32 sets = 0, i;

	if (!set)
		return 0;
	for (i = 0; i < MLAB_MAX_SUBFLOWS; i++) {
		if (i >= set->n)
			break;
		mlab_olia_best_one(&best, &set->sf[i]);
	}
	for (i = 0; i < MLAB_MAX_SUBFLOWS; i++) {
		if (i >= set->n)
			break;
		sets |= mlab_olia_bits(&best, &set->sf[i]) << (i * 4);
	}
	return sets;
}

MLAB_INLINE u32 mlab_set_count(u32 sets, u32 which)
{
	u32 count = 0, i;

	for (i = 0; i < MLAB_MAX_SUBFLOWS; i++)
		count += ((sets >> (i * 4)) & which) != 0;
	return count;
}

/* The size of the set alpha_r divides by (|C| for r in C, |M| for r in M), and its sign;
 * 0 when alpha_r is 0 (C empty, or r in neither). */
MLAB_INLINE s32 mlab_olia_alpha_set(u32 sets, u32 r)
{
	u32 bits = (sets >> ((r & 7) * 4)) & 7, collected = mlab_set_count(sets, MLAB_SET_COLLECTED);

	if (!collected)
		return 0;
	if (bits & MLAB_SET_COLLECTED)
		return (s32)collected;
	if (bits & MLAB_SET_MAX_WINDOW)
		return -(s32)mlab_set_count(sets, MLAB_SET_MAX_WINDOW);
	return 0;
}

/* (w_r / tau_r^2) / X^2 + alpha_r / w_r, alpha_r = +-1 / (n |set|) */
MLAB_FUNC s64 mlab_olia_increase_q(const struct mlab_set *set)
{
	const struct mlab_subflow *me;
	struct mlab_coupling c;
	mlab_num tau, own;
	s64 inc, term, reno;
	s32 size;

	me = mlab_coupled_self(set, &c, &reno);
	if (!me)
		return reno;
	tau = mlab_from_u64(me->srtt_us);
	own = mlab_div(mlab_div(mlab_from_u64(me->cwnd), mlab_mul(tau, tau)),
		       mlab_mul(c.total_rate, c.total_rate));
	inc = mlab_q(own);
	size = mlab_olia_alpha_set(mlab_olia_sets(set), set->self);
	if (size && c.n) {
		term = (s64)((u64)MLAB_ONE_PACKET /
			     ((u64)c.n * (u64)(size > 0 ? size : -size) * (me->cwnd ? me->cwnd : 1)));
		inc += size > 0 ? term : -term;
	}
	return inc;
}

/* ---- Balia (draft-walid-mptcp-congestion-control-04) ---------------------------------------------------------------- */

/* alpha_r = M / x_r */
MLAB_FUNC mlab_num mlab_balia_alpha(const struct mlab_set *set)
{
	const struct mlab_subflow *me;
	struct mlab_coupling c;

	if (!set)
		return mlab_from_u64(1);
	me = mlab_self(set);
	if (!me || !mlab_is_coupled(me))
		return mlab_from_u64(1);
	mlab_couple(set, &c);
	return mlab_div(c.max_rate, mlab_rate(me));
}

/* (x_r + M)(4 x_r + M) / (10 w_r X^2) */
MLAB_FUNC s64 mlab_balia_increase_q(const struct mlab_set *set)
{
	const struct mlab_subflow *me;
	struct mlab_coupling c;
	mlab_num x, num, den;
	s64 reno;

	me = mlab_coupled_self(set, &c, &reno);
	if (!me)
		return reno;
	x = mlab_rate(me);
	num = mlab_mul(mlab_add(x, c.max_rate),
		       mlab_add(mlab_mul(mlab_from_u64(4), x), c.max_rate));
	den = mlab_mul(mlab_from_u64((u64)10 * me->cwnd), mlab_mul(c.total_rate, c.total_rate));
	return mlab_q(mlab_div(num, den));
}

/* w_r - (w_r / 2) * min(alpha_r, 1.5), rounded down, at least 1 packet; Reno's halving
 * when r is alone or not coupled. */
MLAB_FUNC u32 mlab_balia_after_loss(const struct mlab_set *set)
{
	const struct mlab_subflow *me;
	struct mlab_coupling c;
	mlab_num a, cut;
	u64 w;

	if (!set)
		return 2;
	me = mlab_self(set);
	if (!me)
		return 2;
	if (!mlab_is_coupled(me) || mlab_couple(set, &c) <= 1)
		return mlab_reno_after_loss(me->cwnd);
	w = me->cwnd;
	a = mlab_min(mlab_div(c.max_rate, mlab_rate(me)),
		     mlab_div(mlab_from_u64(3), mlab_from_u64(2)));
	cut = mlab_div(mlab_mul(mlab_from_u64(w), a), mlab_from_u64(2));
	return mlab_window_less(w, cut);
}

/* ---- EWTCP (Honda et al. 2009) -------------------------------------------------------- */

/* a / w_r with a = 1 / n^2, n the coupled subflows: Reno's increase, scaled. One integer
 * division, exact to 2^-40. */
MLAB_FUNC s64 mlab_ewtcp_increase_q(const struct mlab_set *set)
{
	const struct mlab_subflow *me;
	struct mlab_coupling c;
	s64 reno;

	me = mlab_coupled_self(set, &c, &reno);
	if (!me)
		return reno;
	return (s64)((u64)MLAB_ONE_PACKET / ((u64)c.n * c.n * (me->cwnd ? me->cwnd : 1)));
}

/* ---- Fully coupled (Kelly and Voice 2005; Han et al. 2004) ------------------------------- */

/* x_r / (tau_r X^2) */
MLAB_FUNC s64 mlab_fully_coupled_increase_q(const struct mlab_set *set)
{
	const struct mlab_subflow *me;
	struct mlab_coupling c;
	s64 reno;

	me = mlab_coupled_self(set, &c, &reno);
	if (!me)
		return reno;
	return mlab_q(mlab_div(mlab_div(mlab_rate(me), mlab_from_u64(me->srtt_us)),
			       mlab_mul(c.total_rate, c.total_rate)));
}

/* w_r - tau_r X / 2, rounded down, at least 1 packet; Reno's halving when r is alone or
 * not coupled. */
MLAB_FUNC u32 mlab_fully_coupled_after_loss(const struct mlab_set *set)
{
	const struct mlab_subflow *me;
	struct mlab_coupling c;
	mlab_num cut;

	if (!set)
		return 2;
	me = mlab_self(set);
	if (!me)
		return 2;
	if (!mlab_is_coupled(me) || mlab_couple(set, &c) <= 1)
		return mlab_reno_after_loss(me->cwnd);
	/* tau_r X is the whole connection's window scaled to r's RTT: it can exceed w_r many
	 * times over, which mlab_window_less turns into 1 packet. */
	cut = mlab_div(mlab_mul(mlab_from_u64(me->srtt_us), c.total_rate), mlab_from_u64(2));
	return mlab_window_less(me->cwnd, cut);
}

/* ---- wVegas, one round's decision ------------------------------------------------------ */

#define MLAB_WVEGAS_ALPHA_SHIFT 16
#define MLAB_WVEGAS_INITIAL_ALPHA 2
#define MLAB_WVEGAS_TOTAL_ALPHA 10
#define MLAB_WVEGAS_GAMMA 1

struct mlab_wvegas_round {
	u64 base_rtt_us;
	u64 rtt_us; /* the round's average; never below base_rtt_us */
	u64 queue_delay_us;
	mlab_num others_rate; /* sum of the other coupled subflows' w / tau */
	u32 cwnd;
	u32 ssthresh;
	u32 alpha_q; /* alpha, Q16 */
	u32 pad;
};

struct mlab_wvegas_decision {
	u64 queue_delay_us;
	u32 cwnd;
	u32 ssthresh;
	u32 alpha_q;
	u8 slow_start; /* leave the window to slow start this round */
	u8 pad[3];
};

/* min(ssthresh, cwnd - 1) without wrapping below 0 */
MLAB_INLINE u64 mlab_below(u64 cwnd, u64 ssthresh)
{
	u64 w = cwnd ? cwnd - 1 : 0;

	return w < ssthresh ? w : ssthresh;
}

/* The subflow's queue target: max(2, total_alpha * own rate / connection rate), Q16. */
MLAB_INLINE u32 mlab_wvegas_alpha(const struct mlab_wvegas_round *in, u64 rtt)
{
	mlab_num own = mlab_div(mlab_from_u64(in->cwnd), mlab_from_u64(rtt));
	mlab_num weight = mlab_div(own, mlab_add(own, in->others_rate));
	u64 a = mlab_to_fixed(mlab_mul(weight, mlab_from_u64(MLAB_WVEGAS_TOTAL_ALPHA)),
			      MLAB_WVEGAS_ALPHA_SHIFT);
	u64 floor = (u64)MLAB_WVEGAS_INITIAL_ALPHA << MLAB_WVEGAS_ALPHA_SHIFT;

	return (u32)(a > floor ? a : floor);
}

MLAB_FUNC int mlab_wvegas_round(const struct mlab_wvegas_round *in,
				struct mlab_wvegas_decision *d)
{
	u64 rtt, cwnd, ssthresh, q;
	mlab_num diff, alpha;

	if (!in || !d)
		return 0;
	rtt = in->rtt_us > in->base_rtt_us ? in->rtt_us : in->base_rtt_us;
	cwnd = in->cwnd;
	ssthresh = in->ssthresh;
	d->cwnd = in->cwnd;
	d->ssthresh = in->ssthresh;
	d->alpha_q = in->alpha_q;
	d->queue_delay_us = in->queue_delay_us;
	d->slow_start = 0;
	if (!rtt)
		rtt = 1;
	/* diff = w (rtt - base) / rtt: packets queued at the bottleneck */
	diff = mlab_div(mlab_mul(mlab_from_u64(cwnd), mlab_from_u64(rtt - in->base_rtt_us)),
			mlab_from_u64(rtt));
	if (cwnd < ssthresh) {
		if (mlab_cmp(diff, mlab_from_u64(MLAB_WVEGAS_GAMMA)) <= 0) {
			d->slow_start = 1;
			return 1;
		}
		/* min(w, w base / rtt + 1) */
		q = cwnd * in->base_rtt_us / rtt + 1;
		cwnd = q < cwnd ? q : cwnd;
		ssthresh = mlab_below(cwnd, ssthresh);
	} else {
		alpha = mlab_norm(in->alpha_q, -MLAB_WVEGAS_ALPHA_SHIFT);
		if (mlab_cmp(diff, alpha) >= 0) {
			d->alpha_q = mlab_wvegas_alpha(in, rtt);
			alpha = mlab_norm(d->alpha_q, -MLAB_WVEGAS_ALPHA_SHIFT);
		}
		if (mlab_cmp(diff, alpha) > 0) {
			cwnd = cwnd ? cwnd - 1 : 0;
			ssthresh = mlab_below(cwnd, ssthresh);
		} else if (mlab_cmp(diff, alpha) < 0) {
			cwnd++;
		}
		/* Drain the queue when its delay doubles from the smallest seen. */
		q = rtt - in->base_rtt_us;
		if (q > 0) {
			if (!d->queue_delay_us || d->queue_delay_us > q)
				d->queue_delay_us = q;
			if (q >= 2 * d->queue_delay_us) {
				cwnd = cwnd * in->base_rtt_us / (2 * rtt);
				d->queue_delay_us = 0;
			}
		}
	}
	if (cwnd < 2)
		cwnd = 2;
	if (ssthresh < 2)
		ssthresh = 2;
	if (ssthresh < cwnd * 3 / 4)
		ssthresh = cwnd * 3 / 4;
	d->cwnd = cwnd > 0xffffffffull ? 0xffffffffu : (u32)cwnd;
	d->ssthresh = ssthresh > 0xffffffffull ? 0xffffffffu : (u32)ssthresh;
	return 1;
}

/* May the window grow now? Linux's tcp_is_cwnd_limited() (include/net/tcp.h) on the fields
 * tcp_cwnd_validate() keeps: cwnd-limited in this window of data, or in slow start below
 * twice the largest flight. Compared in 64 bits, where Linux's u32 product could wrap for
 * flights beyond 2^31 packets (no kernel holds one). */
static __always_inline bool mlab_is_cwnd_limited(u32 cwnd, u32 ssthresh, bool is_cwnd_limited,
						 u32 max_packets_out)
{
	if (is_cwnd_limited)
		return true;
	return cwnd < ssthresh && (u64)cwnd < 2 * (u64)max_packets_out;
}

#endif /* MLAB_MATH_H */
