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
		if (!s->stop) {
			s->stop = true;
			s->exit_code = (int)ex.code;
			s->stop_reason = "exit()";
		}
		break;
	}
	}
	return 0;
bad:
	/* A record we cannot read is our bug; say so once per record rather than crash. */
	fprintf(s->err, "internal error: malformed event (kind %u, id %u, %zu bytes) from "
		"unit %u\n", h.kind, h.id, len, u->id);
	return 0;
}

int dt_loop_add_unit(dt_session *s, dt_unit *u)
{
	struct dt_rb_ctx *c = xcalloc(1, sizeof(*c));
	int rc;

	c->s = s;
	c->unit_id = u->id;
	DT_VEC_PUSH(&s->rbctx, c);
	if (!s->rb) {
		s->rb = ring_buffer__new(u->events_fd, on_event, c, NULL);
		return s->rb ? 0 : -errno;
	}
	rc = ring_buffer__add(s->rb, u->events_fd, on_event, c);
	return rc < 0 ? rc : 0;
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
	return 0;
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

static void block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
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
	/* SIGCHLD must be blocked before the child can exit, or signalfd would miss it. */
	block_signals();
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

	if (rc == 0 && pid)
		*pid = s->child;
	return rc;
}

int dt_session_start_child(dt_session *s)
{
	return dt_child_release(s);
}

/* ---------------------------------------------------------------- the loop */

static void on_signal(dt_session *s, const struct signalfd_siginfo *si)
{
	if (si->ssi_signo == SIGCHLD) {
		int st;

		if (s->child > 0 && !s->child_exited &&
		    waitpid(s->child, &st, WNOHANG) == s->child) {
			s->child_exited = true;
			s->child_status = st;
			if (!s->stop) {
				s->stop = true;
				s->stop_reason = "the -c command exited";
			}
		}
		return;
	}
	/* SIGINT/SIGTERM. A Ctrl-C from the terminal reaches the child by itself (same process
	 * group); a signal sent to us alone is passed on once, so the child ends too. */
	if (s->child > 0 && !s->child_exited && !s->forwarded_signal && si->ssi_code != SI_KERNEL) {
		kill(s->child, (int)si->ssi_signo);
		s->forwarded_signal = true;
	}
	if (!s->stop) {
		s->stop = true;
		s->stop_reason = si->ssi_signo == SIGINT ? "SIGINT" : "SIGTERM";
	}
}

int dt_session_run(dt_session *s)
{
	struct epoll_event ev, evs[8];
	sigset_t set;
	int ep, sfd, tfd = -1, rc = 0;

	/* Each run starts afresh (the REPL runs several times); a -c session whose command has
	 * ended has nothing left to wait for. */
	s->stop = s->child > 0 && s->child_exited;
	s->stop_reason = s->stop ? "the -c command exited" : NULL;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGCHLD);
	block_signals();
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || ep < 0) {
		rc = -errno;
		goto out;
	}
	ev = (struct epoll_event){ .events = EPOLLIN, .data.u32 = 1 };
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
	if (s->rb) {
		ev = (struct epoll_event){ .events = EPOLLIN, .data.u32 = 2 };
		epoll_ctl(ep, EPOLL_CTL_ADD, ring_buffer__epoll_fd(s->rb), &ev);
	}
	if (s->pidfd >= 0) {
		ev = (struct epoll_event){ .events = EPOLLIN, .data.u32 = 3 };
		epoll_ctl(ep, EPOLL_CTL_ADD, s->pidfd, &ev);
	}
	/* The walker asks for tables of processes it meets; serve them as they come. */
	if (s->uw && dt_unwinder_poll_fd(s->uw) >= 0) {
		ev = (struct epoll_event){ .events = EPOLLIN, .data.u32 = 4 };
		epoll_ctl(ep, EPOLL_CTL_ADD, dt_unwinder_poll_fd(s->uw), &ev);
		dt_unwinder_process(s->uw);
	}

	/* Processes behind user stacks may exit before the maps print: note them while alive. */
	if (dt_session_has_user_addrs(s) || s->child > 0 || s->o.filter_pid) {
		struct itimerspec its = { .it_interval.tv_nsec = NOTE_PIDS_NS,
					  .it_value.tv_nsec = NOTE_PIDS_NS };

		tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (tfd >= 0 && timerfd_settime(tfd, 0, &its, NULL) == 0) {
			ev = (struct epoll_event){ .events = EPOLLIN, .data.u32 = 5 };
			epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
		}
		dt_session_note_pids(s);
	}
	/* The child may have ended before we blocked SIGCHLD's delivery into the signalfd. */
	if (s->child > 0 && !s->child_exited &&
	    waitpid(s->child, &s->child_status, WNOHANG) == s->child) {
		s->child_exited = true;
		s->stop = true;
		s->stop_reason = "the -c command exited";
	}
	if (s->rb)
		ring_buffer__consume(s->rb);
	while (!s->stop) {
		int n = epoll_wait(ep, evs, (int)DT_ARRAY_SIZE(evs), -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		for (int i = 0; i < n; i++) {
			switch (evs[i].data.u32) {
			case 1: {
				struct signalfd_siginfo si;

				while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
					on_signal(s, &si);
				break;
			}
			case 2:
				ring_buffer__consume(s->rb);
				break;
			case 3:
				if (!s->stop) {
					s->stop = true;
					s->stop_reason = "the -p process exited";
				}
				break;
			case 4:
				dt_unwinder_process(s->uw);
				break;
			case 5: {
				uint64_t ticks;

				if (read(tfd, &ticks, sizeof(ticks)) > 0)
					dt_session_note_pids(s);
				break;
			}
			}
		}
		dt_out_flush(s->out);
	}
	/* Whatever arrived with the stop is delivered, not dropped. */
	if (s->rb)
		ring_buffer__consume(s->rb);
	dt_out_flush(s->out);
	if (s->o.verbose && s->stop_reason)
		fprintf(s->err, "stopping: %s\n", s->stop_reason);
out:
	if (tfd >= 0)
		close(tfd);
	if (ep >= 0)
		close(ep);
	if (sfd >= 0)
		close(sfd);
	return rc;
}
