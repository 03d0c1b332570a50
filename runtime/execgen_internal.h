/* execgen_internal.h — the address-space generation map and the program that bumps it at exec
 * (see DT_GEN_SHIFT in bpf-lib/dt_abi.h). The session creates them when generated code first asks
 * for DT_AUX_EXEC_GEN; the symbolizer reads the map to tell which image a snapshot belongs to. */
#ifndef DT_EXECGEN_INTERNAL_H
#define DT_EXECGEN_INTERNAL_H

#include <stdint.h>

/* Creates the generation map (tgid u32 -> generation u32) and attaches, on the raw tracepoint
 * sched_process_exec, a program that bumps the exec'ing process's generation and forgets it in
 * `seen_fd` (DT_AUX_PIDS_SEEN, or -1), so its next user address notes the new image at once.
 * 0 with *map_fd and *link_fd set, or -errno (nothing left open). */
int dt_execgen_open(int seen_fd, int *map_fd, int *link_fd);

/* The current generation of pid in the map (0 when absent or map_fd < 0). */
uint32_t dt_execgen_get(int map_fd, uint32_t pid);

#endif
