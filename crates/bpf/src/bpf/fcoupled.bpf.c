/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Fully coupled (Kelly and Voice, "Stability of end-to-end algorithms for joint routing and
 * rate control", ACM CCR 2005; Han, Shakkottai, Hollot, Srikant, Towsley, "Overlay TCP for
 * multi-path routing and congestion control", 2004; "COUPLED" in Wischik et al., NSDI 2011,
 * section 2): the connection behaves as one TCP over the sum of its paths.
 * Registered as `fcoupled`: with a test or backend prefix, "fullycoupled" would not fit
 * TCP_CA_NAME_MAX. The rules are in mlab_math.h; this file only wires them to
 * tcp_congestion_ops. */
#include "mlab_coupled.h"

SEC("struct_ops")
void BPF_PROG(fcoupled_init, struct sock *sk)
{
	mlab_init_ca(sk);
	mlab_publish_now(sk, MLAB_ALG_FULLY_COUPLED);
}

SEC("struct_ops")
void BPF_PROG(fcoupled_release, struct sock *sk)
{
	mlab_forget(sk);
}

SEC("struct_ops")
void BPF_PROG(fcoupled_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	mlab_coupled_cong_avoid(sk, acked, MLAB_ALG_FULLY_COUPLED);
}

SEC("struct_ops")
void BPF_PROG(fcoupled_in_ack_event, struct sock *sk, u32 flags)
{
	mlab_repair(sk, MLAB_ALG_FULLY_COUPLED);
}

SEC("struct_ops")
u32 BPF_PROG(fcoupled_undo_cwnd, struct sock *sk)
{
	return mlab_undo_cwnd(sk);
}

/* w - tau X / 2, at least 1 packet, when other subflows share the load. */
SEC("struct_ops")
u32 BPF_PROG(fcoupled_ssthresh, struct sock *sk)
{
	return mlab_ssthresh(sk, MLAB_ALG_FULLY_COUPLED);
}

SEC("struct_ops")
void BPF_PROG(fcoupled_set_state, struct sock *sk, u8 new_state)
{
	mlab_publish_now(sk, MLAB_ALG_FULLY_COUPLED);
}

SEC(".struct_ops.link")
struct tcp_congestion_ops fcoupled = {
	.init = (void *)fcoupled_init,
	.release = (void *)fcoupled_release,
	.ssthresh = (void *)fcoupled_ssthresh,
	.cong_avoid = (void *)fcoupled_cong_avoid,
	.set_state = (void *)fcoupled_set_state,
	.undo_cwnd = (void *)fcoupled_undo_cwnd,
	.in_ack_event = (void *)fcoupled_in_ack_event,
	.name = "fcoupled",
	.flags = MLAB_CA_FLAGS,
};
