/* exec.c — the userspace side of the exec follower (protocol: bpf-lib/dt_exec.h): loads the
 * embedded object, attaches its one program to sched_process_exec, and answers which generation
 * of a process's image runs now. It is a separate object from the walker's so that a session
 * whose scripts record user addresses but never use ustack_dwarf follows exec without loading
 * the walker; the maps the walker shares with it (procs, requests, wstats) are created here and
 * reused by the walker's object when an unwinder comes (unwinder.c). */
#include "unwind/unwind.h"
#include "unwind/unwind_internal.h"
#include "bpf-lib/dt_exec.h"
#include "bpf-lib/dt_exec_obj.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dt_exec_follower {
	dt_exec_follower_opts opts;
	struct bpf_object *obj;
	struct bpf_link *link;
	int gen_fd, seen_fd, config_fd;
	bool held;            /* a cgroup was followed: processes may wait in requests */
};

/* The walker's maps the follower owns (walker_maps.bpf.h). */
static const char *const walker_maps[] = { "procs", "requests", "wstats", "config" };

#define flog(f, ...) dt_unwind_log((f)->opts.log, (f)->opts.log_ctx, __VA_ARGS__)

dt_exec_follower *dt_exec_follower_new(const dt_exec_follower_opts *opts)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "dt_exec");
	dt_exec_follower *f = xcalloc(1, sizeof(*f));
	struct bpf_program *prog;
	int ret;

	if (opts)
		memcpy(&f->opts, opts, DT_MIN(opts->sz ? opts->sz : sizeof(*opts), sizeof(*opts)));
	f->obj = bpf_object__open_mem(dt_exec_bpf_obj, dt_exec_bpf_obj_len, &oo);
	if (!f->obj) {
		ret = -errno;
		flog(f, "exec follower: cannot open the embedded BPF object: %s", dt_strerror(-ret));
		goto fail;
	}
	ret = bpf_object__load(f->obj);
	if (ret < 0) {
		flog(f, "exec follower: loading the BPF object failed: %s", dt_strerror(-ret));
		goto fail;
	}
	f->gen_fd = dt_obj_map_fd(f->obj, "exec_gen");
	f->seen_fd = dt_obj_map_fd(f->obj, "pids_seen");
	f->config_fd = dt_obj_map_fd(f->obj, "config");
	ret = DT_MIN(f->gen_fd, DT_MIN(f->seen_fd, f->config_fd));
	for (size_t i = 0; i < DT_ARRAY_SIZE(walker_maps); i++)
		ret = DT_MIN(ret, dt_obj_map_fd(f->obj, walker_maps[i]));
	prog = bpf_object__find_program_by_name(f->obj, "dt_follow_exec");
	if (ret < 0 || !prog) {
		ret = -ENOENT;
		flog(f, "exec follower: the BPF object lacks a map or its program");
		goto fail;
	}
	f->link = bpf_program__attach(prog);
	if (!f->link) {
		ret = -errno;
		flog(f, "exec follower: cannot attach to sched_process_exec: %s", dt_strerror(-ret));
		goto fail;
	}
	return f;
fail:
	dt_exec_follower_free(f);
	errno = ret < 0 ? -ret : EINVAL;
	return NULL;
}

void dt_exec_follower_free(dt_exec_follower *f)
{
	if (!f)
		return;
	bpf_link__destroy(f->link);
	/* Detached (which waits for a run in progress): a process it held after the unwinder let
	 * go goes on now. */
	if (f->held)
		dt_exec_follower_release_held(f);
	bpf_object__close(f->obj);
	free(f);
}

int dt_exec_follower_gen_fd(const dt_exec_follower *f)
{
	return f->gen_fd;
}

int dt_exec_follower_seen_fd(const dt_exec_follower *f)
{
	return f->seen_fd;
}

uint32_t dt_exec_follower_gen(const dt_exec_follower *f, uint32_t pid)
{
	uint32_t gen = 0;

	if (!f || bpf_map_lookup_elem(f->gen_fd, &pid, &gen) < 0)
		gen = 0;
	return gen;
}

int dt_exec_follower_walker_map_fd(const dt_exec_follower *f, const char *name)
{
	for (size_t i = 0; i < DT_ARRAY_SIZE(walker_maps); i++)
		if (!strcmp(name, walker_maps[i]))
			return dt_obj_map_fd(f->obj, name);
	return -ENOENT;
}

/* Reads config, adds `set_flags` and, when `set_cgroup`, sets the cgroup; writes it back. */
static int config_edit(dt_exec_follower *f, uint32_t set_flags, bool set_cgroup, uint64_t cgroup)
{
	struct dt_exec_config cfg = { 0 };
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(f->config_fd, &zero, &cfg) < 0)
		return -errno;
	cfg.flags |= set_flags;
	if (set_cgroup)
		cfg.cgroup = cgroup;
	return bpf_map_update_elem(f->config_fd, &zero, &cfg, BPF_ANY) < 0 ? -errno : 0;
}

int dt_exec_follower_follow_all(dt_exec_follower *f)
{
	return config_edit(f, DT_EXEC_FOLLOW_ALL, false, 0);
}

int dt_exec_follower_follow_cgroup(dt_exec_follower *f, uint64_t cgroup_id)
{
	if (cgroup_id)
		f->held = true;
	return config_edit(f, 0, true, cgroup_id);
}

/* Continues the process of a held request; the others are dropped with no one to serve them. */
static int release_cb(void *ctx, void *data, size_t size)
{
	const struct dt_unwind_req *r = data;

	(void)ctx;
	if (size >= sizeof(*r) && r->kind & DT_REQ_HELD)
		kill((pid_t)r->pid, SIGCONT);
	return 0;
}

void dt_exec_follower_release_held(dt_exec_follower *f)
{
	struct ring_buffer *rb;
	int fd = dt_obj_map_fd(f->obj, "requests");

	rb = fd < 0 ? NULL : ring_buffer__new(fd, release_cb, NULL, NULL);
	if (!rb) {
		flog(f, "exec follower: cannot read the requests to continue held processes");
		return;
	}
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
}
