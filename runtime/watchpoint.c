/* watchpoint.c — watchpoint:ADDR:LEN:MODE and watchpoint/asyncwatchpoint:FUNC+argN:LEN:MODE:
 * hardware breakpoints (perf PERF_TYPE_BREAKPOINT events) that run the probe's perf_event
 * program on each access. An absolute address is watched from attach on, in the -c/-p process
 * (a user address) or on every CPU (a kernel address). The function form is set when FUNC is
 * entered: bpf-lib/watchpoint.bpf.c, a uprobe with the attach point's slot in its bpf cookie,
 * stops the process (unless async) and sends a DT_EV_WATCH record with argN; the loop calls
 * dt_wp_on_watch, which sets the breakpoint in the -c/-p process and lets it go on. As in
 * bpftrace, an attach point holds one address at a time (a new address adds a breakpoint, the
 * same one is not set twice), a CPU has few debug registers (x86-64: 4) and running out of them
 * is said once per address, and unwatch(addr) removes every breakpoint on addr. The breakpoint
 * fds join the unit's attached fds, so they go with the unit's other probes. */
#include "runtime/session_internal.h"
#include "bpf-lib/dt_watchpoint_obj.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

struct wp_slot {
	const dt_attach *a;
	int prog_fd;      /* the probe's program, run by the breakpoint */
	uint64_t addr;    /* the address it watches now (0: none yet) */
};

struct wp_bp {
	uint64_t addr;
	int fd;
};

struct dt_watches {
	struct bpf_object *obj; /* watchpoint.bpf.c, its ring reusing the unit's */
	int setup_fd;
	DT_VEC(struct wp_slot) slots;
	DT_VEC(struct wp_bp) bps;
};

/* The process watchpoints are set in: the -c command, else the -p process; -1: the kernel. */
static int watched_pid(const dt_session *s)
{
	return s->child > 0 ? (int)s->child : s->o.uprobe_pid > 0 ? s->o.uprobe_pid : -1;
}

static uint32_t bp_type(const char *mode)
{
	uint32_t t = HW_BREAKPOINT_EMPTY;

	for (const char *m = mode ? mode : ""; *m; m++)
		t |= *m == 'r' ? HW_BREAKPOINT_R : *m == 'w' ? HW_BREAKPOINT_W : HW_BREAKPOINT_X;
	return t;
}

static const char *bp_why(int rc)
{
	switch (rc) {
	case -ENOSPC:
		return "You are out of watchpoint registers";
	case -EINVAL:
		return "the CPU cannot watch it (the address must be a multiple of the length)";
	case -ESRCH:
		return "the process is gone";
	default:
		return dt_strerror(-rc);
	}
}

/* The threads of process pid (*tids, to free), or -errno. */
static int process_tids(int pid, int **tids)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	DT_VEC(int) v = { 0 };

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
			DT_VEC_PUSH(&v, atoi(e->d_name));
	closedir(d);
	*tids = v.v;
	return v.n ? (int)v.n : -ESRCH;
}

/* Opens the breakpoint on addr, binds prog_fd, and appends its fds to the unit's attached fds
 * (and, with bps, to the unwatch list). In a process (pid > 0), one breakpoint per thread, each
 * inherited by the threads started later, as bpftrace sets them: a perf event on a task sees
 * that thread only. In the kernel (pid < 0), one per online CPU. */
static int set_breakpoint(dt_unit *u, const dt_attach *a, uint64_t addr, int pid, int prog_fd)
{
	uint32_t type = bp_type(a->wp_mode);
	struct perf_event_attr attr = {
		.type = PERF_TYPE_BREAKPOINT, .size = sizeof(attr), .disabled = 1,
		.bp_type = type, .bp_addr = addr,
		/* The CPU watches execution of one instruction start: perf wants sizeof(long). */
		.bp_len = (type & HW_BREAKPOINT_X) ? sizeof(long) : a->wp_len,
		.sample_period = 1, /* every access */
		.inherit = pid > 0,
	};
	int *ids, n, rc = 0, opened = 0;
	size_t n0 = u->attached.n;

	n = pid < 0 ? dt_rt_online_cpus(&ids) : process_tids(pid, &ids);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		int fd = (int)syscall(__NR_perf_event_open, &attr, pid < 0 ? -1 : ids[i],
				      pid < 0 ? ids[i] : -1, -1, PERF_FLAG_FD_CLOEXEC);

		/* A thread may have ended since the list was read; its event is not needed. */
		if (fd < 0 && errno == ESRCH && pid > 0)
			continue;
		if (fd < 0) {
			rc = -errno;
			break;
		}
		opened++;
		if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd) < 0 ||
		    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
			rc = -errno;
			close(fd);
			break;
		}
		DT_VEC_PUSH(&u->attached, fd);
	}
	free(ids);
	if (rc == 0 && !opened)
		rc = -ESRCH;
	if (rc < 0) {
		dt_rt_detach(&u->attached, n0);
		return rc;
	}
	if (!u->wp)
		u->wp = xcalloc(1, sizeof(*u->wp));
	for (size_t i = n0; i < u->attached.n; i++)
		DT_VEC_PUSH(&u->wp->bps, ((struct wp_bp){ .addr = addr, .fd = u->attached.v[i] }));
	return 0;
}

/* The setup uprobe's program, loaded once per unit with the unit's events ring. */
static int setup_prog(dt_unit *u, char **err)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "dt_wp_setup");
	struct bpf_program *prog;
	struct bpf_map *ring;
	int rc;

	if (u->wp && u->wp->obj)
		return u->wp->setup_fd;
	if (!u->wp)
		u->wp = xcalloc(1, sizeof(*u->wp));
	if (u->events_fd < 0)
		return dt_rt_fail(err, -EINVAL, "watchpoint: internal error: the unit has no events "
			    "ring (this is a dwarftrace bug; please report it)");
	u->wp->obj = bpf_object__open_mem(dt_watchpoint_bpf_obj, dt_watchpoint_bpf_obj_len, &oo);
	if (!u->wp->obj) {
		rc = -errno;
		return dt_rt_fail(err, rc, "watchpoint: cannot open its setup program: %s",
			    dt_strerror(-rc));
	}
	prog = bpf_object__find_program_by_name(u->wp->obj, "dt_wp_setup");
	ring = bpf_object__find_map_by_name(u->wp->obj, "events");
	rc = !prog || !ring ? -ENOENT : bpf_map__reuse_fd(ring, u->events_fd);
	if (rc == 0)
		rc = bpf_object__load(u->wp->obj);
	if (rc < 0) {
		bpf_object__close(u->wp->obj);
		u->wp->obj = NULL;
		return dt_rt_fail(err, rc, "watchpoint: cannot load its setup program: %s",
			    dt_strerror(-rc));
	}
	u->wp->setup_fd = bpf_program__fd(prog);
	return u->wp->setup_fd;
}

/* The function form: a uprobe on FUNC whose cookie names the slot. */
static int attach_setup(dt_session *s, dt_unit *u, const dt_attach *a, int prog_fd, char **err)
{
	dt_attach up = { .provider = DT_P_UPROBE, .span = a->span, .text = a->text,
			 .target = a->target, .func = a->func };
	uint32_t slot;
	int sfd = setup_prog(u, err), pfd, lfd;

	if (sfd < 0)
		return sfd;
	pfd = dt_rt_uprobe_open(&up, watched_pid(s), false, err);
	if (pfd < 0)
		return pfd;
	slot = (uint32_t)u->wp->slots.n;
	LIBBPF_OPTS(bpf_link_create_opts, lo,
		    .perf_event.bpf_cookie = DT_WP_COOKIE(slot, a->wp_arg,
							  a->provider == DT_P_ASYNCWATCHPOINT));
	lfd = bpf_link_create(sfd, pfd, BPF_PERF_EVENT, &lo);
	if (lfd < 0 || ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		int rc = -errno;

		if (lfd >= 0)
			close(lfd);
		close(pfd);
		return dt_rt_fail(err, rc, "%s: cannot attach the uprobe on %s: %s", a->text, a->func,
			    dt_strerror(-rc));
	}
	DT_VEC_PUSH(&u->attached, lfd);
	DT_VEC_PUSH(&u->attached, pfd);
	DT_VEC_PUSH(&u->wp->slots, ((struct wp_slot){ .a = a, .prog_fd = prog_fd }));
	return 0;
}

int dt_wp_attach(dt_session *s, dt_unit *u, const dt_attach *a, int prog_fd, char **err)
{
	int rc;

	*err = NULL;
	if (a->func)
		return attach_setup(s, u, a, prog_fd, err);
	rc = set_breakpoint(u, a, a->addr, watched_pid(s), prog_fd);
	if (rc < 0)
		return dt_rt_fail(err, rc, "%s: cannot watch %#" PRIx64 ": %s", a->text, a->addr,
			    bp_why(rc));
	return 0;
}

void dt_wp_on_watch(dt_session *s, dt_unit *u, uint32_t slot, const struct dt_ev_watch *w)
{
	struct wp_slot *sl = u->wp && slot < u->wp->slots.n ? &u->wp->slots.v[slot] : NULL;

	/* Not once the run is ending (exit() was called): only let the process go on. */
	if (sl && !s->muted && w->addr != sl->addr) {
		int rc = set_breakpoint(u, sl->a, w->addr, watched_pid(s), sl->prog_fd);

		sl->addr = w->addr;
		if (rc == -ENOSPC)
			/* bpftrace's words, which its users and tests look for. */
			fprintf(s->err, "Failed to attach watchpoint probe. You are out of watchpoint "
				"registers. (%s, %#" PRIx64 ")\n", sl->a->text, (uint64_t)w->addr);
		else if (rc < 0)
			fprintf(s->err, "dwarftrace: %s: cannot watch %#" PRIx64 ": %s\n", sl->a->text,
				(uint64_t)w->addr, bp_why(rc));
	}
	if (!w->async && kill((pid_t)w->tgid, SIGCONT) < 0 && errno != ESRCH)
		fprintf(s->err, "dwarftrace: cannot let process %u go on (SIGCONT): %s\n", w->tgid,
			strerror(errno));
}

void dt_wp_unwatch(dt_unit *u, uint64_t addr)
{
	/* Silently nothing for an address not watched, as in bpftrace: a script may unwatch
	 * generously. */
	for (size_t i = 0; u->wp && i < u->wp->bps.n;) {
		struct wp_bp *b = &u->wp->bps.v[i];

		if (b->addr != addr) {
			i++;
			continue;
		}
		for (size_t j = 0; j < u->attached.n; j++) {
			if (u->attached.v[j] != b->fd)
				continue;
			memmove(&u->attached.v[j], &u->attached.v[j + 1],
				(u->attached.n - j - 1) * sizeof(int));
			u->attached.n--;
			break;
		}
		close(b->fd);
		*b = u->wp->bps.v[--u->wp->bps.n];
	}
	for (size_t i = 0; u->wp && i < u->wp->slots.n; i++)
		if (u->wp->slots.v[i].addr == addr)
			u->wp->slots.v[i].addr = 0;
}

void dt_wp_free(dt_unit *u)
{
	if (!u->wp)
		return;
	bpf_object__close(u->wp->obj);
	free(u->wp->slots.v);
	free(u->wp->bps.v);
	free(u->wp);
	u->wp = NULL;
}
