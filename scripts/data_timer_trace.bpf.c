// SPDX-License-Identifier: GPL-2.0
/* Each run of an MPTCP connection's data-level retransmission timer, and what its stale
 * checks leave of each subflow, as events for scripts/data-timer-trace (which prints the
 * same events from a build of the simulator with the `data-timer-trace` feature).
 *
 * Only tracepoints are used (fentry is refused on some kernels). The timer's runs come
 * from timer:timer_expire_entry, for the timers whose function is
 * mptcp_retransmit_timer() (net/mptcp/protocol.c), with the interval then in force
 * (msk->timer_ival, last read from the subflows' timers by mptcp_subflow_get_send(); the
 * expiry re-arms the timer with it at the end of __mptcp_retrans()). The stale checks
 * (mptcp_pm_subflow_chk_stale(), net/mptcp/pm.c, which __mptcp_retrans() runs for every
 * usable subflow with data outstanding) have no tracepoint: their effect is read at
 * mptcp:mptcp_subflow_get_send, which fires for each subflow whenever the scheduler is
 * consulted (on each DSS ACK that finds data waiting, after an expiry with data waiting,
 * on each write), and an event goes out at a subflow's first sighting and whenever its
 * stale_count or stale flag differs from what the last one said.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

/* The user-space side (scripts/data-timer-trace) reads these the same. */
enum event_kind {
	EVENT_EXPIRY = 0,
	EVENT_CHECK = 1,
};

struct event {
	u64 at_ns;
	u64 jiffies;
	u64 msk;
	u32 kind;
	/* EVENT_EXPIRY: msk->timer_ival, in jiffies. */
	u32 interval;
	/* EVENT_CHECK: the subflow (subflow_id, 1 for the first), its stale state and window. */
	u32 subflow;
	u32 stale_count;
	u32 stale;
	u32 cwnd;
	u32 packets_out;
	u32 srtt_us;
	/* EVENT_EXPIRY: data in flight at the data level (snd_nxt - snd_una), the send
	 * buffer (sk_sndbuf) and the peer's window (wnd_end - snd_una), in kB;
	 * EVENT_CHECK: the subflow's send buffer. */
	u32 inflight_kb;
	u32 sndbuf_kb;
	u32 window_kb;
};

#include "bpf_trace_events.h"

extern const void mptcp_retransmit_timer __ksym;
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

/* Per subflow context: (stale_count << 1) | stale, as the last event said. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, u64);
	__type(value, u32);
} last_seen SEC(".maps");

SEC("tp_btf/timer_expire_entry")
int BPF_PROG(on_timer, struct timer_list *timer, unsigned long baseclk)
{
	if ((u64)timer->function != (u64)&mptcp_retransmit_timer)
		return 0;
	/* The timer is the msk's icsk_retransmit_timer (mptcp_init_sock()); the msk begins
	 * with its inet_connection_sock. */
	u64 msk_at = (u64)timer - bpf_core_field_offset(struct inet_connection_sock,
							 icsk_retransmit_timer);
	struct mptcp_sock *msk =
		bpf_rdonly_cast((void *)msk_at, bpf_core_type_id_kernel(struct mptcp_sock));
	struct event e = {
		.at_ns = bpf_ktime_get_ns(),
		.jiffies = bpf_jiffies64(),
		.msk = msk_at,
		.kind = EVENT_EXPIRY,
		.interval = (u32)msk->timer_ival,
		.inflight_kb = (u32)((msk->snd_nxt - msk->snd_una) / 1000),
		.sndbuf_kb = (u32)msk->sk.icsk_inet.sk.sk_sndbuf / 1000,
		.window_kb = (u32)((msk->wnd_end - msk->snd_una) / 1000),
	};

	emit_event(&e, sizeof(e));
	return 0;
}

SEC("tp_btf/mptcp_subflow_get_send")
int BPF_PROG(on_consult, struct mptcp_subflow_context *subflow)
{
	u64 key = (u64)subflow;
	u32 state = ((u32)subflow->stale_count << 1) | (u32)BPF_CORE_READ_BITFIELD(subflow, stale);
	u32 *seen = bpf_map_lookup_elem(&last_seen, &key);

	/* The first sighting goes out whatever the state, so that every subflow the scheduler
	 * looked at is in the trace. Entries stay for the program's life: a subflow allocated
	 * later at the same address is taken for the old one (one run per program). */
	if (seen && *seen == state)
		return 0;
	bpf_map_update_elem(&last_seen, &key, &state, BPF_ANY);
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(subflow->tcp_sock);
	struct event e = {
		.at_ns = bpf_ktime_get_ns(),
		.jiffies = bpf_jiffies64(),
		.msk = (u64)subflow->conn,
		.kind = EVENT_CHECK,
		.subflow = subflow->subflow_id,
		.stale_count = state >> 1,
		.stale = state & 1,
	};

	if (tp) {
		e.cwnd = tp->snd_cwnd;
		e.packets_out = tp->packets_out;
		e.srtt_us = tp->srtt_us >> 3;
		e.sndbuf_kb = (u32)tp->inet_conn.icsk_inet.sk.sk_sndbuf / 1000;
	}
	emit_event(&e, sizeof(e));
	return 0;
}
