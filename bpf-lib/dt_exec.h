/* dt_exec.h — the contract of the exec follower (bpf-lib/exec.bpf.c): the one program a session
 * attaches to the sched_process_exec raw tracepoint, whatever follows exec. A process's code
 * changes at exec, under the same pid, so two things must happen at the moment it does, before
 * the new image records anything:
 *
 *   1. The address-space generation (dt_abi.h, DT_GEN_SHIFT) of the process goes up by one in
 *      `exec_gen`, and the process is forgotten in `pids_seen`, so the first user address the new
 *      image records sends DT_EV_PID_SEEN at once (generated code: codegen/cg_expr.c).
 *   2. When the DWARF walker is loaded (unwind/), the process's mapping table in the walker's
 *      `procs` is emptied and DT_REQ_EXEC is sent on the walker's `requests`, so unwind/ reads the
 *      new image's mappings; with DT_EXEC_FOLLOW_ALL in `config` (system-wide tracing) a process
 *      the walker does not know yet gets an empty table too, so its library mmaps are followed.
 *
 * Part 2 needs the walker's maps, which exist only once a program uses ustack_dwarf — possibly
 * long after the follower was attached (a REPL). So the follower reaches them through three
 * one-slot map-in-map arrays that unwind/ fills when it loads the walker: `walker_procs` (HASH
 * tgid -> struct dt_proc_maps), `walker_requests` (RINGBUF of struct dt_unwind_req) and
 * `walker_stats` (PERCPU_ARRAY of enum dt_walker_stat counters: REQ_SENT, REQ_LOST). While a slot
 * is empty, part 2 does nothing and the follower costs two small maps and a dozen instructions.
 *
 * Maps found by name (unwind/exec.c): exec_gen, pids_seen, walker_procs, walker_requests,
 * walker_stats, config, zeroproc. Program: dt_follow_exec.
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

/* config: ARRAY[1] of __u32 flags, set by unwind/. */
#define DT_EXEC_FOLLOW_ALL 1u /* system-wide: give every exec'ing process a table, not only
			       * those the walker knows */

#endif
