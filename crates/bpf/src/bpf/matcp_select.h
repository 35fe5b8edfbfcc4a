/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * MATCP path selection (Dimopoulos, Zeephongsekul and Tari, "Multipath Aware TCP", ISCC
 * 2006) in integer arithmetic: the rules of the Rust selectors in crates/matcp, for the
 * cgroup/connect4, cgroup/connect6 and sockops programs of matcp.bpf.c, and compiled for
 * the host in tests, which hold it against crates/matcp on sequences of choices and
 * observations generated from the Rust selectors (crates/bpf/tests/matcp_vectors.rs).
 *
 * Where the Rust code uses f64 the C code is exact:
 * - a uniform draw u in [0, 1) is a u32 d with u = d / 2^32 (exact in f64), and Rust's
 *   floor(u * n) is (d * n) >> 32;
 * - time measures are integer nanoseconds (f64 holds them exactly below 2^53; RTTs are
 *   clamped to MATCP_MAX_RTT_NS); the drop share retransmitted / sent is kept as a fraction
 *   and compared by cross-multiplication;
 * - weighted RTT's cumulative probabilities are thresholds on the draw, d < ceil(2^32 *
 *   cum_x / D), the exact form of Rust's u < cum_x / D, which f64 rounds.
 */
#ifndef MATCP_SELECT_H
#define MATCP_SELECT_H

#include "mlab_num.h"

#define MATCP_MAX_PATHS 8
/* Larger RTTs are taken as this (about 18 minutes; TCP_RTO_MAX is 120 s): keeps the sum
 * of eight RTTs times seven, the weighted rule's denominator, below 2^47. */
#define MATCP_MAX_RTT_NS (1ULL << 40)
/* Segment counts above this are halved, with the retransmissions, until they fit: the
 * cross-products of two shares stay below 2^62. */
#define MATCP_MAX_SEGMENTS (1ULL << 31)
#define MATCP_NO_PATH 0xffffffffu

/* The selectors (docs/algorithms.md, "MATCP path selection"). */
enum matcp_selector {
	MATCP_SINGLE_PATH = 0,
	MATCP_RTT = 1,
	MATCP_RTT_VARIATION = 2, /* queueing: SRTT less the path's smallest RTT */
	MATCP_RTTVAR = 3,        /* RTT variation read as RFC 6298 RTTVAR */
	MATCP_DROPS = 4,
	MATCP_WEIGHTED_RTT = 5,
};

/* What one connection measured over its life (crates/matcp's Observation). */
struct matcp_observation {
	u64 srtt_ns;       /* 0: no segment was timed */
	u64 rttvar_ns;
	u64 min_rtt_ns;    /* 0: none */
	u64 rto_ns;
	u64 segments_sent;
	u64 retransmits;
	u64 timeouts;
};

/* One path's state. The lowest-measure selectors compare measure / measure_den; a path
 * not measured since the last refresh has measured = 0 and counts as zero. */
struct matcp_path_state {
	u64 measure;
	u64 measure_den;   /* 1 for times, segments sent for drops */
	u64 min_rtt_ns;    /* smallest RTT seen on the path; kept across refreshes */
	u64 rtt_ns;        /* the latest connection's RTT (weighted RTT's input); 0: none */
	u32 measured;
	u32 pad;
};

struct matcp_selection {
	u32 selector;      /* enum matcp_selector */
	u32 n_paths;       /* 1 to MATCP_MAX_PATHS */
	u32 refresh;       /* R; 0: never refresh */
	u32 last;          /* the previous choice, MATCP_NO_PATH after a refresh */
	u32 in_a_row;      /* times `last` was chosen in a row */
	u32 pad;
	struct matcp_path_state path[MATCP_MAX_PATHS];
};

MLAB_INLINE u32 matcp_n(const struct matcp_selection *s)
{
	u32 n = s->n_paths;

	return n < 1 ? 1 : n > MATCP_MAX_PATHS ? MATCP_MAX_PATHS : n;
}

/* Rust's pick: floor(u * n) for u = draw / 2^32. */
MLAB_INLINE u32 matcp_pick(u32 draw, u32 n)
{
	return (u32)(((u64)draw * n) >> 32);
}

/* The RTT a connection saw: its SRTT, or if nothing was timed but it timed out (the path
 * may be down) its RTO, so that a dead path looks as slow as the waiting it caused; 0: it
 * tells nothing. Observation::rtt_ns in crates/matcp. */
MLAB_INLINE u64 matcp_rtt(const struct matcp_observation *o)
{
	u64 rtt;

	if (o->srtt_ns)
		rtt = o->srtt_ns;
	else if (o->timeouts)
		rtt = o->rto_ns ? o->rto_ns : 1;
	else
		return 0;
	return rtt > MATCP_MAX_RTT_NS ? MATCP_MAX_RTT_NS : rtt;
}

/* Whether a's measure is below b's (an unmeasured path is 0/1). */
MLAB_INLINE int matcp_below(const struct matcp_path_state *a, const struct matcp_path_state *b)
{
	u64 an = a->measured ? a->measure : 0, ad = a->measured ? a->measure_den : 1;
	u64 bn = b->measured ? b->measure : 0, bd = b->measured ? b->measure_den : 1;

	return an * bd < bn * ad;
}

MLAB_INLINE void matcp_set_measure(struct matcp_path_state *p, u64 num, u64 den)
{
	while (den > MATCP_MAX_SEGMENTS) {
		num >>= 1;
		den >>= 1;
	}
	p->measure = num;
	p->measure_den = den ? den : 1;
	p->measured = 1;
}

/* The smallest measure; ties (all zero after a refresh, above all) broken by the draw,
 * uniformly; then the refresh constant R: once one path was chosen R times in a row, every
 * measure goes back to zero so that the next connections try the others again. */
MLAB_INLINE u32 matcp_lowest_choose(struct matcp_selection *s, u32 draw)
{
	u32 n = matcp_n(s), best = 0, tied = 0, k, chosen = 0, i;

	for (i = 1; i < MATCP_MAX_PATHS; i++)
		if (i < n && matcp_below(&s->path[i], &s->path[best]))
			best = i;
	for (i = 0; i < MATCP_MAX_PATHS; i++)
		if (i < n && !matcp_below(&s->path[best], &s->path[i]))
			tied++;
	k = matcp_pick(draw, tied);
	for (i = 0; i < MATCP_MAX_PATHS; i++) {
		if (i >= n || matcp_below(&s->path[best], &s->path[i]))
			continue;
		if (k == 0) {
			chosen = i;
			break;
		}
		k--;
	}
	s->in_a_row = s->last == chosen ? s->in_a_row + 1 : 1;
	s->last = chosen;
	if (s->refresh && s->in_a_row >= s->refresh) {
		for (i = 0; i < MATCP_MAX_PATHS; i++)
			s->path[i].measured = 0;
		s->in_a_row = 0;
		s->last = MATCP_NO_PATH;
	}
	return chosen;
}

/* floor(2^32 * num / den) and whether it was exact, for num <= den < 2^47, in two steps of
 * 16 bits so that nothing exceeds 64 bits (BPF has no 128-bit arithmetic). */
MLAB_INLINE u64 matcp_ceil_q32(u64 num, u64 den)
{
	u64 q1, r1, q2, r2;

	if (!den)
		return 0;
	q1 = (num << 16) / den;
	r1 = (num << 16) - q1 * den;
	q2 = (r1 << 16) / den;
	r2 = (r1 << 16) - q2 * den;
	return (q1 << 16) + q2 + (r2 ? 1 : 0);
}

/* Weighted RTT's threshold for path x: the draw chooses the first x with draw below it,
 * which is Rust's u < sum_{y <= x} W_y with W_y = (T - RTT_y) / ((n - 1) T), T = sum RTT.
 * 2^32 for the last path. Only meaningful when every path is measured and n > 1. */
MLAB_INLINE u64 matcp_weighted_threshold(const struct matcp_selection *s, u32 x)
{
	u32 n = matcp_n(s), i;
	u64 total = 0, cum = 0;

	for (i = 0; i < MATCP_MAX_PATHS; i++)
		if (i < n)
			total += s->path[i].rtt_ns;
	for (i = 0; i < MATCP_MAX_PATHS; i++)
		if (i < n && i <= x)
			cum += total - s->path[i].rtt_ns;
	return matcp_ceil_q32(cum, (u64)(n - 1) * total);
}

/* The paper's equation 2; until every path has an RTT, the unmeasured ones in turn of the
 * draw (equation 2 needs one RTT per path). */
MLAB_INLINE u32 matcp_weighted_choose(const struct matcp_selection *s, u32 draw)
{
	u32 n = matcp_n(s), unmeasured = 0, k, i, last_live = 0;
	u64 total = 0;

	for (i = 0; i < MATCP_MAX_PATHS; i++)
		if (i < n && !s->path[i].rtt_ns)
			unmeasured++;
	if (unmeasured) {
		k = matcp_pick(draw, unmeasured);
		for (i = 0; i < MATCP_MAX_PATHS; i++) {
			if (i >= n || s->path[i].rtt_ns)
				continue;
			if (k == 0)
				return i;
			k--;
		}
		return 0;
	}
	if (n == 1)
		return 0;
	for (i = 0; i < MATCP_MAX_PATHS; i++)
		if (i < n)
			total += s->path[i].rtt_ns;
	for (i = 0; i < MATCP_MAX_PATHS; i++) {
		if (i >= n)
			break;
		if (total > s->path[i].rtt_ns)
			last_live = i;
		if ((u64)draw < matcp_weighted_threshold(s, i))
			return i;
	}
	return last_live;
}

/* The path of a new connection. */
MLAB_INLINE u32 matcp_choose(struct matcp_selection *s, u32 draw)
{
	switch (s->selector) {
	case MATCP_RTT:
	case MATCP_RTT_VARIATION:
	case MATCP_RTTVAR:
	case MATCP_DROPS:
		return matcp_lowest_choose(s, draw);
	case MATCP_WEIGHTED_RTT:
		return matcp_weighted_choose(s, draw);
	default:
		return 0;
	}
}

/* What a connection on `path` measured, once it has ended. */
MLAB_INLINE void matcp_observe(struct matcp_selection *s, u32 path,
			       const struct matcp_observation *o)
{
	struct matcp_path_state *p;
	u64 rtt = matcp_rtt(o);

	if (path >= matcp_n(s))
		return;
	p = &s->path[path & (MATCP_MAX_PATHS - 1)];
	if (rtt)
		p->rtt_ns = rtt;
	if (o->min_rtt_ns)
		p->min_rtt_ns = p->min_rtt_ns && p->min_rtt_ns < o->min_rtt_ns ? p->min_rtt_ns
									    : o->min_rtt_ns;
	switch (s->selector) {
	case MATCP_RTT:
		if (rtt)
			matcp_set_measure(p, rtt, 1);
		break;
	case MATCP_RTT_VARIATION:
		/* A connection that timed everything out has no samples: its RTO stands for the
		 * RTT, and all of it counts as waiting. */
		if (rtt)
			matcp_set_measure(p, !p->min_rtt_ns ? rtt
					  : rtt > p->min_rtt_ns ? rtt - p->min_rtt_ns : 0, 1);
		break;
	case MATCP_RTTVAR:
		if (rtt)
			matcp_set_measure(p, o->srtt_ns ? o->rttvar_ns : rtt, 1);
		break;
	case MATCP_DROPS:
		if (o->segments_sent)
			matcp_set_measure(p, o->retransmits, o->segments_sent);
		break;
	default:
		break;
	}
}

#endif /* MATCP_SELECT_H */
