/* attach_bulk.c — attaches the attach points one program serves (a set, dt_cg_prog.set: a
 * wildcard's expansion or a list) in bulk, and detaches in bulk. What makes big sets slow is the
 * kernel's price per probe at detach, measured on 6.18: closing a uprobe perf event waits for
 * four grace periods of its own (~120 ms), and closing a tracepoint perf event runs
 * tracepoint_synchronize_unregister under the global event_mutex (~70 ms, serialized: 50 s for
 * tracepoint:syscalls:*). So:
 *   - uprobes of one binary go in uprobe-multi links (BPF_TRACE_UPROBE_MULTI, kernel 6.6+), a few
 *     hundred functions a link: a link unregisters all its uprobes and then waits once;
 *   - syscall tracepoints are served by the two raw_syscalls tracepoints, whose records lay out
 *     the syscall number and arguments (or return value) where every syscalls: event has them;
 *     the program keeps the syscalls of its set (dt_abi.h, DT_COOKIE_SYSCALLS);
 *   - the rest (kernels without uprobe-multi, such as Debian 12's 6.1; programs that tail-call;
 *     other tracepoints) is one perf event per attach point, each with a BPF link that carries
 *     the attach slot as cookie, and their fds are closed from several threads at once, which
 *     shares the grace periods the kernel does not serialize (half the time for tracepoints).
 * A member that cannot be attached is skipped with one warning line that names it and says why
 * in words; only a set where nothing attaches is an error. Attaching stops between two steps when
 * the caller says so (a signal), keeping what is attached. */
#include "runtime/session_internal.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Debian 12's uapi headers (6.1) predate uprobe-multi links (6.6): the values and the layout
 * below are those of the kernel's include/uapi/linux/bpf.h (BPF_TRACE_UPROBE_MULTI is in
 * session_internal.h). */
#ifndef BPF_F_UPROBE_MULTI_RETURN
#define BPF_F_UPROBE_MULTI_RETURN (1u << 0)
#endif
/* The kernel's internal "operation not supported" (ENOTSUPP), which uprobes return for an
 * instruction they cannot single-step or emulate; userspace's errno.h does not name it. */
#define DT_ENOTSUPP 524

/* union bpf_attr as BPF_LINK_CREATE reads it for a uprobe-multi link (link_create.uprobe_multi). */
struct uprobe_multi_attr {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, uflags, pid, pad;
};
_Static_assert(offsetof(struct uprobe_multi_attr, path) == 16, "link_create.uprobe_multi");
_Static_assert(offsetof(struct uprobe_multi_attr, pid) == 56, "link_create.uprobe_multi.pid");

/* Functions per uprobe-multi link: a link is detached with one wait, and a failing one is halved
 * until the function that fails is alone, so a link neither so small that the waits add up nor
 * so big that a bad function costs much. */
#define MULTI_CHUNK 256

const char *dt_rt_attach_why(int rc)
{
	switch (-rc) {
	case DT_ENOTSUPP:
		return "the instruction at its entry cannot be probed";
	case EINVAL:
		return "the kernel refused the address as a probe point";
	case ENOENT:
		return "it does not exist";
	case EEXIST:
		return "it is probed already in a way that excludes this probe";
	case EBUSY:
		return "it is busy";
	default:
		return dt_strerror(-rc);
	}
}

/* Errors that no other member of the set would escape: stop instead of skipping. */
static bool whole_set_error(int rc)
{
	return rc == -EPERM || rc == -EACCES || rc == -ESRCH || rc == -EMFILE || rc == -ENFILE ||
	       rc == -ENOMEM || rc == -EOPNOTSUPP || rc == -ECANCELED;
}

/* A set needs two fds a member when it goes one perf event at a time: the soft limit on open
 * files (often 1024) goes up to the hard one, once. */
static void raise_nofile(void)
{
	static bool done;
	struct rlimit rl;

	if (done)
		return;
	done = true;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* ---------------------------------------------------------------- uprobe-multi support */

/* Bit 0: uprobe-multi links; bit 1: their pid filter is per process (6.9+; before, it filtered
 * one thread). Probed once as libbpf does: a link on "/" fails with EBADF where the kernel knows
 * the link type, and an invalid pid fails with EINVAL where the filter was fixed. */
int dt_rt_uprobe_multi_support(void)
{
	static int cached = -1;
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, po, .expected_attach_type = BPF_TRACE_UPROBE_MULTI);
	uint64_t off = 0;
	struct uprobe_multi_attr at = {
		.attach_type = BPF_TRACE_UPROBE_MULTI, .path = (uint64_t)(uintptr_t)"/",
		.offsets = (uint64_t)(uintptr_t)&off, .cnt = 1,
	};
	int fd, lfd;

	if (cached >= 0)
		return cached;
	cached = 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "dt_multi_probe", "GPL", insns, 2, &po);
	if (fd < 0)
		return cached;
	at.prog_fd = (uint32_t)fd;
	lfd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &at, sizeof(at));
	if (lfd < 0 && errno == EBADF) {
		cached = 1;
		at.pid = (uint32_t)-1;
		lfd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &at, sizeof(at));
		if (lfd < 0 && errno == EINVAL)
			cached |= 2;
	}
	if (lfd >= 0)
		close(lfd);
	close(fd);
	return cached;
}

bool dt_rt_set_multi(const dt_attach *const *set, uint32_t n, int pid, bool tail_calls)
{
	int sup;

	if (n < 2 || (set[0]->provider != DT_P_UPROBE && set[0]->provider != DT_P_URETPROBE))
		return false;
	/* A uprobe-multi program may only tail-call programs loaded for uprobe-multi, which the
	 * DWARF walker's are not. */
	if (tail_calls)
		return false;
	sup = dt_rt_uprobe_multi_support();
	return (sup & 1) && (pid <= 0 || (sup & 2));
}

/* ---------------------------------------------------------------- one attach step */

struct run {
	const dt_rt_set *st;
	dt_fdvec *fds;
	uint32_t nattached;
	/* uprobes: the binary, and each member's file offset (or why it has none) */
	char *path;
	uint64_t *off;
	char **why;
};

static bool cancelled(struct run *r)
{
	return r->st->cancelled && r->st->cancelled(r->st->ctx);
}

static void skip(struct run *r, const dt_attach *a, int rc, const char *why)
{
	if (r->st->skipped)
		r->st->skipped(r->st->ctx, a, rc, why);
}

/* Runs the program on perf event `pfd` through a BPF link with `cookie`, and enables it; both fds
 * go to r->fds, or are closed on failure. */
static int perf_link(struct run *r, int pfd, uint64_t cookie)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo, .perf_event.bpf_cookie = cookie);
	int lfd = bpf_link_create(r->st->prog_fd, pfd, BPF_PERF_EVENT, &lo), rc;

	if (lfd < 0) {
		rc = -errno;
		close(pfd);
		return rc;
	}
	if (ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		rc = -errno;
		close(lfd);
		close(pfd);
		return rc;
	}
	DT_VEC_PUSH(r->fds, pfd);
	DT_VEC_PUSH(r->fds, lfd);
	return 0;
}

/* The outcome of one member's perf event: attached, skipped, or an error for the whole set. */
static int member_done(struct run *r, const dt_attach *a, int rc, char **err)
{
	if (rc >= 0) {
		r->nattached++;
		return 0;
	}
	if (whole_set_error(rc))
		return dt_rt_fail(err, rc, "%s: cannot attach: %s", a->text, dt_rt_attach_why(rc));
	skip(r, a, rc, dt_rt_attach_why(rc));
	return 0;
}

/* ---------------------------------------------------------------- uprobes */

/* Members [lo, hi) of the resolved ones (idx) in one uprobe-multi link; a failure that is not the
 * whole set's is halved until the member that fails is alone, and that one is skipped. */
static int multi_range(struct run *r, const uint32_t *idx, uint32_t lo, uint32_t hi, char **err)
{
	const dt_rt_set *st = r->st;
	uint32_t n = hi - lo, mid;
	uint64_t *offs, *cookies;
	struct uprobe_multi_attr at = { .attach_type = BPF_TRACE_UPROBE_MULTI };
	int lfd, rc;

	if (cancelled(r))
		return -ECANCELED;
	offs = xcalloc(n, sizeof(*offs));
	cookies = xcalloc(n, sizeof(*cookies));
	for (uint32_t i = 0; i < n; i++) {
		offs[i] = r->off[idx[lo + i]];
		cookies[i] = st->set[idx[lo + i]]->index;
	}
	at.prog_fd = (uint32_t)st->prog_fd;
	at.path = (uint64_t)(uintptr_t)r->path;
	at.offsets = (uint64_t)(uintptr_t)offs;
	at.cookies = (uint64_t)(uintptr_t)cookies;
	at.cnt = n;
	at.uflags = st->set[0]->provider == DT_P_URETPROBE ? BPF_F_UPROBE_MULTI_RETURN : 0;
	at.pid = st->pid > 0 ? (uint32_t)st->pid : 0;
	lfd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &at, sizeof(at));
	rc = lfd < 0 ? -errno : 0;
	free(offs);
	free(cookies);
	if (lfd >= 0) {
		DT_VEC_PUSH(r->fds, lfd);
		r->nattached += n;
		return 0;
	}
	if (n == 1 || whole_set_error(rc))
		return member_done(r, st->set[idx[lo]], rc, err);
	mid = lo + n / 2;
	rc = multi_range(r, idx, lo, mid, err);
	return rc < 0 ? rc : multi_range(r, idx, mid, hi, err);
}

static int attach_uprobes(struct run *r, char **err)
{
	const dt_rt_set *st = r->st;
	const char **syms = xcalloc(st->n + 1, sizeof(*syms));
	uint32_t *idx = xcalloc(st->n + 1, sizeof(*idx)), nidx = 0;
	int rc;

	r->off = xcalloc(st->n + 1, sizeof(*r->off));
	r->why = xcalloc(st->n + 1, sizeof(*r->why));
	rc = dt_rt_resolve_binary(st->set[0]->target, st->pid, &r->path);
	if (rc < 0) {
		rc = dt_rt_fail(err, rc, "%s: cannot find '%s'", st->set[0]->text, st->set[0]->target);
		goto out;
	}
	for (uint32_t i = 0; i < st->n; i++)
		syms[i] = st->set[i]->func ? st->set[i]->func : "";
	rc = dt_rt_resolve_symbols(r->path, syms, st->n, r->off, NULL, r->why);
	if (rc < 0) {
		rc = dt_rt_fail(err, rc, "%s: %s: %s", st->set[0]->text, r->path,
				dt_elf_strerror(-rc));
		goto out;
	}
	for (uint32_t i = 0; i < st->n; i++) {
		if (st->skip && st->skip[i])
			continue; /* said when the set was checked */
		if (r->why[i]) {
			skip(r, st->set[i], -ENOENT, r->why[i]);
			continue;
		}
		r->off[i] += st->set[i]->offset;
		idx[nidx++] = i;
	}
	if (st->multi) {
		for (uint32_t lo = 0; lo < nidx && rc >= 0; lo += MULTI_CHUNK)
			rc = multi_range(r, idx, lo, DT_MIN(lo + MULTI_CHUNK, nidx), err);
		goto out;
	}
	raise_nofile();
	for (uint32_t k = 0; k < nidx && rc >= 0; k++) {
		const dt_attach *a = st->set[idx[k]];
		int pfd;

		if (cancelled(r)) {
			rc = -ECANCELED;
			break;
		}
		pfd = dt_rt_uprobe_open_at(r->path, r->off[idx[k]], st->pid,
					   a->provider == DT_P_URETPROBE);
		rc = member_done(r, a, pfd < 0 ? pfd : perf_link(r, pfd, a->index), err);
	}
out:
	for (uint32_t i = 0; i < st->n; i++)
		free(r->why[i]);
	free(syms);
	free(idx);
	return rc;
}

/* ---------------------------------------------------------------- tracepoints */

/* Events named after the kernel function where the syscall's name differs (x86-64). */
static const char *const syscall_renames[][2] = {
	{ "newfstat", "fstat" }, { "newlstat", "lstat" },     { "newstat", "stat" },
	{ "newuname", "uname" }, { "sendfile64", "sendfile" }, { "umount", "umount2" },
};

/* The syscall number of tracepoint event `ev` ("sys_enter_NAME"/"sys_exit_NAME"), whose
 * direction goes to *exit; -1 when the build's headers do not know NAME. */
static int64_t syscall_of(const char *ev, bool *exit)
{
	const char *name;

	if (!strncmp(ev, "sys_enter_", 10)) {
		name = ev + 10;
		*exit = false;
	} else if (!strncmp(ev, "sys_exit_", 9)) {
		name = ev + 9;
		*exit = true;
	} else {
		return -1;
	}
	for (size_t i = 0; i < DT_ARRAY_SIZE(syscall_renames); i++)
		if (!strcmp(name, syscall_renames[i][0]))
			name = syscall_renames[i][1];
	/* A newer kernel's syscalls are missing from the build's table: their tracepoints
	 * attach one by one. */
	return dt_syscall_nr(name);
}

/* The members of a syscall set in direction `exit` whose numbers are known, through one perf
 * event on raw_syscalls:sys_enter or sys_exit; `done[i]` marks them. The cookie is the first
 * one's slot, the key of their entries in the syscall map. */
static int attach_raw_syscalls(struct run *r, bool exit, bool *done, char **err)
{
	const dt_rt_set *st = r->st;
	dt_attach raw = { .provider = DT_P_TRACEPOINT, .target = "raw_syscalls",
			  .func = exit ? "sys_exit" : "sys_enter",
			  .text = exit ? "tracepoint:raw_syscalls:sys_exit"
				       : "tracepoint:raw_syscalls:sys_enter" };
	struct dt_syscall_key key = { 0 };
	uint32_t members = 0;
	uint64_t id;
	int64_t nr;
	bool is_exit;
	int pfd, rc;

	for (uint32_t i = 0; i < st->n; i++) {
		if ((st->skip && st->skip[i]) || (nr = syscall_of(st->set[i]->func, &is_exit)) < 0 ||
		    is_exit != exit)
			continue;
		if (!members++)
			key.cookie = st->set[i]->index;
		key.nr = (uint32_t)nr;
		if (bpf_map_update_elem(st->syscall_fd, &key, &st->set[i]->index, BPF_ANY) < 0)
			return dt_rt_fail(err, -errno, "%s: cannot fill the syscall map: %s",
				     st->set[i]->text, dt_strerror(errno));
		done[i] = true;
	}
	/* One syscall alone is as quick through its own tracepoint, and exact for 32-bit tasks. */
	if (members < 2) {
		for (uint32_t i = 0; i < st->n; i++)
			if (done[i] && syscall_of(st->set[i]->func, &is_exit) >= 0 && is_exit == exit)
				done[i] = false;
		return 0;
	}
	rc = dt_rt_tracepoint_id(&raw, &id, err);
	if (rc < 0)
		return rc;
	pfd = dt_rt_tracepoint_open(id);
	rc = pfd < 0 ? pfd : perf_link(r, pfd, DT_COOKIE_SYSCALLS | key.cookie);
	if (rc < 0)
		return dt_rt_fail(err, rc, "%s: cannot attach: %s", raw.text, dt_rt_attach_why(rc));
	r->nattached += members;
	return 0;
}

static int attach_tracepoints(struct run *r, char **err)
{
	const dt_rt_set *st = r->st;
	bool *done = xcalloc(st->n + 1, sizeof(*done));
	int rc = 0;

	if (st->syscall_fd >= 0) {
		rc = attach_raw_syscalls(r, false, done, err);
		if (rc >= 0)
			rc = attach_raw_syscalls(r, true, done, err);
	}
	raise_nofile();
	for (uint32_t i = 0; i < st->n && rc >= 0; i++) {
		const dt_attach *a = st->set[i];
		char *why = NULL;
		uint64_t id;
		int pfd;

		if (done[i] || (st->skip && st->skip[i]))
			continue;
		if (cancelled(r)) {
			rc = -ECANCELED;
			break;
		}
		pfd = dt_rt_tracepoint_id(a, &id, &why);
		if (pfd < 0) {
			skip(r, a, -ENOENT, "no such tracepoint");
			free(why);
			continue;
		}
		pfd = dt_rt_tracepoint_open(id);
		rc = member_done(r, a, pfd < 0 ? pfd : perf_link(r, pfd, a->index), err);
	}
	free(done);
	return rc;
}

/* ---------------------------------------------------------------- the set */

int dt_rt_attach_set(const dt_rt_set *st, dt_fdvec *fds, uint32_t *nattached, char **err)
{
	struct run r = { .st = st, .fds = fds };
	size_t n0 = fds->n;
	int rc;

	*err = NULL;
	*nattached = 0;
	if (st->set[0]->provider == DT_P_TRACEPOINT)
		rc = attach_tracepoints(&r, err);
	else
		rc = attach_uprobes(&r, err);
	free(r.path);
	free(r.off);
	free(r.why);
	if (rc == -ECANCELED) {
		/* What is attached stays: the session ends it like any other. */
		*nattached = r.nattached;
		return rc;
	}
	if (rc >= 0 && !r.nattached)
		rc = dt_rt_fail(err, -ENOENT, "%s: none of the %u attach points of this set could be "
			   "attached", st->set[0]->text, st->n);
	if (rc < 0) {
		dt_rt_detach(fds, n0);
		return rc;
	}
	*nattached = r.nattached;
	return 0;
}

/* ---------------------------------------------------------------- checking a set */

int dt_rt_validate_set(const dt_rt_set *st, bool *skip, char **err)
{
	char **why = xcalloc(st->n + 1, sizeof(*why)), *path = NULL;
	int *code = xcalloc(st->n + 1, sizeof(*code)); /* why[i]'s -errno: -ENOENT, missing */
	uint32_t left = 0;
	int rc = 0;

	*err = NULL;
	if (st->set[0]->provider == DT_P_TRACEPOINT) {
		for (uint32_t i = 0; i < st->n; i++) {
			uint64_t id;
			char *e = NULL;

			if (dt_rt_tracepoint_id(st->set[i], &id, &e) < 0)
				why[i] = xstrdup("no such tracepoint");
			free(e);
		}
	} else {
		const char **syms = xcalloc(st->n + 1, sizeof(*syms));
		uint64_t *off = xcalloc(st->n + 1, sizeof(*off));
		uint64_t *size = xcalloc(st->n + 1, sizeof(*size));

		for (uint32_t i = 0; i < st->n; i++) {
			syms[i] = st->set[i]->func ? st->set[i]->func : "";
			size[i] = UINT64_MAX;
		}
		if (dt_rt_resolve_binary(st->set[0]->target, st->pid, &path) < 0 ||
		    dt_rt_resolve_symbols(path, syms, st->n, off, size, why) < 0) {
			/* The binary is every member's: its failure is the set's, said as for one. */
			rc = dt_rt_validate(st->set[0], st->pid, err);
			rc = rc < 0 ? rc : -ENOEXEC;
		}
		/* Members at func+OFF: the offset must start an instruction (checked one by one:
		 * offsets are rare in a set). */
		for (uint32_t i = 0; i < st->n && rc >= 0; i++)
			if (!why[i] && st->set[i]->offset) {
				dt_rt_resolve_symbol(path, syms[i], st->set[i]->offset,
						     st->set[i]->unsafe, &off[i], &why[i]);
				code[i] = -EINVAL;
			}
		/* A symbol of size 0 named as such (`uprobe:bin:_init,uprobe:bin:main`) is refused
		 * without --unsafe as when it stands alone: the set's error, in bpftrace's words
		 * (dt_rt_resolve_symbol's). A wildcard's matches are attached as before. */
		for (uint32_t i = 0; i < st->n && rc >= 0; i++)
			if (!why[i] && !size[i] && !st->set[i]->offset && !st->set[i]->unsafe &&
			    !st->set[i]->from_wildcard) {
				rc = dt_rt_resolve_symbol(path, syms[i], 0, false, &off[i], err);
				rc = rc < 0 ? rc : -EINVAL;
			}
		free(size);
		free(off);
		free(syms);
		free(path);
	}
	for (uint32_t i = 0; i < st->n && rc >= 0; i++) {
		skip[i] = why[i] != NULL;
		left += !skip[i];
	}
	if (rc >= 0 && !left) {
		/* Nothing of the set can attach: the first member's error, as for one. */
		rc = dt_rt_validate(st->set[0], st->pid, err);
		rc = rc < 0 ? rc : -ENOENT;
	}
	for (uint32_t i = 0; i < st->n; i++) {
		if (rc >= 0 && why[i] && st->skipped)
			st->skipped(st->ctx, st->set[i], code[i] ? code[i] : -ENOENT, why[i]);
		free(why[i]);
	}
	free(code);
	free(why);
	return rc;
}

/* ---------------------------------------------------------------- detach */

struct closer {
	const int *fds;
	size_t n, step, first;
};

static void *close_some(void *arg)
{
	struct closer *c = arg;

	for (size_t i = c->first; i < c->n; i += c->step)
		close(c->fds[i]);
	return NULL;
}

/* Threads closing at once: enough to share the grace periods, few enough to be cheap. */
#define CLOSE_THREADS 16

void dt_rt_detach(dt_fdvec *fds, size_t from)
{
	size_t n = fds->n - from, nt = DT_MIN((size_t)CLOSE_THREADS, n / 4);
	struct closer c[CLOSE_THREADS];
	pthread_t th[CLOSE_THREADS];
	size_t started = 0;

	if (nt > 1) {
		for (size_t t = 0; t < nt; t++) {
			c[t] = (struct closer){ .fds = fds->v + from, .n = n, .step = nt, .first = t };
			if (pthread_create(&th[started], NULL, close_some, &c[t]) != 0)
				break;
			started++;
		}
		for (size_t t = 0; t < started; t++)
			pthread_join(th[t], NULL);
	}
	/* Whatever no thread took (none started, or fewer than asked). */
	for (size_t t = started; t < (nt > 1 ? nt : 1); t++) {
		struct closer rest = { .fds = fds->v + from, .n = n, .step = nt > 1 ? nt : 1,
				       .first = t };

		close_some(&rest);
	}
	fds->n = from;
}
