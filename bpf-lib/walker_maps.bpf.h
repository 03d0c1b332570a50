/* walker_maps.bpf.h — the walker's maps that the exec follower writes too (procs, requests,
 * wstats; see dt_walker.h and dt_exec.h), and the two helpers both use on them. BPF C only:
 * walker.bpf.c and exec.bpf.c each include it, so the two objects declare these maps once and
 * alike; unwind/ makes the walker's object reuse the follower's instances (bpf_map__reuse_fd),
 * so one process table, one request ring buffer and one set of counters serve both. */
#ifndef DT_WALKER_MAPS_BPF_H
#define DT_WALKER_MAPS_BPF_H

#include "dt_walker.h"

/* Not preallocated: the exec follower exists for every session that records user addresses,
 * most of which never load the walker, and a preallocated table would cost them 8 MB and a
 * millisecond for nothing; a -p or -c session fills one entry. (Hash maps that allocate on
 * insert are allowed in tracing programs since Linux 6.1, as frames_deep already needs.) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DT_MAX_PROCS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct dt_proc_maps);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, DT_UNWIND_REQ_RINGBUF_SIZE);
} requests SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DT_WSTAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} wstats SEC(".maps");

static __always_inline void stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&wstats, &which);

	if (v)
		(*v)++;
}

/* Sends a request to unwind/ (enum dt_unwind_req_kind), counting it as sent or lost. */
static __always_inline void req_out(__u32 kind, __u32 tgid, __u64 pc)
{
	struct dt_unwind_req req = {.kind = kind, .pid = tgid, .pc = pc};

	if (bpf_ringbuf_output(&requests, &req, sizeof(req), 0) < 0)
		stat_inc(DT_WSTAT_REQ_LOST);
	else
		stat_inc(DT_WSTAT_REQ_SENT);
}

#endif
