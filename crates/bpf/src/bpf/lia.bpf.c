/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* LIA, RFC 6356: the "coupled" algorithm of the out-of-tree Linux MPTCP.
 * The rules are in mlab_math.h; this file only wires them to tcp_congestion_ops. */
#include "mlab_coupled.h"

SEC("struct_ops")
void BPF_PROG(lia_init, struct sock *sk)
{
	mlab_init_ca(sk);
	mlab_publish_now(sk, MLAB_ALG_LIA);
}

SEC("struct_ops")
void BPF_PROG(lia_release, struct sock *sk)
{
	mlab_forget(sk);
}

SEC("struct_ops")
void BPF_PROG(lia_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	mlab_coupled_cong_avoid(sk, acked, MLAB_ALG_LIA);
}

SEC("struct_ops")
void BPF_PROG(lia_in_ack_event, struct sock *sk, u32 flags)
{
	mlab_repair(sk, MLAB_ALG_LIA);
}

SEC("struct_ops")
u32 BPF_PROG(lia_undo_cwnd, struct sock *sk)
{
	return mlab_undo_cwnd(sk);
}

SEC("struct_ops")
u32 BPF_PROG(lia_ssthresh, struct sock *sk)
{
	return mlab_ssthresh(sk, MLAB_ALG_LIA);
}

SEC("struct_ops")
void BPF_PROG(lia_set_state, struct sock *sk, u8 new_state)
{
	mlab_publish_now(sk, MLAB_ALG_LIA);
}

SEC(".struct_ops.link")
struct tcp_congestion_ops lia = {
	.init = (void *)lia_init,
	.release = (void *)lia_release,
	.ssthresh = (void *)lia_ssthresh,
	.cong_avoid = (void *)lia_cong_avoid,
	.set_state = (void *)lia_set_state,
	.undo_cwnd = (void *)lia_undo_cwnd,
	.in_ack_event = (void *)lia_in_ack_event,
	.name = "lia",
	.flags = MLAB_CA_FLAGS,
};
