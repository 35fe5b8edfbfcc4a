// SPDX-License-Identifier: GPL-2.0
/* What a Linux data sender does with the window an ACK frees, and whether
 * tcp_tso_should_defer() (net/ipv4/tcp_output.c) explains it. Loaded by
 * scripts/send-decisions.
 *
 * The tcp_probe tracepoint fires at the top of tcp_rcv_established(), before the
 * segment is processed. At each segment a data sender receives, the sender's state
 * still holds what the previous ACK left: its congestion window and snd_una as that
 * ACK set them, plus whatever tcp_write_xmit() sent since. So the decision taken
 * after the previous ACK can be rebuilt: the window it had free (cwnd less what was
 * in flight before the sends), whether it sent, and the inputs of
 * tcp_tso_should_defer()'s rules at that moment (the previous probe's time, the
 * time of the socket's last transmission then, the oldest unacknowledged skb's send
 * time and SRTT, which nothing changed in between).
 *
 * With exactly one segment of window free, tcp_write_xmit() sends a one-segment skb
 * at once but may hold an skb of two or more (tcp_tso_segs() is at least
 * tcp_min_tso_segs, 2, so "a full-sized TSO skb" never fits one segment) when
 * tcp_tso_should_defer() finds all of: the socket not in Recovery or Loss; its last
 * transmission at most 1 ms ago; less than a third of the window
 * (tcp_tso_win_divisor) free; and the ACK of its oldest unacknowledged skb due
 * within min(SRTT / 2, 1 ms).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

#define NSEC_PER_MSEC 1000000ULL
/* tcp_tso_win_divisor's default */
#define TSO_WIN_DIVISOR 3
/* Only sockets that have sent this much count as data senders, which leaves out
 * receivers and control connections. */
#define SENDER_MIN_ACKED 1000000ULL
#define KINDS 2
#define COUNTERS 16
#define BUCKETS 16

/* Counters per kind of socket (0: TCP, 1: MPTCP subflow); the user-space side
 * (scripts/send-decisions) names them the same. */
enum counter {
	INTERVALS = 0,          /* between two segments a sender received */
	IN_RECOVERY = 1,        /* left out: Recovery or Loss (no deferring there) */
	RETRANSMITTED = 2,      /* left out: a retransmission in between */
	FREE_AFTER_ACK = 3,     /* bucket: segments of window free before sending */
	ONE_FREE = 4,           /* bucket 0: held, 1: sent */
	ONE_FREE_LITTLE_DATA = 5, /* under two segments waiting (no deferring) */
	VERDICT = 6,            /* bucket: rules say hold (2) or not (0), + 1 if held */
	SENT_LAST_WRITE_OLD = 7,   /* bucket: held */
	SENT_ACK_NOT_DUE = 8,      /* bucket: held */
	SENT_THIRD_FREE = 9,       /* bucket: held */
	THROTTLED_BY_TSQ = 10,     /* bucket: held */
	ACK_DUE_HELD = 11,      /* bucket: 100 us until the oldest ACK is due, when held */
	ACK_DUE_SENT = 12,      /* the same when sent */
	SENT_AFTER = 13,        /* bucket: segments sent (SENT_AFTER_MAX: that many or
				 * more), + SENT_AFTER_STRIDE times what the interval
				 * before did with one segment free (enum one_free) */
};

/* SENT_AFTER's buckets; scripts/send-decisions names them the same. */
#define SENT_AFTER_MAX 4
#define SENT_AFTER_STRIDE 5

/* What an interval did with exactly one segment of window free. */
enum one_free {
	NOT_HELD = 0,           /* anything but a hold: sent it, had another number
				 * free, was left out, or was the socket's first */
	DEFERRED = 1,           /* held it with two or more segments waiting */
	NOTHING_TO_SEND = 2,    /* held it with under two waiting */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KINDS * COUNTERS * BUCKETS);
	__type(key, u32);
	__type(value, u64);
} counts SEC(".maps");

/* The sender's state at the previous segment it received. */
struct seen {
	u64 at;
	u64 last_write;
	u32 snd_nxt;
	u32 total_retrans;
	/* What the interval that ended here did with one free segment (enum one_free);
	 * a u32, so that the struct has no padding for the verifier to find unwritten. */
	u32 one_free;
	u32 unused;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, u64);
	__type(value, struct seen);
} previous SEC(".maps");

static void count(u32 kind, enum counter c, u64 bucket)
{
	if (bucket >= BUCKETS)
		bucket = BUCKETS - 1;
	u32 key = ((kind & 1) * COUNTERS + (c & (COUNTERS - 1))) * BUCKETS + (u32)bucket;
	u64 *v = bpf_map_lookup_elem(&counts, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
}

/* tcp_rtx_queue_head(): the leftmost skb of the retransmission queue's tree. */
static struct sk_buff *oldest_unacked(struct tcp_sock *tp)
{
	struct rb_node *n = tp->inet_conn.icsk_inet.sk.tcp_rtx_queue.rb_node;

	for (int depth = 0; depth < 64 && n; depth++) {
		struct rb_node *left = BPF_CORE_READ(n, rb_left);

		if (!left)
			break;
		n = left;
	}
	/* rbnode is the first member of struct sk_buff */
	return (struct sk_buff *)n;
}

/* Counts the decision taken in the interval from the previous segment the sender
 * received (`before`) to this one; marks `now` if it held its one free segment. */
static __always_inline void decide(struct tcp_sock *tp, struct sock *sk, u32 kind,
				   const struct seen *before, struct seen *now)
{
	count(kind, INTERVALS, 0);
	if (tp->inet_conn.icsk_ca_state >= TCP_CA_Recovery) {
		count(kind, IN_RECOVERY, 0);
		return;
	}
	if (tp->total_retrans != before->total_retrans) {
		count(kind, RETRANSMITTED, 0);
		return;
	}
	u32 mss = tp->mss_cache ? tp->mss_cache : 1;
	u32 sent_bytes = tp->snd_nxt - before->snd_nxt;
	u32 sent = (sent_bytes + mss - 1) / mss;
	s64 in_flight = (s64)tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
	s64 free_segments = (s64)tp->snd_cwnd - (in_flight - sent);

	/* What an ACK released, by whether the interval before held a segment back: a
	 * held segment leaves with the next ACK's, as a longer run. */
	count(kind, SENT_AFTER,
	      (sent < SENT_AFTER_MAX ? sent : SENT_AFTER_MAX) +
		      SENT_AFTER_STRIDE * before->one_free);
	count(kind, FREE_AFTER_ACK, free_segments < 0 ? 0 : free_segments);
	if (free_segments != 1)
		return;
	bool held = sent == 0;

	count(kind, ONE_FREE, !held);
	if (sk->sk_tsq_flags & (1UL << TSQ_THROTTLED))
		count(kind, THROTTLED_BY_TSQ, held);
	/* What was waiting then: what waits now and what went since. */
	u32 waiting = tp->write_seq - tp->snd_nxt + sent_bytes;

	if (waiting < 2 * mss) {
		count(kind, ONE_FREE_LITTLE_DATA, held);
		if (held)
			now->one_free = NOTHING_TO_SEND;
		return;
	}
	struct sk_buff *head = oldest_unacked(tp);

	if (!head)
		return;
	/* Counted as a deferral where the rules below are checked (VERDICT), so that the
	 * ACKs after a deferral are at most the deferrals. */
	if (held)
		now->one_free = DEFERRED;
	u64 decided = before->at;
	bool wrote_lately = (s64)(decided - before->last_write - NSEC_PER_MSEC) <= 0;
	u64 srtt_ns = (u64)(1000 >> 3) * tp->srtt_us;
	u64 threshold = srtt_ns >> 1 < NSEC_PER_MSEC ? srtt_ns >> 1 : NSEC_PER_MSEC;
	u64 expected_ack = BPF_CORE_READ(head, skb_mstamp_ns) + srtt_ns;
	s64 until_due = (s64)(expected_ack - decided);
	bool ack_due = until_due - (s64)threshold <= 0;
	u64 window = (u64)tp->snd_cwnd * mss;
	u64 chunk = (tp->snd_wnd < window ? tp->snd_wnd : window) / TSO_WIN_DIVISOR;
	bool third_free = mss >= chunk;
	bool hold = wrote_lately && ack_due && !third_free;

	count(kind, VERDICT, (hold ? 2 : 0) + held);
	count(kind, held ? ACK_DUE_HELD : ACK_DUE_SENT, until_due < 0 ? 0 : (u64)until_due / 100000);
	if (!wrote_lately)
		count(kind, SENT_LAST_WRITE_OLD, held);
	if (!ack_due)
		count(kind, SENT_ACK_NOT_DUE, held);
	if (third_free)
		count(kind, SENT_THIRD_FREE, held);
}

SEC("tp_btf/tcp_probe")
int BPF_PROG(on_segment, struct sock *sk, struct sk_buff *skb)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);

	if (!tp || tp->bytes_acked < SENDER_MIN_ACKED)
		return 0;
	u32 kind = BPF_CORE_READ_BITFIELD(tp, is_mptcp);
	u64 key = (u64)sk;
	struct seen now = {
		.at = bpf_ktime_get_ns(),
		.last_write = tp->tcp_wstamp_ns,
		.snd_nxt = tp->snd_nxt,
		.total_retrans = tp->total_retrans,
	};
	struct seen *p = bpf_map_lookup_elem(&previous, &key);
	struct seen before;

	if (!p) {
		bpf_map_update_elem(&previous, &key, &now, BPF_ANY);
		return 0;
	}
	before = *p;
	now.one_free = NOT_HELD;
	decide(tp, sk, kind, &before, &now);
	bpf_map_update_elem(&previous, &key, &now, BPF_ANY);
	return 0;
}
