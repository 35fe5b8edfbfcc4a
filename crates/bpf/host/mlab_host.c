/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The shared arithmetic of the eBPF programs, compiled for the host so that tests can
 * check it against the Rust reference. Only thin wrappers with external linkage: all the
 * logic is in ../src/bpf/mlab_math.h, the very header the BPF objects include.
 */
#include <string.h>
#include <stddef.h>
#include "../src/bpf/mlab_math.h"
#include "../src/bpf/mlab_info.h"

enum mlab_host_algorithm {
	MLAB_RENO = 0,
	MLAB_LIA = 1,
	MLAB_OLIA = 2,
	MLAB_BALIA = 3,
	MLAB_EWTCP = 5,
	MLAB_FULLY_COUPLED = 6,
};

static struct mlab_set mlab_host_set(const struct mlab_subflow *sf, u32 n, u32 r)
{
	struct mlab_set set;

	memset(&set, 0, sizeof(set));
	if (n > MLAB_MAX_SUBFLOWS)
		n = MLAB_MAX_SUBFLOWS;
	memcpy(set.sf, sf, n * sizeof(*sf));
	set.n = n;
	set.self = r;
	return set;
}

s64 mlab_host_increase_q(u32 algorithm, const struct mlab_subflow *sf, u32 n, u32 r)
{
	struct mlab_set set = mlab_host_set(sf, n, r);

	switch (algorithm) {
	case MLAB_LIA:
		return mlab_lia_increase_q(&set);
	case MLAB_OLIA:
		return mlab_olia_increase_q(&set);
	case MLAB_BALIA:
		return mlab_balia_increase_q(&set);
	case MLAB_EWTCP:
		return mlab_ewtcp_increase_q(&set);
	case MLAB_FULLY_COUPLED:
		return mlab_fully_coupled_increase_q(&set);
	default:
		return mlab_reno_increase_q(r < n ? sf[r].cwnd : 1);
	}
}

u32 mlab_host_after_loss(u32 algorithm, const struct mlab_subflow *sf, u32 n, u32 r)
{
	struct mlab_set set = mlab_host_set(sf, n, r);

	if (algorithm == MLAB_BALIA)
		return mlab_balia_after_loss(&set);
	if (algorithm == MLAB_FULLY_COUPLED)
		return mlab_fully_coupled_after_loss(&set);
	return mlab_reno_after_loss(r < n ? sf[r].cwnd : 1);
}

u32 mlab_host_olia_sets(const struct mlab_subflow *sf, u32 n)
{
	struct mlab_set set = mlab_host_set(sf, n, 0);

	return mlab_olia_sets(&set);
}

/* others_rate arrives as the other subflows themselves, summed here as the kernel does. */
void mlab_host_wvegas_round(const struct mlab_wvegas_round *in, const struct mlab_subflow *others,
			    u32 n_others, struct mlab_wvegas_decision *out)
{
	struct mlab_wvegas_round round = *in;
	u32 i;

	round.others_rate = 0;
	for (i = 0; i < n_others && i < MLAB_MAX_SUBFLOWS; i++)
		if (mlab_is_coupled(&others[i]))
			round.others_rate = mlab_add(round.others_rate, mlab_rate(&others[i]));
	mlab_wvegas_round(&round, out);
}

int mlab_host_is_cwnd_limited(u32 cwnd, u32 ssthresh, int is_cwnd_limited, u32 max_packets_out)
{
	return mlab_is_cwnd_limited(cwnd, ssthresh, is_cwnd_limited != 0, max_packets_out);
}

/* The number type itself, for property tests. */
void mlab_host_num_op(u32 op, u64 a, s32 ae, u64 b, s32 be, u64 *m, s32 *e)
{
	mlab_num x = mlab_norm(a, ae), y = mlab_norm(b, be), z;

	switch (op) {
	case 0: z = mlab_add(x, y); break;
	case 1: z = mlab_sub(x, y); break;
	case 2: z = mlab_mul(x, y); break;
	default: z = mlab_div(x, y); break;
	}
	*m = mlab_m(z);
	*e = mlab_e(z);
}

/* The layout of struct mlab_subflow_info as this compiler lays it out: its size, then each
 * field's offset in declaration order, for the test of the Rust mirror. */
u32 mlab_host_info_layout(u32 *out, u32 n)
{
	const u32 layout[] = {
		sizeof(struct mlab_subflow_info),
		offsetof(struct mlab_subflow_info, updated_ns),
		offsetof(struct mlab_subflow_info, srtt_us),
		offsetof(struct mlab_subflow_info, inter_loss),
		offsetof(struct mlab_subflow_info, alpha_m),
		offsetof(struct mlab_subflow_info, rate_m),
		offsetof(struct mlab_subflow_info, inc_q),
		offsetof(struct mlab_subflow_info, alpha_e),
		offsetof(struct mlab_subflow_info, rate_e),
		offsetof(struct mlab_subflow_info, token),
		offsetof(struct mlab_subflow_info, cwnd),
		offsetof(struct mlab_subflow_info, ssthresh),
		offsetof(struct mlab_subflow_info, n_subflows),
		offsetof(struct mlab_subflow_info, n_coupled),
		offsetof(struct mlab_subflow_info, sets),
		offsetof(struct mlab_subflow_info, saddr4),
		offsetof(struct mlab_subflow_info, daddr4),
		offsetof(struct mlab_subflow_info, saddr6),
		offsetof(struct mlab_subflow_info, daddr6),
		offsetof(struct mlab_subflow_info, sport),
		offsetof(struct mlab_subflow_info, dport),
		offsetof(struct mlab_subflow_info, family),
		offsetof(struct mlab_subflow_info, ca_state),
		offsetof(struct mlab_subflow_info, algorithm),
		offsetof(struct mlab_subflow_info, alpha_sign),
		offsetof(struct mlab_subflow_info, self_index),
		offsetof(struct mlab_subflow_info, repairs),
		offsetof(struct mlab_subflow_info, pad),
	};
	u32 i, len = sizeof(layout) / sizeof(layout[0]);

	for (i = 0; i < len && i < n; i++)
		out[i] = layout[i];
	return len;
}
