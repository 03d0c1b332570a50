/* test_runtime_cli.c — the command line's contract, through dt_cli_main: exit status 0 / 1
 * (script or run-time errors, and usage, as bpftrace's), -o writing the whole output to a file,
 * positional parameters after `--`, `#!` scripts keeping their line numbers, --dry-run, and -c
 * ending the session when the command exits. Cases that load BPF need root. */
#include "runtime/runtime.h"
#include "common/common.h"
#include "tests/unit/t.h"

#include <stdlib.h>

static int cli(const char *const *args)
{
	char *argv[32];
	int argc = 0;

	argv[argc++] = (char *)"dwarftrace";
	for (; *args && argc < 31; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	fflush(stdout);
	return dt_cli_main(argc, argv);
}

static char *read_all(const char *path)
{
	char *text = NULL;

	if (dt_read_file(path, &text, NULL) < 0)
		return NULL;
	return text;
}

static void usage_errors_exit_1(void)
{
	CHECK_EQ_INT(cli((const char *[]){ "-Z", NULL }), 1);
	CHECK_EQ_INT(cli((const char *[]){ "-f", "xml", "-e", "BEGIN {}", NULL }), 1);
	CHECK_EQ_INT(cli((const char *[]){ "-d", "nope", "-e", "BEGIN {}", NULL }), 1);
	CHECK_EQ_INT(cli((const char *[]){ "-p", "abc", "-e", "BEGIN {}", NULL }), 1);
	CHECK_EQ_INT(cli((const char *[]){ "-p", "12a", "-e", "BEGIN {}", NULL }), 1);
	CHECK_EQ_INT(cli((const char *[]){ "-p", "5000000", "-e", "BEGIN {}", NULL }), 1);
	CHECK_EQ_INT(cli((const char *[]){ "-B", "huge", "-e", "BEGIN {}", NULL }), 1);
	CHECK_EQ_INT(cli((const char *[]){ "-l", "software:*", "hardware:*", NULL }), 1);
	CHECK_EQ_INT(cli((const char *[]){ "-l", "-e", "BEGIN {}", "software:*", NULL }), 1);
	CHECK_EQ_INT(cli((const char *[]){ "-p", "1", "-c", "true", "-e", "BEGIN {}", NULL }), 1);
	CHECK_EQ_INT(cli((const char *[]){ "-e", NULL }), 1);
	CHECK_EQ_INT(cli((const char *[]){ "-V", NULL }), 0);
	/* bpftrace's -l -e PROGRAM lists the program's probes (BEGIN names none). */
	CHECK_EQ_INT(cli((const char *[]){ "-l", "-e", "BEGIN {}", NULL }), 0);
	CHECK_EQ_INT(cli((const char *[]){ "--probe-filter", "(", "-e", "BEGIN {}", NULL }), 1);
}

static void script_errors_exit_1(void)
{
	CHECK_EQ_INT(cli((const char *[]){ "-e", "BEGIN { @a = nosuch; }", NULL }), 1);
	CHECK_EQ_INT(cli((const char *[]){ "/nonexistent/script.dt", NULL }), 1);
	/* A search with a character no probe name has, and a probe type there is not. */
	CHECK_EQ_INT(cli((const char *[]){ "-l", "\\n", NULL }), 1);
	CHECK_EQ_INT(cli((const char *[]){ "-l", "nosuch:*", NULL }), 1);
}

static void output_file_and_params(void)
{
	char out[] = "/tmp/dt_cli_outXXXXXX";
	int fd = mkstemp(out);
	char *text;

	T_SKIP_UNLESS_ROOT();
	close(fd);
	CHECK_EQ_INT(cli((const char *[]){ "-o", out, "-e",
					   "BEGIN { printf(\"%s %d\\n\", str($1), $2); exit(); }",
					   "--", "foo", "-7", NULL }), 0);
	text = read_all(out);
	CHECK_EQ_STR(text, "Attaching 1 probe...\nfoo -7\n\n\n");
	free(text);
	unlink(out);
}

/* GNU getopt's order, as bpftrace's: options after the program file are options (-q, -o), and
 * `--` ends them, so a parameter may look like one. */
static void options_after_the_file(void)
{
	char script[] = "/tmp/dt_cli_scriptXXXXXX", out[] = "/tmp/dt_cli_outXXXXXX";
	int fd = mkstemp(script), ofd = mkstemp(out);
	const char text[] = "BEGIN { printf(\"%d\\n\", $1); exit(); }\n";
	char *got;

	T_SKIP_UNLESS_ROOT();
	CHECK(write(fd, text, sizeof(text) - 1) == (ssize_t)sizeof(text) - 1);
	close(fd);
	close(ofd);
	CHECK_EQ_INT(cli((const char *[]){ script, "-q", "-o", out, "--", "-7", NULL }), 0);
	got = read_all(out);
	CHECK_EQ_STR(got, "-7\n\n\n");
	free(got);
	unlink(script);
	unlink(out);
}

static void shebang_keeps_lines(void)
{
	char script[] = "/tmp/dt_cli_scriptXXXXXX", errf[] = "/tmp/dt_cli_errXXXXXX";
	int fd = mkstemp(script), efd = mkstemp(errf), saved = dup(2);
	const char text[] = "#!/usr/bin/env dwarftrace\nBEGIN { @x = nope; }\n";
	char *err;

	CHECK(write(fd, text, sizeof(text) - 1) == (ssize_t)sizeof(text) - 1);
	close(fd);
	fflush(stderr);
	dup2(efd, 2);
	CHECK_EQ_INT(cli((const char *[]){ script, NULL }), 1);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(efd);
	err = read_all(errf);
	/* The error is on line 2, columns 14 to 18, as in the file. */
	CHECK(err && strstr(err, ":2:14-18: ERROR:") != NULL);
	free(err);
	unlink(script);
	unlink(errf);
}

static void dry_run_and_child(void)
{
	char out[] = "/tmp/dt_cli_outXXXXXX";
	int fd = mkstemp(out);
	uint64_t t0;
	char *text;

	T_SKIP_UNLESS_ROOT();
	close(fd);
	CHECK_EQ_INT(cli((const char *[]){ "--dry-run", "-o", out, "-e",
					   "BEGIN { exit(); } END { }", NULL }), 0);
	text = read_all(out);
	CHECK_EQ_STR(text, "dry run: 2 programs loaded\n");
	free(text);
	t0 = dt_now_ns();
	CHECK_EQ_INT(cli((const char *[]){ "-o", out, "-c", "sleep 0.1", "-e",
					   "BEGIN { @started = 1; }", NULL }), 0);
	CHECK(dt_now_ns() - t0 < 3000000000ull);
	text = read_all(out);
	CHECK_EQ_STR(text, "Attaching 1 probe...\n\n\n@started: 1\n");
	free(text);
	unlink(out);
}

int main(void)
{
	T_RUN(usage_errors_exit_1);
	T_RUN(script_errors_exit_1);
	T_RUN(output_file_and_params);
	T_RUN(options_after_the_file);
	T_RUN(shebang_keeps_lines);
	T_RUN(dry_run_and_child);
	return t_done();
}
