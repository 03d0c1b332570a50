/* test_unwind_walker.c — the DWARF walker end to end, before the language exists (root + BPF):
 * builds tests/unwind-targets/uw_target.c without frame pointers, loads the walker through
 * dt_unwinder, attaches a hand-assembled perf_event entry program (cpu-clock, target pid only) that
 * tail-calls the walker, and a continuation that records every dt_stack_ref it is handed. Then it
 * asserts the exact symbol order of the sampled stacks (perf's dwarf-unwind test, in BPF): through
 * a libc qsort callback, 500-deep recursion (truncated at the depth limit), a signal handler, a
 * function without CFI (frame-pointer fallback), from uprobe and tracepoint events, before and
 * after the process's tables exist; the exec/exit followers with shared objects; and the exec
 * follower's generations with and without the walker. */
#include "tests/unit/t.h"
#include "common/common.h"
#include "unwind/unwind.h"
#include "unwind/unwind_internal.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* ---------------------------------------------------------------- a tiny assembler */

#define INSN(c, d, s, o, i) ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define MOV64_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV64_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD64_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define RSH64_IMM(d, i) INSN(BPF_ALU64 | BPF_RSH | BPF_K, d, 0, 0, i)
#define ST_W(d, o, i) INSN(BPF_ST | BPF_MEM | BPF_W, d, 0, o, i)
#define ST_DW(d, o, i) INSN(BPF_ST | BPF_MEM | BPF_DW, d, 0, o, i)
#define JNE_IMM(d, i, o) INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, i)
#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define LD_MAP(d, fd) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), INSN(0, 0, 0, 0, 0)

static enum bpf_prog_type prog_type = BPF_PROG_TYPE_PERF_EVENT;

static int load_prog(const struct bpf_insn *insns, size_t n, const char *name)
{
	static char log[1 << 16];
	LIBBPF_OPTS(bpf_prog_load_opts, o, .log_buf = log, .log_size = sizeof(log), .log_level = 1);
	int fd = bpf_prog_load(prog_type, name, "GPL", insns, n, &o);

	if (fd < 0)
		fprintf(stderr, "%s: %s\n%s\n", name, strerror(errno), log);
	return fd;
}

/* entry: if (tgid == pid) { st = wstate[0]; st->cont_slot = 0; st->max_depth = depth;
 * tail_call(ctx, wprogs, 0); } */
static int load_entry(int wstate_fd, int wprogs_fd, uint32_t pid, uint32_t depth)
{
	struct bpf_insn p[] = {
		MOV64_REG(6, 1),
		CALL(BPF_FUNC_get_current_pid_tgid),
		RSH64_IMM(0, 32),
		JNE_IMM(0, (int)pid, 14),
		ST_W(10, -4, 0),
		LD_MAP(1, wstate_fd),
		MOV64_REG(2, 10),
		ADD64_IMM(2, -4),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_IMM(0, 0, 7),
		ST_W(0, 0, 0),
		ST_W(0, 4, (int)depth),
		MOV64_REG(1, 6),
		LD_MAP(2, wprogs_fd),
		MOV64_IMM(3, DT_WALKER_SLOT_START),
		CALL(BPF_FUNC_tail_call),
		MOV64_IMM(0, 0),
		EXIT(),
	};
	return load_prog(p, DT_ARRAY_SIZE(p), "uw_entry");
}

/* continuation: st = wstate[0]; seen[st->result] = 1 */
static int load_cont(int wstate_fd, int seen_fd)
{
	struct bpf_insn p[] = {
		ST_W(10, -4, 0),
		LD_MAP(1, wstate_fd),
		MOV64_REG(2, 10),
		ADD64_IMM(2, -4),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_IMM(0, 0, 9),
		MOV64_REG(2, 0),
		ADD64_IMM(2, 8),
		ST_DW(10, -16, 1),
		LD_MAP(1, seen_fd),
		MOV64_REG(3, 10),
		ADD64_IMM(3, -16),
		MOV64_IMM(4, BPF_ANY),
		CALL(BPF_FUNC_map_update_elem),
		MOV64_IMM(0, 0),
		EXIT(),
	};
	return load_prog(p, DT_ARRAY_SIZE(p), "uw_cont");
}

/* ---------------------------------------------------------------- symbols of the target */

typedef struct sym {
	uint64_t addr;
	char name[64];
} sym;

static sym syms[4096];
static int nsyms;

static int cmp_sym(const void *a, const void *b)
{
	const sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void load_syms(const char *bin)
{
	char cmd[512], line[256], type;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm %s", bin);
	f = popen(cmd, "r");
	nsyms = 0;
	while (f && fgets(line, sizeof(line), f) && nsyms < (int)DT_ARRAY_SIZE(syms)) {
		unsigned long long a;

		if (sscanf(line, "%llx %c %63s", &a, &type, syms[nsyms].name) == 3 &&
		    (type == 'T' || type == 't')) {
			syms[nsyms].addr = a;
			nsyms++;
		}
	}
	if (f)
		pclose(f);
	qsort(syms, nsyms, sizeof(*syms), cmp_sym);
}

/* The target's function containing pc (a non-PIE binary: link addresses are run addresses), or
 * "?" for pcs outside it (libc). */
static const char *symname(uint64_t pc)
{
	int i;

	if (nsyms == 0 || pc < syms[0].addr || pc >= 0x1000000)
		return "?";
	for (i = nsyms - 1; i >= 0; i--)
		if (syms[i].addr <= pc)
			return syms[i].name;
	return "?";
}

static uint64_t symaddr(const char *name)
{
	int i;

	for (i = 0; i < nsyms; i++)
		if (!strcmp(syms[i].name, name))
			return syms[i].addr;
	return 0;
}

/* "uw_leaf uw_cmp ? ? uw_f3 …": one word per frame, libc runs collapsed to one "?". */
static void render(const uint64_t *pcs, int n, char *out, size_t len)
{
	size_t o = 0;
	int i;

	out[0] = 0;
	for (i = 0; i < n; i++) {
		const char *s = symname(i ? pcs[i] - 1 : pcs[i]);

		if (!strcmp(s, "?") && o >= 2 && !strcmp(out + o - 2, " ?"))
			continue;
		o += snprintf(out + o, len - o, "%s%s", o ? " " : "", s);
		if (o >= len)
			break;
	}
}

/* ---------------------------------------------------------------- harness */

static char bindir[] = "/tmp/dt_unwind_test.XXXXXX";
static char target[256], lib[256];

static int build_target(void)
{
	char cmd[1024];

	if (target[0])
		return 0;
	if (!mkdtemp(bindir))
		return -errno;
	snprintf(target, sizeof(target), "%s/uw_target", bindir);
	snprintf(cmd, sizeof(cmd),
		 "cc -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -no-pie -o %s "
		 "tests/unwind-targets/uw_target.c", target);
	if (system(cmd) != 0) {
		target[0] = 0;
		return -EINVAL;
	}
	snprintf(lib, sizeof(lib), "%s/uw_lib.so", bindir);
	snprintf(cmd, sizeof(cmd),
		 "cc -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -shared -fPIC -o %s "
		 "tests/unwind-targets/uw_lib.c", lib);
	if (system(cmd) != 0)
		return -EINVAL;
	load_syms(target);
	return 0;
}

/* Starts the target in `mode` and returns its pid once it printed "ready". */
static pid_t start_target(const char *mode)
{
	char line[64];
	int pfd[2];
	pid_t pid;
	FILE *f;

	if (pipe(pfd) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		cpu_set_t one;

		/* Pinned: uprobe and tracepoint events are opened on CPU 0 for this pid. */
		CPU_ZERO(&one);
		CPU_SET(0, &one);
		sched_setaffinity(0, sizeof(one), &one);
		dup2(pfd[1], 1);
		close(pfd[0]);
		execl(target, target, mode, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "ready", 5))
			break;
	if (f)
		fclose(f);
	return pid;
}

typedef struct result {
	char stacks[8][4096];
	uint32_t flags[8];
	int nframes[8];
	int n;
} result;

enum how { CPU_CLOCK, UPROBE_CMP, TP_GETPPID };

/* When set, sample_how() uses this unwinder (perf_event walker loaded) instead of a new one. */
static dt_unwinder *given_u;

static int read_int_file(const char *path)
{
	char *buf;
	size_t len;
	int v;

	if (dt_read_file(path, &buf, &len) < 0)
		return -1;
	v = atoi(buf);
	free(buf);
	return v;
}

/* The perf event for `how`: cpu-clock of the pid, a uprobe at uw_cmp's entry, or the
 * sys_enter_getppid tracepoint of the pid. */
static int open_event(enum how how, pid_t pid)
{
	struct perf_event_attr attr = {.size = sizeof(attr), .sample_period = 1};
	dt_elf *e;
	uint64_t off;

	switch (how) {
	case CPU_CLOCK:
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_CPU_CLOCK;
		attr.sample_period = 1000000; /* 1 ms */
		break;
	case UPROBE_CMP:
		attr.type = (uint32_t)read_int_file("/sys/bus/event_source/devices/uprobe/type");
		attr.config1 = (uint64_t)(uintptr_t)target;
		e = dt_elf_open(NULL, target);
		if (e && dt_elf_vaddr_to_offset(e, symaddr("uw_cmp"), &off) == 0)
			attr.config2 = off;
		dt_elf_put(e);
		break;
	case TP_GETPPID:
		attr.type = PERF_TYPE_TRACEPOINT;
		attr.config = (uint64_t)read_int_file(
			"/sys/kernel/tracing/events/syscalls/sys_enter_getppid/id");
		break;
	}
	return (int)syscall(SYS_perf_event_open, &attr, pid, how == CPU_CLOCK ? -1 : 0, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

/* Samples `pid` for 300 ms and collects the distinct stacks. Uprobe and tracepoint events are
 * opened on CPU 0 only, where start_target pinned the target. */
/* CPU time the task has run (ns), from /proc/PID/schedstat; 0 when it cannot be read. */
static uint64_t task_cpu_ns(pid_t pid)
{
	char path[64];
	unsigned long long ns = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}

static int sample_how(enum how how, pid_t pid, uint32_t depth, bool pre_add, result *res)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo);
	dt_unwinder_opts uo = {.sz = sizeof(uo)};
	int seen_fd = -1, entry_fd = -1, cont_fd = -1, pe_fd = -1, ret = -1, i;
	struct dt_stack_ref key, next;
	dt_unwinder *u;
	uint32_t slot = 0;

	memset(res, 0, sizeof(*res));
	prog_type = how == CPU_CLOCK ? BPF_PROG_TYPE_PERF_EVENT :
		    how == UPROBE_CMP ? BPF_PROG_TYPE_KPROBE : BPF_PROG_TYPE_TRACEPOINT;
	uo.ptypes = 1u << dt_walker_ptype_of(prog_type);
	u = given_u ? given_u : dt_unwinder_new(&uo);
	if (!u) {
		fprintf(stderr, "dt_unwinder_new: %s\n", strerror(errno));
		return -1;
	}
	if (pre_add && dt_unwinder_add_pid(u, (uint32_t)pid) < 0)
		goto out;
	seen_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "uw_seen", sizeof(struct dt_stack_ref), 8, 64, &mo);
	entry_fd = load_entry(dt_unwinder_state_fd(u, prog_type),
			      dt_unwinder_walker_progs_fd(u, prog_type), (uint32_t)pid, depth);
	cont_fd = load_cont(dt_unwinder_state_fd(u, prog_type), seen_fd);
	if (seen_fd < 0 || entry_fd < 0 || cont_fd < 0)
		goto out;
	if (bpf_map_update_elem(dt_unwinder_cont_progs_fd(u, prog_type), &slot, &cont_fd,
				BPF_ANY) < 0)
		goto out;
	pe_fd = open_event(how, pid);
	if (pe_fd < 0 || ioctl(pe_fd, PERF_EVENT_IOC_SET_BPF, entry_fd) < 0 ||
	    ioctl(pe_fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		fprintf(stderr, "perf_event: %s\n", strerror(errno));
		goto out;
	}
	/* At least 300 ms of the target's own CPU time, not of wall time: on a loaded machine a
	 * wall-time window can pass with no sample at all (10 s at most). */
	uint64_t cpu0 = task_cpu_ns(pid);
	for (i = 0; i < 1000; i++) {
		usleep(10000);
		dt_unwinder_process(u);
		if (i >= 29 && task_cpu_ns(pid) - cpu0 >= 300000000ull)
			break;
	}
	ioctl(pe_fd, PERF_EVENT_IOC_DISABLE, 0);
	for (ret = bpf_map_get_next_key(seen_fd, NULL, &key); ret == 0 && res->n < 8;
	     ret = bpf_map_get_next_key(seen_fd, &key, &next), key = next) {
		uint64_t pcs[DT_WALKER_MAX_FRAMES];
		int n = dt_unwinder_frames(u, &key, pcs, DT_WALKER_MAX_FRAMES);

		struct dt_frames_deep fr;

		render(pcs, n, res->stacks[res->n], sizeof(res->stacks[0]));
		/* The stack ref carries the status only; the DT_UNWIND_F_* bits are stored with the
		 * frames (these stacks are short: the frames map, not frames_deep). */
		res->flags[res->n] = key.flags;
		if (!(key.id & DT_FRAMES_KEY_DEEP) &&
		    bpf_map_lookup_elem(dt_unwinder_frames_fd(u), &key.id, &fr) == 0)
			res->flags[res->n] = fr.flags;
		res->nframes[res->n] = n;
		res->n++;
	}
	ret = 0;
	if (getenv("DT_TEST_VERBOSE")) {
		for (i = 0; i < res->n; i++)
			fprintf(stderr, "  [%s, %d frames] %s\n", dt_unwind_status_str(res->flags[i]),
				res->nframes[i], res->stacks[i]);
		dt_unwinder_print_stats(u, stderr);
	}
out:
	if (pe_fd >= 0)
		close(pe_fd);
	if (entry_fd >= 0)
		close(entry_fd);
	if (cont_fd >= 0)
		close(cont_fd);
	if (seen_fd >= 0)
		close(seen_fd);
	if (u != given_u)
		dt_unwinder_free(u);
	return ret;
}

static int sample(pid_t pid, uint32_t depth, bool pre_add, result *res)
{
	return sample_how(CPU_CLOCK, pid, depth, pre_add, res);
}

static void stop_target(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int find_stack(const result *r, const char *want, uint32_t status)
{
	int i;

	for (i = 0; i < r->n; i++)
		if (!strcmp(r->stacks[i], want) && (r->flags[i] & DT_UNWIND_STATUS_MASK) == status)
			return i;
	fprintf(stderr, "wanted [%s] %s; got %d stacks:\n", dt_unwind_status_str(status), want, r->n);
	for (i = 0; i < r->n; i++)
		fprintf(stderr, "  [%s] %s\n", dt_unwind_status_str(r->flags[i]), r->stacks[i]);
	return -1;
}

static void qsort_callback_stack(void)
{
	result r;
	pid_t pid;

	T_SKIP_UNLESS_ROOT();
	CHECK(build_target() == 0);
	pid = start_target("qsort");
	CHECK(pid > 0);
	CHECK(sample(pid, 0, true, &r) == 0);
	stop_target(pid);
	/* libc's qsort reaches the callback through msort internals: one "?" run. The outer "?" is
	 * __libc_start_call_main/__libc_start_main. */
	CHECK(find_stack(&r, "uw_leaf uw_cmp ? uw_f3 uw_f2 uw_f1 main ? _start",
			 DT_UNWIND_COMPLETE) >= 0);
}

static void recursion_truncated(void)
{
	char want[4096] = "uw_leaf";
	result r;
	pid_t pid;
	int i;

	T_SKIP_UNLESS_ROOT();
	CHECK(build_target() == 0);
	pid = start_target("recurse");
	CHECK(pid > 0);
	CHECK(sample(pid, 0, true, &r) == 0);
	stop_target(pid);
	for (i = 1; i < DT_WALKER_DEFAULT_DEPTH; i++)
		strcat(want, " uw_recurse");
	i = find_stack(&r, want, DT_UNWIND_TRUNCATED_DEPTH);
	CHECK(i >= 0);
	if (i >= 0)
		CHECK_EQ_INT(r.nframes[i], DT_WALKER_DEFAULT_DEPTH);
}

static void signal_frame(void)
{
	result r;
	pid_t pid;
	int i;

	T_SKIP_UNLESS_ROOT();
	CHECK(build_target() == 0);
	pid = start_target("signal");
	CHECK(pid > 0);
	CHECK(sample(pid, 0, true, &r) == 0);
	stop_target(pid);
	/* handler <- __restore_rt (libc) <- the interrupted uw_wait <- main. */
	i = find_stack(&r, "uw_leaf uw_handler ? uw_wait main ? _start", DT_UNWIND_COMPLETE);
	CHECK(i >= 0);
	if (i >= 0)
		CHECK(r.flags[i] & DT_UNWIND_F_SIGNAL);
}

/* Without dt_unwinder_add_pid the first samples have no tables: the walker records the first
 * frame, sends a request, and once served, later samples unwind completely. */
static void discovered_by_request(void)
{
	result r;
	pid_t pid;

	T_SKIP_UNLESS_ROOT();
	CHECK(build_target() == 0);
	pid = start_target("qsort");
	CHECK(pid > 0);
	CHECK(sample(pid, 0, false, &r) == 0);
	stop_target(pid);
	CHECK(find_stack(&r, "uw_leaf", DT_UNWIND_NO_TABLES) >= 0);
	CHECK(find_stack(&r, "uw_leaf uw_cmp ? uw_f3 uw_f2 uw_f1 main ? _start",
			 DT_UNWIND_COMPLETE) >= 0);
}

/* kprobe-type walker, ctx = the uprobe's user registers, first pc exactly at a function entry. */
static void uprobe_entry_stack(void)
{
	result r;
	pid_t pid;

	T_SKIP_UNLESS_ROOT();
	CHECK(build_target() == 0);
	pid = start_target("sortloop");
	CHECK(pid > 0);
	CHECK(sample_how(UPROBE_CMP, pid, 0, true, &r) == 0);
	stop_target(pid);
	CHECK(find_stack(&r, "uw_cmp ? uw_f3 uw_f2 uw_f1 main ? _start", DT_UNWIND_COMPLETE) >= 0);
}

/* tracepoint-type walker: the ctx has no registers; the walker takes task_pt_regs (user state at
 * the syscall), whose pc is in libc's getppid. */
static void tracepoint_task_regs(void)
{
	result r;
	pid_t pid;

	T_SKIP_UNLESS_ROOT();
	CHECK(build_target() == 0);
	pid = start_target("syscall");
	CHECK(pid > 0);
	CHECK(sample_how(TP_GETPPID, pid, 0, true, &r) == 0);
	stop_target(pid);
	CHECK(find_stack(&r, "? uw_sys main ? _start", DT_UNWIND_COMPLETE) >= 0);
}

/* A function without CFI between two with CFI: crossed with its frame pointer, flagged. */
static void frame_pointer_fallback(void)
{
	result r;
	pid_t pid;
	int i;

	T_SKIP_UNLESS_ROOT();
	CHECK(build_target() == 0);
	pid = start_target("nocfi");
	CHECK(pid > 0);
	CHECK(sample(pid, 0, true, &r) == 0);
	stop_target(pid);
	i = find_stack(&r, "uw_leaf uw_nocfi main ? _start", DT_UNWIND_COMPLETE);
	CHECK(i >= 0);
	if (i >= 0)
		CHECK(r.flags[i] & DT_UNWIND_F_FP_FALLBACK);
}

/* max_depth from the entry program is honoured. */
static void depth_limit(void)
{
	result r;
	pid_t pid;

	T_SKIP_UNLESS_ROOT();
	CHECK(build_target() == 0);
	pid = start_target("qsort");
	CHECK(pid > 0);
	CHECK(sample(pid, 3, true, &r) == 0);
	stop_target(pid);
	CHECK(find_stack(&r, "uw_leaf uw_cmp ?", DT_UNWIND_TRUNCATED_DEPTH) >= 0);
}

/* Serves requests for up to `ms` milliseconds, until `done` says so. */
static void serve(dt_unwinder *u, int ms, bool (*done)(dt_unwinder *))
{
	for (; ms > 0 && !done(u); ms -= 10) {
		usleep(10000);
		dt_unwinder_process(u);
	}
}

static bool served_one(dt_unwinder *u)
{
	dt_unwinder_stats st;

	dt_unwinder_get_stats(u, &st);
	return st.requests_served >= 1;
}

static bool no_procs(dt_unwinder *u)
{
	dt_unwinder_stats st;

	dt_unwinder_get_stats(u, &st);
	return st.procs == 0;
}

/* The exec and exit followers: a shell known to the unwinder execs the target (its tables are
 * rebuilt: the target's object appears, and the same exec program bumps its generation), two
 * processes share libc's object, and exits are noticed without any sample. */
static void exec_exit_and_sharing(void)
{
	dt_exec_follower_opts fo = {.sz = sizeof(fo)};
	dt_unwinder_opts uo = {.sz = sizeof(uo), .ptypes = 1u << DT_WPT_PERF_EVENT};
	dt_unwinder_stats a, b, c;
	dt_exec_follower *f;
	char cmd[512];
	dt_unwinder *u;
	pid_t sh, other;
	int pfd[2];

	T_SKIP_UNLESS_ROOT();
	CHECK(build_target() == 0);
	f = dt_exec_follower_new(&fo);
	CHECK(f != NULL);
	if (!f)
		return;
	uo.exec = f;
	u = dt_unwinder_new(&uo);
	CHECK(u != NULL);
	if (!u) {
		dt_exec_follower_free(f);
		return;
	}
	CHECK(pipe(pfd) == 0);
	snprintf(cmd, sizeof(cmd), "read x; exec %s qsort", target);
	sh = fork();
	if (sh == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(pfd[0], 0);
		dup2(devnull, 1);
		close(pfd[1]);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(pfd[0]);
	usleep(100000);
	CHECK_EQ_INT(dt_unwinder_add_pid(u, (uint32_t)sh), 0);
	dt_unwinder_get_stats(u, &a);
	CHECK_EQ_INT(a.procs, 1);
	CHECK(write(pfd[1], "go\n", 3) == 3);
	close(pfd[1]);
	serve(u, 2000, served_one);
	dt_unwinder_get_stats(u, &b);
	CHECK(b.requests_served >= 1);
	CHECK_EQ_INT(b.procs, 1);
	CHECK_EQ_INT(b.objects, a.objects + 1); /* the target joins sh, libc, ld.so, vdso */
	CHECK_EQ_INT(dt_exec_follower_gen(f, (uint32_t)sh), 2); /* sh, then the target */

	other = start_target("qsort");
	CHECK_EQ_INT(dt_unwinder_add_pid(u, (uint32_t)other), 0);
	dt_unwinder_get_stats(u, &c);
	CHECK_EQ_INT(c.procs, 2);
	CHECK_EQ_INT(c.objects, b.objects); /* everything the second process maps is shared */
	CHECK_EQ_INT(c.rows, b.rows);

	stop_target(sh);
	stop_target(other);
	serve(u, 2000, no_procs);
	dt_unwinder_get_stats(u, &c);
	CHECK_EQ_INT(c.procs, 0);
	CHECK_EQ_INT(dt_unwinder_add_pid(u, (uint32_t)other), -ESRCH);
	dt_unwinder_free(u);
	dt_exec_follower_free(f);
}

/* Forks a child that, once a byte is written to *go, runs sh -c "exec /bin/true": two execs of
 * dynamically linked programs. Its pid, or -1. */
static pid_t fork_two_execs(int *go)
{
	int pfd[2];
	pid_t pid;

	if (pipe(pfd) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		char c;

		close(pfd[1]);
		if (read(pfd[0], &c, 1) != 1)
			_exit(126);
		execl("/bin/sh", "sh", "-c", "exec /bin/true", (char *)NULL);
		_exit(127);
	}
	close(pfd[0]);
	*go = pfd[1];
	return pid;
}

/* The exec follower without a walker: each exec bumps the process's generation (a process that
 * never exec'd is generation 0) and forgets it in pids-seen, so its new image is noted anew. */
static void exec_generations_without_walker(void)
{
	dt_exec_follower_opts fo = {.sz = sizeof(fo)};
	uint64_t when = 1;
	dt_exec_follower *f;
	uint32_t pid;
	pid_t child;
	int go, status;

	T_SKIP_UNLESS_ROOT();
	f = dt_exec_follower_new(&fo);
	CHECK(f != NULL);
	if (!f)
		return;
	child = fork_two_execs(&go);
	CHECK(child > 0);
	pid = (uint32_t)child;
	CHECK_EQ_INT(dt_exec_follower_gen(f, pid), 0);
	CHECK_EQ_INT(bpf_map_update_elem(dt_exec_follower_seen_fd(f), &pid, &when, BPF_ANY), 0);
	CHECK(write(go, "g", 1) == 1);
	close(go);
	CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	CHECK_EQ_INT(dt_exec_follower_gen(f, pid), 2);
	CHECK(bpf_map_lookup_elem(dt_exec_follower_seen_fd(f), &pid, &when) < 0);
	CHECK_EQ_INT(dt_exec_follower_gen(f, (uint32_t)getpid()), 0);
	dt_exec_follower_free(f);
}

/* The cgroup v2 directory made for the held-process test, or "" when there is no cgroup v2. */
static void cgroup_make(char *dir, size_t n, uint64_t *id)
{
	char line[PATH_MAX + 128], mnt[1024], type[64];
	FILE *m = fopen("/proc/self/mounts", "re");
	struct stat st;

	dir[0] = 0;
	while (m && fgets(line, sizeof(line), m))
		if (sscanf(line, "%*s %1023s %63s", mnt, type) == 2 && !strcmp(type, "cgroup2")) {
			snprintf(dir, n, "%s/dt-unit-held.%d", mnt, (int)getpid());
			break;
		}
	if (m)
		fclose(m);
	if (dir[0] && (mkdir(dir, 0755) < 0 || stat(dir, &st) < 0))
		dir[0] = 0;
	*id = dir[0] ? (uint64_t)st.st_ino : 0;
}

/* fork_two_execs, in the cgroup. */
static pid_t cgroup_start(const char *dir, int *go)
{
	char procs[PATH_MAX + 32];
	pid_t pid = fork_two_execs(go);
	FILE *f;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	f = pid > 0 ? fopen(procs, "we") : NULL;
	if (!f || fprintf(f, "%d\n", (int)pid) < 0 || fclose(f) != 0)
		return -1;
	return pid;
}

/* Waits up to 2 s for pid to stop (or end); returns waitpid's status, or -1. */
static int wait_change(pid_t pid)
{
	int st;

	for (int ms = 0; ms < 2000; ms++) {
		if (waitpid(pid, &st, WNOHANG | WUNTRACED) == pid)
			return st;
		usleep(1000);
	}
	return -1;
}

static int held_calls;
static uint32_t held_pid;

static void on_held(void *ctx, uint32_t pid)
{
	(void)ctx;
	held_calls++;
	held_pid = pid;
}

/* A process of a followed cgroup stops at its exec and at each library ld.so maps until its
 * request is served (and the session is told then); one that is still held when the unwinder is
 * freed goes on. */
static void cgroup_processes_held_until_read(void)
{
	dt_exec_follower_opts fo = {.sz = sizeof(fo)};
	dt_unwinder_opts uo = {.sz = sizeof(uo), .held = on_held};
	char dir[PATH_MAX];
	dt_exec_follower *f;
	dt_unwinder *u;
	uint64_t id;
	int go, st, stops = 0;
	pid_t pid;

	T_SKIP_UNLESS_ROOT();
	cgroup_make(dir, sizeof(dir), &id);
	if (!dir[0]) {
		t_case_failed = -1; /* no cgroup v2 here */
		return;
	}
	f = dt_exec_follower_new(&fo);
	uo.exec = f;
	u = f ? dt_unwinder_new(&uo) : NULL;
	CHECK(u != NULL);
	if (!u)
		goto out;
	CHECK_EQ_INT(dt_unwinder_follow_cgroup(u, id), 0);

	pid = cgroup_start(dir, &go);
	CHECK(pid > 0);
	CHECK(write(go, "g", 1) == 1);
	close(go);
	st = wait_change(pid);
	CHECK(st != -1 && WIFSTOPPED(st)); /* at its exec, with no one serving yet */
	while (st != -1 && WIFSTOPPED(st)) {
		stops++;
		dt_unwinder_process(u);
		st = wait_change(pid);
	}
	CHECK(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* Held at each exec (sh, true) and each one's libc; a hold served before the process got
	 * to stop is cancelled by its SIGCONT, so not every one shows as a stop. */
	CHECK(stops >= 1);
	CHECK(held_calls >= 4);
	CHECK_EQ_INT(held_pid, (uint32_t)pid);

	pid = cgroup_start(dir, &go);
	CHECK(pid > 0);
	CHECK(write(go, "g", 1) == 1);
	close(go);
	st = wait_change(pid);
	CHECK(st != -1 && WIFSTOPPED(st));
	dt_unwinder_free(u);
	u = NULL;
	do
		st = wait_change(pid);
	while (st != -1 && WIFSTOPPED(st));
	CHECK(st != -1 && WIFEXITED(st)); /* let go, and no longer held at its mmaps */
out:
	dt_unwinder_free(u);
	dt_exec_follower_free(f);
	rmdir(dir);
}

/* A budget that exactly fits one process's objects: once it is gone, a new process's object
 * evicts the unreferenced one used least recently, and shares the rest (still cached). */
static void eviction_under_budget(void)
{
	dt_unwinder_opts uo = {.sz = sizeof(uo), .ptypes = 1u << DT_WPT_PERF_EVENT};
	dt_unwinder_stats st;
	pid_t a, b;
	result r;

	T_SKIP_UNLESS_ROOT();
	CHECK(build_target() == 0);
	a = fork();
	if (a == 0) {
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	usleep(100000);
	given_u = dt_unwinder_new(&uo);
	CHECK(given_u != NULL);
	if (!given_u)
		return;
	CHECK_EQ_INT(dt_unwinder_add_pid(given_u, (uint32_t)a), 0);
	dt_unwinder_get_stats(given_u, &st);
	dt_unwinder_free(given_u);

	uo.table_budget = st.row_pages_used * sizeof(struct dt_row_page);
	given_u = dt_unwinder_new(&uo);
	CHECK(given_u != NULL);
	if (!given_u)
		return;
	CHECK_EQ_INT(dt_unwinder_add_pid(given_u, (uint32_t)a), 0);
	dt_unwinder_get_stats(given_u, &st);
	CHECK_EQ_INT(st.row_pages_used, st.row_pages_total);
	CHECK_EQ_INT(st.build_errors, 0);
	stop_target(a);
	dt_unwinder_remove_pid(given_u, (uint32_t)a);

	b = start_target("qsort");
	CHECK(sample(b, 0, true, &r) == 0);
	stop_target(b);
	dt_unwinder_get_stats(given_u, &st);
	CHECK_EQ_INT(st.evictions, 1);      /* sleep's own object */
	CHECK_EQ_INT(st.build_errors, 0);
	CHECK(find_stack(&r, "uw_leaf uw_cmp ? uw_f3 uw_f2 uw_f1 main ? _start",
			 DT_UNWIND_COMPLETE) >= 0);
	dt_unwinder_free(given_u);
	given_u = NULL;
}

/* After dlopen, the first samples meet a pc in no known mapping: the walker records what it
 * has, asks (DT_REQ_PC), and once the maps are re-read the stack crosses the new library. */
static void dlopen_discovered(void)
{
	dt_unwinder_opts uo = {.sz = sizeof(uo), .ptypes = 1u << DT_WPT_PERF_EVENT};
	int in[2], out[2];
	char line[64];
	result r;
	pid_t pid;
	FILE *f;

	T_SKIP_UNLESS_ROOT();
	CHECK(build_target() == 0);
	CHECK(pipe(in) == 0 && pipe(out) == 0);
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(target, target, "dlopen", lib, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	f = fdopen(out[0], "r");
	CHECK(f && fgets(line, sizeof(line), f) && !strncmp(line, "loading", 7));
	given_u = dt_unwinder_new(&uo);
	CHECK(given_u != NULL);
	if (!given_u)
		goto out;
	CHECK_EQ_INT(dt_unwinder_add_pid(given_u, (uint32_t)pid), 0);
	CHECK(write(in[1], "go\n", 3) == 3);
	CHECK(f && fgets(line, sizeof(line), f) && !strncmp(line, "ready", 5));
	CHECK(sample(pid, 0, false, &r) == 0);
	/* uw_lib_call is not in the target's symbols: "?" between uw_leaf and main. */
	CHECK(find_stack(&r, "uw_leaf ? main ? _start", DT_UNWIND_COMPLETE) >= 0);
	/* Before: the frames up to and including the unknown pc. */
	CHECK(find_stack(&r, "uw_leaf ?", DT_UNWIND_NO_TABLES) >= 0);
	dt_unwinder_free(given_u);
	given_u = NULL;
out:
	stop_target(pid);
	if (f)
		fclose(f);
	close(in[1]);
}

int main(void)
{
	T_RUN(qsort_callback_stack);
	T_RUN(recursion_truncated);
	T_RUN(signal_frame);
	T_RUN(discovered_by_request);
	T_RUN(uprobe_entry_stack);
	T_RUN(tracepoint_task_regs);
	T_RUN(frame_pointer_fallback);
	T_RUN(depth_limit);
	T_RUN(exec_exit_and_sharing);
	T_RUN(exec_generations_without_walker);
	T_RUN(cgroup_processes_held_until_read);
	T_RUN(eviction_under_budget);
	T_RUN(dlopen_discovered);
	if (target[0]) {
		unlink(target);
		unlink(lib);
		rmdir(bindir);
	}
	return t_done();
}
