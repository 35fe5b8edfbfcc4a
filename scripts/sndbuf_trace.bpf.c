// SPDX-License-Identifier: GPL-2.0
/* Each MPTCP subflow's send buffer as Linux's autotuning grows it, for scripts/sndbuf-trace.
 *
 * At every segment an MPTCP subflow receives (the tcp_probe tracepoint, which fires at the
 * start of tcp_rcv_established(), so it shows what the previous segment's processing left:
 * its push and the tcp_check_space() calls of tcp_data_snd_check() and of
 * tcp_event_new_data_sent(), net/ipv4/tcp_{input,output}.c), an event goes out when the
 * subflow's sk_sndbuf differs from what the last event said, with the window, the packets
 * in flight and the bytes queued unsent then. Only tracepoints are used (fentry is refused on
 * some kernels).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

/* The user-space side (scripts/sndbuf-trace) reads these the same. */
struct event {
	u64 at_ns;
	u64 sock;
	/* 1 when the socket at this address is not the one the last event there was for (a
	 * subflow freed and another allocated in its place): its history starts over. */
	u32 fresh;
	u32 sndbuf;
	u32 cwnd;
	/* tcp_packets_in_flight(): packets out, less SACKed and lost, plus retransmitted. */
	u32 in_flight;
	/* Bytes in the write queue not yet sent (write_seq - snd_nxt). */
	u32 unsent;
};

#include "bpf_trace_events.h"

/* Per subflow socket address: the send buffer the last event said, and the segments the
 * socket had sent then, which only grow while it lives. */
struct seen {
	u32 sndbuf;
	u32 segs_out;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, u64);
	__type(value, struct seen);
} last_seen SEC(".maps");

SEC("tp_btf/tcp_probe")
int BPF_PROG(on_segment, struct sock *sk, struct sk_buff *skb)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);

	if (!tp || !BPF_CORE_READ_BITFIELD(tp, is_mptcp))
		return 0;
	u64 key = (u64)sk;
	struct seen now = { .sndbuf = sk->sk_sndbuf, .segs_out = tp->segs_out };
	struct seen *before = bpf_map_lookup_elem(&last_seen, &key);
	u32 fresh = 1;

	if (before && now.segs_out >= before->segs_out) {
		fresh = 0;
		if (before->sndbuf == now.sndbuf) {
			before->segs_out = now.segs_out;
			return 0;
		}
	}
	bpf_map_update_elem(&last_seen, &key, &now, BPF_ANY);
	struct event e = {
		.at_ns = bpf_ktime_get_ns(),
		.sock = key,
		.fresh = fresh,
		.sndbuf = now.sndbuf,
		.cwnd = tp->snd_cwnd,
		.in_flight = tp->packets_out - tp->sacked_out - tp->lost_out + tp->retrans_out,
		.unsent = tp->write_seq - tp->snd_nxt,
	};

	emit_event(&e, sizeof(e));
	return 0;
}
