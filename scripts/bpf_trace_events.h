/* SPDX-License-Identifier: GPL-2.0 */
/* What the event tracers in scripts/ share on the kernel side: the ring buffer their events
 * go out through, and the count of events it had no room for (scripts/bpf_trace.py reads
 * both; a tracer refuses a trace with any event lost). Include after vmlinux.h and
 * bpf_helpers.h. */
#ifndef BPF_TRACE_EVENTS_H
#define BPF_TRACE_EVENTS_H

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} lost SEC(".maps");

/* Sends one event of `size` bytes, or counts it lost. */
static __always_inline void emit_event(const void *event, u64 size)
{
	if (bpf_ringbuf_output(&events, (void *)event, size, 0) != 0) {
		u32 zero = 0;
		u64 *n = bpf_map_lookup_elem(&lost, &zero);

		if (n)
			__sync_fetch_and_add(n, 1);
	}
}

#endif
