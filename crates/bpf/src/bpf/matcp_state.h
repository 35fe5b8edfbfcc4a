/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The one value of the `matcp_state` map: configuration (written by `mptcp-lab matcp
 * install` before the programs are attached), the selector's state and per-path statistics,
 * under one spin lock so that a choice and an observation never interleave. It outlives the
 * connections (the map is pinned) and is read by `matcp status` through a #[repr(C)] mirror
 * (crates/bpf/src/matcp/layout.rs); compiled for the host too, so that a test compares that
 * mirror with the C compiler's layout.
 */
#ifndef MATCP_STATE_H
#define MATCP_STATE_H

#include "matcp_select.h"

#ifndef __bpf__
struct bpf_spin_lock {
	u32 val;
};
#endif

/* What `matcp status` shows per path; counts since install. */
struct matcp_path_stats {
	u64 choices;        /* connections placed on the path */
	u64 connections;    /* connections on the path that ended (and were observed) */
	u64 retransmits;    /* total_retrans summed over them */
	u64 segments_sent;  /* segs_out summed over them */
	u64 timeouts;       /* BPF_SOCK_OPS_RTO_CB callbacks */
	u64 last_srtt_us;   /* the latest connection's */
	u64 last_rttvar_us;
	u64 last_ended_ns;  /* bpf_ktime_get_ns() when it ended */
};

/* Which address families the paths have (matcp_state.families): every path has an address
 * of each family the installation places, so that connect4 and connect6 both choose among
 * all the paths, with one set of statistics per path (an uplink), whichever family measured it. */
#define MATCP_FAMILY_IPV4 1
#define MATCP_FAMILY_IPV6 2

struct matcp_state {
	struct bpf_spin_lock lock;
	u32 addr4[MATCP_MAX_PATHS]; /* path x's IPv4 source address, network order */
	u32 bind_errors;            /* bpf_bind refused (the socket was bound already, ...) */
	u64 netns_cookie;           /* the network namespace whose addresses the paths are */
	struct matcp_selection sel;
	struct matcp_path_stats stats[MATCP_MAX_PATHS];
	u32 cwnd_clamp;             /* snd_cwnd_clamp of every placed connection; 0: none */
	u32 families;               /* MATCP_FAMILY_* bits: which of addr4 and addr6 are set */
	u32 addr6[MATCP_MAX_PATHS][4]; /* path x's IPv6 source address, network order */
};

#endif /* MATCP_STATE_H */
