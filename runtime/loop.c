/* loop.c — the session's event loop, behind dt_session_poll_fd / dt_session_dispatch. One epoll
 * set holds every source of work the session has: the units' event ring buffers (through
 * libbpf's ring_buffer manager), the unwinder's request ring, pidfds for the -c command and the
 * -p process (child.c), a timer that notes the pids behind user addresses while they live, and —
 * when the caller hands them over — a signalfd for the stop signals and SIGUSR1. Sources join
 * the set as the session gains them (session.c calls in; nothing here calls session.c). A
 * dispatch waits for work, does what is ready and delivers records to output (printf, time,
 * print) or acts on them here (map print/clear/zero/delete, exit); dt_session_run is a loop of
 * dispatches. */
#include "runtime/session_internal.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* How often the pids behind user addresses are noted (see dt_session_note_pids). */
#define NOTE_PIDS_NS 200000000L

/* ---------------------------------------------------------------- events */

/* What a ring buffer callback knows: units can go (detach) while libbpf keeps their ring. */
struct dt_rb_ctx {
	dt_session *s;
	uint32_t unit_id;
};

/* Stops the session, for the first reason only. */
static void stop(dt_session *s, const char *why)
{
	if (!s->stop_reason)
		s->stop_reason = why;
}

dt_unit *dt_session_unit_by_id(dt_session *s, uint32_t id)
{
	for (size_t i = 0; i < s->units.n; i++)
		if (s->units.v[i]->id == id)
			return s->units.v[i];
	return NULL;
}

static dt_smap *unit_map(dt_unit *u, uint32_t id)
{
	if (id >= u->prog->nmaps)
		return NULL;
	return u->s->maps.v[u->map_index[id]];
}

/* The value type a print(value) event carries: its desc's args, unwrapped if a 1-tuple. */
static const dt_type *print_value_type(const dt_event_desc *e)
{
	const dt_type *t = e->args;

	if (t && t->kind == DT_T_TUPLE && t->tuple.n == 1 && !t->tuple.names)
		return t->tuple.elems[0];
	return t;
}

/* An interactive caller clears the line being typed before output lands on it. */
static void before_output(dt_session *s)
{
	if (s->o.before_output)
		s->o.before_output(s->o.output_ctx);
}

static bool over_budget(dt_session *s, size_t len);
static int drain_check(dt_session *s, uint32_t kind);

/* bpftrace's default for BPFTRACE_CAT_BYTES_MAX: what one cat() prints at most. */
#define CAT_BYTES_MAX_DEFAULT 10240

/* cat("path fmt", args…): the file's first BPFTRACE_MAX_CAT_BYTES bytes (current bpftrace's
 * name; 0.17's BPFTRACE_CAT_BYTES_MAX, which the config block's max_cat_bytes sets), as they are. */
static void cat_file(dt_session *s, const dt_unit *u, const dt_event_desc *e,
		     const void *payload, size_t plen)
{
	const char *env = getenv("BPFTRACE_MAX_CAT_BYTES");
	if (!env || !*env)
		env = getenv("BPFTRACE_CAT_BYTES_MAX");
	char *end;
	unsigned long long max = env && *env ? strtoull(env, &end, 10) : CAT_BYTES_MAX_DEFAULT;
	char *path = dt_out_sprintf(s->out, e->fmt, e->args, payload, plen);
	FILE *f = fopen(path, "r");

	if (env && *env && (*end || max > (1u << 30)))
		max = CAT_BYTES_MAX_DEFAULT; /* par-cli's env checks say so; here: the default */
	if (!f) {
		/* bpftrace's words: current's and 0.17's. */
		fprintf(s->err, dt_unit_current(u) ? "ERROR: failed to open file '%s' (%s)\n"
						   : "ERROR: failed to open file '%s': %s\n",
			path, strerror(errno));
		free(path);
		return;
	}
	char *buf = xmalloc(max + 1);
	size_t n = fread(buf, 1, max, f);

	fclose(f);
	dt_out_text(s->out, "cat", buf, n);
	free(buf);
	free(path);
}

/* system("cmd fmt", args…) (--unsafe): runs the command under /bin/sh and prints what it
 * printed where program output goes, in order with the rest. */
static void run_system(dt_session *s, const dt_event_desc *e, const void *payload, size_t plen)
{
	char *cmd = dt_out_sprintf(s->out, e->fmt, e->args, payload, plen);
	FILE *p = popen(cmd, "r");
	char buf[4096];
	size_t n;

	if (!p) {
		fprintf(s->err, "dwarftrace: ERROR: system(\"%s\"): %s\n", cmd, strerror(errno));
		free(cmd);
		return;
	}
	/* -f json: bpftrace's type for system()'s output is "syscall". */
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		dt_out_text(s->out, "syscall", buf, n);
	pclose(p);
	free(cmd);
}


/* Whether a call site lies in a probe that END is an attach point of (`END`, `BEGIN,END`):
 * records that quote their call site say so. */
static bool in_end_probe(const dt_program *p, const dt_expr *call)
{
	for (uint32_t i = 0; call && i < p->nprobes; i++) {
		const dt_probe *pr = p->probes[i];

		if (call->span.off < pr->span.off || call->span.off >= pr->span.off + pr->span.len)
			continue;
		for (uint32_t j = 0; j < pr->nattach; j++)
			if (pr->attach[j]->provider == DT_P_END)
				return true;
	}
	return false;
}

/* The helpers -k/-kk watch, by the names bpftrace reports them with. */
static const char *helper_name(uint32_t id)
{
	switch (id) {
	case BPF_FUNC_map_lookup_elem: return "map_lookup_elem";
	case BPF_FUNC_map_update_elem: return "map_update_elem";
	case BPF_FUNC_map_delete_elem: return "map_delete_elem";
	case BPF_FUNC_probe_read: return "probe_read";
	case BPF_FUNC_probe_read_str: return "probe_read_str";
	case BPF_FUNC_probe_read_user: return "probe_read_user";
	case BPF_FUNC_probe_read_kernel: return "probe_read_kernel";
	case BPF_FUNC_probe_read_user_str: return "probe_read_user_str";
	case BPF_FUNC_probe_read_kernel_str: return "probe_read_kernel_str";
	default: return "helper";
	}
}

/* A message about a place in the script found at run time, in the compiler's shape
 * (dt_diag_render), after the output so far. */
static void script_message(dt_session *s, const dt_source *src, uint32_t off, uint32_t len,
			   dt_diag_level level, const char *msg)
{
	if ((size_t)off + len > src->len)
		off = len = 0;
	dt_out_flush(s->out);
	dt_diag_render(s->err, src, (dt_span){ off, len }, level, msg, false);
}

/* A helper failed (-k/-kk, and map updates and deletes always in the current language). 0.17's
 * words and shape: `FILE:L:C-E: WARNING: Failed to map_delete_elem: No such file or directory
 * (-2)`, the line and the span underlined (a lookup that found nothing: `Failed to
 * map_lookup_elem: 0`); current bpftrace's: what went wrong (`Map full; can't update element.
 * …`), then `Additional Info - helper: map_update_elem, retcode: -7`. In JSON a helper_error
 * object. */
static void helper_error(dt_session *s, dt_unit *u, uint32_t id, const void *payload,
			 size_t plen)
{
	struct dt_ev_helper_error he = { 0 };
	unsigned line = 0, col = 0;
	char msg[512];

	memcpy(&he, payload, DT_MIN(plen, sizeof(he)));
	if ((size_t)he.off + he.len > u->src.len)
		he.off = he.len = 0;
	dt_source_linecol(&u->src, he.off, &line, &col);
	if (dt_out_helper_error(s->out, helper_name(id), he.retcode,
				dt_unit_current(u) ? strerror((int)-he.retcode) : NULL,
				dt_source_name_at(&u->src, he.off), line, col))
		return;
	if (dt_unit_current(u)) {
		const char *what = strerror((int)-he.retcode);

		if (id == BPF_FUNC_map_update_elem && he.retcode == -E2BIG)
			what = "Map full; can't update element. Try increasing max_map_keys config "
			       "or manually setting the max entries in a map declaration e.g. "
			       "`let @a = hash(5000)`";
		else if (id == BPF_FUNC_map_delete_elem && he.retcode == -ENOENT)
			what = "Can't delete map element because it does not exist.";
		else if (id == BPF_FUNC_map_lookup_elem)
			what = "Can't lookup map element because it does not exist.";
		snprintf(msg, sizeof(msg), "%s\nAdditional Info - helper: %s, retcode: %lld", what,
			 helper_name(id), (long long)he.retcode);
	} else if (he.retcode)
		snprintf(msg, sizeof(msg), "Failed to %s: %s (%lld)", helper_name(id),
			 strerror((int)-he.retcode), (long long)he.retcode);
	else
		snprintf(msg, sizeof(msg), "Failed to %s: 0", helper_name(id));
	script_message(s, &u->src, he.off, he.len, DT_DIAG_WARNING, msg);
}

/* The program did something with a defined result that deserves a warning (a division by 0):
 * bpftrace's words at the span, or its runtime_error object in JSON; --no-warnings silences
 * it. */
static void runtime_error(dt_session *s, dt_unit *u, uint32_t id, const void *payload,
			  size_t plen)
{
	struct dt_ev_runtime_error re = { 0 };
	const char *msg = "runtime error";
	unsigned line = 0, col = 0;

	if (s->o.no_warnings)
		return;
	switch (id) {
#define DT_RTE_MSG(name, value, text) case DT_RTE_##name: msg = text; break;
	DT_RUNTIME_ERRORS(DT_RTE_MSG)
#undef DT_RTE_MSG
	}
	memcpy(&re, payload, DT_MIN(plen, sizeof(re)));
	if ((size_t)re.off + re.len > u->src.len)
		re.off = re.len = 0;
	dt_source_linecol(&u->src, re.off, &line, &col);
	if (dt_out_runtime_error(s->out, msg, dt_source_name_at(&u->src, re.off), line, col))
		return;
	script_message(s, &u->src, re.off, re.len, DT_DIAG_WARNING, msg);
}

/* errorf()/warnf(): printf's text as an ERROR/WARNING at the call (bpftrace's words and
 * shape, as -k's helper errors); warnf says nothing under --no-warnings. */
static void script_diag(dt_session *s, dt_unit *u, const dt_event_desc *e, const void *payload,
			size_t plen)
{
	if (e->func == DT_F_WARNF && s->o.no_warnings)
		return;
	char *msg = dt_out_sprintf(s->out, e->fmt, e->args, payload, plen);
	size_t n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = 0;
	dt_diag_level level = e->func == DT_F_ERRORF ? DT_DIAG_ERROR : DT_DIAG_WARNING;
	script_message(s, &u->src, e->call->span.off, e->call->span.len, level, msg);
	dt_span from = e->call->call.expanded_from;
	if (from.len)
		script_message(s, &u->src, from.off, from.len, level, "expanded from");
	free(msg);
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct dt_rb_ctx *c = ctx;
	dt_session *s = c->s;
	dt_unit *u = dt_session_unit_by_id(s, c->unit_id);
	struct dt_event_hdr h;
	const unsigned char *payload = (const unsigned char *)data + sizeof(h);
	size_t plen;
	const dt_event_desc *e = NULL;
	dt_smap *m = NULL;

	if (over_budget(s, len))
		return -ENOSPC;
	if (!u || len < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	plen = len - sizeof(h);
	if (h.kind == DT_EV_WATCH && plen >= sizeof(struct dt_ev_watch)) {
		/* Even once muted: a process held for its watchpoint must go on. */
		dt_wp_on_watch(s, u, h.id, (const struct dt_ev_watch *)payload);
		return 0;
	}
	if (s->muted && h.kind != DT_EV_PID_SEEN)
		return 0;
	if (h.kind == DT_EV_UNWATCH && plen >= sizeof(struct dt_ev_unwatch)) {
		dt_wp_unwatch(u, ((const struct dt_ev_unwatch *)payload)->addr);
		return 0;
	}
	switch (h.kind) {
	case DT_EV_PRINTF:
	case DT_EV_TIME:
	case DT_EV_PRINT_VALUE:
	case DT_EV_CAT:
	case DT_EV_SYSTEM:
	case DT_EV_JOIN:
		if (h.id >= u->prog->nevents)
			goto bad;
		e = &u->prog->events[h.id];
		if (s->end_only && !in_end_probe(u->prog, e->call))
			return 0;
		break;
	case DT_EV_PRINT_MAP:
	case DT_EV_CLEAR_MAP:
	case DT_EV_ZERO_MAP:
	case DT_EV_DELETE_KEY:
		m = unit_map(u, h.id);
		if (!m)
			goto bad;
		break;
	case DT_EV_EXIT:
		break;
	case DT_EV_HELPER_ERROR:
		before_output(s);
		helper_error(s, u, h.id, payload, plen);
		return 0;
	case DT_EV_RUNTIME_ERROR:
		before_output(s);
		runtime_error(s, u, h.id, payload, plen);
		return 0;
	case DT_EV_PID_SEEN:
		/* Snapshot now, while the process lives: its stacks print after it exits. */
		dt_sym_seen_pid(s->sym, h.id, plen >= sizeof(struct dt_ev_pid_seen) ?
				((const struct dt_ev_pid_seen *)payload)->gen : 0);
		return 0;
	default:
		goto bad;
	}
	if (h.kind == DT_EV_PRINTF || h.kind == DT_EV_TIME || h.kind == DT_EV_PRINT_VALUE ||
	    h.kind == DT_EV_PRINT_MAP || h.kind == DT_EV_CAT || h.kind == DT_EV_SYSTEM ||
	    h.kind == DT_EV_JOIN)
		before_output(s);
	switch (h.kind) {
	case DT_EV_PRINTF:
		if (e->func == DT_F_ERRORF || e->func == DT_F_WARNF)
			script_diag(s, u, e, payload, plen);
		else
			dt_out_printf(s->out, e->fmt, e->args, payload, plen);
		break;
	case DT_EV_TIME:
		dt_out_time(s->out, e->fmt);
		break;
	case DT_EV_CAT:
		cat_file(s, u, e, payload, plen);
		break;
	case DT_EV_SYSTEM:
		if (s->stop_signalled)
			s->system_skipped++;
		else
			run_system(s, e, payload, plen);
		break;
	case DT_EV_JOIN:
		dt_out_join(s->out, e->fmt, payload, plen);
		break;
	case DT_EV_PRINT_VALUE:
		if (print_value_type(e) && plen >= print_value_type(e)->size)
			dt_out_value(s->out, print_value_type(e), payload);
		break;
	case DT_EV_PRINT_MAP: {
		struct dt_ev_print_map pm = { 0 };

		memcpy(&pm, payload, DT_MIN(plen, sizeof(pm)));
		dt_out_print_map(s->out, &m->sym, m->fd, pm.top, pm.div, true);
		break;
	}
	case DT_EV_CLEAR_MAP:
		dt_map_clear(s, m);
		break;
	case DT_EV_ZERO_MAP:
		dt_map_zero(s, m);
		break;
	case DT_EV_DELETE_KEY:
		dt_map_delete_prefix(s, m, payload, plen);
		break;
	case DT_EV_EXIT: {
		struct dt_ev_exit ex = { 0 };

		memcpy(&ex, payload, DT_MIN(plen, sizeof(ex)));
		if (!s->stop_reason) {
			s->exit_code = (int)ex.code;
			s->muted = true;
		}
		stop(s, "exit()");
		break;
	}
	}
	return drain_check(s, h.kind);
bad:
	/* A record we cannot read is our bug; say so once per record rather than crash. */
	before_output(s);
	fprintf(s->err, "dwarftrace: internal error: malformed event (kind %u, id %u, %zu bytes) from "
		"unit %u\n", h.kind, h.id, len, u->id);
	return 0;
}

/* ---------------------------------------------------------------- the epoll set */

/* The sources of work, each an fd in the epoll set (its tag is the source). */
enum loop_src { SRC_SIGNALS, SRC_EVENTS, SRC_UNWINDER, SRC_PID, SRC_CHILD, SRC_TIMER, SRC_SKB, SRC__COUNT };

struct dt_loop {
	int ep;                    /* the epoll set: dt_session_poll_fd */
	int watched[SRC__COUNT];   /* the fd each source has in the set, or -1 */
	int sig_fd;                /* the caught signals once the session catches them, or -1 */
	int timer_fd;              /* the note-pids timer once armed, or -1 */
	struct ring_buffer *rb;    /* every unit's events ring */
	int64_t drain_budget;      /* bytes dt_loop_drain_final may still deliver; -1: no bound */
	uint64_t drain_start;      /* when the drain under way began (dt_now_ns) */
	uint32_t since_check;      /* records delivered since drain_check last looked at the time */
	DT_VEC(struct dt_rb_ctx *) rbctx; /* ring buffer callback contexts (freed with the loop) */
};

/* Whether a bounded drain (dt_loop_drain_final) has delivered all it may; counts `len` if not. */
static bool over_budget(dt_session *s, size_t len)
{
	struct dt_loop *l = s->loop;

	if (l->drain_budget < 0)
		return false;
	if (l->drain_budget < (int64_t)len)
		return true;
	l->drain_budget -= (int64_t)len;
	return false;
}

/* A drain may not go on and on: probes whose records make more records (sched_switch calling
 * system(), whose command switches tasks) refill the ring as fast as it is read. After
 * DRAIN_SLICE_NS a drain gives way — the other sources (a stop signal, the -c command's end)
 * get their turn, and the next dispatch reads on — and the final drain ends early when a second
 * stop signal comes. The clock is read once per DRAIN_CHECK_EVERY records, or after a record
 * that ran something (system(), cat()). */
#define DRAIN_SLICE_NS 50000000ull
#define DRAIN_CHECK_EVERY 64

/* on_event's word to libbpf: 0 to go on, or < 0 to stop this drain here. */
static int drain_check(dt_session *s, uint32_t kind)
{
	struct dt_loop *l = s->loop;

	if (++l->since_check < DRAIN_CHECK_EVERY && kind != DT_EV_SYSTEM && kind != DT_EV_CAT)
		return 0;
	l->since_check = 0;
	if (dt_now_ns() - l->drain_start < DRAIN_SLICE_NS)
		return 0;
	if (l->drain_budget < 0)
		return -EAGAIN; /* a dispatch: give way, the next one reads on */
	dt_loop_poll_signals(s); /* the final drain: a second stop signal sets s->hurry */
	return s->hurry ? -EINTR : 0;
}

/* One drain of every ring: the records delivered, and whether it gave way before the end. */
static int drain(dt_session *s, bool *more)
{
	struct dt_loop *l = s->loop;
	int n;

	l->drain_start = dt_now_ns();
	l->since_check = 0;
	n = ring_buffer__consume(l->rb);
	*more = n == -EAGAIN;
	int k = dt_skb_consume(s); /* skboutput's packets go straight to their files */
	return (n > 0 ? n : 0) + (k > 0 ? k : 0);
}

/* The session's loop, made on first use. NULL with errno set if the epoll set cannot be made. */
static struct dt_loop *loop_of(dt_session *s)
{
	struct dt_loop *l = s->loop;

	if (l)
		return l;
	l = xcalloc(1, sizeof(*l));
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	if (l->ep < 0) {
		free(l);
		return NULL;
	}
	for (int i = 0; i < SRC__COUNT; i++)
		l->watched[i] = -1;
	l->sig_fd = l->timer_fd = -1;
	l->drain_budget = -1;
	s->loop = l;
	return l;
}

/* Puts `fd` in the set as source `src` unless it is there already. */
static int watch(struct dt_loop *l, enum loop_src src, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = src };

	if (fd < 0 || l->watched[src] == fd)
		return 0;
	if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	l->watched[src] = fd;
	return 0;
}

/* Takes a source out of the set for good: an exited process has nothing more to say, and would
 * otherwise stay readable. */
static void unwatch(struct dt_loop *l, enum loop_src src)
{
	if (l->watched[src] >= 0)
		epoll_ctl(l->ep, EPOLL_CTL_DEL, l->watched[src], NULL);
}

int dt_loop_sync(dt_session *s)
{
	struct dt_loop *l = loop_of(s);
	int rc = 0;

	if (!l)
		return -errno;
	if (l->rb)
		rc = watch(l, SRC_EVENTS, ring_buffer__epoll_fd(l->rb));
	/* The walker asks for tables of processes it meets; serve them as they come. */
	if (!rc && s->uw)
		rc = watch(l, SRC_UNWINDER, dt_unwinder_poll_fd(s->uw));
	if (!rc)
		rc = watch(l, SRC_PID, s->pidfd);
	if (!rc)
		rc = watch(l, SRC_CHILD, s->child_pidfd);
	if (!rc)
		rc = watch(l, SRC_SIGNALS, l->sig_fd);
	if (!rc)
		rc = watch(l, SRC_SKB, dt_skb_poll_fd(s));
	return rc;
}

/* Processes behind user stacks may exit before the maps print: while there are any (a map with
 * user addresses, the -c command, the -p process), they are noted every NOTE_PIDS_NS. Armed by
 * the first dispatch that finds them, not before: a -c command must have exec'd first. */
static void arm_timer(dt_session *s, struct dt_loop *l)
{
	struct itimerspec its = { .it_interval.tv_nsec = NOTE_PIDS_NS,
				  .it_value.tv_nsec = NOTE_PIDS_NS };

	if (l->timer_fd >= 0 || !(dt_session_has_user_addrs(s) || s->child > 0 || s->o.filter_pid))
		return;
	l->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (l->timer_fd >= 0 && timerfd_settime(l->timer_fd, 0, &its, NULL) == 0)
		watch(l, SRC_TIMER, l->timer_fd);
	dt_session_note_pids(s);
}

int dt_loop_add_unit(dt_session *s, dt_unit *u)
{
	struct dt_loop *l = loop_of(s);
	struct dt_rb_ctx *c;
	int rc;

	if (!l)
		return -errno;
	if (u->events_fd < 0)
		return dt_loop_sync(s);
	c = xcalloc(1, sizeof(*c));
	c->s = s;
	c->unit_id = u->id;
	DT_VEC_PUSH(&l->rbctx, c);
	if (!l->rb) {
		l->rb = ring_buffer__new(u->events_fd, on_event, c, NULL);
		if (!l->rb)
			return -errno;
	} else {
		rc = ring_buffer__add(l->rb, u->events_fd, on_event, c);
		if (rc < 0)
			return rc;
	}
	return dt_loop_sync(s);
}

int dt_loop_drain(dt_session *s)
{
	bool more = false;
	int n = s->loop && s->loop->rb ? drain(s, &more) : 0;

	return more ? DT_MAX(n, 1) : n; /* given way: there is more to do at once */
}

int dt_loop_drain_final(dt_session *s)
{
	struct dt_loop *l = s->loop;
	int n;

	if (!l || !l->rb)
		return 0;
	/* Records come in order, so twice the rings' size in bytes covers all they held when this
	 * began; past that, on_event refuses (and libbpf stops). */
	bool more;

	l->drain_budget = 2 * (int64_t)dt_session_events_size(s) * (int64_t)l->rbctx.n;
	n = drain(s, &more);
	l->drain_budget = -1;
	if (s->system_skipped) {
		bool one = s->system_skipped == 1;

		fprintf(s->err, "dwarftrace: %llu system() command%s queued when %s came %s not "
			"run\n", (unsigned long long)s->system_skipped, one ? "" : "s",
			s->stop_reason ? s->stop_reason : "the stop signal", one ? "was" : "were");
		s->system_skipped = 0;
	}
	return n;
}

void dt_loop_free(dt_session *s)
{
	struct dt_loop *l = s->loop;

	if (!l)
		return;
	if (l->rb)
		ring_buffer__free(l->rb);
	for (size_t i = 0; i < l->rbctx.n; i++)
		free(l->rbctx.v[i]);
	free(l->rbctx.v);
	if (l->timer_fd >= 0)
		close(l->timer_fd);
	if (l->sig_fd >= 0)
		close(l->sig_fd);
	close(l->ep);
	free(l);
	s->loop = NULL;
}

/* ---------------------------------------------------------------- dispatch */

/* The signals that end a session once it catches them — each one's stop reason, and what is
 * passed on to the -c command when it was sent to dwarftrace alone. Left to their default, they
 * would end dwarftrace with no END and no maps, and leave the command running. */
static const struct {
	int sig;
	const char *reason;
	int pass_on;
} stop_signals[] = {
	{ SIGINT, "SIGINT", SIGINT },
	{ SIGTERM, "SIGTERM", SIGTERM },
	{ SIGHUP, "SIGHUP", SIGHUP },
	/* The command is asked to end, not to dump core. */
	{ SIGQUIT, "SIGQUIT", SIGTERM },
};

/* SIGUSR1 runs the self:signal:SIGUSR1 probes (bpftrace's current language), or, when the
 * program has none, prints every map (0.17's) and tracing goes on. */
#define PRINT_SIGNAL SIGUSR1

static void on_signal(dt_session *s, const struct signalfd_siginfo *si)
{
	if ((int)si->ssi_signo == PRINT_SIGNAL) {
		if (dt_session_signal_probes(s))
			return;
		before_output(s);
		dt_session_print_maps(s);
		return;
	}
	for (size_t i = 0; i < DT_ARRAY_SIZE(stop_signals); i++) {
		if ((int)si->ssi_signo != stop_signals[i].sig)
			continue;
		/* A Ctrl-C from the terminal reaches the child by itself (same process group); a
		 * signal sent to us alone is passed on once, so the child ends too. */
		if (si->ssi_code != SI_KERNEL)
			dt_child_forward_signal(s, stop_signals[i].pass_on);
		if (!s->stop_reason)
			s->stop_signalled = true;
		stop(s, stop_signals[i].reason);
		/* One more during the exit sequence: do not wait for the detach (session.c). */
		if (s->finished)
			s->hurry = true;
	}
}

int dt_session_catch_signals(dt_session *s)
{
	struct dt_loop *l = loop_of(s);
	sigset_t set;

	if (!l)
		return -errno;
	if (l->sig_fd >= 0)
		return 0;
	sigemptyset(&set);
	for (size_t i = 0; i < DT_ARRAY_SIZE(stop_signals); i++)
		sigaddset(&set, stop_signals[i].sig);
	sigaddset(&set, PRINT_SIGNAL);
	sigprocmask(SIG_BLOCK, &set, NULL);
	l->sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (l->sig_fd < 0)
		return -errno;
	return dt_loop_sync(s);
}

void dt_loop_poll_signals(dt_session *s)
{
	struct signalfd_siginfo si;

	while (s->loop && s->loop->sig_fd >= 0 &&
	       read(s->loop->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		on_signal(s, &si);
}

int dt_session_poll_fd(dt_session *s)
{
	int rc = dt_loop_sync(s);

	return rc < 0 ? rc : s->loop->ep;
}

const char *dt_session_stopped(const dt_session *s)
{
	return s->stop_reason;
}

/* One ready source; the work done (0 or more). */
static int dispatch_one(dt_session *s, struct dt_loop *l, enum loop_src src)
{
	switch (src) {
	case SRC_SIGNALS: {
		struct signalfd_siginfo si;
		int n = 0;

		while (read(l->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			on_signal(s, &si);
			n++;
		}
		return n;
	}
	case SRC_EVENTS:
	case SRC_SKB:
		return 0; /* drained after every wait */
	case SRC_UNWINDER: {
		int n = dt_unwinder_process(s->uw);

		return n > 0 ? n : 0;
	}
	case SRC_PID:
		unwatch(l, SRC_PID);
		stop(s, "the -p process exited");
		return 1;
	case SRC_CHILD:
		unwatch(l, SRC_CHILD);
		if (dt_child_ended(s)) {
			/* Ended by itself, not by a stop that reached it first (a Ctrl-C): its
			 * failure is the user's to know. */
			if (!s->stop_reason)
				dt_child_report(s);
			stop(s, "the -c command exited");
		}
		return 1;
	case SRC_TIMER: {
		uint64_t ticks;

		if (read(l->timer_fd, &ticks, sizeof(ticks)) <= 0)
			return 0;
		dt_session_note_pids(s);
		return 1;
	}
	case SRC__COUNT:
		break;
	}
	return 0;
}

int dt_session_dispatch(dt_session *s, int timeout_ms)
{
	struct epoll_event evs[8];
	struct dt_loop *l;
	int rc = dt_loop_sync(s), n, done;

	if (rc < 0)
		return rc;
	l = s->loop;
	arm_timer(s, l);
	/* Records already waiting (what a BEGIN probe wrote while dt_session_add ran) are
	 * delivered first, and then there is no waiting. */
	done = dt_loop_drain(s);
	n = epoll_wait(l->ep, evs, (int)DT_ARRAY_SIZE(evs), done ? 0 : timeout_ms);
	if (n < 0 && errno != EINTR)
		return -errno;
	for (int i = 0; i < n; i++)
		done += dispatch_one(s, l, (enum loop_src)evs[i].data.u32);
	/* Whatever arrived with a stop is delivered, not dropped. */
	done += dt_loop_drain(s);
	dt_out_flush(s->out);
	if (dt_session_output_failed(s))
		stop(s, "the output cannot be written");
	return done;
}

int dt_session_run(dt_session *s)
{
	int rc = dt_session_catch_signals(s);

	/* Tables for the -p process once more before its first sample: it may have mapped more
	 * while the programs compiled and attached (the walker would ask anyway). A -c command is
	 * read at its entry point instead (child.c). */
	if (s->uw && s->pidfd >= 0)
		dt_unwinder_add_pid(s->uw, s->o.filter_pid);
	while (rc >= 0 && !dt_session_stopped(s))
		rc = dt_session_dispatch(s, -1);
	if (s->o.verbose && s->stop_reason)
		fprintf(s->err, "stopping: %s\n", s->stop_reason);
	return rc < 0 ? rc : 0;
}
