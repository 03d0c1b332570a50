/* xprobe.c — the userspace side of xprobes (protocol: bpf-lib/dt_xprobe.h). The precompiled
 * object (entry/return uprobe programs, scheduler hooks, per-thread state) is opened from the
 * embedded bytes once per session, with the session's filter (-c's cgroup, -p's process) written
 * into its read-only data: before codegen when a program reads an xprobe's numbers, else at the
 * first attach. Its scheduler hooks are attached with the first xprobe and stay attached for the
 * session. Each xprobe attach point gets a slot: its generated block goes into that slot of the
 * xprobe prog array, and the shared entry and return programs are attached to the function with
 * a bpf cookie naming the slot (and, for the entry, the sampling period), so one pair of
 * programs serves every watched function. At the end, what could not be measured is
 * reported like the other loss counters. */
#include "runtime/session_internal.h"
#include "bpf-lib/dt_xprobe.h"
#include "bpf-lib/dt_xprobe_obj.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>

static const char *const hook_names[] = { "dt_xp_switch", "dt_xp_wakeup", "dt_xp_exit" };

struct dt_xprobes {
	struct bpf_object *obj;
	struct bpf_link *hooks[DT_ARRAY_SIZE(hook_names)];
	int entry_fd, return_fd;
	int result_fd, progs_fd, stats_fd;
	uint32_t next_slot;
	int load_err;          /* non-zero once loading failed: not retried, reported once */
};

static int xfail(char **err, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int xfail(char **err, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		*err = NULL;
	va_end(ap);
	return rc;
}

static int obj_map_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	return m ? bpf_map__fd(m) : -ENOENT;
}

static int obj_prog_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, name);

	return p ? bpf_program__fd(p) : -ENOENT;
}

int dt_xprobe_load(dt_session *s)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "dt_xprobe");
	struct dt_xprobes *x;
	int rc;

	if (s->xp)
		return s->xp->load_err;
	x = xcalloc(1, sizeof(*x));
	s->xp = x;
	x->obj = bpf_object__open_mem(dt_xprobe_bpf_obj, dt_xprobe_bpf_obj_len, &oo);
	if (!x->obj) {
		rc = -errno;
		fprintf(s->err, "dwarftrace: xprobe: cannot open the embedded BPF object: %s\n", dt_strerror(-rc));
		goto fail;
	}
	if (s->o.uprobe_pid > 0 || s->child_cgroup_id) {
		struct bpf_map *ro = bpf_object__find_map_by_name(x->obj, ".rodata");
		size_t sz = 0;
		struct dt_xfilter *f =
			ro ? (struct dt_xfilter *)(uintptr_t)bpf_map__initial_value(ro, &sz) : NULL;

		/* xfilter is the object's only read-only global. */
		if (!f || sz != sizeof(*f)) {
			rc = -ENOENT;
			fprintf(s->err, "dwarftrace: internal error: the xprobe object has no process filter (this "
				"is a dwarftrace bug; please report it)\n");
			goto fail;
		}
		f->cgroup = s->child_cgroup_id;
		f->tgid = s->o.uprobe_pid > 0 ? (uint32_t)s->o.uprobe_pid : 0;
	}
	rc = bpf_object__load(x->obj);
	if (rc < 0) {
		fprintf(s->err, "dwarftrace: xprobe: cannot load the scheduler hooks and uprobe programs: %s "
			"(they need BTF and tp_btf support; run with -v for libbpf's log)\n",
			dt_strerror(-rc));
		goto fail;
	}
	x->entry_fd = obj_prog_fd(x->obj, "dt_xp_entry");
	x->return_fd = obj_prog_fd(x->obj, "dt_xp_return");
	x->result_fd = obj_map_fd(x->obj, "xresult");
	x->progs_fd = obj_map_fd(x->obj, "xprogs");
	x->stats_fd = obj_map_fd(x->obj, "xstats");
	if (x->entry_fd < 0 || x->return_fd < 0 || x->result_fd < 0 || x->progs_fd < 0 ||
	    x->stats_fd < 0) {
		rc = -ENOENT;
		fprintf(s->err, "dwarftrace: internal error: the xprobe object lacks a program or map (this is a "
			"dwarftrace bug; please report it)\n");
		goto fail;
	}
	return 0;
fail:
	x->load_err = rc ? rc : -EINVAL;
	return x->load_err;
}

/* Attaches the scheduler hooks, once: at the first attach, not at compile time (--dry-run). */
static int xp_hooks(dt_session *s, char **err)
{
	struct dt_xprobes *x = s->xp;

	for (size_t i = 0; i < DT_ARRAY_SIZE(hook_names); i++) {
		struct bpf_program *p = bpf_object__find_program_by_name(x->obj, hook_names[i]);
		int rc;

		if (x->hooks[i])
			continue;
		x->hooks[i] = p ? bpf_program__attach(p) : NULL;
		if (!x->hooks[i]) {
			rc = p ? -errno : -ENOENT;
			return xfail(err, rc, "xprobes: cannot attach the scheduler hook %s: %s",
				     hook_names[i], dt_strerror(-rc));
		}
	}
	return 0;
}

int dt_xprobe_result_fd(dt_session *s)
{
	return s->xp && !s->xp->load_err ? s->xp->result_fd : -ENOENT;
}

/* A uprobe (`ret`: uretprobe) on the function of `a` running `prog_fd` with `cookie`: a BPF
 * link on a perf event, the only way to give a uprobe program a cookie. Both fds go to `fds`. */
static int link_uprobe(dt_session *s, const dt_attach *a, bool ret, int prog_fd, uint64_t cookie,
		       dt_fdvec *fds, char **err)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo, .perf_event.bpf_cookie = cookie);
	int pfd, lfd, rc;

	pfd = dt_rt_uprobe_open(a, s->o.uprobe_pid, ret, err);
	if (pfd < 0)
		return pfd;
	lfd = bpf_link_create(prog_fd, pfd, BPF_PERF_EVENT, &lo);
	if (lfd < 0) {
		rc = lfd;
		close(pfd);
		return xfail(err, rc, "%s: cannot attach the xprobe %s program: %s", a->text,
			     ret ? "return" : "entry", dt_strerror(-rc));
	}
	if (ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		rc = -errno;
		close(lfd);
		close(pfd);
		return xfail(err, rc, "%s: cannot enable the uprobe: %s", a->text, dt_strerror(-rc));
	}
	DT_VEC_PUSH(fds, pfd);
	DT_VEC_PUSH(fds, lfd);
	return 0;
}

int dt_xprobe_attach(dt_session *s, const dt_attach *a, int prog_fd, dt_fdvec *fds, char **err)
{
	size_t n0 = fds->n;
	uint64_t period = a->rate > 1 ? DT_MIN(a->rate, (uint64_t)UINT32_MAX) : 0;
	uint32_t slot;
	int rc = dt_xprobe_load(s);

	*err = NULL;
	if (rc < 0)
		return xfail(err, rc, "%s: xprobes are not available on this system: %s", a->text,
			     dt_strerror(-rc));
	rc = xp_hooks(s, err);
	if (rc < 0)
		return rc;
	if (s->xp->next_slot >= DT_XPROBE_SLOTS)
		return xfail(err, -ENOSPC, "%s: too many xprobes in one session (at most %d)",
			     a->text, DT_XPROBE_SLOTS);
	/* Slots are not reused: a detached unit's slot keeps a program no uprobe reaches. */
	slot = s->xp->next_slot++;
	if (bpf_map_update_elem(s->xp->progs_fd, &slot, &prog_fd, BPF_ANY) < 0) {
		rc = -errno;
		return xfail(err, rc, "%s: cannot install the xprobe's block: %s", a->text,
			     dt_strerror(-rc));
	}
	/* The return side first: a return whose entry was not seen is counted and ignored, while
	 * an entry whose return is not watched yet would leave a frame until it goes stale. */
	rc = link_uprobe(s, a, true, s->xp->return_fd, slot, fds, err);
	if (rc == 0)
		rc = link_uprobe(s, a, false, s->xp->entry_fd, slot | period << 32, fds, err);
	if (rc < 0) {
		while (fds->n > n0)
			close(fds->v[--fds->n]);
		bpf_map_delete_elem(s->xp->progs_fd, &slot);
	}
	return rc;
}

/* What each counter means, in the order they print (bpf-lib/dt_xprobe.h's DT_XSTATS). */
static const struct xstat_msg {
	enum dt_xstat id;
	bool always;       /* worth a line without -v: something the user asked for was lost */
	const char *what;
} xstat_msgs[] = {
#define XSTAT_MSG(id, slot, always, what) { DT_XS_##id, always, what },
	DT_XSTATS(XSTAT_MSG)
#undef XSTAT_MSG
};

void dt_xprobe_report(dt_session *s)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals;

	if (!s->xp || s->xp->load_err || ncpu <= 0)
		return;
	vals = xcalloc((size_t)ncpu, sizeof(*vals));
	for (size_t i = 0; i < DT_ARRAY_SIZE(xstat_msgs); i++) {
		uint32_t k = xstat_msgs[i].id;
		uint64_t total = 0;

		if (bpf_map_lookup_elem(s->xp->stats_fd, &k, vals) < 0)
			continue;
		for (int c = 0; c < ncpu; c++)
			total += vals[c];
		if (total && (xstat_msgs[i].always || s->o.verbose))
			fprintf(s->err, "dwarftrace: %llu %s\n", (unsigned long long)total,
				xstat_msgs[i].what);
	}
	free(vals);
	if (!s->o.verbose)
		return;
	/* The kernel's own run-time statistics (on while -v holds BPF_ENABLE_STATS): the cost of
	 * each precompiled program per run, the scheduler hooks' being the cost per switch. */
	static const char *const progs[] = { "dt_xp_entry", "dt_xp_return", "dt_xp_switch",
					     "dt_xp_wakeup" };
	for (size_t i = 0; i < DT_ARRAY_SIZE(progs); i++) {
		struct bpf_prog_info info = { 0 };
		uint32_t len = sizeof(info);
		int fd = obj_prog_fd(s->xp->obj, progs[i]);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) < 0 || !info.run_cnt)
			continue;
		fprintf(s->err, "xprobe program %s: %llu runs, %.0f ns per run\n", progs[i],
			(unsigned long long)info.run_cnt, (double)info.run_time_ns / info.run_cnt);
	}
}

void dt_xprobe_free(dt_session *s)
{
	struct dt_xprobes *x = s->xp;

	if (!x)
		return;
	for (size_t i = 0; i < DT_ARRAY_SIZE(x->hooks); i++)
		bpf_link__destroy(x->hooks[i]);
	bpf_object__close(x->obj);
	free(x);
	s->xp = NULL;
}
