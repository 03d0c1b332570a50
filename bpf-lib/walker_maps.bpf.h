/* walker_maps.bpf.h — the walker's maps that the exec follower writes too (procs, requests,
 * wstats, config; see dt_walker.h and dt_exec.h), and the helpers both use on them. BPF C only:
 * walker.bpf.c and exec.bpf.c each include it, so the two objects declare these maps once and
 * alike; unwind/ makes the walker's object reuse the follower's instances (bpf_map__reuse_fd),
 * so one process table, one request ring buffer and one set of counters serve both. */
#ifndef DT_WALKER_MAPS_BPF_H
#define DT_WALKER_MAPS_BPF_H

#include <stdbool.h>

#include "dt_exec.h"

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

/* Written by unwind/ (dt_exec.h): which processes the followers adopt and hold. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_exec_config);
} config SEC(".maps");

static __always_inline void stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&wstats, &which);

	if (v)
		(*v)++;
}

/* Sends a request to unwind/ (enum dt_unwind_req_kind), counting it as sent or lost: 0 or -1. */
static __always_inline int req_out(__u32 kind, __u32 tgid, __u64 pc)
{
	struct dt_unwind_req req = {.kind = kind, .pid = tgid, .pc = pc};

	if (bpf_ringbuf_output(&requests, &req, sizeof(req), 0) < 0) {
		stat_inc(DT_WSTAT_REQ_LOST);
		return -1;
	}
	stat_inc(DT_WSTAT_REQ_SENT);
	return 0;
}

/* Whether the current process is in config's cgroup: adopted at exec, and held. */
static __always_inline bool in_held_cgroup(void)
{
	__u32 zero = 0;
	struct dt_exec_config *cfg = bpf_map_lookup_elem(&config, &zero);

	return cfg && cfg->cgroup && bpf_get_current_cgroup_id() == cfg->cgroup;
}

/* A follower's request about the current process, which is held until userspace has served it
 * when it is in config's cgroup (dt_exec.h, HOLDING). */
static __always_inline void req_follow(__u32 kind, __u32 tgid, __u64 pc)
{
	if (!in_held_cgroup()) {
		req_out(kind, tgid, pc);
		return;
	}
	bpf_send_signal(DT_SIGSTOP);
	if (req_out(kind | DT_REQ_HELD, tgid, pc) < 0)
		bpf_send_signal(DT_SIGCONT);
}

#endif
