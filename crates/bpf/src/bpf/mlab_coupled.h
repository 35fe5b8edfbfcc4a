/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The congestion-avoidance step of the window-based coupled algorithms (LIA, OLIA, Balia,
 * EWTCP, fully coupled),
 * shaped as tcp_reno_cong_avoid: slow start up to ssthresh, then the algorithm's increase
 * per acknowledged packet for the rest. With one coupled subflow every rule is Reno's, and
 * Reno's own code runs, so plain TCP and single-path MPTCP are exactly Reno.
 *
 * The increase is recomputed from the siblings once a round and whenever the own window
 * moved, and reused in between: walking the subflows on every ACK would cost more than
 * the rest of ACK processing, and within a round the inputs barely move.
 */
#ifndef MLAB_COUPLED_H
#define MLAB_COUPLED_H

#include "mlab_kern.h"

static __always_inline s64 mlab_increase_q(const u8 alg, const struct mlab_set *set)
{
	switch (alg) {
	case MLAB_ALG_OLIA:
		return mlab_olia_increase_q(set);
	case MLAB_ALG_BALIA:
		return mlab_balia_increase_q(set);
	case MLAB_ALG_EWTCP:
		return mlab_ewtcp_increase_q(set);
	case MLAB_ALG_FULLY_COUPLED:
		return mlab_fully_coupled_increase_q(set);
	default:
		return mlab_lia_increase_q(set);
	}
}

/* The coupling state `cc show` prints: alpha (with its sign for OLIA) and OLIA's sets.
 * EWTCP's alpha is its weight a = 1/n^2; fully coupled has none (1). */
struct mlab_described {
	mlab_num alpha;
	s32 sign;
	u32 sets;
};

static __always_inline void mlab_describe(const u8 alg, const struct mlab_set *vs,
					  const struct mlab_coupling *c, struct mlab_described *d)
{
	d->alpha = mlab_from_u64(1);
	d->sign = 1;
	d->sets = 0;
	if (c->n <= 1 || vs->self >= MLAB_MAX_SUBFLOWS)
		return;
	switch (alg) {
	case MLAB_ALG_OLIA: {
		u32 bits, collected, count;

		d->sets = mlab_olia_sets(vs);
		bits = (d->sets >> (vs->self * 4)) & 7;
		collected = mlab_set_count(d->sets, MLAB_SET_COLLECTED);
		count = bits & MLAB_SET_COLLECTED ? collected :
			mlab_set_count(d->sets, MLAB_SET_MAX_WINDOW);
		if (!collected || !(bits & (MLAB_SET_COLLECTED | MLAB_SET_MAX_WINDOW))) {
			d->alpha = 0;
			break;
		}
		d->alpha = mlab_div(mlab_from_u64(1), mlab_from_u64((u64)c->n * count));
		d->sign = bits & MLAB_SET_COLLECTED ? 1 : -1;
		break;
	}
	case MLAB_ALG_BALIA:
		d->alpha = mlab_balia_alpha(vs);
		break;
	case MLAB_ALG_EWTCP:
		d->alpha = mlab_div(mlab_from_u64(1), mlab_from_u64((u64)c->n * c->n));
		break;
	case MLAB_ALG_FULLY_COUPLED:
		break;
	default:
		d->alpha = mlab_lia_alpha(c);
		break;
	}
}

/* Publishes the coupling state now (state changes, slow start's rounds). */
static __always_inline void mlab_publish_now(struct sock *sk, const u8 alg)
{
	struct mlab_described d;
	struct mlab_coupling c;
	struct mlab_set vs;

	mlab_collect(sk, &vs);
	mlab_couple(&vs, &c);
	mlab_describe(alg, &vs, &c, &d);
	mlab_publish(sk, &vs, alg, d.alpha, d.sign, d.sets,
		     vs.self < MLAB_MAX_SUBFLOWS && c.n > 1 ?
			     mlab_increase_q(alg, &vs) :
			     mlab_reno_increase_q(mlab_tcp_sk(sk)->snd_cwnd));
}

static __always_inline void mlab_coupled_cong_avoid(struct sock *sk, u32 acked, const u8 alg)
{
	struct tcp_sock *tp = mlab_tcp_sk(sk);
	struct mlab_ca *ca = mlab_ca_of(sk);
	struct mlab_described d;
	struct mlab_coupling c;
	struct mlab_set vs;
	bool round, coupled;
	s64 inc = 0;

	if (!mlab_cwnd_limited(sk))
		return;
	round = mlab_round_passed(sk, ca);
	if (tp->snd_cwnd < tp->snd_ssthresh) {
		acked = tcp_slow_start(tp, acked);
		if (!acked) {
			if (round)
				mlab_publish_now(sk, alg);
			return;
		}
	}
	if (!round && !mlab_due(sk, ca)) {
		mlab_apply(sk, ca, ca->coupled, ca->inc_q, acked);
		return;
	}
	mlab_collect(sk, &vs);
	mlab_couple(&vs, &c);
	coupled = c.n > 1 && vs.self < MLAB_MAX_SUBFLOWS && mlab_is_coupled(&vs.sf[vs.self]);
	inc = coupled ? mlab_increase_q(alg, &vs) : mlab_reno_increase_q(tp->snd_cwnd);
	mlab_mark_computed(sk, ca, coupled, inc);
	if (round) {
		mlab_describe(alg, &vs, &c, &d);
		mlab_publish(sk, &vs, alg, d.alpha, d.sign, d.sets, inc);
	}
	mlab_apply(sk, ca, coupled, inc, acked);
}

#endif /* MLAB_COUPLED_H */
