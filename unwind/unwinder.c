/* unwinder.c — the userspace side of the walker: loads the embedded walker object, owns its table
 * maps, and keeps them in step with the traced processes. Objects (ELF files, the vdso) are built
 * once per identity (build-id, else dev:ino:mtime) and shared: a process's mapping table only points
 * at object ids. Rows live in fixed pages of one array map, allocated first-fit within the memory
 * budget; objects no live process maps are evicted (least recently used first) when space runs out.
 * Requests (from the walker: unknown pid, pc outside every known mapping; from the followers:
 * exec, exit, executable mmap) arrive on a ring buffer and are served by dt_unwinder_process();
 * the processes of a followed cgroup (a -c command's) wait, stopped, until theirs are served
 * (bpf-lib/dt_exec.h, HOLDING). The ELF files themselves and the reading of /proc/PID/maps are
 * elfproc's (its cache is the session's, shared with the symbolizer); an object keeps only what
 * it needs after its rows are built (identity, segments), so the file's image is not held: its
 * CFI pages would stay in our memory for the whole session. */
#include "unwind/unwind.h"
#include "unwind/unwind_internal.h"
#include "bpf-lib/dt_walker_obj.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_OBJ_ROWS (1u << 22) /* the walker's binary search does 23 steps */
/* Requests served by one dt_unwinder_process call. Under heavy churn (hundreds of execs a second,
 * big objects to build) the ring refills as fast as it is read, and a call that emptied it would
 * never return: the session's other work (events, exit(), the pid census) would wait behind it.
 * What is left keeps the poll fd readable. */
#define REQ_BATCH 64
#define REQ_BATCH_DONE (-EAGAIN) /* from request_cb: the batch is served, stop consuming */

typedef struct uobj {
	bool used;
	char *ident;          /* dt_elf_ident: build-id hex or dev:ino:mtime; "vdso" */
	char *path;           /* as the process maps it, for messages */
	dev_t dev;            /* the file's identity, to find the object by a stat (0 for the vdso) */
	ino_t ino;
	struct timespec mtime;
	dt_elf_seg *segs;     /* the PT_LOAD segments (to turn a file offset into a load bias) */
	size_t nsegs;
	uint32_t page_start, npages, nrows;
	uint32_t ipage_start, nipages;   /* rowidx pages */
	uint32_t refs;        /* live processes mapping it */
	uint32_t gen;
	uint64_t last_use;
} uobj;

typedef struct uproc {
	uint32_t pid;
	uint32_t *objs;       /* object ids this process holds a reference on */
	uint32_t nobjs;
} uproc;

/* A process whose exit the walker reported: its tables stay until it has really gone. */
typedef struct dying {
	uint32_t pid;
	uint64_t since_ns;
} dying;

/* Longest a reported exit keeps a process's tables when it does not turn into a zombie first:
 * a pid reused meanwhile by a fork that does not exec must not be unwound with them for long. */
#define DYING_MAX_NS 500000000ull

/* Programs that follow processes: exit, and executable mmaps (dlopen, ld.so at start). Exec is
 * followed by the exec follower (exec.c), whose maps the walker shares. */
static const char *const follower_names[] = { "dt_follow_exit", "dt_follow_mmap_enter",
					      "dt_follow_mmap_exit" };
#define DT_NFOLLOWERS DT_ARRAY_SIZE(follower_names)

struct dt_unwinder {
	dt_unwinder_opts opts;
	dt_elf_cache *elfc;                 /* opts.elf_cache, or our own */
	bool own_elfc;
	struct bpf_object *obj;             /* maps, exit and mmap followers */
	struct bpf_object *tobj[DT_WPT__COUNT]; /* walker programs per type, loaded on demand */
	struct bpf_object *pyobj[DT_WPT__COUNT]; /* their Python steps, once CPython is seen */
	bool py_wanted;                          /* the Python step is wanted (py_seen) */
	bool system_wide;                        /* dt_unwinder_add_all was called */
	/* A system-wide session's Python steps load on a thread of their own (py_bg_start), one
	 * per walker type, so that neither start-up waits for the verifier nor a short-lived
	 * CPython process ends before its frames can be read. */
	struct py_bg {
		dt_unwinder *u;
		pthread_t th;
		int k, ret;
		double ms;
		bool started, reported;
		atomic_bool done;
	} py_bg[DT_WPT__COUNT];
	int wprogs_fd[DT_WPT__COUNT], cprogs_fd[DT_WPT__COUNT], wstate_fd[DT_WPT__COUNT];
	int frames_fd, frames_deep_fd, procs_fd, objects_fd, rows_fd, rules_fd, rindex_fd;
	int requests_fd, wstats_fd, throttle_fd;
	struct ring_buffer *rb;
	struct bpf_link *links[DT_NFOLLOWERS];
	dt_ruleset rs;
	uint32_t rules_pushed;
	uint32_t npages, nipages;
	uint8_t *page_used, *ipage_used;
	uobj objs[DT_MAX_OBJECTS];
	DT_VEC(uproc) procs;
	uint64_t clock;       /* use counter for LRU eviction */
	uint64_t requests_served, build_errors, evictions, rows_total;
	uint32_t batch_left;  /* requests this dt_unwinder_process call may still serve */
	int pending_err;
	uint64_t frames_missing; /* stack ids asked for but no longer in the frames maps */
	double startup_ms;      /* dt_unwinder_add_all: time and processes */
	uint32_t startup_procs;
	bool follows_cgroup;    /* dt_unwinder_follow_cgroup: its processes are held */
	dt_py *py;              /* CPython processes (python.c) */
	DT_VEC(dying) dying;    /* exits reported, tables not yet removed (reap_dying) */
};

static const char *const ptype_sfx[DT_WPT__COUNT] = {"perf", "kprobe", "tp", "rawtp"};

void dt_unwind_log(void (*log)(void *ctx, const char *msg), void *ctx, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!log)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log(ctx, buf);
}

/* A background load (py_bg) says nothing itself: the session's log is not for other threads. */
static __thread bool ulog_quiet;
#define ulog(u, ...)                                                                 \
	do {                                                                         \
		if (!ulog_quiet)                                                     \
			dt_unwind_log((u)->opts.log, (u)->opts.log_ctx, __VA_ARGS__); \
	} while (0)

int dt_obj_map_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	return m ? bpf_map__fd(m) : -ENOENT;
}

int dt_walker_ptype_of(enum bpf_prog_type t)
{
	switch (t) {
	case BPF_PROG_TYPE_PERF_EVENT: return DT_WPT_PERF_EVENT;
	case BPF_PROG_TYPE_KPROBE: return DT_WPT_KPROBE;
	case BPF_PROG_TYPE_TRACEPOINT: return DT_WPT_TRACEPOINT;
	case BPF_PROG_TYPE_RAW_TRACEPOINT: return DT_WPT_RAW_TP;
	default: return -EOPNOTSUPP;
	}
}

static int map_fd(dt_unwinder *u, const char *name)
{
	return dt_obj_map_fd(u->obj, name);
}

static int request_cb(void *ctx, void *data, size_t size);

/* Loads programs of the walker for program type k into a second bpf_object from the same
 * embedded ELF whose maps all reuse the core object's, and installs them in that type's walker
 * slots: the walker (start and step), or the Python step (py). Separate objects let a session pay
 * the verifier only for the program types its probes use, whenever it first needs one (a REPL
 * may add a tracepoint probe after a profile probe), and for the Python step only once a CPython
 * process is seen (until then its slot is empty, and the walker's tail call to it falls through
 * to the native-only end of the walk). A prog array update is atomic: a walk in progress sees the
 * slot empty or filled. */
static int load_progs(dt_unwinder *u, int k, bool py, struct bpf_object **out)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "dt_walker_t");
	static const char *const slot_name[DT_WALKER_NSLOTS] = {
		[DT_WALKER_SLOT_START] = "start", [DT_WALKER_SLOT_STEP] = "step",
		[DT_WALKER_SLOT_PY] = "py" };
	struct bpf_program *prog;
	struct bpf_object *o;
	struct bpf_map *m;
	struct timespec t0, t1;
	char name[64];
	uint32_t slot;
	int ret, fd;

	if (*out)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	o = bpf_object__open_mem(dt_walker_bpf_obj, dt_walker_bpf_obj_len, &oo);
	if (!o) {
		ret = -errno;
		ulog(u, "walker: cannot open the embedded BPF object: %s", dt_strerror(-ret));
		return ret;
	}
	bpf_object__for_each_map(m, o) {
		int cfd = map_fd(u, bpf_map__name(m));

		if (cfd < 0 || bpf_map__reuse_fd(m, cfd) < 0) {
			ret = cfd < 0 ? cfd : -errno;
			ulog(u, "walker: cannot share map %s: %s", bpf_map__name(m), dt_strerror(-ret));
			goto fail;
		}
	}
	bpf_object__for_each_program(prog, o) {
		const char *pn = bpf_program__name(prog), *sfx = strrchr(pn, '_');
		bool want = false;

		for (slot = 0; slot < DT_WALKER_NSLOTS && sfx && !strcmp(sfx + 1, ptype_sfx[k]);
		     slot++) {
			snprintf(name, sizeof(name), "dt_walk_%s_%s", slot_name[slot], ptype_sfx[k]);
			if (!strcmp(pn, name))
				want = (slot == DT_WALKER_SLOT_PY) == py;
		}
		bpf_program__set_autoload(prog, want);
	}
	ret = bpf_object__load(o);
	if (ret < 0) {
		ulog(u, "walker: loading the %s %s failed: %s", ptype_sfx[k],
		     py ? "Python step" : "walker", dt_strerror(-ret));
		goto fail;
	}
	for (slot = 0; slot < DT_WALKER_NSLOTS; slot++) {
		if ((slot == DT_WALKER_SLOT_PY) != py)
			continue;
		snprintf(name, sizeof(name), "dt_walk_%s_%s", slot_name[slot], ptype_sfx[k]);
		prog = bpf_object__find_program_by_name(o, name);
		fd = prog ? bpf_program__fd(prog) : -ENOENT;
		if (fd < 0 || bpf_map_update_elem(u->wprogs_fd[k], &slot, &fd, BPF_ANY) < 0) {
			ret = fd < 0 ? fd : -errno;
			ulog(u, "walker: cannot install %s: %s", name, dt_strerror(-ret));
			goto fail;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ulog(u, "walker: %s %s loaded in %.0f ms", ptype_sfx[k], py ? "Python step" : "walker",
	     (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	*out = o;
	return 0;
fail:
	bpf_object__close(o);
	return ret;
}

static void *py_bg_run(void *arg)
{
	struct py_bg *b = arg;
	struct timespec t0, t1;

	ulog_quiet = true;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	b->ret = load_progs(b->u, b->k, true, &b->u->pyobj[b->k]);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	b->ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	atomic_store(&b->done, true);
	return NULL;
}

/* The Python step of walker type k loads on its own thread (a system-wide session); the thread
 * writes pyobj[k] only, which nothing else touches until py_bg_join. Falls back to loading here
 * when no thread can be made. */
static void py_bg_start(dt_unwinder *u, int k)
{
	struct py_bg *b = &u->py_bg[k];

	if (b->started || u->pyobj[k] || !u->tobj[k])
		return;
	b->u = u;
	b->k = k;
	b->started = true;
	if (pthread_create(&b->th, NULL, py_bg_run, b) != 0) {
		b->started = false;
		load_progs(u, k, true, &u->pyobj[k]);
	}
}

/* What the background loads did, said once each (-v; a failure as a notice). */
static void py_bg_report(dt_unwinder *u, bool wait)
{
	for (int k = 0; k < DT_WPT__COUNT; k++) {
		struct py_bg *b = &u->py_bg[k];

		if (!b->started || b->reported || (!wait && !atomic_load(&b->done)))
			continue;
		pthread_join(b->th, NULL);
		b->reported = true;
		if (b->ret < 0 && u->opts.notice)
			dt_unwind_log(u->opts.notice, u->opts.notice_ctx,
				      "cannot load the walker's Python step: %s; stacks of CPython "
				      "processes show the interpreter's native frames",
				      dt_strerror(-b->ret));
		else if (b->ret >= 0)
			ulog(u, "walker: %s Python step loaded in %.0f ms (in the background)",
			     ptype_sfx[k], b->ms);
	}
}

/* The walker for program type k, with its Python step once a CPython process has been seen
 * (in a system-wide session, from the start, in the background). */
static int load_ptype(dt_unwinder *u, int k)
{
	int ret = load_progs(u, k, false, &u->tobj[k]);

	if (ret < 0)
		return ret;
	if (u->system_wide) {
		u->py_wanted = true;
		py_bg_start(u, k);
		return 0;
	}
	if (!u->py_wanted)
		return 0;
	load_progs(u, k, true, &u->pyobj[k]); /* else native frames only (said with -v) */
	return 0;
}

/* The Python step of every walker loaded (and of those loaded later), once. */
static int load_py_steps(dt_unwinder *u)
{
	int k, ret;

	if (u->py_wanted)
		return 0;
	u->py_wanted = true;
	for (k = 0; k < DT_WPT__COUNT; k++)
		if (u->tobj[k] && (ret = load_progs(u, k, true, &u->pyobj[k])) < 0)
			return ret;
	return 0;
}

/* dt_py's load_step, when a CPython process is seen: the step loads now, so that a process the
 * session starts or names (-c, -p) has Python frames from its first sample. A system-wide
 * session loads it from the start on threads of its own (py_bg_start): start-up does not wait
 * for the verifier, and a CPython process that lives shorter than the verifier takes still has
 * its frames. */
static int py_seen(void *ctx)
{
	dt_unwinder *u = ctx;

	return u->system_wide ? 0 : load_py_steps(u);
}

dt_unwinder *dt_unwinder_new(const dt_unwinder_opts *opts)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "dt_walker");
	dt_unwinder *u = xcalloc(1, sizeof(*u));
	struct bpf_program *prog;
	struct bpf_map *m;
	uint64_t budget;
	char name[64];
	int ret = 0, i, k;

	if (opts)
		memcpy(&u->opts, opts, DT_MIN(opts->sz ? opts->sz : sizeof(*opts), sizeof(*opts)));
	budget = u->opts.table_budget ? u->opts.table_budget : 64ull << 20;
	u->npages = (uint32_t)DT_MAX(budget / sizeof(struct dt_row_page), 16);
	u->page_used = xcalloc(u->npages, 1);
	/* Index entries cost at most 0.25 byte per row (see load_index), rows 6. */
	u->nipages = u->npages * (uint32_t)sizeof(struct dt_row_page) / 24 /
		     (uint32_t)sizeof(struct dt_index_page) + 16;
	u->ipage_used = xcalloc(u->nipages, 1);
	for (i = 0; i < DT_WPT__COUNT; i++)
		u->wprogs_fd[i] = u->cprogs_fd[i] = u->wstate_fd[i] = -1;
	dt_ruleset_init(&u->rs);
	u->elfc = u->opts.elf_cache;
	if (!u->elfc) {
		u->elfc = dt_elf_cache_new();
		u->own_elfc = true;
	}

	/* The core object owns every map; its walker programs load per type (load_ptype). */
	u->obj = bpf_object__open_mem(dt_walker_bpf_obj, dt_walker_bpf_obj_len, &oo);
	if (!u->obj) {
		ret = -errno;
		ulog(u, "walker: cannot open the embedded BPF object: %s", dt_strerror(-ret));
		goto fail;
	}
	m = bpf_object__find_map_by_name(u->obj, "rows");
	if (m)
		bpf_map__set_max_entries(m, u->npages);
	m = bpf_object__find_map_by_name(u->obj, "rowidx");
	if (m)
		bpf_map__set_max_entries(m, u->nipages);
	m = bpf_object__find_map_by_name(u->obj, "frames");
	if (m)
		bpf_map__set_max_entries(m, u->opts.max_stacks ? u->opts.max_stacks : 16384);
	/* With an exec follower, the maps it shares with the walker are its own: it writes them
	 * at every exec, with or without the walker. */
	bpf_object__for_each_map(m, u->obj) {
		int sfd = u->opts.exec ? dt_exec_follower_walker_map_fd(u->opts.exec,
									bpf_map__name(m)) : -ENOENT;

		if (sfd >= 0 && bpf_map__reuse_fd(m, sfd) < 0) {
			ret = -errno;
			ulog(u, "walker: cannot share map %s with the exec follower: %s",
			     bpf_map__name(m), dt_strerror(-ret));
			goto fail;
		}
	}
	bpf_object__for_each_program(prog, u->obj)
		bpf_program__set_autoload(prog, u->opts.exec &&
					  !strncmp(bpf_program__name(prog), "dt_follow_", 10));
	ret = bpf_object__load(u->obj);
	if (ret < 0) {
		ulog(u, "walker: loading the BPF object failed: %s", dt_strerror(-ret));
		goto fail;
	}
	for (k = 0; k < DT_WPT__COUNT; k++) {
		snprintf(name, sizeof(name), "wprogs_%s", ptype_sfx[k]);
		u->wprogs_fd[k] = map_fd(u, name);
		snprintf(name, sizeof(name), "cprogs_%s", ptype_sfx[k]);
		u->cprogs_fd[k] = map_fd(u, name);
		snprintf(name, sizeof(name), "wstate_%s", ptype_sfx[k]);
		u->wstate_fd[k] = map_fd(u, name);
		if ((u->opts.ptypes & (1u << k)) && (ret = load_ptype(u, k)) < 0)
			goto fail;
	}
	u->frames_fd = map_fd(u, "frames");
	u->frames_deep_fd = map_fd(u, "frames_deep");
	u->procs_fd = map_fd(u, "procs");
	u->objects_fd = map_fd(u, "objects");
	u->rows_fd = map_fd(u, "rows");
	u->rules_fd = map_fd(u, "rules");
	u->rindex_fd = map_fd(u, "rowidx");
	u->requests_fd = map_fd(u, "requests");
	u->wstats_fd = map_fd(u, "wstats");
	u->throttle_fd = map_fd(u, "throttle");
	u->py = dt_py_new(u->elfc, map_fd(u, "pyprocs"), map_fd(u, "pycode"),
			  map_fd(u, "pythreads"), py_seen, u, u->opts.notice,
			  u->opts.notice_ctx, u->opts.log, u->opts.log_ctx);
	dt_py_set_debug_file(u->py, u->opts.debug_file, u->opts.debug_file_ctx);
	u->rb = ring_buffer__new(u->requests_fd, request_cb, u, NULL);
	if (!u->rb) {
		ret = -errno;
		ulog(u, "walker: request ring buffer: %s", dt_strerror(-ret));
		goto fail;
	}
	if (u->opts.exec) {
		for (i = 0; i < (int)DT_NFOLLOWERS; i++) {
			prog = bpf_object__find_program_by_name(u->obj, follower_names[i]);
			u->links[i] = prog ? bpf_program__attach(prog) : NULL;
			if (!u->links[i]) {
				ret = -errno;
				ulog(u, "walker: cannot attach %s: %s", follower_names[i],
				     dt_strerror(-ret));
				goto fail;
			}
		}
	}
	return u;
fail:
	dt_unwinder_free(u);
	errno = ret < 0 ? -ret : EINVAL;
	return NULL;
}

void dt_unwinder_free(dt_unwinder *u)
{
	size_t i;

	if (!u)
		return;
	/* No process is held from now on; those held already are continued once the mmap
	 * followers are detached (which waits for a run in progress). The exec follower lets go
	 * of one it holds after this when it is freed in turn. */
	if (u->follows_cgroup)
		dt_exec_follower_follow_cgroup(u->opts.exec, 0);
	py_bg_report(u, true); /* joins the loads still running */
	for (i = 0; i < DT_NFOLLOWERS; i++)
		bpf_link__destroy(u->links[i]);
	ring_buffer__free(u->rb);
	if (u->follows_cgroup)
		dt_exec_follower_release_held(u->opts.exec);
	for (i = 0; i < DT_WPT__COUNT; i++) {
		bpf_object__close(u->pyobj[i]);
		bpf_object__close(u->tobj[i]);
	}
	bpf_object__close(u->obj);
	for (i = 0; i < DT_MAX_OBJECTS; i++) {
		free(u->objs[i].ident);
		free(u->objs[i].path);
		free(u->objs[i].segs);
	}
	dt_py_free(u->py);
	if (u->own_elfc)
		dt_elf_cache_free(u->elfc);
	for (i = 0; i < u->procs.n; i++)
		free(u->procs.v[i].objs);
	free(u->procs.v);
	free(u->dying.v);
	free(u->page_used);
	free(u->ipage_used);
	dt_ruleset_fini(&u->rs);
	free(u);
}

int dt_unwinder_load_walker(dt_unwinder *u, enum bpf_prog_type t)
{
	int k = dt_walker_ptype_of(t);

	return k < 0 ? k : load_ptype(u, k);
}

/* The fd in fds[] for program type t, whose walker is loaded. */
static int fd_for(dt_unwinder *u, const int *fds, enum bpf_prog_type t)
{
	int k = dt_walker_ptype_of(t);

	if (k < 0 || fds[k] < 0)
		return -EOPNOTSUPP;
	return u->tobj[k] ? fds[k] : -ENOENT;
}

int dt_unwinder_walker_progs_fd(dt_unwinder *u, enum bpf_prog_type t)
{
	return fd_for(u, u->wprogs_fd, t);
}

int dt_unwinder_cont_progs_fd(dt_unwinder *u, enum bpf_prog_type t)
{
	return fd_for(u, u->cprogs_fd, t);
}

int dt_unwinder_state_fd(dt_unwinder *u, enum bpf_prog_type t)
{
	return fd_for(u, u->wstate_fd, t);
}

uint32_t dt_unwinder_cont_slots(const dt_unwinder *u)
{
	return DT_WALKER_CONT_SLOTS;
}

int dt_unwinder_frames_fd(const dt_unwinder *u)
{
	return u->frames_fd;
}

int dt_unwinder_poll_fd(const dt_unwinder *u)
{
	return ring_buffer__epoll_fd(u->rb);
}

/* ---------------------------------------------------------------- row pages */

static void free_pages(uint8_t *used, uint32_t start, uint32_t n)
{
	memset(used + start, 0, n);
}

/* First fit of n contiguous pages in `used`; -ENOSPC when there is no such run. */
static int alloc_pages(uint8_t *used, uint32_t total, uint32_t n, uint32_t *start)
{
	uint32_t i, run = 0;

	for (i = 0; i < total; i++) {
		run = used[i] ? 0 : run + 1;
		if (run == n) {
			*start = i + 1 - n;
			memset(used + *start, 1, n);
			return 0;
		}
	}
	return -ENOSPC;
}

static void obj_drop_tables(dt_unwinder *u, uint32_t id)
{
	uobj *o = &u->objs[id];

	free_pages(u->page_used, o->page_start, o->npages);
	free_pages(u->ipage_used, o->ipage_start, o->nipages);
	u->rows_total -= o->nrows;
	o->npages = o->nrows = o->nipages = 0;
}

static void evict(dt_unwinder *u, uint32_t id)
{
	uobj *o = &u->objs[id];
	struct dt_unwind_obj none = {0};

	obj_drop_tables(u, id);
	bpf_map_update_elem(u->objects_fd, &id, &none, BPF_ANY);
	free(o->ident);
	free(o->path);
	free(o->segs);
	memset(o, 0, sizeof(*o));
	u->evictions++;
}

/* Pages for n rows, evicting unreferenced objects (least recently used first) as needed. */
static int alloc_rows(dt_unwinder *u, uint32_t nrows, uint32_t *start, uint32_t *npages)
{
	*npages = (nrows + DT_ROWS_PER_PAGE - 1) / DT_ROWS_PER_PAGE;
	while (alloc_pages(u->page_used, u->npages, *npages, start) < 0) {
		uint32_t i, victim = UINT32_MAX;

		for (i = 0; i < DT_MAX_OBJECTS; i++) {
			uobj *o = &u->objs[i];

			if (o->used && !o->refs && o->npages &&
			    (victim == UINT32_MAX || o->last_use < u->objs[victim].last_use))
				victim = i;
		}
		if (victim == UINT32_MAX)
			return -ENOSPC;
		evict(u, victim);
	}
	return 0;
}

static int push_rules(dt_unwinder *u)
{
	for (; u->rules_pushed < u->rs.n; u->rules_pushed++) {
		uint32_t k = u->rules_pushed;

		if (bpf_map_update_elem(u->rules_fd, &k, &u->rs.rules[k], BPF_ANY) < 0)
			return -errno;
	}
	return 0;
}

/* Builds the object's bucket index (see dt_walker.h, rowidx) into kernel pages and fills the
 * index fields of `ko`; leaves them 0 for small objects or when the index budget is full. */
static void load_index(dt_unwinder *u, uobj *o, const dt_rows *rows, struct dt_unwind_obj *ko)
{
	uint32_t shift = 8, nb, b, i = 0, p, span;
	struct dt_index_page *pg;

	if (rows->n < 256)
		return;
	span = rows->pc[rows->n - 1] - rows->pc[0];
	/* A bucket per 16 rows or more: at most 0.25 byte per row on top of the rows' 6, and a
	 * search of ~5 steps instead of log2(rows). */
	while (shift < 31 && (span >> shift) + 1 > rows->n / 16)
		shift++;
	nb = (span >> shift) + 1;
	o->nipages = (nb + DT_INDEX_PER_PAGE - 1) / DT_INDEX_PER_PAGE;
	if (alloc_pages(u->ipage_used, u->nipages, o->nipages, &o->ipage_start) < 0) {
		o->nipages = 0;
		return;
	}
	pg = xcalloc(1, sizeof(*pg));
	for (p = 0; p < o->nipages; p++) {
		uint32_t key = o->ipage_start + p;

		for (b = p * DT_INDEX_PER_PAGE; b < DT_MIN(nb, (p + 1) * DT_INDEX_PER_PAGE); b++) {
			uint32_t bstart = rows->pc[0] + (b << shift);

			/* Rows are sorted: the covering row only moves forward. */
			while (i + 1 < rows->n && rows->pc[i + 1] <= bstart)
				i++;
			pg->row[b % DT_INDEX_PER_PAGE] = ko->row_start + i;
		}
		if (bpf_map_update_elem(u->rindex_fd, &key, pg, BPF_ANY) < 0) {
			free_pages(u->ipage_used, o->ipage_start, o->nipages);
			o->nipages = 0;
			free(pg);
			return;
		}
	}
	free(pg);
	ko->index_shift = shift;
	ko->index_start = o->ipage_start * DT_INDEX_PER_PAGE;
	ko->nbuckets = nb;
	ko->base_pc = rows->pc[0];
}

/* Copies the rows into kernel pages and publishes the object. */
static int load_rows(dt_unwinder *u, uint32_t id, const dt_rows *rows)
{
	struct dt_row_page *pg = xmalloc(sizeof(*pg));
	struct dt_unwind_obj ko = {0};
	uobj *o = &u->objs[id];
	uint32_t p, i, base;
	int ret;

	ret = push_rules(u);
	if (ret < 0)
		goto out;
	ret = alloc_rows(u, rows->n, &o->page_start, &o->npages);
	if (ret < 0)
		goto out;
	for (p = 0; p < o->npages; p++) {
		uint32_t key = o->page_start + p;

		base = p * DT_ROWS_PER_PAGE;
		for (i = 0; i < DT_ROWS_PER_PAGE; i++) {
			/* Padding rows repeat the last pc: never "<=" a smaller rel than it. */
			uint32_t src = DT_MIN(base + i, rows->n - 1);

			pg->pc[i] = rows->pc[src];
			pg->rule[i] = rows->rule[src];
		}
		if (bpf_map_update_elem(u->rows_fd, &key, pg, BPF_ANY) < 0) {
			ret = -errno;
			free_pages(u->page_used, o->page_start, o->npages);
			o->npages = 0;
			goto out;
		}
	}
	o->nrows = rows->n;
	u->rows_total += rows->n;
	ko.row_start = o->page_start * DT_ROWS_PER_PAGE;
	ko.nrows = rows->n;
	ko.gen = ++o->gen;
	/* Without an index the walker searches all rows: slower, still right. */
	load_index(u, o, rows, &ko);
	if (bpf_map_update_elem(u->objects_fd, &id, &ko, BPF_ANY) < 0)
		ret = -errno;
out:
	free(pg);
	return ret;
}

/* ---------------------------------------------------------------- objects */

static int obj_slot(dt_unwinder *u)
{
	uint32_t i, victim = UINT32_MAX;

	for (i = 0; i < DT_MAX_OBJECTS; i++)
		if (!u->objs[i].used)
			return (int)i;
	for (i = 0; i < DT_MAX_OBJECTS; i++)
		if (!u->objs[i].refs &&
		    (victim == UINT32_MAX || u->objs[i].last_use < u->objs[victim].last_use))
			victim = i;
	if (victim == UINT32_MAX)
		return -ENOSPC;
	evict(u, victim);
	return (int)victim;
}

/* The object already built for identity `ident` (the same build-id under another path is the
 * same object: one libc for every container); -1 when there is none. */
static int obj_find(const dt_unwinder *u, const char *ident)
{
	for (uint32_t i = 0; i < DT_MAX_OBJECTS; i++)
		if (u->objs[i].used && !strcmp(u->objs[i].ident, ident))
			return (int)i;
	return -1;
}

/* Finds, or builds, the object for e (a reference, dropped here); its id or -errno. */
static int obj_for_elf(dt_unwinder *u, dt_elf *e, const char *display)
{
	char err[512];
	dt_rows rows = {0};
	const dt_elf_seg *segs;
	int id = obj_find(u, dt_elf_ident(e)), ret;

	if (id >= 0)
		goto out;
	id = obj_slot(u);
	if (id < 0)
		goto out;
	uobj *o = &u->objs[id];
	o->used = true;
	o->ident = xstrdup(dt_elf_ident(e));
	o->path = xstrdup(display);
	dt_elf_file_id(e, &o->dev, &o->ino, &o->mtime);
	segs = dt_elf_segments(e, &o->nsegs);
	o->segs = xcalloc(o->nsegs + 1, sizeof(*o->segs));
	memcpy(o->segs, segs, o->nsegs * sizeof(*segs));
	o->last_use = ++u->clock;
	ret = dt_cfi_build(u->elfc, e, &u->rs, &rows, err, sizeof(err));
	if (ret < 0 || rows.nbad) {
		ulog(u, "unwind: %s", err);
		u->build_errors++;
	}
	if (ret < 0) {
		/* no rows: frame pointers for this object */
	} else if (rows.n > MAX_OBJ_ROWS) {
		ulog(u, "unwind: %s: %u rows, more than the walker searches; frame pointers used",
		     display, rows.n);
		u->build_errors++;
	} else if (rows.n) {
		ret = load_rows(u, (uint32_t)id, &rows);
		if (ret < 0) {
			ulog(u, "unwind: %s: no room for %u rows in the table budget (%s)", display,
			     rows.n, dt_strerror(-ret));
			u->build_errors++;
		}
	}
	dt_rows_fini(&rows);
out:
	dt_elf_put(e);
	return id;
}

/* The object for a mapped file (through its /proc/PID/map_files link); its id or -errno. A file
 * already built is found by a stat, without opening it. */
static int obj_for_file(dt_unwinder *u, const char *path, const char *display)
{
	struct stat st;
	dt_elf *e;

	if (stat(path, &st) < 0)
		return -errno;
	for (uint32_t i = 0; i < DT_MAX_OBJECTS; i++) {
		uobj *o = &u->objs[i];

		if (o->used && o->dev == st.st_dev && o->ino == st.st_ino &&
		    o->mtime.tv_sec == st.st_mtim.tv_sec && o->mtime.tv_nsec == st.st_mtim.tv_nsec)
			return (int)i;
	}
	e = dt_elf_open(u->elfc, path);
	if (!e) {
		int ret = -errno;

		if (ret == -ENOEXEC || ret == -EBADMSG)
			ulog(u, "unwind: %s: %s", display, dt_elf_strerror(-ret));
		return ret;
	}
	return obj_for_elf(u, e, display);
}

/* The vdso is the same image in every process: built once, from our own mapping. */
static int obj_for_vdso(dt_unwinder *u)
{
	int id = obj_find(u, "vdso");
	dt_elf *e;

	if (id >= 0)
		return id;
	e = dt_elf_open_vdso(u->elfc);
	return e ? obj_for_elf(u, e, "[vdso]") : -errno;
}

/* Load bias of a mapping of object o at `start` with file offset `off`. */
static bool obj_bias(const uobj *o, uint64_t start, uint64_t off, bool vdso, uint64_t *bias)
{
	size_t i;

	if (vdso) {
		*bias = start - (o->nsegs ? o->segs[0].vaddr : 0);
		return true;
	}
	for (i = 0; i < o->nsegs; i++) {
		const dt_elf_seg *s = &o->segs[i];

		if (s->exec && off >= (s->off & ~4095ull) && off < s->off + s->filesz) {
			*bias = start - (s->vaddr - (s->off - off));
			return true;
		}
	}
	return false;
}

/* ---------------------------------------------------------------- processes */

static uproc *find_proc(dt_unwinder *u, uint32_t pid)
{
	size_t i;

	for (i = 0; i < u->procs.n; i++)
		if (u->procs.v[i].pid == pid)
			return &u->procs.v[i];
	return NULL;
}

static void proc_release(dt_unwinder *u, uproc *p)
{
	uint32_t i;

	for (i = 0; i < p->nobjs; i++)
		if (u->objs[p->objs[i]].refs)
			u->objs[p->objs[i]].refs--;
	free(p->objs);
	p->objs = NULL;
	p->nobjs = 0;
}

void dt_unwinder_remove_pid(dt_unwinder *u, uint32_t pid)
{
	uproc *p = find_proc(u, pid);

	bpf_map_delete_elem(u->procs_fd, &pid);
	if (u->py)
		dt_py_forget(u->py, pid);
	if (!p)
		return;
	proc_release(u, p);
	*p = u->procs.v[--u->procs.n];
}

/* Whether pid is gone or a zombie: past do_exit, where no sample of it can be taken. */
static bool proc_done(uint32_t pid)
{
	char path[48], st[256] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	if (!fgets(st, sizeof(st), f))
		st[0] = 0;
	fclose(f);
	/* "pid (comm) state ...": comm may hold anything but the last ')'. */
	const char *p = strrchr(st, ')');
	return !p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X';
}

/* A process's exit is reported by sched_process_exit, which fires while it still runs with its
 * memory (since 6.16 before exit_mm), so a sample then still unwinds with its tables: they are
 * removed once the process is a zombie or gone (or after DYING_MAX_NS). Past exit_mm the walker
 * stops by itself (DT_UNWIND_EXITED). */
static void reap_dying(dt_unwinder *u, bool all)
{
	uint64_t now = dt_now_ns();
	size_t i, k = 0;

	for (i = 0; i < u->dying.n; i++) {
		dying d = u->dying.v[i];

		if (all || now - d.since_ns > DYING_MAX_NS || proc_done(d.pid))
			dt_unwinder_remove_pid(u, d.pid);
		else
			u->dying.v[k++] = d;
	}
	u->dying.n = k;
}

/* A pid that execs again (reused) has new tables: its earlier exit no longer removes them. */
static void forget_dying(dt_unwinder *u, uint32_t pid)
{
	size_t i, k = 0;

	for (i = 0; i < u->dying.n; i++)
		if (u->dying.v[i].pid != pid)
			u->dying.v[k++] = u->dying.v[i];
	u->dying.n = k;
}

/* Forgets processes that are gone (their exit may have been missed). */
static void prune_dead(dt_unwinder *u)
{
	size_t i;

	for (i = u->procs.n; i-- > 0;)
		if (kill((pid_t)u->procs.v[i].pid, 0) < 0 && errno == ESRCH)
			dt_unwinder_remove_pid(u, u->procs.v[i].pid);
}

int dt_unwinder_add_pid(dt_unwinder *u, uint32_t pid)
{
	struct dt_proc_maps *pm = xcalloc(1, sizeof(*pm));
	DT_VEC(uint32_t) held = {0};
	dt_proc_mappings maps;
	char mf[96];
	uproc *p;
	int ret;

	ret = dt_proc_mappings_read((int)pid, &maps);
	if (ret < 0)
		goto out;
	for (size_t k = 0; k < maps.n; k++) {
		const dt_proc_mapping *mp = &maps.v[k];
		struct dt_mapping *m;
		uint64_t bias = 0;
		bool vdso;
		int id;

		if (mp->perms[2] != 'x')
			continue;
		if (pm->n >= DT_MAX_MAPPINGS) {
			ulog(u, "unwind: pid %u: more than %d executable mappings, the rest ignored",
			     pid, DT_MAX_MAPPINGS);
			break;
		}
		m = &pm->m[pm->n];
		m->start = mp->start;
		m->end = mp->end;
		m->obj_id = DT_OBJ_NONE;
		vdso = !strcmp(mp->path, "[vdso]");
		if (vdso) {
			id = obj_for_vdso(u);
		} else if (mp->path[0] == '/' && mp->inode) {
			/* map_files reaches the mapped file even when deleted or in another mount
			 * namespace. */
			snprintf(mf, sizeof(mf), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid,
				 mp->start, mp->end);
			id = obj_for_file(u, mf, mp->path);
		} else {
			id = -ENOENT; /* anonymous executable memory (JIT): frame pointers */
		}
		if (id >= 0 && obj_bias(&u->objs[id], mp->start, mp->offset, vdso, &bias) &&
		    bias <= mp->start) {
			m->obj_id = (uint32_t)id;
			m->bias = bias;
			u->objs[id].refs++;
			u->objs[id].last_use = ++u->clock;
			DT_VEC_PUSH(&held, (uint32_t)id);
		}
		pm->n++;
	}
	if (pm->n)
		dt_py_scan(u->py, pid, &maps);
	dt_proc_mappings_free(&maps);
	if (pm->n == 0) {
		ret = -ESRCH; /* a kernel thread, or a process between exit and reaping */
		goto release;
	}
	if (bpf_map_update_elem(u->procs_fd, &pid, pm, BPF_ANY) < 0) {
		ret = -errno;
		if (ret == -E2BIG) {
			reap_dying(u, true);
			prune_dead(u);
			ret = bpf_map_update_elem(u->procs_fd, &pid, pm, BPF_ANY) < 0 ? -errno : 0;
		}
		if (ret < 0) {
			ulog(u, "unwind: pid %u: procs map: %s", pid, dt_strerror(-ret));
			goto release;
		}
	}
	p = find_proc(u, pid);
	if (p) {
		proc_release(u, p); /* re-read (dlopen, exec): drop the old references */
	} else {
		uproc np = {.pid = pid};

		DT_VEC_PUSH(&u->procs, np);
		p = &u->procs.v[u->procs.n - 1];
	}
	p->objs = held.v;
	p->nobjs = (uint32_t)held.n;
	held.v = NULL;
	goto out;
release:
	for (size_t i = 0; i < held.n; i++)
		u->objs[held.v[i]].refs--;
out:
	free(held.v);
	free(pm);
	return ret;
}

int dt_unwinder_watch_pid(dt_unwinder *u, uint32_t pid)
{
	struct dt_proc_maps *pm = xcalloc(1, sizeof(*pm));
	int ret = 0;

	if (bpf_map_update_elem(u->procs_fd, &pid, pm, BPF_NOEXIST) < 0 && errno != EEXIST)
		ret = -errno;
	free(pm);
	return ret;
}

int dt_unwinder_follow_cgroup(dt_unwinder *u, uint64_t cgroup_id)
{
	if (!u->opts.exec)
		return -EOPNOTSUPP;
	u->follows_cgroup = true;
	return dt_exec_follower_follow_cgroup(u->opts.exec, cgroup_id);
}

int dt_unwinder_add_all(dt_unwinder *u)
{
	struct timespec t0, t1;
	struct dirent *de;
	int n = 0, failed = 0;
	DIR *d;

	u->system_wide = true;
	for (int k = 0; k < DT_WPT__COUNT; k++)
		if (u->tobj[k]) {
			u->py_wanted = true;
			py_bg_start(u, k);
		}
	/* From now on every exec is followed, not only those of processes already known. */
	if (u->opts.exec)
		dt_exec_follower_follow_all(u->opts.exec);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid || pid > UINT32_MAX)
			continue;
		if (dt_unwinder_add_pid(u, (uint32_t)pid) == 0)
			n++;
		else
			failed++;
	}
	closedir(d);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	u->startup_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	u->startup_procs = (uint32_t)n;
	ulog(u, "unwind: tables for %d running processes (%d skipped: kernel threads, gone) in "
	     "%.1f ms", n, failed, u->startup_ms);
	return n;
}

/* ---------------------------------------------------------------- requests */

static int request_cb(void *ctx, void *data, size_t size)
{
	dt_unwinder *u = ctx;
	const struct dt_unwind_req *r = data;
	int ret;

	if (size < sizeof(*r))
		return 0;
	u->requests_served++;
	switch (r->kind & ~DT_REQ_HELD) {
	case DT_REQ_PID:
	case DT_REQ_PC:
	case DT_REQ_EXEC:
	case DT_REQ_MMAP:
		forget_dying(u, r->pid);
		ret = dt_unwinder_add_pid(u, r->pid);
		if (ret == -ESRCH)
			dt_unwinder_remove_pid(u, r->pid);
		break;
	case DT_REQ_EXIT: {
		dying d = {r->pid, dt_now_ns()};

		forget_dying(u, r->pid);
		DT_VEC_PUSH(&u->dying, d);
		break;
	}
	case DT_REQ_PY:
		if (!u->py_wanted && (ret = load_py_steps(u)) < 0 && u->opts.notice)
			dt_unwind_log(u->opts.notice, u->opts.notice_ctx,
				      "cannot load the walker's Python step: %s; stacks of CPython "
				      "processes show the interpreter's native frames",
				      dt_strerror(-ret));
		return --u->batch_left ? 0 : REQ_BATCH_DONE; /* the pid's throttle stays */
	}
	if (r->kind & DT_REQ_HELD) {
		if (u->opts.held)
			u->opts.held(u->opts.held_ctx, r->pid);
		kill((pid_t)r->pid, SIGCONT);
	}
	/* Served: the pid may ask again at once (its next new mapping, a library dlopen'd right
	 * after start). The throttle then only holds back a pid whose request is in flight, which
	 * is what lets processes living tens of milliseconds get complete stacks. */
	bpf_map_delete_elem(u->throttle_fd, &r->pid);
	return --u->batch_left ? 0 : REQ_BATCH_DONE;
}

int dt_unwinder_process(dt_unwinder *u)
{
	uint64_t before = u->requests_served;
	int ret;

	u->batch_left = REQ_BATCH;
	py_bg_report(u, false);
	reap_dying(u, false);
	ret = ring_buffer__consume(u->rb);
	if (ret < 0 && ret != REQ_BATCH_DONE)
		return ret;
	return (int)(u->requests_served - before);
}

/* ---------------------------------------------------------------- reading back */

int dt_unwinder_frames(dt_unwinder *u, const struct dt_stack_ref *ref, uint64_t *pcs,
		       uint32_t max)
{
	struct dt_frames_deep fr; /* also holds a struct dt_frames (same prefix) */
	bool deep = ref->id & DT_FRAMES_KEY_DEEP;
	uint32_t n;

	if (ref->id == 0)
		return 0;
	if (bpf_map_lookup_elem(deep ? u->frames_deep_fd : u->frames_fd, &ref->id, &fr) < 0) {
		u->frames_missing++; /* evicted (LRU) before it was printed */
		return -ENOENT;
	}
	n = DT_MIN(DT_MIN(fr.nframes, max), deep ? DT_WALKER_MAX_FRAMES : DT_FRAMES_SHORT);
	memcpy(pcs, fr.pc, n * sizeof(*pcs));
	return (int)n;
}

int dt_unwinder_py_frame(dt_unwinder *u, uint32_t pid, uint64_t word, char *name, size_t nn,
			 char *file, size_t fnn, uint32_t *line)
{
	return dt_py_frame_name(u->py, pid, word, name, nn, file, fnn, line);
}

const char *dt_unwind_status_str(uint32_t flags)
{
	static const char *const text[DT_UNWIND_STATUS_MASK + 1] = {
#define STATUS_TEXT(id, value, wstat, text) [DT_UNWIND_##id] = text,
		DT_UNWIND_STATUSES(STATUS_TEXT)
#undef STATUS_TEXT
	};
	const char *t = text[flags & DT_UNWIND_STATUS_MASK];

	return t ? t : text[DT_UNWIND_NONE];
}

void dt_unwinder_get_stats(const dt_unwinder *u, dt_unwinder_stats *st)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals;
	uint32_t i, k;
	int c;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < DT_MAX_OBJECTS; i++) {
		if (!u->objs[i].used)
			continue;
		st->objects++;
		st->table_bytes += (uint64_t)u->objs[i].npages * sizeof(struct dt_row_page) +
				   (uint64_t)u->objs[i].nipages * sizeof(struct dt_index_page);
	}
	st->rows = u->rows_total;
	st->rules = u->rs.n;
	st->table_bytes += (uint64_t)u->rs.n * sizeof(struct dt_unwind_rule);
	st->procs = u->procs.n;
	st->requests_served = u->requests_served;
	st->build_errors = u->build_errors;
	st->evictions = u->evictions;
	st->row_pages_total = u->npages;
	for (i = 0; i < u->npages; i++)
		st->row_pages_used += u->page_used[i];
	if (ncpu <= 0)
		return;
	vals = xcalloc((size_t)ncpu, sizeof(*vals));
	for (k = 0; k < DT_WSTAT__COUNT; k++) {
		if (bpf_map_lookup_elem(u->wstats_fd, &k, vals) < 0)
			continue;
		for (c = 0; c < ncpu; c++)
			st->wstat[k] += vals[c];
	}
	free(vals);
}

void dt_unwinder_print_stats(const dt_unwinder *u, FILE *f)
{
	static const char *const wnames[DT_WSTAT__COUNT] = {
#define WSTAT_NAME(id, slot, name) [DT_WSTAT_##id] = name,
		DT_WALKER_STATS(WSTAT_NAME)
#undef WSTAT_NAME
	};
	dt_unwinder_stats st;
	int k;

	dt_unwinder_get_stats(u, &st);
	fprintf(f, "unwind objects %" PRIu64 "\n", st.objects);
	fprintf(f, "unwind rows %" PRIu64 "\n", st.rows);
	fprintf(f, "unwind rules %" PRIu64 "\n", st.rules);
	fprintf(f, "unwind table_bytes %" PRIu64 "\n", st.table_bytes);
	fprintf(f, "unwind procs %" PRIu64 "\n", st.procs);
	fprintf(f, "unwind requests_served %" PRIu64 "\n", st.requests_served);
	fprintf(f, "unwind build_errors %" PRIu64 "\n", st.build_errors);
	fprintf(f, "unwind evictions %" PRIu64 "\n", st.evictions);
	fprintf(f, "unwind row_pages %" PRIu64 "/%" PRIu64 " (budget %.1f MiB)\n",
		st.row_pages_used, st.row_pages_total,
		(double)st.row_pages_total * sizeof(struct dt_row_page) / (1 << 20));
	fprintf(f, "unwind stacks_evicted_before_print %" PRIu64 "\n", u->frames_missing);
	if (u->startup_procs)
		fprintf(f, "unwind startup %u processes in %.1f ms\n", u->startup_procs,
			u->startup_ms);
	for (k = 0; k < DT_WSTAT__COUNT; k++)
		if (wnames[k])
			fprintf(f, "walker %s %" PRIu64 "\n", wnames[k], st.wstat[k]);
}

int dt_unwinder_warn_losses(const dt_unwinder *u, FILE *f)
{
	dt_unwinder_stats st;
	const uint64_t *w;
	uint64_t dropped;

	dt_unwinder_get_stats(u, &st);
	w = st.wstat;
	dropped = w[DT_WSTAT_REQ_LOST] + w[DT_WSTAT_STORE_FAIL] + w[DT_WSTAT_TRUNC_TAILCALL] +
		  w[DT_WSTAT_ERR_OTHER] + st.build_errors + u->frames_missing;
	if (!dropped)
		return 0;
	fprintf(f, "ustack_dwarf: some data was lost: %" PRIu64 " table requests lost, %" PRIu64
		" stacks dropped (frames map full), %" PRIu64 " evicted before printing, %" PRIu64
		" truncated by the tail-call limit, %" PRIu64 " objects without tables (build error "
		"or budget full); -v for the totals\n", w[DT_WSTAT_REQ_LOST],
		w[DT_WSTAT_STORE_FAIL], u->frames_missing,
		w[DT_WSTAT_TRUNC_TAILCALL] + w[DT_WSTAT_ERR_OTHER], st.build_errors);
	return 1;
}
