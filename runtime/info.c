/* info.c — `dwarftrace --info`: the kernel and the BPF support it offers, in bpftrace's `--info`
 * shape ("System", "Build", then sections of "  name: yes|no" lines), so a user can see at a
 * glance why a probe type or builtin cannot work here. The lines are those bpftrace's current
 * `--info` prints (dpath, get_tai_ns, lookup_percpu_elem, the instruction limit, module btf,
 * kprobe_multi, uprobe_multi, kprobe_session, iter) and 0.17's (map types, the older helpers and
 * probe types), one a line. Every "yes" is asked of the running kernel as bpftrace asks it
 * (loading a small program, creating a link, libbpf's feature probes, the perf PMUs and BTF in
 * sysfs), never assumed from its version. A probe type is "yes" only when it can attach, not
 * merely load: a kernel without CONFIG_KPROBES loads kprobe programs but has nothing to attach
 * them to. */
#include "runtime/session_internal.h"
#include "common/common.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static const char *yes_no(bool b)
{
	return b ? "yes" : "no";
}

static bool helper(enum bpf_prog_type t, enum bpf_func_id id)
{
	return libbpf_probe_bpf_helper(t, id, NULL) > 0;
}

static bool pmu(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s", name);
	return access(path, F_OK) == 0;
}

/* `r0 = 0; exit`: the program the link probes load. */
static const struct bpf_insn ret0[2] = {
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
	{ .code = BPF_JMP | BPF_EXIT },
};

/* The verifier's instruction limit, from its log of a two-instruction program ("processed 2
 * insns (limit 1000000)"), as bpftrace reads it; -1 when the log does not say. */
static long insn_limit(void)
{
	struct bpf_insn insns[3] = {
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_0, .imm = 0 },
		{ 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	char log[4096] = "";
	LIBBPF_OPTS(bpf_prog_load_opts, o, .log_buf = log, .log_size = sizeof(log), .log_level = 1);
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 3, &o);
	const char *at;

	if (fd < 0)
		return -1;
	close(fd);
	at = strstr(log, "processed 2 insns");
	at = at ? strstr(at, "limit ") : NULL;
	return at ? strtol(at + 6, NULL, 10) : -1;
}

/* The value of enumerator NAME of the kernel's `enum bpf_attach_type`, from its BTF: the attach
 * types newer than this build's headers are the kernel's own numbers; -1 when it has none. */
static int attach_type(const struct btf *btf, const char *name)
{
	int id = btf ? btf__find_by_name_kind(btf, "bpf_attach_type", BTF_KIND_ENUM) : -1;
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;

	for (uint16_t i = 0; t && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, btf_enum(t)[i].name_off), name))
			return (int)btf_enum(t)[i].val;
	return -1;
}

/* bpftrace's kprobe_multi / kprobe_session probe: a kprobe program of that attach type gets a
 * multi-kprobe link on ksys_read. */
static bool kprobe_link(int type)
{
	const char *sym = "ksys_read";
	LIBBPF_OPTS(bpf_prog_load_opts, po, .expected_attach_type = (enum bpf_attach_type)type);
	LIBBPF_OPTS(bpf_link_create_opts, lo);
	int fd, lfd;

	if (type < 0)
		return false;
	fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "ksys_read", "GPL", ret0, 2, &po);
	if (fd < 0)
		return false;
	lo.kprobe_multi.syms = &sym;
	lo.kprobe_multi.cnt = 1;
	lfd = bpf_link_create(fd, 0, (enum bpf_attach_type)type, &lo);
	if (lfd >= 0)
		close(lfd);
	close(fd);
	return lfd >= 0;
}

/* A BTF-typed tracing program loads against the kernel function FUNC: d_path() in an fentry of
 * dentry_open (bpftrace's dpath), or an iterator (bpftrace's iter, bpf_iter_task). As bpftrace
 * does, the list of traceable functions must be readable too. */
static bool tracing_loads(const struct btf *btf, const char *func, enum bpf_attach_type type,
			  const struct bpf_insn *insns, size_t n)
{
	int id = btf ? btf__find_by_name_kind(btf, func, BTF_KIND_FUNC) : -1;
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = type,
		    .attach_btf_id = id > 0 ? (uint32_t)id : 0);
	int fd;

	if (id <= 0 || (access("/sys/kernel/tracing/available_filter_functions", R_OK) &&
			access("/sys/kernel/debug/tracing/available_filter_functions", R_OK)))
		return false;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, func, "GPL", insns, n, &o);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

static bool has_dpath(const struct btf *btf)
{
	/* r1 = *(u64 *)(r1 + 0) (the first argument, a struct path *); *(fp - 8) = 0;
	 * d_path(r1, fp - 8, 8); return 0. */
	const struct bpf_insn insns[] = {
		{ .code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_1 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_6, .imm = 0 },
		{ .code = BPF_STX | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_6 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3, .imm = 8 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_d_path },
		ret0[0], ret0[1],
	};

	return tracing_loads(btf, "dentry_open", BPF_TRACE_FENTRY, insns, DT_ARRAY_SIZE(insns));
}

/* BTF of a kernel module in sysfs (next to vmlinux's). */
static bool module_btf(void)
{
	DIR *d = opendir("/sys/kernel/btf");
	struct dirent *e;
	bool found = false;

	while (d && !found && (e = readdir(d)))
		found = e->d_name[0] != '.' && strcmp(e->d_name, "vmlinux");
	if (d)
		closedir(d);
	return found;
}

int dt_info_print(FILE *out)
{
	static const struct { const char *name; enum bpf_func_id id; } helpers[] = {
		{ "probe_read", BPF_FUNC_probe_read },
		{ "probe_read_str", BPF_FUNC_probe_read_str },
		{ "probe_read_user", BPF_FUNC_probe_read_user },
		{ "probe_read_user_str", BPF_FUNC_probe_read_user_str },
		{ "probe_read_kernel", BPF_FUNC_probe_read_kernel },
		{ "probe_read_kernel_str", BPF_FUNC_probe_read_kernel_str },
		{ "get_current_cgroup_id", BPF_FUNC_get_current_cgroup_id },
		{ "send_signal", BPF_FUNC_send_signal },
		{ "override_return", BPF_FUNC_override_return },
		{ "get_boot_ns", BPF_FUNC_ktime_get_boot_ns },
		{ "get_tai_ns", BPF_FUNC_ktime_get_tai_ns },
		{ "get_func_ip", BPF_FUNC_get_func_ip },
		{ "get_task_stack", BPF_FUNC_get_task_stack },
		{ "lookup_percpu_elem", BPF_FUNC_map_lookup_percpu_elem },
		{ "ringbuf_output", BPF_FUNC_ringbuf_output },
		{ "loop", BPF_FUNC_loop },
	};
	static const struct { const char *name; enum bpf_map_type t; } maps[] = {
		{ "hash", BPF_MAP_TYPE_HASH },
		{ "percpu hash", BPF_MAP_TYPE_PERCPU_HASH },
		{ "array", BPF_MAP_TYPE_ARRAY },
		{ "percpu array", BPF_MAP_TYPE_PERCPU_ARRAY },
		{ "stack_trace", BPF_MAP_TYPE_STACK_TRACE },
		{ "perf_event_array", BPF_MAP_TYPE_PERF_EVENT_ARRAY },
		{ "ringbuf", BPF_MAP_TYPE_RINGBUF },
		{ "prog_array", BPF_MAP_TYPE_PROG_ARRAY },
	};
	struct utsname u;
	bool kprobe_prog = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_KPROBE, NULL) > 0;
	/* The session's copy (loaded once, kept): not freed here. */
	struct btf *btf = dt_rt_vmlinux_btf();

	if (uname(&u) < 0)
		return -errno;
	fprintf(out, "System\n  OS: %s %s %s\n  Arch: %s\n\n", u.sysname, u.release, u.version,
		u.machine);
	fprintf(out, "Build\n  version: %s\n  libdw (DWARF support): yes\n"
		"  dwunwind (DWARF stack unwinding): yes\n\n", DT_VERSION);
	fprintf(out, "Kernel helpers\n");
	fprintf(out, "  dpath: %s\n", yes_no(has_dpath(btf)));
	for (size_t i = 0; i < DT_ARRAY_SIZE(helpers); i++)
		fprintf(out, "  %s: %s\n", helpers[i].name,
			yes_no(helper(BPF_PROG_TYPE_KPROBE, helpers[i].id)));
	fprintf(out, "\nKernel features\n  Instruction limit: %ld\n  btf: %s\n  module btf: %s\n\n",
		insn_limit(), yes_no(btf != NULL), yes_no(module_btf()));
	fprintf(out, "Map types\n");
	for (size_t i = 0; i < DT_ARRAY_SIZE(maps); i++)
		fprintf(out, "  %s: %s\n", maps[i].name,
			yes_no(libbpf_probe_bpf_map_type(maps[i].t, NULL) > 0));
	fprintf(out, "\nProbe types\n");
	fprintf(out, "  kprobe: %s\n", yes_no(kprobe_prog && pmu("kprobe")));
	fprintf(out, "  kprobe_multi: %s\n", yes_no(kprobe_link(BPF_TRACE_KPROBE_MULTI)));
	fprintf(out, "  kprobe_session: %s\n",
		yes_no(kprobe_link(attach_type(btf, "BPF_TRACE_KPROBE_SESSION"))));
	fprintf(out, "  uprobe: %s\n", yes_no(kprobe_prog && pmu("uprobe")));
	fprintf(out, "  uprobe_multi: %s\n", yes_no(dt_rt_uprobe_multi_support() & 1));
	fprintf(out, "  tracepoint: %s\n",
		yes_no(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_TRACEPOINT, NULL) > 0));
	fprintf(out, "  perf_event: %s\n",
		yes_no(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_PERF_EVENT, NULL) > 0));
	fprintf(out, "  hardware events: %s\n", yes_no(pmu("cpu")));
	fprintf(out, "  raw_tracepoint: %s\n",
		yes_no(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL) > 0));
	fprintf(out, "  iter: %s\n", yes_no(tracing_loads(btf, "bpf_iter_task", BPF_TRACE_ITER,
							   ret0, DT_ARRAY_SIZE(ret0))));
	return 0;
}
