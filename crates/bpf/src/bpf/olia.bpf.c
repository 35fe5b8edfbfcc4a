/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* OLIA (Khalili et al., CoNEXT 2012): opportunistic linked increases.
 * The rules are in mlab_math.h; this file only wires them to tcp_congestion_ops. */
#include "mlab_coupled.h"

SEC("struct_ops")
void BPF_PROG(olia_in_ack_event, struct sock *sk, u32 flags)
{
	mlab_repair(sk, MLAB_ALG_OLIA);
}

SEC("struct_ops")
void BPF_PROG(olia_init, struct sock *sk)
{
	mlab_init_ca(sk);
	mlab_publish_now(sk, MLAB_ALG_OLIA);
}

SEC("struct_ops")
void BPF_PROG(olia_release, struct sock *sk)
{
	mlab_forget(sk);
}

SEC("struct_ops")
void BPF_PROG(olia_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	mlab_coupled_cong_avoid(sk, acked, MLAB_ALG_OLIA);
}

SEC("struct_ops")
u32 BPF_PROG(olia_undo_cwnd, struct sock *sk)
{
	return mlab_undo_cwnd(sk);
}

SEC("struct_ops")
u32 BPF_PROG(olia_ssthresh, struct sock *sk)
{
	return mlab_ssthresh(sk, MLAB_ALG_OLIA);
}

/* loss3 follows snd_una; on entering Loss, Recovery or CWR (ECN counts as a loss) the
 * interval shifts, unless this is a retransmission of the same loss. */
SEC("struct_ops")
void BPF_PROG(olia_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	mlab_ca_of(sk)->loss3 = mlab_tcp_sk(sk)->snd_una;
}

SEC("struct_ops")
void BPF_PROG(olia_set_state, struct sock *sk, u8 new_state)
{
	struct mlab_ca *ca = mlab_ca_of(sk);

	if (new_state == TCP_CA_Loss || new_state == TCP_CA_Recovery || new_state == TCP_CA_CWR) {
		if (ca->loss3 != ca->loss2 && !mlab_icsk(sk)->icsk_retransmits) {
			ca->loss1 = ca->loss2;
			ca->loss2 = ca->loss3;
		}
	}
	mlab_publish_now(sk, MLAB_ALG_OLIA);
}

SEC(".struct_ops.link")
struct tcp_congestion_ops olia = {
	.init = (void *)olia_init,
	.release = (void *)olia_release,
	.ssthresh = (void *)olia_ssthresh,
	.cong_avoid = (void *)olia_cong_avoid,
	.set_state = (void *)olia_set_state,
	.pkts_acked = (void *)olia_pkts_acked,
	.in_ack_event = (void *)olia_in_ack_event,
	.undo_cwnd = (void *)olia_undo_cwnd,
	.name = "olia",
	.flags = MLAB_CA_FLAGS,
};
