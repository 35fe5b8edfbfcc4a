/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The coupling state each program publishes per socket in its `mlab_subflows` map, read by
 * `mptcp-lab cc show` through a #[repr(C)] mirror (crates/bpf/src/state.rs). Plain integers
 * only, so any bytes decode; compiled for the host too, so that a test compares the Rust
 * layout with the C compiler's.
 */
#ifndef MLAB_INFO_H
#define MLAB_INFO_H

#include "mlab_num.h"

struct mlab_subflow_info {
	u64 updated_ns;
	u64 srtt_us;
	u64 inter_loss;
	u64 alpha_m;      /* the algorithm's alpha for this subflow, alpha_m * 2^alpha_e */
	u64 rate_m;       /* x_r in packets per microsecond, rate_m * 2^rate_e */
	s64 inc_q;        /* increase per acknowledged packet, Q40 */
	s32 alpha_e;
	s32 rate_e;
	u32 token;        /* MPTCP connection token; 0 for plain TCP */
	u32 cwnd;
	u32 ssthresh;
	u32 n_subflows;   /* subflows of the connection seen */
	u32 n_coupled;    /* of which in the coupling */
	u32 sets;         /* OLIA: this subflow's M, B, C bits */
	u32 saddr4;
	u32 daddr4;
	u8 saddr6[16];
	u8 daddr6[16];
	u16 sport;        /* host order */
	u16 dport;        /* host order */
	u16 family;
	u8 ca_state;
	u8 algorithm;
	s32 alpha_sign;   /* OLIA's alpha can be negative */
	u32 self_index;
	u32 repairs;      /* see mlab_repair() in mlab_kern.h; key 0: the algorithm's total */
	u32 pad;
};

#endif /* MLAB_INFO_H */
