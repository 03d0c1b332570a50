/* test_runtime_session.c — the session API end to end (root + BPF): programs go through parse,
 * check, codegen, load, attach and the event loop, and the test compares what reaches the output
 * and error streams: bpftrace's shapes for the attach line and the maps at exit (sorted by name),
 * printf events, exit() from BEGIN and from an interval, map commands done in userspace, script
 * errors that load nothing, --dry-run, the kernel objects each unit's code needs (made before
 * codegen), detaching a unit while its maps live on, the clear sentence for hardware counters,
 * the -c child (its exit is the stop reason), a loop the caller owns (poll fd, dispatch, stop
 * reason, before_output) and the map listing the REPL shows. */
#include "runtime/session_internal.h"
#include "tests/unit/t.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>

struct run {
	FILE *out, *err;
	char *out_text, *err_text;
	dt_session *s;
};

static char *slurp(FILE *f)
{
	long n;
	char *buf;

	fflush(f);
	n = ftell(f);
	buf = calloc(1, (size_t)n + 1);
	rewind(f);
	if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)
		buf[0] = 0;
	return buf;
}

static dt_session *start(struct run *r, bool dry_run)
{
	dt_session_opts o = { .sz = sizeof(o), .announce = !dry_run, .dry_run = dry_run };

	memset(r, 0, sizeof(*r));
	r->out = tmpfile();
	r->err = tmpfile();
	o.out = r->out;
	o.err = r->err;
	r->s = dt_session_new(&o);
	return r->s;
}

static int add(struct run *r, const char *text)
{
	dt_source src = { .name = "-e", .text = text, .len = strlen(text) };

	return dt_session_add(r->s, &src, NULL);
}

/* Runs the loop and the exit sequence, then collects both streams. */
static void finish(struct run *r, bool run)
{
	if (run) {
		dt_session_run(r->s);
		dt_session_finish(r->s);
	}
	dt_session_free(r->s);
	r->s = NULL;
	r->out_text = slurp(r->out);
	r->err_text = slurp(r->err);
	fclose(r->out);
	fclose(r->err);
}

static void done(struct run *r)
{
	free(r->out_text);
	free(r->err_text);
}

static void begin_exit_prints_maps_by_name(void)
{
	struct run r;

	T_SKIP_UNLESS_ROOT();
	start(&r, false);
	CHECK_EQ_INT(add(&r, "BEGIN { @b = 1; @a = 2; exit(); }"), 0);
	finish(&r, true);
	CHECK_EQ_STR(r.out_text, "Attaching 1 probe...\n\n\n@a: 2\n@b: 1\n");
	CHECK_EQ_STR(r.err_text, "Attached 1 probe\n"); /* current bpftrace's line */
	done(&r);
}

static void printf_and_end(void)
{
	struct run r;

	T_SKIP_UNLESS_ROOT();
	start(&r, false);
	CHECK_EQ_INT(add(&r, "BEGIN { printf(\"x=%d %s\\n\", 42, \"hi\"); exit(); } "
			     "END { printf(\"end\\n\"); }"), 0);
	finish(&r, true);
	CHECK_EQ_STR(r.out_text, "Attaching 2 probes...\nx=42 hi\nend\n\n\n");
	done(&r);
}

static void interval_exit_and_count(void)
{
	struct run r;

	T_SKIP_UNLESS_ROOT();
	start(&r, false);
	CHECK_EQ_INT(add(&r, "interval:ms:10 { @n++; if (@n == 3) { exit(); } }"), 0);
	finish(&r, true);
	/* Exit is asynchronous: the interval may fire once more before the loop stops. */
	CHECK(!strncmp(r.out_text, "Attaching 1 probe...\n\n\n@n: ", 27));
	CHECK(atoi(r.out_text + 27) >= 3 && atoi(r.out_text + 27) <= 5);
	done(&r);
}

static void clear_runs_in_userspace(void)
{
	struct run r;

	T_SKIP_UNLESS_ROOT();
	start(&r, false);
	CHECK_EQ_INT(add(&r, "BEGIN { @a[1] = 1; @a[2] = 2; clear(@a); @b = 3; exit(); }"), 0);
	finish(&r, true);
	CHECK(strstr(r.out_text, "@b: 3\n") != NULL);
	CHECK(strstr(r.out_text, "@a[") == NULL);
	done(&r);
}

static void script_error_loads_nothing(void)
{
	struct run r;

	T_SKIP_UNLESS_ROOT();
	start(&r, false);
	CHECK_EQ_INT(add(&r, "BEGIN { @a = nosuchthing; }"), -EINVAL);
	finish(&r, false);
	CHECK_EQ_STR(r.out_text, "");
	CHECK(strstr(r.err_text, "-e:1:") != NULL && strstr(r.err_text, "ERROR") != NULL);
	done(&r);
}

static void dry_run_loads_only(void)
{
	struct run r;

	T_SKIP_UNLESS_ROOT();
	start(&r, true);
	CHECK_EQ_INT(add(&r, "BEGIN { @x = 1; } profile:hz:99 { @c = count(); }"), 0);
	finish(&r, false);
	CHECK_EQ_STR(r.out_text, "dry run: 2 programs loaded\n");
	done(&r);
}

/* The resource step makes, before codegen, only what a unit's code references: nothing for a
 * program without events or user addresses, the exec follower (and no walker) for user stacks,
 * and then the walker of one program type for ustack_dwarf, with the same exec follower. */
static void resources_per_unit(void)
{
	struct run r;
	dt_unit *u = NULL;
	dt_source src = { .name = "-e", .text = "BEGIN { @x = 1; }" };
	dt_exec_follower *ef;

	T_SKIP_UNLESS_ROOT();
	start(&r, true);
	src.len = strlen(src.text);
	CHECK_EQ_INT(dt_session_add(r.s, &src, &u), 0);
	CHECK(u && u->events_fd < 0);
	CHECK(r.s->ef == NULL && r.s->uw == NULL);
	CHECK_EQ_INT(add(&r, "profile:hz:99 { @u[ustack] = count(); }"), 0);
	ef = r.s->ef;
	CHECK(ef != NULL && r.s->uw == NULL);
	CHECK_EQ_INT(add(&r, "profile:hz:99 { @d[ustack_dwarf] = count(); }"), 0);
	CHECK(r.s->ef == ef && r.s->uw != NULL);
	if (r.s->uw) {
		CHECK(dt_unwinder_walker_progs_fd(r.s->uw, BPF_PROG_TYPE_PERF_EVENT) >= 0);
		CHECK_EQ_INT(dt_unwinder_walker_progs_fd(r.s->uw, BPF_PROG_TYPE_KPROBE), -ENOENT);
	}
	finish(&r, false);
	CHECK_EQ_STR(r.out_text, "dry run: 1 program loaded\ndry run: 1 program loaded\n"
				 "dry run: 2 programs loaded\n");
	done(&r);
}

static void hardware_counter_sentence(void)
{
	struct run r;

	T_SKIP_UNLESS_ROOT();
	if (access("/sys/bus/event_source/devices/cpu", F_OK) == 0)
		return; /* this machine has a PMU: nothing to check */
	start(&r, false);
	CHECK(add(&r, "hardware:cycles { @c = count(); }") < 0);
	finish(&r, false);
	CHECK(strstr(r.err_text, "-e:1:1-16: ERROR: hardware:cycles: this machine has no hardware "
			       "performance counters") != NULL);
	done(&r);
}

static void detach_keeps_maps(void)
{
	struct run r;
	dt_unit *u = NULL;
	dt_source src = { .name = "-e", .text = "profile:hz:99 { @c = count(); }" };

	T_SKIP_UNLESS_ROOT();
	start(&r, false);
	src.len = strlen(src.text);
	CHECK_EQ_INT(dt_session_add(r.s, &src, &u), 0);
	CHECK(u && dt_unit_id(u) == 1 && !strcmp(dt_unit_text(u), src.text));
	CHECK(dt_session_unit(r.s, 0) == u && dt_session_unit(r.s, 1) == NULL);
	CHECK_EQ_INT(dt_session_detach(r.s, u), 0);
	CHECK(dt_session_unit(r.s, 0) == NULL);
	/* A second unit sees the first one's map, with its type. */
	CHECK_EQ_INT(add(&r, "BEGIN { @c = count(); exit(); }"), 0);
	finish(&r, true);
	CHECK(strstr(r.out_text, "@c: ") != NULL);
	done(&r);
}

static void child_exit_ends_session(void)
{
	struct run r;
	int pid = 0;
	uint64_t t0;

	T_SKIP_UNLESS_ROOT();
	start(&r, false);
	CHECK_EQ_INT(dt_session_spawn_child(r.s, "sleep 0.2", &pid), 0);
	CHECK(pid > 0);
	CHECK_EQ_INT(add(&r, "BEGIN { @x = 7; }"), 0);
	CHECK_EQ_INT(dt_session_start_child(r.s), 0);
	t0 = dt_now_ns();
	CHECK_EQ_INT(dt_session_run(r.s), 0);
	CHECK(dt_now_ns() - t0 < 2000000000ull);
	CHECK(dt_session_stopped(r.s) &&
	      !strcmp(dt_session_stopped(r.s), "the -c command exited"));
	dt_session_finish(r.s);
	finish(&r, false);
	CHECK(strstr(r.out_text, "@x: 7\n") != NULL);
	done(&r);
}

static void child_exec_failure(void)
{
	struct run r;
	int pid = 0;

	T_SKIP_UNLESS_ROOT();
	start(&r, false);
	/* Found before anything is attached; its status is the shell's. */
	CHECK_EQ_INT(dt_session_spawn_child(r.s, "/nonexistent/prog", &pid), -ENOENT);
	CHECK_EQ_INT(dt_session_child_status(r.s), 127);
	finish(&r, false);
	CHECK(strstr(r.err_text, "dwarftrace: -c '/nonexistent/prog' could not run: No such file "
		     "or directory\n") != NULL);
	done(&r);
}

/* A command that fails on its own is said once, and its status is the shell's $?. */
static void child_failure_reported(void)
{
	struct run r;

	T_SKIP_UNLESS_ROOT();
	start(&r, false);
	/* Shell syntax (the ';'): /bin/sh runs it. Without a command the run would never stop. */
	int rc = dt_session_spawn_child(r.s, "exit 5;", NULL);

	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_INT(dt_session_child_status(r.s), -1);
	CHECK_EQ_INT(add(&r, "BEGIN { @x = 1; }"), 0);
	CHECK_EQ_INT(dt_session_start_child(r.s), 0);
	if (rc == 0)
		CHECK_EQ_INT(dt_session_run(r.s), 0);
	dt_session_finish(r.s);
	CHECK_EQ_INT(dt_session_child_status(r.s), 5);
	finish(&r, false);
	CHECK(strstr(r.err_text, "dwarftrace: -c 'exit 5;' exited with status 5\n") != NULL);
	done(&r);
}

static void count_call(void *ctx)
{
	(*(int *)ctx)++;
}

/* The loop as a REPL owns it: poll the session's fd, dispatch without waiting, ask whether it
 * stopped and why; probe output is announced through before_output first. */
static void caller_owned_loop(void)
{
	struct run r;
	struct pollfd pfd = { .events = POLLIN };
	int calls = 0, rounds = 0;

	T_SKIP_UNLESS_ROOT();
	memset(&r, 0, sizeof(r));
	r.out = tmpfile();
	r.err = tmpfile();
	r.s = dt_session_new(&(dt_session_opts){ .sz = sizeof(dt_session_opts), .out = r.out,
						 .err = r.err, .before_output = count_call,
						 .output_ctx = &calls });
	CHECK_EQ_INT(add(&r, "BEGIN { printf(\"begin\\n\"); } "
			     "interval:ms:10 { @n++; if (@n == 2) { exit(); } }"), 0);
	CHECK(dt_session_stopped(r.s) == NULL);
	pfd.fd = dt_session_poll_fd(r.s);
	CHECK(pfd.fd >= 0);
	/* BEGIN's record is waiting already: the first dispatch delivers it without blocking. */
	CHECK(dt_session_dispatch(r.s, 0) > 0);
	CHECK(calls >= 1);
	while (!dt_session_stopped(r.s) && rounds++ < 100 && poll(&pfd, 1, 1000) >= 0)
		CHECK(dt_session_dispatch(r.s, 0) >= 0);
	CHECK(dt_session_stopped(r.s) && !strcmp(dt_session_stopped(r.s), "exit()"));
	finish(&r, false);
	CHECK(!strncmp(r.out_text, "begin\n", 6));
	done(&r);
}

/* The REPL's .maps and completion: maps in creation order with their types and sizes. */
static void maps_are_listed(void)
{
	struct run r;
	const dt_type *key = NULL, *value = NULL;
	uint64_t n = 0;

	T_SKIP_UNLESS_ROOT();
	start(&r, false);
	CHECK_EQ_INT(add(&r, "BEGIN { @a[1] = 1; @a[2] = 2; @b = 3; }"), 0);
	CHECK_EQ_STR(dt_session_map(r.s, 0, &key, &value), "@a");
	CHECK(key != NULL && value != NULL);
	CHECK_EQ_INT(dt_session_map_entries(r.s, 0, &n), 0);
	CHECK(n == 2);
	CHECK_EQ_STR(dt_session_map(r.s, 1, &key, NULL), "@b");
	CHECK(key == NULL);
	CHECK(dt_session_map(r.s, 2, NULL, NULL) == NULL);
	CHECK_EQ_INT(dt_session_map_entries(r.s, 2, &n), -ENOENT);
	finish(&r, false);
	done(&r);
}

/* A program the verifier must refuse (r0 is read before it is written): the load reports the
 * internal-error sentence naming the probe, and the log's tail. */
static void verifier_rejection_sentence(void)
{
	struct run r;
	struct bpf_insn bad[] = {
		{ .code = BPF_JMP | BPF_EXIT },
	};
	dt_attach a = { .provider = DT_P_PROFILE, .text = "profile:hz:99" };
	dt_cg_prog p = { .attach = &a, .prog_type = BPF_PROG_TYPE_PERF_EVENT, .name = "p0_profile",
			 .insns = bad, .ninsns = 1, .cont_slot = -1 };
	int fd = -1;

	T_SKIP_UNLESS_ROOT();
	start(&r, false);
	CHECK(dt_rt_load_prog(r.s, &p, &fd) < 0);
	CHECK_EQ_INT(fd, -1);
	finish(&r, false);
	CHECK(!strncmp(r.err_text, "dwarftrace: internal error: the verifier rejected generated code for probe "
		       "profile:hz:99 (this is a dwarftrace bug; please report it with the output "
		       "of -d verifier)\n", 150));
	CHECK(strstr(r.err_text, "R0 !read_ok") != NULL);
	done(&r);
}

int main(void)
{
	T_RUN(begin_exit_prints_maps_by_name);
	T_RUN(printf_and_end);
	T_RUN(interval_exit_and_count);
	T_RUN(clear_runs_in_userspace);
	T_RUN(script_error_loads_nothing);
	T_RUN(dry_run_loads_only);
	T_RUN(resources_per_unit);
	T_RUN(hardware_counter_sentence);
	T_RUN(detach_keeps_maps);
	T_RUN(child_exit_ends_session);
	T_RUN(child_exec_failure);
	T_RUN(child_failure_reported);
	T_RUN(caller_owned_loop);
	T_RUN(maps_are_listed);
	T_RUN(verifier_rejection_sentence);
	return t_done();
}
