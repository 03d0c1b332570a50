/* loop.c — the event loop and the processes it watches. One epoll waits on the ring buffers of
 * every unit (through libbpf's ring_buffer manager), a signalfd for SIGINT/SIGTERM/SIGCHLD, and a
 * pidfd for -p; records are dispatched to output (printf, time, print) or acted on here (map
 * print/clear/zero/delete, exit). Also the -c child: forked before compiling so its pid is known,
 * held before exec by a pipe until every probe is attached, then released; an exec failure comes
 * back through a close-on-exec pipe so the user sees why. */
#include "runtime/session_internal.h"
#include "bpf-lib/dt_entry_stop_obj.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

static dt_unit *unit_by_id(dt_session *s, uint32_t id)
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

	if (t && t->kind == DT_T_TUPLE && t->tuple.n == 1)
		return t->tuple.elems[0];
	return t;
}

/* An interactive caller clears the line being typed before output lands on it. */
static void before_output(dt_session *s)
{
	if (s->o.before_output)
		s->o.before_output(s->o.output_ctx);
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct dt_rb_ctx *c = ctx;
	dt_session *s = c->s;
	dt_unit *u = unit_by_id(s, c->unit_id);
	struct dt_event_hdr h;
	const unsigned char *payload = (const unsigned char *)data + sizeof(h);
	size_t plen;
	const dt_event_desc *e = NULL;
	dt_smap *m = NULL;

	if (!u || len < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	plen = len - sizeof(h);
	switch (h.kind) {
	case DT_EV_PRINTF:
	case DT_EV_TIME:
	case DT_EV_PRINT_VALUE:
		if (h.id >= u->prog->nevents)
			goto bad;
		e = &u->prog->events[h.id];
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
	case DT_EV_PID_SEEN:
		/* Snapshot now, while the process lives: its stacks print after it exits. */
		dt_sym_seen_pid(s->sym, h.id, plen >= sizeof(struct dt_ev_pid_seen) ?
				((const struct dt_ev_pid_seen *)payload)->gen : 0);
		return 0;
	default:
		goto bad;
	}
	if (h.kind == DT_EV_PRINTF || h.kind == DT_EV_TIME || h.kind == DT_EV_PRINT_VALUE ||
	    h.kind == DT_EV_PRINT_MAP)
		before_output(s);
	switch (h.kind) {
	case DT_EV_PRINTF:
		dt_out_printf(s->out, e->fmt, e->args, payload, plen);
		break;
	case DT_EV_TIME:
		dt_out_time(s->out, e->fmt);
		break;
	case DT_EV_PRINT_VALUE:
		if (print_value_type(e) && plen >= print_value_type(e)->size)
			dt_out_value(s->out, print_value_type(e), payload);
		break;
	case DT_EV_PRINT_MAP: {
		struct dt_ev_print_map pm = { 0 };

		memcpy(&pm, payload, DT_MIN(plen, sizeof(pm)));
		dt_out_print_map(s->out, &m->sym, m->fd, pm.top, pm.div);
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
		if (!s->stop_reason)
			s->exit_code = (int)ex.code;
		stop(s, "exit()");
		break;
	}
	}
	return 0;
bad:
	/* A record we cannot read is our bug; say so once per record rather than crash. */
	before_output(s);
	fprintf(s->err, "internal error: malformed event (kind %u, id %u, %zu bytes) from "
		"unit %u\n", h.kind, h.id, len, u->id);
	return 0;
}

/* ---------------------------------------------------------------- the epoll set */

/* The sources of work, each an fd in the epoll set (its tag is the source). */
enum loop_src { SRC_SIGNALS, SRC_EVENTS, SRC_UNWINDER, SRC_PID, SRC_CHILD, SRC_TIMER, SRC__COUNT };

struct dt_loop {
	int ep;                    /* the epoll set: dt_session_poll_fd */
	int watched[SRC__COUNT];   /* the fd each source has in the set, or -1 */
	int sig_fd;                /* SIGINT/SIGTERM once the session catches them, or -1 */
	int timer_fd;              /* the note-pids timer once armed, or -1 */
	struct ring_buffer *rb;    /* every unit's events ring */
	DT_VEC(struct dt_rb_ctx *) rbctx; /* ring buffer callback contexts (freed with the loop) */
};

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

/* Delivers every record waiting in the rings; the count. */
static int drain(dt_session *s)
{
	int n = s->loop && s->loop->rb ? ring_buffer__consume(s->loop->rb) : 0;

	return n > 0 ? n : 0;
}

void dt_loop_drain(dt_session *s)
{
	drain(s);
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

/* ---------------------------------------------------------------- -p PID */

int dt_session_watch_pid(dt_session *s, int pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd < 0) {
		int rc = -errno;

		fprintf(s->err, "-p %d: %s\n", pid, rc == -ESRCH ? "no such process"
								 : "cannot watch the process");
		return rc;
	}
	if (s->pidfd >= 0)
		close(s->pidfd);
	s->pidfd = fd;
	return dt_loop_sync(s);
}

/* ---------------------------------------------------------------- -c CMD */

/* Shell syntax means /bin/sh -c; plain words are split and run with execvp. */
static bool needs_shell(const char *cmd)
{
	return strpbrk(cmd, "|&;<>()$`\\\"'*?[]#~=%{}\n") != NULL;
}

static char **split_words(const char *cmd)
{
	DT_VEC(char *) v = { 0 };
	const char *p = cmd;

	for (;;) {
		size_t n;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		n = strcspn(p, " \t");
		DT_VEC_PUSH(&v, xstrndup(p, n));
		p += n;
	}
	DT_VEC_PUSH(&v, NULL);
	return v.v;
}

static void child_main(int go_fd, int err_fd, const char *cmd)
{
	sigset_t none;
	char c;
	int e;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	/* Wait for the parent: EOF without a byte means it gave up. */
	if (read(go_fd, &c, 1) != 1)
		_exit(127);
	close(go_fd);
	if (needs_shell(cmd)) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	} else {
		char **argv = split_words(cmd);

		if (argv[0])
			execvp(argv[0], argv);
		else
			errno = ENOENT;
	}
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* The file execvp would run for a shell-free command, or NULL. */
static char *find_program(const char *cmd)
{
	char **argv = split_words(cmd), *path = NULL;
	const char *p = getenv("PATH");

	if (!argv[0]) {
		free(argv);
		return NULL;
	}
	if (strchr(argv[0], '/')) {
		path = xstrdup(argv[0]);
	} else {
		if (!p)
			p = "/usr/local/bin:/usr/bin:/bin";
		while (!path && *p) {
			const char *c = strchr(p, ':');
			size_t n = c ? (size_t)(c - p) : strlen(p);
			char *cand = xasprintf("%.*s/%s", (int)n, p, argv[0]);

			if (n && access(cand, X_OK) == 0)
				path = cand;
			else
				free(cand);
			if (!c)
				break;
			p = c + 1;
		}
	}
	for (char **w = argv; *w; w++)
		free(*w);
	free(argv);
	return path;
}

/* A short-lived command can end before the unwinder has read its mappings (the walker's requests
 * are served asynchronously), and then neither its stacks nor its symbols come out. So when the
 * program uses user stacks, the command is stopped at its ELF entry point — the dynamic loader
 * has mapped every library by then — with a one-shot uprobe whose program (bpf-lib/
 * entry_stop.bpf.c) sends SIGSTOP; userspace reads the process, detaches the uprobe and sends
 * SIGCONT. Returns the perf event fd (and the object holding the program in *obj) or -errno:
 * failing to arm it only loses the head start. */
static int entry_stop_arm(dt_session *s, struct bpf_object **obj)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "dt_entry_stop");
	dt_attach a = { .provider = DT_P_UPROBE, .text = "-c entry", .target = s->child_path };
	struct bpf_program *prog;
	char func[32], *err = NULL;
	uint64_t entry;
	int pfd;

	*obj = NULL;
	if (dt_rt_elf_entry(s->child_path, &entry) < 0)
		return -ENOEXEC;
	snprintf(func, sizeof(func), "%#llx", (unsigned long long)entry);
	a.func = func;
	*obj = bpf_object__open_mem(dt_entry_stop_bpf_obj, dt_entry_stop_bpf_obj_len, &oo);
	if (!*obj)
		return -errno;
	prog = bpf_object__find_program_by_name(*obj, "dt_entry_stop");
	pfd = !prog ? -ENOENT : bpf_object__load(*obj);
	if (pfd == 0)
		pfd = dt_rt_uprobe_open(&a, s->child, false, &err);
	free(err);
	if (pfd >= 0 && (ioctl(pfd, PERF_EVENT_IOC_SET_BPF, bpf_program__fd(prog)) < 0 ||
			 ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0) < 0)) {
		close(pfd);
		pfd = -errno;
	}
	if (pfd < 0) {
		bpf_object__close(*obj);
		*obj = NULL;
	}
	return pfd;
}

/* Waits (briefly) for the armed child to stop at its entry, reads it, and lets it go on. */
static void entry_stop_wait(dt_session *s, int pfd, struct bpf_object *obj)
{
	uint64_t deadline = dt_now_ns() + 2000000000ull;
	int st = 0;
	pid_t r = 0;

	while (r == 0 && dt_now_ns() < deadline) {
		r = waitpid(s->child, &st, WNOHANG | WUNTRACED);
		if (r == 0)
			usleep(500);
	}
	close(pfd);
	bpf_object__close(obj);
	if (r == s->child && WIFSTOPPED(st)) {
		if (s->uw)
			dt_unwinder_add_pid(s->uw, (uint32_t)s->child);
		dt_sym_note_pid(s->sym, (uint32_t)s->child);
		kill(s->child, SIGCONT);
	} else if (r == s->child) {
		s->child_exited = true;
		s->child_status = st;
	}
}

/* The mount point of the cgroup v2 hierarchy — the one bpf_get_current_cgroup_id() reports —
 * or NULL (a v1-only system). */
static const char *cgroup2_root(void)
{
	static char root[PATH_MAX];
	char line[PATH_MAX + 128], dir[PATH_MAX], type[64];
	FILE *f = fopen("/proc/self/mounts", "re");

	if (root[0])
		return root;
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %4095s %63s", dir, type) == 2 && !strcmp(type, "cgroup2")) {
			snprintf(root, sizeof(root), "%s", dir);
			break;
		}
	fclose(f);
	return root[0] ? root : NULL;
}

static int write_pid(const char *procs, pid_t pid)
{
	FILE *f = fopen(procs, "we");
	int rc = 0;

	if (!f)
		return -errno;
	if (fprintf(f, "%d\n", (int)pid) < 0)
		rc = -EIO;
	if (fclose(f) != 0 && !rc)
		rc = -errno;
	return rc;
}

/* Puts the -c command (stopped before exec) into a cgroup of its own, so that probes can be
 * limited to it and to everything it starts — a shell, make's compilers — and to nothing else.
 * Without cgroup v2 the probes fall back to the command's pid alone. */
static void child_cgroup_enter(dt_session *s)
{
	const char *root = cgroup2_root();
	char *dir, *procs;
	struct stat st;

	if (!root)
		goto fallback;
	dir = xasprintf("%s/dwarftrace.%d", root, (int)getpid());
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		free(dir);
		goto fallback;
	}
	procs = xasprintf("%s/cgroup.procs", dir);
	if (stat(dir, &st) < 0 || write_pid(procs, s->child) < 0) {
		rmdir(dir);
		free(procs);
		free(dir);
		goto fallback;
	}
	free(procs);
	s->child_cgroup = dir;
	s->child_cgroup_id = (uint64_t)st.st_ino; /* a cgroup2 directory's inode is its id */
	return;
fallback:
	if (!s->o.filter_pid)
		s->o.filter_pid = (uint32_t)s->child;
}

/* Moves whatever the command left running back to our own cgroup and removes the directory. */
static void child_cgroup_leave(dt_session *s)
{
	char *procs, line[32], self[PATH_MAX + 16] = "", *back;
	FILE *f;

	if (!s->child_cgroup)
		return;
	f = fopen("/proc/self/cgroup", "re");
	if (f) {
		char buf[PATH_MAX + 16];

		while (fgets(buf, sizeof(buf), f))
			if (!strncmp(buf, "0::", 3)) {
				buf[strcspn(buf, "\n")] = 0;
				snprintf(self, sizeof(self), "%s", buf + 3);
			}
		fclose(f);
	}
	back = xasprintf("%s%s/cgroup.procs", cgroup2_root(), strcmp(self, "/") ? self : "");
	procs = xasprintf("%s/cgroup.procs", s->child_cgroup);
	for (int tries = 0; tries < 3; tries++) {
		f = fopen(procs, "re");
		if (!f)
			break;
		while (fgets(line, sizeof(line), f))
			write_pid(back, (pid_t)atoi(line));
		fclose(f);
		if (rmdir(s->child_cgroup) == 0 || errno == ENOENT)
			break;
		usleep(10000);
	}
	if (access(s->child_cgroup, F_OK) == 0)
		fprintf(s->err, "dwarftrace: could not remove %s: %s\n", s->child_cgroup,
			strerror(errno));
	free(procs);
	free(back);
	free(s->child_cgroup);
	s->child_cgroup = NULL;
}

int dt_child_spawn(dt_session *s, const char *cmd)
{
	int go[2], errp[2];
	pid_t pid;

	if (!cmd || !*cmd) {
		fprintf(s->err, "-c: the command is empty\n");
		return -EINVAL;
	}
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(errp, O_CLOEXEC) < 0) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int rc = -errno;

		close(go[0]);
		close(go[1]);
		close(errp[0]);
		close(errp[1]);
		fprintf(s->err, "-c: cannot fork: %s\n", strerror(-rc));
		return rc;
	}
	if (pid == 0) {
		close(go[1]);
		close(errp[0]);
		child_main(go[0], errp[1], cmd);
	}
	close(go[0]);
	close(errp[1]);
	/* Its exit is seen through a pidfd (the loop's SRC_CHILD), not SIGCHLD, so no signal has
	 * to be taken from the caller for it. */
	s->child_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (s->child_pidfd < 0) {
		int rc = -errno;

		fprintf(s->err, "-c: cannot watch the command: %s\n", strerror(-rc));
		close(go[1]);
		close(errp[0]);
		waitpid(pid, NULL, 0);
		return rc;
	}
	if (!needs_shell(cmd))
		s->child_path = find_program(cmd);
	s->child = pid;
	s->child_go_fd = go[1];
	s->child_err_fd = errp[0];
	child_cgroup_enter(s);
	return 0;
}

int dt_child_release(dt_session *s)
{
	struct bpf_object *stop_obj = NULL;
	int e = 0, rc, stop_fd = -1;
	ssize_t n;

	if (s->child <= 0 || s->child_go_fd < 0)
		return 0;
	if (s->child_path && (s->uw || dt_session_has_user_addrs(s)))
		stop_fd = entry_stop_arm(s, &stop_obj);
	if (write(s->child_go_fd, "g", 1) != 1) {
		rc = -errno;
		if (stop_fd >= 0) {
			close(stop_fd);
			bpf_object__close(stop_obj);
		}
		return rc;
	}
	close(s->child_go_fd);
	s->child_go_fd = -1;
	/* Blocks until exec succeeds (EOF: the pipe closed on exec) or fails (errno arrives). */
	n = read(s->child_err_fd, &e, sizeof(e));
	close(s->child_err_fd);
	s->child_err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		fprintf(s->err, "-c: cannot run the command: %s\n", strerror(e));
		if (stop_fd >= 0) {
			close(stop_fd);
			bpf_object__close(stop_obj);
		}
		waitpid(s->child, NULL, 0);
		s->child = 0;
		return -e;
	}
	if (stop_fd >= 0)
		entry_stop_wait(s, stop_fd, stop_obj);
	else
		dt_sym_note_pid(s->sym, (uint32_t)s->child); /* the program, if not its libraries */
	return 0;
}

void dt_child_forward_signal(dt_session *s, int sig)
{
	if (s->child > 0 && !s->child_exited && !s->forwarded_signal) {
		kill(s->child, sig);
		s->forwarded_signal = true;
	}
}

bool dt_child_ended(dt_session *s)
{
	int st;

	if (s->child > 0 && !s->child_exited && waitpid(s->child, &st, WNOHANG) == s->child) {
		s->child_exited = true;
		s->child_status = st;
	}
	return s->child > 0 && s->child_exited;
}

void dt_child_reap(dt_session *s)
{
	if (s->child_go_fd >= 0) {
		/* Never released: closing the pipe makes it exit without running anything. */
		close(s->child_go_fd);
		s->child_go_fd = -1;
	}
	if (s->child_err_fd >= 0) {
		close(s->child_err_fd);
		s->child_err_fd = -1;
	}
	free(s->child_path);
	s->child_path = NULL;
	if (s->child_pidfd >= 0) {
		close(s->child_pidfd);
		s->child_pidfd = -1;
	}
	if (s->child > 0 && !s->child_exited) {
		if (waitpid(s->child, &s->child_status, WNOHANG) == 0) {
			kill(s->child, SIGTERM);
			waitpid(s->child, &s->child_status, 0);
		}
		s->child_exited = true;
	}
	child_cgroup_leave(s);
}

int dt_session_spawn_child(dt_session *s, const char *cmd, int *pid)
{
	int rc = dt_child_spawn(s, cmd);

	if (rc < 0)
		return rc;
	if (pid)
		*pid = s->child;
	return dt_loop_sync(s);
}

int dt_session_start_child(dt_session *s)
{
	return dt_child_release(s);
}

/* ---------------------------------------------------------------- dispatch */

static void on_signal(dt_session *s, const struct signalfd_siginfo *si)
{
	/* A Ctrl-C from the terminal reaches the child by itself (same process group); a signal
	 * sent to us alone is passed on once, so the child ends too. */
	if (si->ssi_code != SI_KERNEL)
		dt_child_forward_signal(s, (int)si->ssi_signo);
	stop(s, si->ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
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
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	l->sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (l->sig_fd < 0)
		return -errno;
	return dt_loop_sync(s);
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
		if (dt_child_ended(s))
			stop(s, "the -c command exited");
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
	done = drain(s);
	n = epoll_wait(l->ep, evs, (int)DT_ARRAY_SIZE(evs), done ? 0 : timeout_ms);
	if (n < 0 && errno != EINTR)
		return -errno;
	for (int i = 0; i < n; i++)
		done += dispatch_one(s, l, (enum loop_src)evs[i].data.u32);
	/* Whatever arrived with a stop is delivered, not dropped. */
	done += drain(s);
	dt_out_flush(s->out);
	return done;
}

int dt_session_run(dt_session *s)
{
	int rc = dt_session_catch_signals(s);

	while (rc >= 0 && !dt_session_stopped(s))
		rc = dt_session_dispatch(s, -1);
	if (s->o.verbose && s->stop_reason)
		fprintf(s->err, "stopping: %s\n", s->stop_reason);
	return rc < 0 ? rc : 0;
}
