// SPDX-License-Identifier: GPL-2.0
/* exec.bpf.c — the exec follower (contract: dt_exec.h): one raw tracepoint program on
 * sched_process_exec that does, in the exec'ing task before its new image runs, what the session
 * needs (a new address-space generation, the pid forgotten in pids-seen) and what the walker
 * needs once it is loaded (an empty mapping table and a request for the new one). One program,
 * so a session follows exec once however many parts care. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "dt_exec.h"
#include "walker_maps.bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, DT_EXEC_GEN_ENTRIES);
	__type(key, __u32);
	__type(value, __u32);
} exec_gen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, DT_PIDS_SEEN_ENTRIES);
	__type(key, __u32);
	__type(value, __u64);
} pids_seen SEC(".maps");

/* Never written: the empty mapping table copied into procs (8 KB, too big for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dt_proc_maps);
} zeroproc SEC(".maps");

/* Part 1: a new generation. Two CPUs cannot exec the same process at once, so a plain insert
 * of generation 1 cannot lose a concurrent bump. */
static __always_inline void new_generation(__u32 tgid)
{
	__u32 one = 1, *gen = bpf_map_lookup_elem(&exec_gen, &tgid);

	if (gen)
		__sync_fetch_and_add(gen, 1);
	else
		bpf_map_update_elem(&exec_gen, &tgid, &one, BPF_ANY);
	bpf_map_delete_elem(&pids_seen, &tgid);
}

/* Part 2: the walker's bookkeeping. Without the walker procs stays empty and config unset, so
 * this returns at once. The old mappings are gone. An empty entry (rather than none)
 * keeps the process "known", so its executable mmaps (ld.so loading libc) are followed before
 * userspace has even read the new image. */
static __always_inline void walker_exec(__u32 tgid)
{
	struct dt_proc_maps *pm = bpf_map_lookup_elem(&procs, &tgid), *empty;
	struct dt_exec_config *cfg;
	__u32 zero = 0;

	if (pm) {
		pm->n = 0;
	} else {
		/* Unknown: adopted system-wide, or when it is one of a -c command's. */
		cfg = bpf_map_lookup_elem(&config, &zero);
		empty = bpf_map_lookup_elem(&zeroproc, &zero);
		if (!cfg || !empty || (!(cfg->flags & DT_EXEC_FOLLOW_ALL) && !in_held_cgroup()))
			return;
		if (bpf_map_update_elem(&procs, &tgid, empty, BPF_NOEXIST) < 0)
			return; /* full: the walker's request will come instead */
	}
	req_follow(DT_REQ_EXEC, tgid, 0);
}

SEC("raw_tracepoint/sched_process_exec")
int dt_follow_exec(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	new_generation(tgid);
	walker_exec(tgid);
	return 0;
}
