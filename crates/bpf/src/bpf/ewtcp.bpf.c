/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* EWTCP (Honda, Nishida, Eggert, Sarolahti, Tokuda, "Multipath congestion control for shared
 * bottleneck", PFLDNeT 2009; the equally weighted baseline of Wischik et al., NSDI 2011,
 * section 2): each subflow is Reno with its increase scaled by a = 1/n^2.
 * The rules are in mlab_math.h; this file only wires them to tcp_congestion_ops. */
#include "mlab_coupled.h"

SEC("struct_ops")
void BPF_PROG(ewtcp_init, struct sock *sk)
{
	mlab_init_ca(sk);
	mlab_publish_now(sk, MLAB_ALG_EWTCP);
}

SEC("struct_ops")
void BPF_PROG(ewtcp_release, struct sock *sk)
{
	mlab_forget(sk);
}

SEC("struct_ops")
void BPF_PROG(ewtcp_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	mlab_coupled_cong_avoid(sk, acked, MLAB_ALG_EWTCP);
}

SEC("struct_ops")
void BPF_PROG(ewtcp_in_ack_event, struct sock *sk, u32 flags)
{
	mlab_repair(sk, MLAB_ALG_EWTCP);
}

SEC("struct_ops")
u32 BPF_PROG(ewtcp_undo_cwnd, struct sock *sk)
{
	return mlab_undo_cwnd(sk);
}

SEC("struct_ops")
u32 BPF_PROG(ewtcp_ssthresh, struct sock *sk)
{
	return mlab_ssthresh(sk, MLAB_ALG_EWTCP);
}

SEC("struct_ops")
void BPF_PROG(ewtcp_set_state, struct sock *sk, u8 new_state)
{
	mlab_publish_now(sk, MLAB_ALG_EWTCP);
}

SEC(".struct_ops.link")
struct tcp_congestion_ops ewtcp = {
	.init = (void *)ewtcp_init,
	.release = (void *)ewtcp_release,
	.ssthresh = (void *)ewtcp_ssthresh,
	.cong_avoid = (void *)ewtcp_cong_avoid,
	.set_state = (void *)ewtcp_set_state,
	.undo_cwnd = (void *)ewtcp_undo_cwnd,
	.in_ack_event = (void *)ewtcp_in_ack_event,
	.name = "ewtcp",
	.flags = MLAB_CA_FLAGS,
};
