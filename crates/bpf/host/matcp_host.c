/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * MATCP's selection arithmetic compiled for the host, so that tests can hold it against the
 * Rust selectors of crates/matcp. Thin wrappers only: the logic is in
 * ../src/bpf/matcp_select.h, the header matcp.bpf.c includes.
 */
#include <stddef.h>
#include "../src/bpf/matcp_state.h"

u32 matcp_host_choose(struct matcp_selection *s, u32 draw)
{
	return matcp_choose(s, draw);
}

void matcp_host_observe(struct matcp_selection *s, u32 path, const struct matcp_observation *o)
{
	matcp_observe(s, path, o);
}

u64 matcp_host_weighted_threshold(const struct matcp_selection *s, u32 x)
{
	return matcp_weighted_threshold(s, x);
}

/* sizeof(struct matcp_state) and the offsets the Rust mirror relies on, in this order. */
u32 matcp_host_state_layout(u32 *out, u32 n)
{
	const u32 layout[] = {
		sizeof(struct matcp_state),
		offsetof(struct matcp_state, addr4),
		offsetof(struct matcp_state, bind_errors),
		offsetof(struct matcp_state, netns_cookie),
		offsetof(struct matcp_state, sel),
		offsetof(struct matcp_state, stats),
		offsetof(struct matcp_state, cwnd_clamp),
		offsetof(struct matcp_state, families),
		offsetof(struct matcp_state, addr6),
		sizeof(struct matcp_selection),
		offsetof(struct matcp_selection, path),
		sizeof(struct matcp_path_state),
		sizeof(struct matcp_path_stats),
		sizeof(struct matcp_observation),
	};
	u32 i, len = sizeof(layout) / sizeof(layout[0]);

	for (i = 0; i < len && i < n; i++)
		out[i] = layout[i];
	return len;
}
