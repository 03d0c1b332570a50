/* dt_exec.h — the contract of the exec follower (bpf-lib/exec.bpf.c): the one program a session
 * attaches to the sched_process_exec raw tracepoint, whatever follows exec. A process's code
 * changes at exec, under the same pid, so two things must happen at the moment it does, before
 * the new image records anything:
 *
 *   1. The address-space generation (dt_abi.h, DT_GEN_SHIFT) of the process goes up by one in
 *      `exec_gen`, and the process is forgotten in `pids_seen`, so the first user address the new
 *      image records sends DT_EV_PID_SEEN at once (generated code: codegen/cg_expr.c).
 *   2. When the DWARF walker is loaded (unwind/), the process's mapping table in `procs` is
 *      emptied and DT_REQ_EXEC is sent on `requests`, so unwind/ reads the new image's
 *      mappings; with DT_EXEC_FOLLOW_ALL in `config` (system-wide tracing) a process the walker
 *      does not know yet gets an empty table too, so its library mmaps are followed, and so does
 *      one in config's cgroup (a -c command's processes), which is held besides (below).
 *
 * Part 2 needs the walker's procs, requests and wstats, but the walker's object loads only once a
 * program uses ustack_dwarf — possibly long after the follower was attached (a REPL). So the
 * follower's object owns those three maps (declared once in walker_maps.bpf.h) and unwind/ makes
 * the walker's object reuse them. Until the walker fills procs, part 2 finds nothing and returns:
 * a session that never uses ustack_dwarf pays for small maps and a few instructions per exec.
 * (Slots filled later through map-in-map arrays were the other road: each update of such an array
 * from userspace waits for an RCU grace period, tens of milliseconds of start-up.)
 *
 * HOLDING. Tables are built asynchronously, and a process that starts and calls the traced
 * function within a millisecond (a shell's child) would be sampled before its tables exist, and
 * exit before its maps are read for symbols. So every process of config's cgroup (set by unwind/
 * for a -c command, whose processes it then serves) is stopped where its mappings change — at
 * exec here, and after each executable mmap (the walker's mmap follower: ld.so loading every
 * library, dlopen) — until userspace has read them: the follower sends SIGSTOP to it, then the
 * request with DT_REQ_HELD, and userspace sends SIGCONT once it has served it. The signal goes
 * first (at once: the followers run in process context with interrupts on) so that no SIGCONT
 * can come before it; a SIGCONT that comes before the process has stopped cancels the stop, as
 * it should. A request the ring buffer cannot take is followed by SIGCONT at once, so a process
 * is never left stopped with no request out; requests still in the ring buffer when unwind/
 * lets go are consumed only to continue the held ones.
 *
 * Maps found by name (unwind/exec.c): exec_gen, pids_seen, procs, requests, wstats, config (the
 * last four shared with the walker), zeroproc. Program: dt_follow_exec.
 */
#ifndef DT_EXEC_H
#define DT_EXEC_H

#include "dt_walker.h"

/* exec_gen: LRU_HASH tgid (__u32) -> generation (__u32), absent = 0. LRU so that a long session
 * never stops counting: the entry evicted first is that of a process that exec'd long ago, most
 * likely gone. */
#define DT_EXEC_GEN_ENTRIES 65536

/* pids_seen: LRU_HASH tgid (__u32) -> when the process last sent DT_EV_PID_SEEN (__u64 ns). LRU:
 * a long session sees more processes than fit; a forgotten one is only noted again. */
#define DT_PIDS_SEEN_ENTRIES 16384

/* config: ARRAY[1] of struct dt_exec_config, set by unwind/. */
#define DT_EXEC_FOLLOW_ALL 1u /* system-wide: give every exec'ing process a table, not only
			       * those the walker knows */

struct dt_exec_config {
	__u32 flags;              /* DT_EXEC_FOLLOW_* */
	__u32 pad;
	__u64 cgroup;             /* a cgroup v2 id (0 = none): its processes get a table at exec
				   * and are held while they are read (HOLDING) */
};
DT_ABI_ASSERT(sizeof(struct dt_exec_config) == 16, "dt_exec_config");

/* The signals of a hold (the same numbers on x86-64 and arm64). */
#define DT_SIGCONT 18
#define DT_SIGSTOP 19

#endif
