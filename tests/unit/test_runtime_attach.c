/* test_runtime_attach.c — the runtime's attach layer against the real kernel (root): every
 * provider attaches a tiny hand-assembled program that counts its runs in an array map, and the
 * test makes the event happen and reads the count; the clear-error paths (hardware counters and
 * kprobes are absent on the host) must give their one sentence; uprobe targets and symbols resolve
 * to the same file offsets /proc/self/maps implies; wildcards expand. */
#include "runtime/session_internal.h"
#include "tests/unit/t.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <limits.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>

/* ---------------------------------------------------------------- a counting program */

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
						  .off = (o), .imm = (i) })

/* map[0] += 1; return 0 — enough to prove the program ran, for any program type. */
static int load_counter(enum bpf_prog_type type, int map_fd)
{
	struct bpf_insn insns[] = {
		INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map_fd),
		INSN(0, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, 1),
		INSN(BPF_STX | BPF_DW | BPF_ATOMIC, 0, 1, 0, BPF_ADD),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};

	return bpf_prog_load(type, "t_counter", "GPL", insns, DT_ARRAY_SIZE(insns), NULL);
}

struct counter {
	int map_fd, prog_fd;
	dt_fdvec fds;
};

static int counter_open(struct counter *c, enum bpf_prog_type type)
{
	memset(c, 0, sizeof(*c));
	c->map_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_count", 4, 8, 1, NULL);
	if (c->map_fd < 0)
		return -errno;
	c->prog_fd = load_counter(type, c->map_fd);
	if (c->prog_fd < 0) {
		close(c->map_fd);
		return -errno;
	}
	return 0;
}

static uint64_t counter_read(struct counter *c)
{
	uint32_t k = 0;
	uint64_t v = 0;

	bpf_map_lookup_elem(c->map_fd, &k, &v);
	return v;
}

static void counter_close(struct counter *c)
{
	for (size_t i = 0; i < c->fds.n; i++)
		close(c->fds.v[i]);
	free(c->fds.v);
	close(c->prog_fd);
	close(c->map_fd);
}

static void spin_ms(int ms)
{
	uint64_t end = dt_now_ns() + (uint64_t)ms * 1000000;
	volatile uint64_t x = 0;

	while (dt_now_ns() < end)
		x++;
}

static dt_attach mk(dt_provider p, const char *text, const char *target, const char *func)
{
	return (dt_attach){ .provider = p, .text = text, .target = target, .func = func };
}

/* ---------------------------------------------------------------- targets in this executable */

__attribute__((noinline, used)) int t_target_fn(int x)
{
	/* Volatile work keeps the body longer than the offsets the tests probe, at any -O. */
	volatile int v = x;

	__asm__ volatile("" ::: "memory");
	v += 1;
	v *= 3;
	return v / 3;
}

__attribute__((noinline, used)) int t_target_fn2(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 2;
}

/* What the uprobe PMU wants for our own function, computed from the mappings, independently of
 * the ELF symbol lookup under test. */
static int self_file_offset(void *fn, uint64_t *off)
{
	char line[PATH_MAX + 128];
	FILE *f = fopen("/proc/self/maps", "r");
	int rc = -ENOENT;

	while (f && rc && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, foff;

		if (sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &foff) == 3 &&
		    (uintptr_t)fn >= lo && (uintptr_t)fn < hi) {
			*off = (uintptr_t)fn - lo + foff;
			rc = 0;
		}
	}
	if (f)
		fclose(f);
	return rc;
}

static const char *self_exe(void)
{
	static char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	path[n > 0 ? n : 0] = 0;
	return path;
}

/* ---------------------------------------------------------------- resolution */

static void resolve_library_names(void)
{
	char *p = NULL;

	CHECK_EQ_INT(dt_rt_resolve_binary("libc", -1, &p), 0);
	CHECK(p && strstr(p, "/libc.so") && access(p, R_OK) == 0);
	free(p);
	p = NULL;
	CHECK_EQ_INT(dt_rt_resolve_binary("libc.so.6", -1, &p), 0);
	CHECK(p && strstr(p, "libc.so.6"));
	free(p);
	p = NULL;
	/* Through our own mappings: the path goes through /proc/PID/root. */
	CHECK_EQ_INT(dt_rt_resolve_binary("libc", getpid(), &p), 0);
	CHECK(p && !strncmp(p, "/proc/", 6) && strstr(p, "libc.so") && access(p, R_OK) == 0);
	free(p);
	p = NULL;
	/* glibc >= 2.34: libpthread.so.0 is an empty stub, and the name means libc. */
	CHECK_EQ_INT(dt_rt_resolve_binary("libpthread", -1, &p), 0);
	CHECK(p && (strstr(p, "libpthread") || strstr(p, "/libc.so")));
	free(p);
	p = NULL;
	/* "libc" must not pick libcap or libcrypt. */
	CHECK_EQ_INT(dt_rt_resolve_binary("libc", -1, &p), 0);
	CHECK(p && !strstr(p, "libcap") && !strstr(p, "libcrypt"));
	free(p);
	p = NULL;
	CHECK_EQ_INT(dt_rt_resolve_binary("/bin/true", -1, &p), 0);
	CHECK_EQ_STR(p, "/bin/true");
	free(p);
	p = NULL;
	CHECK_EQ_INT(dt_rt_resolve_binary("libdoesnotexist_dt", -1, &p), -ENOENT);
	CHECK_EQ_INT(dt_rt_resolve_binary("/nonexistent/bin", -1, &p), -ENOENT);
	CHECK(p == NULL);
}

static void resolve_symbols(void)
{
	uint64_t want = 0, got = 0;
	char *err = NULL, *libc = NULL;

	CHECK_EQ_INT(self_file_offset((void *)t_target_fn, &want), 0);
	CHECK_EQ_INT(dt_rt_resolve_symbol(self_exe(), "t_target_fn", 0, false, &got, &err), 0);
	CHECK_EQ_INT(got, want);
	CHECK_EQ_INT(dt_rt_resolve_symbol(self_exe(), "t_target_fn", 4, false, &got, &err), 0);
	CHECK_EQ_INT(got, want + 4);
	CHECK_EQ_INT(dt_rt_resolve_symbol(self_exe(), "t_target_fn", 1 << 20, false, &got, &err), -ERANGE);
	CHECK(err && strstr(err, "Offset outside the function bounds ('t_target_fn' size is"));
	free(err);
	err = NULL;
	CHECK_EQ_INT(dt_rt_resolve_symbol(self_exe(), "t_no_such_fn", 0, false, &got, &err), -ENOENT);
	CHECK(err && strstr(err, "no function 't_no_such_fn'"));
	free(err);
	err = NULL;
	/* libc's malloc through .dynsym (Debian's libc has no .symtab). */
	CHECK_EQ_INT(dt_rt_resolve_binary("libc", -1, &libc), 0);
	CHECK_EQ_INT(dt_rt_resolve_symbol(libc, "malloc", 0, false, &got, &err), 0);
	CHECK(got > 0x1000);
	free(libc);
	CHECK_EQ_INT(dt_rt_resolve_symbol("/etc/hostname", "main", 0, false, &got, &err), -ENOEXEC);
	free(err);
	/* An address in a file that is not ELF: its file offset with --unsafe, else refused. */
	err = NULL;
	CHECK_EQ_INT(dt_rt_resolve_symbol("/etc/hostname", "0x2", 1, true, &got, &err), 0);
	CHECK_EQ_INT(got, 3);
	CHECK_EQ_INT(dt_rt_resolve_symbol("/etc/hostname", "0x2", 0, false, &got, &err), -ENOEXEC);
	CHECK(err && strstr(err, "that needs --unsafe"));
	free(err);
}

static void expand_wildcards(void)
{
	struct dt_rt_expand_ctx x = { .pid = -1 };
	dt_attach a = mk(DT_P_UPROBE, "uprobe", self_exe(), "t_target_fn*");
	char **names = NULL;
	uint32_t n = 0;

	CHECK_EQ_INT(dt_rt_expand(&x, &a, &names, &n), 0);
	CHECK_EQ_INT(n, 2);
	if (n == 2) {
		CHECK_EQ_STR(names[0], "t_target_fn");
		CHECK_EQ_STR(names[1], "t_target_fn2");
	}
	for (uint32_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static void expand_tracepoints(void)
{
	struct dt_rt_expand_ctx x = { .pid = -1 };
	dt_attach a = mk(DT_P_TRACEPOINT, "tracepoint", "syscalls", "sys_enter_getpp*");
	char **names = NULL;
	uint32_t n = 0;

	T_SKIP_UNLESS_ROOT();
	CHECK_EQ_INT(dt_rt_expand(&x, &a, &names, &n), 0);
	CHECK_EQ_INT(n, 1);
	if (n == 1)
		CHECK_EQ_STR(names[0], "sys_enter_getppid");
	for (uint32_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* ---------------------------------------------------------------- providers */

static void attach_uprobe_counts(void)
{
	struct counter c;
	dt_attach a = mk(DT_P_UPROBE, "uprobe:self:t_target_fn", self_exe(), "t_target_fn");
	dt_attach r = mk(DT_P_URETPROBE, "uretprobe:self:t_target_fn2", self_exe(), "t_target_fn2");
	char *err = NULL;

	T_SKIP_UNLESS_ROOT();
	CHECK_EQ_INT(counter_open(&c, BPF_PROG_TYPE_KPROBE), 0);
	CHECK_EQ_INT(dt_rt_attach(&a, c.prog_fd, getpid(), &c.fds, &err), 0);
	CHECK_EQ_INT(dt_rt_attach(&r, c.prog_fd, -1, &c.fds, &err), 0);
	CHECK(err == NULL);
	for (int i = 0; i < 3; i++)
		t_target_fn(i);
	t_target_fn2(1);
	CHECK_EQ_INT(counter_read(&c), 4);
	counter_close(&c);
}

static void attach_uprobe_errors(void)
{
	struct counter c;
	dt_attach a = mk(DT_P_UPROBE, "uprobe:libc:no_such_function_dt", "libc",
			 "no_such_function_dt");
	dt_attach b = mk(DT_P_UPROBE, "uprobe:libnope:malloc", "libnope", "malloc");
	char *err = NULL;

	T_SKIP_UNLESS_ROOT();
	CHECK_EQ_INT(counter_open(&c, BPF_PROG_TYPE_KPROBE), 0);
	CHECK_EQ_INT(dt_rt_attach(&a, c.prog_fd, -1, &c.fds, &err), -ENOENT);
	CHECK(err && !strncmp(err, "uprobe:libc:no_such_function_dt: no function", 44));
	free(err);
	CHECK_EQ_INT(dt_rt_attach(&b, c.prog_fd, -1, &c.fds, &err), -ENOENT);
	CHECK(err && strstr(err, "uprobe:libnope:malloc: cannot find 'libnope'"));
	free(err);
	CHECK_EQ_INT(c.fds.n, 0);
	counter_close(&c);
}

static void attach_tracepoint_counts(void)
{
	struct counter c;
	dt_attach a = mk(DT_P_TRACEPOINT, "tracepoint:syscalls:sys_enter_getppid", "syscalls",
			 "sys_enter_getppid");
	dt_attach bad = mk(DT_P_TRACEPOINT, "tracepoint:nope:nope", "nope", "nope");
	char *err = NULL;

	T_SKIP_UNLESS_ROOT();
	CHECK_EQ_INT(counter_open(&c, BPF_PROG_TYPE_TRACEPOINT), 0);
	CHECK_EQ_INT(dt_rt_attach(&a, c.prog_fd, -1, &c.fds, &err), 0);
	for (int i = 0; i < 5; i++)
		syscall(SYS_getppid);
	CHECK(counter_read(&c) >= 5);
	CHECK_EQ_INT(dt_rt_attach(&bad, c.prog_fd, -1, &c.fds, &err), -ENOENT);
	CHECK(err && strstr(err, "tracepoint:nope:nope: no such tracepoint"));
	free(err);
	counter_close(&c);
}

static void attach_profile_interval_software(void)
{
	struct counter p, i, s;
	dt_attach ap = mk(DT_P_PROFILE, "profile:hz:997", NULL, NULL);
	dt_attach ai = mk(DT_P_INTERVAL, "interval:ms:5", NULL, NULL);
	dt_attach as = mk(DT_P_SOFTWARE, "software:cpu-clock:100000", "cpu-clock", NULL);
	int *cpus = NULL, ncpus = dt_rt_online_cpus(&cpus);
	char *err = NULL;

	T_SKIP_UNLESS_ROOT();
	free(cpus);
	ap.unit = DT_UNIT_HZ;
	ap.rate = 997;
	ai.unit = DT_UNIT_MS;
	ai.rate = 5;
	ai.period_ns = 5000000;
	as.rate = 100000;
	CHECK_EQ_INT(counter_open(&p, BPF_PROG_TYPE_PERF_EVENT), 0);
	CHECK_EQ_INT(counter_open(&i, BPF_PROG_TYPE_PERF_EVENT), 0);
	CHECK_EQ_INT(counter_open(&s, BPF_PROG_TYPE_PERF_EVENT), 0);
	CHECK_EQ_INT(dt_rt_attach(&ap, p.prog_fd, -1, &p.fds, &err), 0);
	CHECK_EQ_INT(dt_rt_attach(&ai, i.prog_fd, -1, &i.fds, &err), 0);
	CHECK_EQ_INT(dt_rt_attach(&as, s.prog_fd, -1, &s.fds, &err), 0);
	CHECK_EQ_INT(p.fds.n, ncpus);
	CHECK_EQ_INT(i.fds.n, 1);
	CHECK_EQ_INT(s.fds.n, ncpus);
	spin_ms(200);
	/* 200 ms: ~200 profile samples per busy CPU, ~40 intervals, ~2000 cpu-clock periods. */
	CHECK(counter_read(&p) >= 50);
	CHECK(counter_read(&i) >= 10 && counter_read(&i) <= 100);
	CHECK(counter_read(&s) >= 500);
	counter_close(&p);
	counter_close(&i);
	counter_close(&s);
}

static void attach_clear_errors(void)
{
	struct counter c;
	dt_attach hw = mk(DT_P_HARDWARE, "hardware:cycles", "cycles", NULL);
	dt_attach kp = mk(DT_P_KPROBE, "kprobe:do_sys_open", NULL, "do_sys_open");
	dt_attach sw = mk(DT_P_SOFTWARE, "software:nope", "nope", NULL);
	char *err = NULL;

	T_SKIP_UNLESS_ROOT();
	CHECK_EQ_INT(counter_open(&c, BPF_PROG_TYPE_PERF_EVENT), 0);
	if (access("/sys/bus/event_source/devices/cpu", F_OK) != 0) {
		CHECK(dt_rt_attach(&hw, c.prog_fd, -1, &c.fds, &err) < 0);
		CHECK_EQ_STR(err, "hardware:cycles: this machine has no hardware performance "
			     "counters (virtual machines often don't); use profile:hz:N or "
			     "software:cpu-clock instead");
		free(err);
		err = NULL;
	}
	if (access("/sys/bus/event_source/devices/kprobe", F_OK) != 0) {
		CHECK_EQ_INT(dt_rt_attach(&kp, c.prog_fd, -1, &c.fds, &err), -EOPNOTSUPP);
		CHECK_EQ_STR(err, "kprobe:do_sys_open: this kernel has no kprobe support "
			     "(CONFIG_KPROBES is not set); use a tracepoint (e.g. "
			     "tracepoint:syscalls:sys_enter_openat) "
			     "instead");
		free(err);
		err = NULL;
	}
	CHECK_EQ_INT(dt_rt_attach(&sw, c.prog_fd, -1, &c.fds, &err), -EINVAL);
	CHECK(err && strstr(err, "software:nope: unknown software event 'nope'"));
	free(err);
	CHECK_EQ_INT(c.fds.n, 0);
	counter_close(&c);
}

/* Validation gives the same sentences as attaching, without a program. */
static void validate_before_load(void)
{
	dt_attach ok = mk(DT_P_UPROBE, "uprobe:self:t_target_fn", self_exe(), "t_target_fn");
	dt_attach bad = mk(DT_P_UPROBE, "uprobe:self:t_nope", self_exe(), "t_nope");
	dt_attach kp = mk(DT_P_KPROBE, "kprobe:vfs_read", NULL, "vfs_read");
	dt_attach sw = mk(DT_P_SOFTWARE, "software:faults", "faults", NULL);
	char *err = NULL;

	CHECK_EQ_INT(dt_rt_validate(&ok, -1, &err), 0);
	CHECK(err == NULL);
	CHECK_EQ_INT(dt_rt_validate(&sw, -1, &err), 0);
	CHECK_EQ_INT(dt_rt_validate(&bad, -1, &err), -ENOENT);
	CHECK(err && !strncmp(err, "uprobe:self:t_nope: no function 't_nope' in ", 44));
	free(err);
	err = NULL;
	if (access("/sys/bus/event_source/devices/kprobe", F_OK) != 0) {
		CHECK_EQ_INT(dt_rt_validate(&kp, -1, &err), -EOPNOTSUPP);
		CHECK(err && strstr(err, "kprobe:vfs_read: this kernel has no kprobe support"));
		free(err);
	}
}

static void run_once_begin(void)
{
	struct counter k, r;
	char *err = NULL;

	T_SKIP_UNLESS_ROOT();
	CHECK_EQ_INT(counter_open(&k, BPF_PROG_TYPE_KPROBE), 0);
	CHECK_EQ_INT(counter_open(&r, BPF_PROG_TYPE_RAW_TRACEPOINT), 0);
	CHECK_EQ_INT(dt_rt_run_once(k.prog_fd, BPF_PROG_TYPE_KPROBE, &err), 0);
	CHECK_EQ_INT(dt_rt_run_once(r.prog_fd, BPF_PROG_TYPE_RAW_TRACEPOINT, &err), 0);
	CHECK(err == NULL);
	CHECK_EQ_INT(counter_read(&k), 1);
	CHECK_EQ_INT(counter_read(&r), 1);
	counter_close(&k);
	counter_close(&r);
}

int main(void)
{
	T_RUN(resolve_library_names);
	T_RUN(resolve_symbols);
	T_RUN(expand_wildcards);
	T_RUN(expand_tracepoints);
	T_RUN(attach_uprobe_counts);
	T_RUN(attach_uprobe_errors);
	T_RUN(attach_tracepoint_counts);
	T_RUN(attach_profile_interval_software);
	T_RUN(attach_clear_errors);
	T_RUN(validate_before_load);
	T_RUN(run_once_begin);
	return t_done();
}
