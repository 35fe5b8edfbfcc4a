/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * MATCP on a stock kernel (Dimopoulos, Zeephongsekul and Tari, "Multipath Aware TCP",
 * ISCC 2006): each new TCP connection of a cgroup is placed on one of the host's uplinks,
 * chosen from what earlier connections measured on each.
 *
 * - cgroup/connect4 runs in connect() before the route lookup (tcp_v4_pre_connect,
 *   net/ipv4/tcp_ipv4.c), picks a path with the configured selector (matcp_select.h) and
 *   binds the socket's source address with bpf_bind (net/core/filter.c: __inet_bind with
 *   BIND_FORCE_ADDRESS_NO_PORT, net/ipv4/af_inet.c: the address only, the port still comes
 *   at connect). A policy rule `ip rule add from ADDR table T` then sends the connection
 *   over that uplink. A socket the application bound itself keeps its address.
 * - cgroup/connect6 does the same for AF_INET6 sockets (tcp_v6_pre_connect,
 *   net/ipv6/tcp_ipv6.c; bpf_bind goes to __inet6_bind, net/ipv6/af_inet6.c), with the same
 *   selector, choice counts and statistics: a path is an uplink, and its IPv4 and IPv6
 *   addresses (matcp_state.h) lead over the same link.
 * - sockops follows the connections that leave from a path's address
 *   (include/uapi/linux/bpf.h): BPF_SOCK_OPS_TCP_CONNECT_CB, when the SYN is about to go,
 *   asks for BPF_SOCK_OPS_RTO_CB (each timeout, SYN timeouts included, from
 *   tcp_write_timeout) and BPF_SOCK_OPS_STATE_CB; at the move to TCP_CLOSE (tcp_done, every
 *   full socket ends there) the connection's srtt_us, mdev_us, rtt_min, icsk_rto,
 *   total_retrans and segs_out become one observation of its path. Retransmissions are
 *   read from total_retrans once at the end rather than counted per
 *   BPF_SOCK_OPS_RETRANS_CB, which would cost a call per retransmitted segment.
 *
 * The selector's state and the statistics live in one pinned array map, `matcp_state`,
 * which outlives the connections and the command that installed the programs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "matcp_state.h"

char _license[] SEC("license") = "Dual MIT/GPL";

#define MATCP_AF_INET 2
#define MATCP_AF_INET6 10
#define MATCP_SOCK_STREAM 1
#define MATCP_IPPROTO_TCP 6
#define MATCP_TCP_CLOSE 7 /* BPF_TCP_CLOSE */
/* include/uapi/linux/tcp.h and bpf.h: not in vmlinux.h, which has types only. */
#define MATCP_SOL_TCP 6
#define MATCP_TCP_BPF_SNDCWND_CLAMP 1002

/* For the RTO, which the kernel keeps in jiffies. */
extern unsigned int CONFIG_HZ __kconfig __weak;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct matcp_state);
} matcp_state SEC(".maps");

/* Per connection: its path and its timeouts so far. */
struct matcp_conn {
	u32 path;
	u32 timeouts;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct matcp_conn);
} matcp_conns SEC(".maps");

static __always_inline struct matcp_state *matcp_get(void)
{
	u32 key = 0;

	return bpf_map_lookup_elem(&matcp_state, &key);
}

/* A cgroup's processes may open sockets in any network namespace; the paths' addresses are
 * those of the namespace `install` ran in, and only its sockets are placed and measured
 * (elsewhere the same address may be another host's, or no host's). */
static __always_inline int matcp_our_netns(const struct matcp_state *st, u64 cookie)
{
	return !st->netns_cookie || cookie == st->netns_cookie;
}

/* Whether the socket is still unbound: bpf_bind would fail on one the application bound
 * (inet_bind checks inet_num), and its own choice of address stands. An AF_INET6 socket's
 * src_ip4 is not its address (__inet6_bind sets 127.0.0.6 there for IPv6 ones). */
static __always_inline int matcp_unbound4(const struct bpf_sock *sk)
{
	return sk && !sk->src_ip4 && !sk->src_port;
}

static __always_inline int matcp_unbound6(const struct bpf_sock *sk)
{
	return sk && !(sk->src_ip6[0] | sk->src_ip6[1] | sk->src_ip6[2] | sk->src_ip6[3]) &&
	       !sk->src_port;
}

/* The state, if this connect() is one to place: a TCP stream socket, the installation's
 * paths having addresses of `family` (MATCP_FAMILY_*), in the namespace of the paths. */
static __always_inline struct matcp_state *matcp_placing(struct bpf_sock_addr *ctx, u32 family)
{
	struct matcp_state *st;

	if (ctx->type != MATCP_SOCK_STREAM || ctx->protocol != MATCP_IPPROTO_TCP)
		return 0;
	st = matcp_get();
	if (!st || !(st->families & family) || !matcp_our_netns(st, bpf_get_netns_cookie(ctx)))
		return 0;
	return st;
}

/* The selector's choice for a new connection, counted. The paths' addresses are written
 * once, before the programs are attached: the caller reads them outside the lock. */
static __always_inline u32 matcp_choose_counted(struct matcp_state *st)
{
	/* Drawn before the lock: no helper may be called while it is held. */
	u32 draw = bpf_get_prandom_u32(), chosen;

	bpf_spin_lock(&st->lock);
	chosen = matcp_choose(&st->sel, draw) & (MATCP_MAX_PATHS - 1);
	st->stats[chosen].choices++;
	bpf_spin_unlock(&st->lock);
	return chosen;
}

static __always_inline void matcp_bind(struct bpf_sock_addr *ctx, struct matcp_state *st,
				       void *sa, int len)
{
	if (bpf_bind(ctx, (struct sockaddr *)sa, len))
		__sync_fetch_and_add(&st->bind_errors, 1);
}

/* Loopback stays local: no uplink leads there. */
static __always_inline int matcp_loopback4(u32 addr)
{
	return (bpf_ntohl(addr) >> 24) == 127;
}

SEC("cgroup/connect4")
int matcp_connect4(struct bpf_sock_addr *ctx)
{
	struct sockaddr_in sa = {};
	struct matcp_state *st;

	if (matcp_loopback4(ctx->user_ip4) || !matcp_unbound4(ctx->sk))
		return 1;
	st = matcp_placing(ctx, MATCP_FAMILY_IPV4);
	if (!st)
		return 1;
	sa.sin_family = MATCP_AF_INET;
	sa.sin_addr.s_addr = st->addr4[matcp_choose_counted(st)];
	matcp_bind(ctx, st, &sa, sizeof(sa));
	return 1;
}

/* ::ffff:a.b.c.d (RFC 4291, 2.5.5.2). */
static __always_inline int matcp_v4_mapped(const u32 *a)
{
	return !a[0] && !a[1] && a[2] == bpf_htonl(0xffff);
}

/* ::1 and fe80::/10. A link-local destination is reached over the link its scope id names,
 * not over an uplink the selector could choose, and is left alone as loopback is. */
static __always_inline int matcp_local_only6(const u32 *a)
{
	return (!a[0] && !a[1] && !a[2] && a[3] == bpf_htonl(1)) ||
	       (bpf_ntohl(a[0]) & 0xffc00000) == 0xfe800000;
}

/* An IPv4 destination given to a dual-stack AF_INET6 socket (::ffff:a.b.c.d). tcp_v6_connect
 * hands it to tcp_v4_connect, which runs no connect4 program (the hook is in
 * tcp_v6_pre_connect, already passed), so it is placed here, as connect4 would, among the
 * paths' IPv4 addresses: bound to ::ffff:ADDR, which __inet6_bind takes as the IPv4 source
 * ADDR, and sockops finds its path by that IPv4 address. Leaving it alone would keep such
 * sockets (Java opens AF_INET6 sockets for IPv4 destinations by default) outside MATCP while
 * the path they take is known. An IPV6_V6ONLY socket cannot reach such a destination at all
 * (tcp_v6_connect: -ENETUNREACH); __inet6_bind refuses it first, counted as a bind error. */
static __always_inline int matcp_connect_mapped(struct bpf_sock_addr *ctx, u32 dst4)
{
	struct sockaddr_in6 sa = {};
	struct matcp_state *st;

	if (matcp_loopback4(dst4))
		return 1;
	st = matcp_placing(ctx, MATCP_FAMILY_IPV4);
	if (!st)
		return 1;
	sa.sin6_family = MATCP_AF_INET6;
	sa.sin6_addr.in6_u.u6_addr32[2] = bpf_htonl(0xffff);
	sa.sin6_addr.in6_u.u6_addr32[3] = st->addr4[matcp_choose_counted(st)];
	matcp_bind(ctx, st, &sa, sizeof(sa));
	return 1;
}

SEC("cgroup/connect6")
int matcp_connect6(struct bpf_sock_addr *ctx)
{
	struct sockaddr_in6 sa = {};
	struct matcp_state *st;
	u32 dst[4], chosen;

	/* One 4-byte load per word: the verifier's access rule for user_ip6. */
	dst[0] = ctx->user_ip6[0];
	dst[1] = ctx->user_ip6[1];
	dst[2] = ctx->user_ip6[2];
	dst[3] = ctx->user_ip6[3];
	if (!matcp_unbound6(ctx->sk))
		return 1;
	if (matcp_v4_mapped(dst))
		return matcp_connect_mapped(ctx, dst[3]);
	if (matcp_local_only6(dst))
		return 1;
	st = matcp_placing(ctx, MATCP_FAMILY_IPV6);
	if (!st)
		return 1;
	chosen = matcp_choose_counted(st);
	sa.sin6_family = MATCP_AF_INET6;
	__builtin_memcpy(&sa.sin6_addr, st->addr6[chosen], sizeof(sa.sin6_addr));
	matcp_bind(ctx, st, &sa, sizeof(sa));
	return 1;
}

static __always_inline int matcp_path_of4(const struct matcp_state *st, u32 addr)
{
	u32 n = matcp_n(&st->sel), i;

	if (!(st->families & MATCP_FAMILY_IPV4))
		return -1;
	for (i = 0; i < MATCP_MAX_PATHS; i++)
		if (i < n && st->addr4[i] == addr)
			return i;
	return -1;
}

static __always_inline int matcp_path_of6(const struct matcp_state *st, const u32 *addr)
{
	u32 n = matcp_n(&st->sel), i;

	if (!(st->families & MATCP_FAMILY_IPV6))
		return -1;
	for (i = 0; i < MATCP_MAX_PATHS; i++)
		if (i < n && st->addr6[i][0] == addr[0] && st->addr6[i][1] == addr[1] &&
		    st->addr6[i][2] == addr[2] && st->addr6[i][3] == addr[3])
			return i;
	return -1;
}

/* The path a connection leaves from, by its local address; -1: none of ours. An AF_INET6
 * socket bound to ::ffff:ADDR (a placed IPv4-mapped connection) leaves from IPv4 ADDR. */
static __always_inline int matcp_path_of(const struct bpf_sock_ops *skops,
					 const struct matcp_state *st)
{
	u32 local[4];

	if (skops->family == MATCP_AF_INET)
		return matcp_path_of4(st, skops->local_ip4);
	if (skops->family != MATCP_AF_INET6)
		return -1;
	local[0] = skops->local_ip6[0];
	local[1] = skops->local_ip6[1];
	local[2] = skops->local_ip6[2];
	local[3] = skops->local_ip6[3];
	if (matcp_v4_mapped(local))
		return matcp_path_of4(st, local[3]);
	return matcp_path_of6(st, local);
}

static __always_inline void matcp_follow(struct bpf_sock_ops *skops, struct bpf_sock *sk,
					 struct matcp_state *st)
{
	struct matcp_conn *conn;
	int path;

	if (!matcp_our_netns(st, bpf_get_netns_cookie(skops)))
		return;
	path = matcp_path_of(skops, st);
	if (path < 0)
		return;
	conn = bpf_sk_storage_get(&matcp_conns, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!conn)
		return;
	conn->path = path;
	conn->timeouts = 0;
	if (st->cwnd_clamp) {
		/* A window limit (ns-2's window_, the simulator's cwnd clamp): Linux's
		 * snd_cwnd_clamp, which no socket option sets (net/core/filter.c,
		 * sol_tcp_sockopt: TCP_BPF_SNDCWND_CLAMP also sets ssthresh to it). */
		int clamp = st->cwnd_clamp;

		bpf_setsockopt(skops, MATCP_SOL_TCP, MATCP_TCP_BPF_SNDCWND_CLAMP, &clamp,
			       sizeof(clamp));
	}
	bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
					 BPF_SOCK_OPS_STATE_CB_FLAG | BPF_SOCK_OPS_RTO_CB_FLAG);
}

static __always_inline void matcp_end(struct bpf_sock *sk, struct matcp_state *st)
{
	struct matcp_observation o = {};
	struct matcp_path_stats *stats;
	struct matcp_conn *conn;
	struct tcp_sock *tp;
	u32 path, rtt_min, hz = CONFIG_HZ ? CONFIG_HZ : 1000;

	conn = bpf_sk_storage_get(&matcp_conns, sk, 0, 0);
	if (!conn)
		return;
	path = conn->path & (MATCP_MAX_PATHS - 1);
	o.timeouts = conn->timeouts;
	bpf_sk_storage_delete(&matcp_conns, sk);
	tp = bpf_skc_to_tcp_sock(sk);
	if (!tp)
		return;
	/* tcp_rtt_estimator (net/ipv4/tcp_input.c): srtt_us is SRTT << 3, mdev_us 4 mean
	 * deviations (TCP_INFO's tcpi_rttvar is mdev_us >> 2); rtt_min is ~0U until a sample. */
	o.srtt_ns = (u64)(tp->srtt_us >> 3) * 1000;
	o.rttvar_ns = (u64)(tp->mdev_us >> 2) * 1000;
	rtt_min = tp->rtt_min.s[0].v;
	o.min_rtt_ns = rtt_min == ~0U ? 0 : (u64)rtt_min * 1000;
	o.rto_ns = (u64)tp->inet_conn.icsk_rto * 1000000000ULL / hz;
	o.segments_sent = tp->segs_out;
	o.retransmits = tp->total_retrans;

	bpf_spin_lock(&st->lock);
	matcp_observe(&st->sel, path, &o);
	stats = &st->stats[path];
	stats->connections++;
	stats->retransmits += o.retransmits;
	stats->segments_sent += o.segments_sent;
	stats->timeouts += o.timeouts;
	stats->last_srtt_us = o.srtt_ns / 1000;
	stats->last_rttvar_us = o.rttvar_ns / 1000;
	bpf_spin_unlock(&st->lock);
	/* Outside the lock: a helper call. A torn read of it only delays a status line. */
	stats->last_ended_ns = bpf_ktime_get_ns();
}

SEC("sockops")
int matcp_sockops(struct bpf_sock_ops *skops)
{
	struct matcp_state *st = matcp_get();
	struct bpf_sock *sk = skops->sk;
	struct matcp_conn *conn;

	if (!st || !sk)
		return 1;
	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
		matcp_follow(skops, sk, st);
		break;
	case BPF_SOCK_OPS_RTO_CB:
		conn = bpf_sk_storage_get(&matcp_conns, sk, 0, 0);
		if (conn)
			conn->timeouts++;
		break;
	case BPF_SOCK_OPS_STATE_CB:
		if (skops->args[1] == MATCP_TCP_CLOSE)
			matcp_end(sk, st);
		break;
	}
	return 1;
}
