/* child.c — the processes a session watches. The -c command is forked before compiling and put
 * in a cgroup (v2) of its own, so that the generated programs can keep to it and everything it
 * starts (a shell's children, a wrapper's program) whatever the probe type; it is held before
 * exec by a pipe until every probe is attached, then released — an exec failure comes back
 * through a close-on-exec pipe so the user sees why — and, when the program takes user stacks
 * and the unwinder does not hold the cgroup's processes itself while it reads them (unwind/),
 * stopped once more at its ELF entry point (bpf-lib/entry_stop.bpf.c). Its exit, and the -p
 * process's, are pidfds the event loop (loop.c) waits on. At the end — on every way out, errors
 * included — a command still running is ended (SIGTERM, then SIGKILL after a grace) and reaped,
 * and its cgroup removed; the cgroups of runs that were killed before they could do that are
 * removed by the next run. session.c and loop.c call in; nothing here calls either. */
#include "runtime/session_internal.h"
#include "bpf-lib/dt_entry_stop_obj.h"

#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* How long a -c command still running at the end has to end after SIGTERM before SIGKILL. */
#define CHILD_GRACE_MS 1000

/* ---------------------------------------------------------------- -p PID */

int dt_pid_watch(dt_session *s, int pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd < 0) {
		int rc = -errno;

		if (rc == -ESRCH)
			fprintf(s->err, "dwarftrace: -p %d: no such process\n", pid);
		else
			fprintf(s->err, "dwarftrace: -p %d: cannot watch the process: %s\n", pid,
				dt_strerror(-rc));
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
char *dt_child_find_program(const char *cmd)
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

/* The first line of a small /proc file, without its newline; "" if it cannot be read. */
static void read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (f) {
		if (!fgets(buf, (int)n, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
}

/* The cgroup v2 path ("/dwarftrace.12") of process `pid` (0: ourselves) into buf; "" if unknown. */
static void cgroup2_of(pid_t pid, char *buf, size_t n)
{
	char path[64], line[PATH_MAX + 16];
	FILE *f;

	buf[0] = 0;
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(pid ? path : "/proc/self/cgroup", "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(buf, n, "%s", line + 3);
		}
	if (f)
		fclose(f);
}

/* Whether live process `pid` may be the dwarftrace that made cgroup `dir` (dwarftrace.PID): a
 * process by our name, or the parent of a process inside it (the -c command is its child). */
static bool maybe_creator(pid_t pid, const char *dir)
{
	char path[64], comm[64], self[64], line[32], *procs;
	bool parent = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	read_line(path, comm, sizeof(comm));
	if (!comm[0])
		return false; /* no such process */
	read_line("/proc/self/comm", self, sizeof(self));
	if (!strcmp(comm, "dwarftrace") || !strcmp(comm, self))
		return true;
	procs = xasprintf("%s/cgroup.procs", dir);
	f = fopen(procs, "re");
	free(procs);
	while (f && !parent && fgets(line, sizeof(line), f)) {
		char stat_path[64], st[512], *p;

		snprintf(stat_path, sizeof(stat_path), "/proc/%d/stat", atoi(line));
		read_line(stat_path, st, sizeof(st));
		/* "pid (comm) state ppid ...": comm may hold anything but the last ')'. */
		p = strrchr(st, ')');
		parent = p && atoi(p + 4) == (int)pid;
	}
	if (f)
		fclose(f);
	return parent;
}

/* Kills every process in cgroup `dir` that is still in it when its pidfd is open (so a pid
 * reused meanwhile is not hit), and is in our pid namespace. 0 if the cgroup could then be
 * removed. */
static int kill_cgroup(const char *dir)
{
	char *procs = xasprintf("%s/cgroup.procs", dir), line[32], ns_self[64] = "", ns[64];
	const char *name = strrchr(dir, '/');
	int rc = -EBUSY;

	if (readlink("/proc/self/ns/pid", ns_self, sizeof(ns_self) - 1) < 0)
		ns_self[0] = 0;
	for (int tries = 0; tries < 100; tries++) {
		FILE *f = fopen(procs, "re");

		while (f && fgets(line, sizeof(line), f)) {
			pid_t pid = (pid_t)atoi(line);
			int pfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
			char path[64], cg[PATH_MAX + 8];
			ssize_t n;

			if (pfd < 0)
				continue;
			/* Checked with the pidfd open: from here the pid names this process. */
			snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
			n = readlink(path, ns, sizeof(ns) - 1);
			ns[n > 0 ? n : 0] = 0;
			cgroup2_of(pid, cg, sizeof(cg));
			if (!strcmp(ns, ns_self) && name && !strcmp(cg, name))
				syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
			close(pfd);
		}
		if (f)
			fclose(f);
		if (rmdir(dir) == 0 || errno == ENOENT) {
			rc = 0;
			break;
		}
		usleep(10000);
	}
	free(procs);
	return rc;
}

/* Cgroups that dwarftrace runs killed with SIGKILL (no chance to clean up) left behind, with
 * what their -c command still runs, are removed by the next run, once. One is removed only when
 * its creator is provably gone: the PID in its name (dwarftrace.PID) is no live process, or a
 * live one that is neither named like dwarftrace nor the parent of a process inside (pids are
 * reused: a live dwarftrace that got the number may also be the run that made it, and is left
 * alone; the cost is only that the cgroup waits for a later run). What is inside is then that
 * run's command and what it started — nobody else puts processes in such a cgroup — and is
 * killed: its dwarftrace would have ended it. Processes of another pid namespace are not ours to
 * judge and keep the cgroup. Only the hierarchy's top level is looked at, where runs make them. */
void dt_child_sweep_cgroups(dt_session *s)
{
	static bool swept;
	const char *root = cgroup2_root();
	struct dirent *e;
	DIR *d;

	if (swept || !root || geteuid() != 0)
		return;
	swept = true;
	d = opendir(root);
	while (d && (e = readdir(d))) {
		char *end, *dir;
		long pid;

		if (strncmp(e->d_name, "dwarftrace.", 11) || e->d_type != DT_DIR)
			continue;
		pid = strtol(e->d_name + 11, &end, 10);
		if (*end || pid <= 0)
			continue;
		dir = xasprintf("%s/%s", root, e->d_name);
		if ((pid == getpid() || !maybe_creator((pid_t)pid, dir)) && kill_cgroup(dir) < 0)
			fprintf(s->err, "dwarftrace: could not remove %s, left by a dwarftrace run "
				"that was killed\n", dir);
		free(dir);
	}
	if (d)
		closedir(d);
}

/* Puts the -c command (stopped before exec) into a cgroup of its own, so that probes can be
 * limited to it and to everything it starts — a shell, make's compilers — and to nothing else:
 * every program tests bpf_get_current_cgroup_id() (codegen's filter_cgroup, xprobe.bpf.c's
 * filter), and uprobes attach for every process (a uprobe's perf event restricted to a pid is
 * not inherited by the processes it starts). Without cgroup v2 the probes fall back to the
 * command's pid alone, uprobes included — its children and what they exec are not traced, and
 * the user is told. */
static void child_cgroup_enter(dt_session *s)
{
	const char *root = cgroup2_root();
	char *dir, *procs;
	struct stat st;

	if (!root)
		goto fallback;
	/* A dwarftrace.PID already there is a dead run's that the sweep could not remove: its
	 * processes are not our command's, so it is not used. */
	dt_child_sweep_cgroups(s);
	dir = xasprintf("%s/dwarftrace.%d", root, (int)getpid());
	if (mkdir(dir, 0755) < 0) {
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
	fprintf(s->err, "dwarftrace: -c: no cgroup v2 to put the command in: probes see only the "
		"command's own process, not the processes it starts\n");
	if (!s->o.filter_pid) {
		s->o.filter_pid = (uint32_t)s->child;
		s->o.uprobe_pid = s->child;
	}
}

/* Moves whatever the command left running back to our own cgroup and removes the directory. */
static void child_cgroup_leave(dt_session *s)
{
	char *procs, line[32], self[PATH_MAX + 16], *back;
	FILE *f;

	if (!s->child_cgroup)
		return;
	cgroup2_of(0, self, sizeof(self));
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
			dt_strerror(errno));
	free(procs);
	free(back);
	free(s->child_cgroup);
	s->child_cgroup = NULL;
}

/* The one line that says the command could not run; its status is then the shell's (126/127). */
static int could_not_run(dt_session *s, int err)
{
	fprintf(s->err, "dwarftrace: -c '%s' could not run: %s\n", s->child_cmd, dt_strerror(err));
	s->child_run_errno = err;
	s->child_on_its_own = true;
	return -err;
}

/* What execvp would fail on, found before anything is attached, so that a command that cannot
 * run is reported without an "Attaching N probes..." first. Shell commands are the shell's to
 * judge (it says "not found" itself and exits 127). 0 or a positive errno. */
static int validate_command(const char *cmd)
{
	char *path = needs_shell(cmd) ? NULL : dt_child_find_program(cmd);
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
		fprintf(s->err, "dwarftrace: -c: the command is empty\n");
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
		fprintf(s->err, "dwarftrace: -c: cannot fork: %s\n", dt_strerror(-rc));
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

		fprintf(s->err, "dwarftrace: -c: cannot watch the command: %s\n", dt_strerror(-rc));
		close(go[1]);
		close(errp[0]);
		waitpid(pid, NULL, 0);
		return rc;
	}
	if (!needs_shell(cmd))
		s->child_path = dt_child_find_program(cmd);
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
	if (s->child > 0 && !s->child_exited) {
		if (waitpid(s->child, &s->child_status, WNOHANG) == 0) {
			/* Asked first (and woken, if held at its entry point); one that does not
			 * end within the grace, or any when a second stop signal asked dwarftrace to
			 * hurry, is killed. */
			struct pollfd p = { .fd = s->child_pidfd, .events = POLLIN };

			if (!s->hurry) {
				kill(s->child, SIGTERM);
				kill(s->child, SIGCONT);
			}
			if (s->hurry || p.fd < 0 || poll(&p, 1, CHILD_GRACE_MS) <= 0)
				kill(s->child, SIGKILL);
			waitpid(s->child, &s->child_status, 0);
		}
		s->child_exited = true;
	}
	if (s->child_pidfd >= 0) {
		close(s->child_pidfd);
		s->child_pidfd = -1;
	}
	child_cgroup_leave(s);
}
