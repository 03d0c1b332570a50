/* child.c — the processes a session watches. The -c command is forked before compiling, so its
 * pid is known to uprobes and filters, and put in a cgroup (v2) of its own so that probes see it
 * and everything it starts; it is held before exec by a pipe until every probe is attached, then
 * released — an exec failure comes back through a close-on-exec pipe so the user sees why — and,
 * when the program takes user stacks, stopped once more at its ELF entry point while its
 * mappings are read (bpf-lib/entry_stop.bpf.c). Its exit, and the -p process's, are pidfds the
 * event loop (loop.c) waits on. At the end a command still running is ended and reaped, and its
 * cgroup removed. session.c and loop.c call in; nothing here calls either. */
#include "runtime/session_internal.h"
#include "bpf-lib/dt_entry_stop_obj.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---------------------------------------------------------------- -p PID */

int dt_pid_watch(dt_session *s, int pid)
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

/* The one line that says the command could not run; its status is then the shell's (126/127). */
static int could_not_run(dt_session *s, int err)
{
	fprintf(s->err, "dwarftrace: -c '%s' could not run: %s\n", s->child_cmd, strerror(err));
	s->child_run_errno = err;
	s->child_on_its_own = true;
	return -err;
}

/* What execvp would fail on, found before anything is attached, so that a command that cannot
 * run is reported without an "Attaching N probes..." first. Shell commands are the shell's to
 * judge (it says "not found" itself and exits 127). 0 or a positive errno. */
static int validate_command(const char *cmd)
{
	char *path = needs_shell(cmd) ? NULL : find_program(cmd);
	struct stat st;
	int err = 0;

	if (needs_shell(cmd))
		return access("/bin/sh", X_OK) < 0 ? errno : 0;
	if (!path)
		err = ENOENT;
	else if (stat(path, &st) < 0)
		err = errno;
	else if (S_ISDIR(st.st_mode))
		err = EACCES;
	else if (access(path, X_OK) < 0)
		err = errno;
	free(path);
	return err;
}

int dt_child_spawn(dt_session *s, const char *cmd)
{
	int go[2], errp[2], err;
	pid_t pid;

	if (!cmd || !*cmd) {
		fprintf(s->err, "-c: the command is empty\n");
		return -EINVAL;
	}
	free(s->child_cmd);
	s->child_cmd = xstrdup(cmd);
	err = validate_command(cmd);
	if (err)
		return could_not_run(s, err);
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

int dt_child_release(dt_session *s, bool stop_at_entry)
{
	struct bpf_object *stop_obj = NULL;
	int e = 0, rc, stop_fd = -1;
	ssize_t n;

	if (s->child <= 0 || s->child_go_fd < 0)
		return 0;
	if (s->child_path && stop_at_entry)
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
		if (stop_fd >= 0) {
			close(stop_fd);
			bpf_object__close(stop_obj);
		}
		waitpid(s->child, NULL, 0);
		s->child = 0;
		return could_not_run(s, e);
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

/* How a command ended, in the shell's terms ($?): its exit status, or 128 + the signal. */
static int shell_status(int wait_status)
{
	if (WIFSIGNALED(wait_status))
		return 128 + WTERMSIG(wait_status);
	return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 1;
}

void dt_child_report(dt_session *s)
{
	int st = s->child_status;

	s->child_on_its_own = true;
	if (WIFEXITED(st) && WEXITSTATUS(st))
		fprintf(s->err, "dwarftrace: -c '%s' exited with status %d\n", s->child_cmd,
			WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		fprintf(s->err, "dwarftrace: -c '%s' was killed by SIG%s\n", s->child_cmd,
			sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st)) : "?");
}

int dt_session_child_status(const dt_session *s)
{
	if (!s->child_on_its_own)
		return -1;
	if (s->child_run_errno)
		return s->child_run_errno == ENOENT ? 127 : 126;
	return shell_status(s->child_status);
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
	free(s->child_cmd);
	s->child_cmd = NULL;
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
