/* info.c — `dwarftrace --info`: the kernel and the BPF support it offers, in bpftrace's `--info`
 * shape ("System", then sections of "  name: yes|no" lines), so a user can see at a glance why a
 * probe type or builtin cannot work here. Every "yes" is asked of the running kernel (libbpf's
 * feature probes, the perf PMUs in sysfs, BTF in sysfs), never assumed from its version. A probe
 * type is "yes" only when it can attach, not merely load: a kernel without CONFIG_KPROBES loads
 * kprobe programs but has nothing to attach them to. */
#include "runtime/runtime.h"
#include "common/common.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
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
		{ "get_func_ip", BPF_FUNC_get_func_ip },
		{ "get_task_stack", BPF_FUNC_get_task_stack },
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

	if (uname(&u) < 0)
		return -errno;
	fprintf(out, "System\n  OS: %s %s %s\n  Arch: %s\n\n", u.sysname, u.release, u.version,
		u.machine);
	fprintf(out, "Build\n  version: %s\n\n", DT_VERSION);
	fprintf(out, "Kernel helpers\n");
	for (size_t i = 0; i < DT_ARRAY_SIZE(helpers); i++)
		fprintf(out, "  %s: %s\n", helpers[i].name,
			yes_no(helper(BPF_PROG_TYPE_KPROBE, helpers[i].id)));
	fprintf(out, "\nKernel features\n  btf: %s\n\n",
		yes_no(access("/sys/kernel/btf/vmlinux", R_OK) == 0));
	fprintf(out, "Map types\n");
	for (size_t i = 0; i < DT_ARRAY_SIZE(maps); i++)
		fprintf(out, "  %s: %s\n", maps[i].name,
			yes_no(libbpf_probe_bpf_map_type(maps[i].t, NULL) > 0));
	fprintf(out, "\nProbe types\n");
	fprintf(out, "  kprobe: %s\n", yes_no(kprobe_prog && pmu("kprobe")));
	fprintf(out, "  uprobe: %s\n", yes_no(kprobe_prog && pmu("uprobe")));
	fprintf(out, "  tracepoint: %s\n",
		yes_no(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_TRACEPOINT, NULL) > 0));
	fprintf(out, "  perf_event: %s\n",
		yes_no(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_PERF_EVENT, NULL) > 0));
	fprintf(out, "  hardware events: %s\n", yes_no(pmu("cpu")));
	fprintf(out, "  raw_tracepoint: %s\n",
		yes_no(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL) > 0));
	return 0;
}
