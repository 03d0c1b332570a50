/* execgen.c — keeps stacks correct across exec. A user address is only meaningful together with
 * the image it was recorded in, and exec replaces the image under the same pid: so every process
 * has a generation (a u32 in a BPF hash keyed by tgid, absent = 0), bumped by a tiny program on the
 * sched_process_exec raw tracepoint, and generated code stores the current generation in each
 * stack and usym it records (dt_abi.h: DT_GEN_SHIFT). The symbolizer snapshots /proc/PID/maps per
 * (pid, generation) and resolves every address against its own generation's snapshot.
 *
 * The program is a dozen instructions written here by hand rather than generated through LLVM:
 * it does not depend on the script, it must exist before the first exec it has to see (the -c
 * command execs right after the programs attach), and it is the same for every session. The same
 * program also deletes the pid from the pids-seen map, so the first record of the new image sends
 * DT_EV_PID_SEEN at once instead of after the note interval. */
#include "runtime/execgen_internal.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <unistd.h>

/* Processes that exec during one session; LRU so that a long session never stops counting (the
 * entry evicted first is that of a process that exec'd long ago, most likely gone). */
#define EXECGEN_ENTRIES 65536

static struct bpf_insn ins(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	return (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src, .off = off,
				  .imm = imm };
}

/* ld_imm64 of a map fd: two instructions. */
static void ld_map(struct bpf_insn *p, int reg, int fd)
{
	p[0] = ins(BPF_LD | BPF_DW | BPF_IMM, reg, BPF_PSEUDO_MAP_FD, 0, fd);
	p[1] = ins(0, 0, 0, 0, 0);
}

/* r2 = r10 + off: a pointer to a stack slot. */
static void stack_ptr(struct bpf_insn *p, int reg, int16_t off)
{
	p[0] = ins(BPF_ALU64 | BPF_MOV | BPF_X, reg, BPF_REG_10, 0, 0);
	p[1] = ins(BPF_ALU64 | BPF_ADD | BPF_K, reg, 0, 0, off);
}

static size_t build(struct bpf_insn *p, int map_fd, int seen_fd)
{
	size_t n = 0;

	/* key = tgid, at fp-4 */
	p[n++] = ins(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_pid_tgid);
	p[n++] = ins(BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_0, 0, 0, 32);
	p[n++] = ins(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_0, -4, 0);
	/* v = lookup(gen, &key); if (v) atomically ++*v; else insert 1 */
	ld_map(&p[n], BPF_REG_1, map_fd);
	n += 2;
	stack_ptr(&p[n], BPF_REG_2, -4);
	n += 2;
	p[n++] = ins(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
	p[n++] = ins(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 3, 0);
	p[n++] = ins(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 1);
	p[n++] = ins(BPF_STX | BPF_ATOMIC | BPF_W, BPF_REG_0, BPF_REG_1, 0, BPF_ADD);
	p[n++] = ins(BPF_JMP | BPF_JA, 0, 0, 9, 0);
	/* Two CPUs cannot exec the same process at once, so a plain insert cannot lose a bump. */
	p[n++] = ins(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -8, 1);
	ld_map(&p[n], BPF_REG_1, map_fd);
	n += 2;
	stack_ptr(&p[n], BPF_REG_2, -4);
	n += 2;
	stack_ptr(&p[n], BPF_REG_3, -8);
	n += 2;
	p[n++] = ins(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, BPF_ANY);
	p[n++] = ins(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_update_elem);
	/* forget the pid in pids-seen: the new image is noted on its first record */
	if (seen_fd >= 0) {
		ld_map(&p[n], BPF_REG_1, seen_fd);
		n += 2;
		stack_ptr(&p[n], BPF_REG_2, -4);
		n += 2;
		p[n++] = ins(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_delete_elem);
	}
	p[n++] = ins(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
	p[n++] = ins(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return n;
}

int dt_execgen_open(int seen_fd, int *map_fd, int *link_fd)
{
	struct bpf_insn prog[32];
	int mfd, pfd = -1, lfd, rc;

	mfd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "exec_gen", 4, 4, EXECGEN_ENTRIES, NULL);
	if (mfd < 0)
		return -errno;
	size_t n = build(prog, mfd, seen_fd);
	pfd = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "dt_exec_gen", "GPL", prog, n, NULL);
	if (pfd < 0) {
		rc = -errno;
		goto fail;
	}
	lfd = bpf_raw_tracepoint_open("sched_process_exec", pfd);
	if (lfd < 0) {
		rc = -errno;
		goto fail;
	}
	/* The link holds the program. */
	close(pfd);
	*map_fd = mfd;
	*link_fd = lfd;
	return 0;
fail:
	if (pfd >= 0)
		close(pfd);
	close(mfd);
	return rc;
}

uint32_t dt_execgen_get(int map_fd, uint32_t pid)
{
	uint32_t gen = 0;

	if (map_fd >= 0 && bpf_map_lookup_elem(map_fd, &pid, &gen))
		gen = 0;
	return gen;
}
