/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Balia (Peng, Walid, Hwang, Low; draft-walid-mptcp-congestion-control-04): balanced linked adaptation.
 * The rules are in mlab_math.h; this file only wires them to tcp_congestion_ops. */
#include "mlab_coupled.h"

SEC("struct_ops")
void BPF_PROG(balia_init, struct sock *sk)
{
	mlab_init_ca(sk);
	mlab_publish_now(sk, MLAB_ALG_BALIA);
}

SEC("struct_ops")
void BPF_PROG(balia_release, struct sock *sk)
{
	mlab_forget(sk);
}

SEC("struct_ops")
void BPF_PROG(balia_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	mlab_coupled_cong_avoid(sk, acked, MLAB_ALG_BALIA);
}

SEC("struct_ops")
void BPF_PROG(balia_in_ack_event, struct sock *sk, u32 flags)
{
	mlab_repair(sk, MLAB_ALG_BALIA);
}

SEC("struct_ops")
u32 BPF_PROG(balia_undo_cwnd, struct sock *sk)
{
	return mlab_undo_cwnd(sk);
}

/* w - (w/2) min(alpha, 1.5), at least 1 packet, when other subflows share the load. */
SEC("struct_ops")
u32 BPF_PROG(balia_ssthresh, struct sock *sk)
{
	return mlab_ssthresh(sk, MLAB_ALG_BALIA);
}

SEC("struct_ops")
void BPF_PROG(balia_set_state, struct sock *sk, u8 new_state)
{
	mlab_publish_now(sk, MLAB_ALG_BALIA);
}

SEC(".struct_ops.link")
struct tcp_congestion_ops balia = {
	.init = (void *)balia_init,
	.release = (void *)balia_release,
	.ssthresh = (void *)balia_ssthresh,
	.cong_avoid = (void *)balia_cong_avoid,
	.set_state = (void *)balia_set_state,
	.undo_cwnd = (void *)balia_undo_cwnd,
	.in_ack_event = (void *)balia_in_ack_event,
	.name = "balia",
	.flags = MLAB_CA_FLAGS,
};
