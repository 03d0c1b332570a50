/* cli.c — the command line: `dwarftrace [options] [FILE | -e PROGRAM] [--] [params]`. Parses the
 * options (exit status 2 on misuse), reads the program (a file, `#!` scripts, stdin for `-`),
 * sets up -p/-c/-o/-f/-d/-v/--dry-run, and drives one session: add the program, let a -c child
 * run, loop, finish — through the public session API (runtime.h) only. Exit status 0, 1 for
 * errors in the script or at run time, 2 for usage, or a failed -c command's own status. */
#include "runtime/runtime.h"
#include "common/common.h"
#include "unwind/unwind.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: dwarftrace [options] [FILE | -e PROGRAM] [--] [PARAM...]\n"
	"\n"
	"Traces the system with probes written in a bpftrace-like language; ustack_dwarf\n"
	"gives user stacks unwound from DWARF CFI, so code built without frame pointers\n"
	"still has stacks.\n"
	"\n"
	"options:\n"
	"  -e PROGRAM      the program text\n"
	"  FILE            a program file ('-' reads stdin); '#!/usr/bin/env dwarftrace'\n"
	"                  scripts run as they are\n"
	"  PARAM...        positional parameters, $1, $2, ... in the program\n"
	"  -p PID          only trace process PID (every probe but BEGIN, END and interval\n"
	"                  filters on it); stop when it exits\n"
	"  -c CMD          run CMD and trace only it and what it starts (interval probes\n"
	"                  fire regardless); stop when it exits. If CMD fails, that is\n"
	"                  said in one line and dwarftrace exits with CMD's status (128+N\n"
	"                  if signal N killed it, 127/126 if it could not run)\n"
	"  -o FILE         write the output to FILE\n"
	"  -f text|json|folded  output format (json: one JSON object per line, bpftrace's\n"
	"                  shapes; folded: only 'outer;...;leaf count' lines of stack maps,\n"
	"                  the rest on stderr). With json or folded, banners and notices go\n"
	"                  to stderr; -o keeps a -c command's own stdout out of the data\n"
	"  --json-frames   -f json: stacks as arrays of {addr, func, offset, module} objects\n"
	"                  and stack-keyed maps as lists of {key, value} entries\n"
	"  --no-merge-stacks  one entry per recorded stack, as bpftrace prints them, even\n"
	"                  when their printed forms are the same (merged and added by default)\n"
	"  --pprof FILE    also write every stack-keyed map to FILE (gzipped pprof\n"
	"                  profile.proto: go tool pprof, Pyroscope, Parca, Grafana);\n"
	"                  count() maps as samples/count, profile: maps also as\n"
	"                  cpu/nanoseconds, with the program, start time and duration\n"
	"  --flamegraph FILE  also write each stack-keyed map as an interactive SVG flame\n"
	"                  graph (the first to FILE, others to FILE-NAME.svg), titled with\n"
	"                  the program, map, target, rate, duration and total\n"
	"  --flamegraph-map @NAME  draw only that map, to FILE\n"
	"  --no-demangle   print C++/Rust symbol names as they are in the binary\n"
	"  --no-inline     no frames for inlined functions (shown by default with DWARF)\n"
	"  --srcline       add (file:line) to frames when debug info has it\n"
	"  --debuginfo DIR look for separate debug files in DIR (repeatable; also\n"
	"                  DIR/.build-id); DEBUGINFOD_URLS servers are asked in the background\n"
	"  -v              verbose: what was attached, loss counters, map memory, stage timings\n"
	"  --dry-run       compile and load the programs, attach nothing\n"
	"  --unwind-budget MiB  kernel memory for ustack_dwarf's unwind tables (default 64)\n"
	"  --unwind-stacks N    distinct ustack_dwarf stacks kept (default 16384)\n"
	"  -d WHAT         dump a stage: tokens, ast, types, ir, asm, verifier, unwind\n"
	"                  (repeatable, or a comma list); '-d unwind FILE' dumps the\n"
	"                  unwind rows of the ELF file FILE\n"
	"  -i              the interactive REPL (also with no program on a terminal)\n"
	"  -h, --help      this help\n"
	"  -V, --version   the version\n"
	"\n"
	"probes:\n"
	"  BEGIN, END                      BEGIN { printf(\"hello\\n\"); }\n"
	"  interval:s|ms|us|hz:N           interval:s:1 { print(@n); clear(@n); }  (one CPU)\n"
	"  profile:s|ms|us|hz:N            profile:hz:99 { @[ustack_dwarf] = count(); }\n"
	"  uprobe:BIN:FUNC[+OFF]           uprobe:libc:malloc { @bytes = sum(arg0); }\n"
	"  uretprobe:BIN:FUNC              uretprobe:/bin/bash:readline { @r = hist(retval); }\n"
	"  kprobe:FUNC[+OFF]               kprobe:do_sys_openat2 { @[comm] = count(); }\n"
	"  kretprobe:FUNC                  kretprobe:vfs_read { @ret = hist(retval); }\n"
	"  tracepoint:SUBSYS:EVENT         tracepoint:syscalls:sys_enter_openat\n"
	"                                      { printf(\"%s\\n\", str(args->filename)); }\n"
	"  software:EVENT[:PERIOD]         software:page-faults:100 { @[comm] = count(); }\n"
	"  hardware:EVENT[:PERIOD]         hardware:cache-misses:1000000 { @[pid] = count(); }\n"
	"  xprobe:BIN:FUNC[:N]             xprobe:./app:handle { @cpu = hist(oncpu); @q = hist(runq); }\n"
	"                                  runs at FUNC's return; wall oncpu offcpu runq blocked\n"
	"                                  iowait (ns) and nswitch are this call's; :N measures one\n"
	"                                  call in N, at random\n"
	"  Blocks are written { ... } or < ... >; FUNC and EVENT may hold '*' wildcards.\n"
	"\n"
	"examples:\n"
	"  dwarftrace -e 'profile:hz:19 < @[ustack_dwarf] = count(); >'\n"
	"  dwarftrace -p 1234 -e 'profile:hz:99 { @[kstack, ustack_dwarf] = count(); }'\n"
	"  dwarftrace -c ./a.out -e 'uprobe:./a.out:work { @[ustack_dwarf] = count(); }'\n";

struct cli {
	const char *prog_text;
	const char *file;
	const char *pid_arg;
	const char *cmd;
	const char *out_path;
	const char *unwind_file;
	dt_session_format format;
	bool no_demangle, no_inline, srcline, json_frames, no_merge_stacks;
	const char *pprof_path, *flamegraph_path, *flamegraph_map;
	uint64_t unwind_budget;   /* --unwind-budget MiB, in bytes */
	uint32_t unwind_stacks;   /* --unwind-stacks N */
	const char *debug_dirs[16];
	uint32_t ndebug_dirs;
	int verbose;
	uint32_t dump;
	bool dry_run, repl;
	const char **params;
	uint32_t nparams;
};

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "dwarftrace: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'dwarftrace -h' for the list of options.\n");
	return 2;
}

static int parse_dump(struct cli *c, const char *arg)
{
	static const struct { const char *name; uint32_t flag; } names[] = {
		{ "tokens", DT_DUMP_TOKENS }, { "ast", DT_DUMP_AST }, { "types", DT_DUMP_TYPES },
		{ "ir", DT_DUMP_IR }, { "asm", DT_DUMP_ASM }, { "verifier", DT_DUMP_VERIFIER },
		{ "unwind", DT_DUMP_UNWIND },
	};
	char *copy = xstrdup(arg), *save = NULL;
	int rc = 0;

	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < DT_ARRAY_SIZE(names) && strcmp(names[i].name, w); i++)
			;
		if (i == DT_ARRAY_SIZE(names)) {
			rc = usage_error("-d: unknown stage '%s' (tokens, ast, types, ir, asm, "
					 "verifier, unwind)", w);
			break;
		}
		c->dump |= names[i].flag;
	}
	free(copy);
	return rc;
}

/* 0 to go on, or the exit status (also 0 for -h/-V, signalled through *done). */
static int parse_args(struct cli *c, int argc, char **argv, bool *done)
{
	static const struct option longs[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "no-demangle", no_argument, NULL, 1001 },
		{ "no-inline", no_argument, NULL, 1002 },
		{ "srcline", no_argument, NULL, 1003 },
		{ "debuginfo", required_argument, NULL, 1004 },
		{ "pprof", required_argument, NULL, 1005 },
		{ "flamegraph", required_argument, NULL, 1006 },
		{ "unwind-budget", required_argument, NULL, 1007 },
		{ "unwind-stacks", required_argument, NULL, 1008 },
		{ "json-frames", no_argument, NULL, 1009 },
		{ "no-merge-stacks", no_argument, NULL, 1010 },
		{ "flamegraph-map", required_argument, NULL, 1011 },
		{ NULL, 0, NULL, 0 },
	};
	int opt, rc;

	*done = false;
	opterr = 0;
	optind = 0; /* glibc: a full re-scan, so dt_cli_main can run more than once (tests) */
	/* '+': options end at the first program file, so params may look like options. */
	while ((opt = getopt_long(argc, argv, "+:e:p:c:o:f:vd:ihV", longs, NULL)) != -1) {
		switch (opt) {
		case 'e':
			c->prog_text = optarg;
			break;
		case 'p':
			c->pid_arg = optarg;
			break;
		case 'c':
			c->cmd = optarg;
			break;
		case 'o':
			c->out_path = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "text"))
				c->format = DT_FORMAT_TEXT;
			else if (!strcmp(optarg, "json"))
				c->format = DT_FORMAT_JSON;
			else if (!strcmp(optarg, "folded"))
				c->format = DT_FORMAT_FOLDED;
			else
				return usage_error("-f: unknown format '%s' (text, json or folded)",
						   optarg);
			break;
		case 1001:
			c->no_demangle = true;
			break;
		case 1002:
			c->no_inline = true;
			break;
		case 1003:
			c->srcline = true;
			break;
		case 1004:
			if (c->ndebug_dirs == DT_ARRAY_SIZE(c->debug_dirs))
				return usage_error("%s", "--debuginfo: at most 16 directories");
			c->debug_dirs[c->ndebug_dirs++] = optarg;
			break;
		case 1005:
			c->pprof_path = optarg;
			break;
		case 1006:
			c->flamegraph_path = optarg;
			break;
		case 1007:
		case 1008: {
			char *end;
			unsigned long long v = strtoull(optarg, &end, 10);

			if (*end || !v || v > (opt == 1007 ? 65536ull : 1u << 24))
				return usage_error("%s", opt == 1007 ?
						   "--unwind-budget: give MiB, 1..65536" :
						   "--unwind-stacks: give a count, 1..16777216");
			if (opt == 1007)
				c->unwind_budget = v << 20;
			else
				c->unwind_stacks = (uint32_t)v;
			break;
		}
		case 1009:
			c->json_frames = true;
			break;
		case 1010:
			c->no_merge_stacks = true;
			break;
		case 1011:
			if (optarg[0] != '@')
				return usage_error("--flamegraph-map: '%s' is not a map name (@NAME, "
						   "or @ for the map without a name)", optarg);
			c->flamegraph_map = optarg;
			break;
		case 'v':
			c->verbose++;
			break;
		case 'd':
			rc = parse_dump(c, optarg);
			if (rc)
				return rc;
			break;
		case 'i':
			c->repl = true;
			break;
		case 'n':
			c->dry_run = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			*done = true;
			return 0;
		case 'V':
			printf("dwarftrace %s\n", DT_VERSION);
			*done = true;
			return 0;
		case ':':
			return usage_error("option -%s needs an argument",
					   (char[]){ (char)optopt, 0 });
		default:
			if (optopt)
				return usage_error("unknown option -%s",
						   (char[]){ (char)optopt, 0 });
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (c->dump & DT_DUMP_UNWIND) {
		/* `-d unwind FILE`: the argument is a binary to dump, not a program. */
		if (!c->prog_text && optind < argc)
			c->unwind_file = argv[optind++];
	} else if (!c->prog_text && optind < argc && strcmp(argv[optind], "--")) {
		c->file = argv[optind++];
	}
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	c->params = (const char **)&argv[optind];
	c->nparams = (uint32_t)(argc - optind);
	if (c->pid_arg && c->cmd)
		return usage_error("%s", "-p and -c cannot be used together");
	if (c->pid_arg) {
		char *end;
		long pid = strtol(c->pid_arg, &end, 10);

		if (*end || pid <= 0 || pid > 0x7fffffff)
			return usage_error("-p: '%s' is not a process id", c->pid_arg);
	}
	return 0;
}

/* Reads FILE (or stdin for "-"). A `#!` first line is blanked with spaces, not removed, so
 * diagnostics keep the file's line and column numbers. */
static int read_program(const char *file, char **text, size_t *len)
{
	int rc;

	if (!strcmp(file, "-")) {
		DT_VEC(char) v = { 0 };
		int ch;

		while ((ch = getchar()) != EOF)
			DT_VEC_PUSH(&v, (char)ch);
		DT_VEC_PUSH(&v, 0);
		*text = v.v;
		*len = v.n - 1;
		rc = 0;
	} else {
		rc = dt_read_file(file, text, len);
	}
	if (rc == 0 && *len >= 2 && (*text)[0] == '#' && (*text)[1] == '!')
		for (char *p = *text; *p && *p != '\n'; p++)
			*p = ' ';
	return rc;
}

/* The exit status with -c: a command that failed on its own (or could not run) gives its own
 * status ($?: 1..255, 128 + a signal, 126/127), so `dwarftrace -c 'make check' ...` in a script
 * or CI fails when the command fails, as under time(1), strace(1) or timeout(1). bpftrace exits 0
 * there, which hides the failure. exit(N) in the script and dwarftrace's own errors (1) come
 * first; a command that dwarftrace ended (Ctrl-C, exit(), an error) is not a failure. */
static int child_status(dt_session *s, int status)
{
	int cs = s ? dt_session_child_status(s) : -1;

	return cs > 0 && status == 0 ? cs : status;
}

int dt_cli_main(int argc, char **argv)
{
	struct cli c = { 0 };
	dt_session_opts so = { .sz = sizeof(so) };
	dt_session *s = NULL;
	dt_unit *u = NULL;
	dt_source src;
	char *text = NULL;
	size_t len = 0;
	FILE *out = NULL;
	bool done;
	int rc, status = 1;

	rc = parse_args(&c, argc, argv, &done);
	if (rc || done)
		return rc;
	if (c.dump & DT_DUMP_UNWIND && c.unwind_file) {
		/* `-d unwind FILE` is the unwinder's table dump; it reports its own errors. */
		return dt_unwind_dump(c.unwind_file, stdout) < 0 ? 1 : 0;
	}
	if (c.dump & DT_DUMP_UNWIND && !c.prog_text && !c.file && !c.unwind_file)
		return usage_error("%s", "-d unwind: give the ELF file to dump (-d unwind FILE)");
	if (!c.prog_text && !c.file) {
		if (c.repl || isatty(STDIN_FILENO)) {
			/* The REPL: one session that grows while the user types (repl.c). */
			if (c.out_path && !(out = fopen(c.out_path, "we"))) {
				fprintf(stderr, "dwarftrace: cannot write %s: %s\n", c.out_path,
					strerror(errno));
				return 1;
			}
			so.out = out ? out : stdout;
			so.err = stderr;
			so.format = c.format;
			so.json_frames = c.json_frames;
			so.no_merge_stacks = c.no_merge_stacks;
			so.verbose = c.verbose;
			so.dump = c.dump;
			so.params = c.params;
			so.nparams = c.nparams;
			if (c.pid_arg)
				so.filter_pid = (uint32_t)atoi(c.pid_arg);
			so.uprobe_pid = c.pid_arg ? (int)so.filter_pid : -1;
			status = dt_repl_main(&so, c.pid_arg != NULL);
			if (out)
				fclose(out);
			return status;
		}
		return usage_error("%s", "no program: give FILE or -e PROGRAM");
	}
	if (c.prog_text) {
		src = (dt_source){ .name = "-e", .text = c.prog_text, .len = strlen(c.prog_text) };
	} else {
		rc = read_program(c.file, &text, &len);
		if (rc < 0) {
			fprintf(stderr, "dwarftrace: cannot read %s: %s\n", c.file, strerror(-rc));
			return 1;
		}
		src = (dt_source){ .name = strcmp(c.file, "-") ? c.file : "stdin", .text = text,
				   .len = len };
	}
	if (c.out_path) {
		out = fopen(c.out_path, "we");
		if (!out) {
			fprintf(stderr, "dwarftrace: cannot write %s: %s\n", c.out_path,
				strerror(errno));
			goto out;
		}
	}
	so.out = out ? out : stdout;
	so.err = stderr;
	so.format = c.format;
	so.no_demangle = c.no_demangle;
	so.no_inline = c.no_inline;
	so.srcline = c.srcline;
	so.debug_dirs = c.debug_dirs;
	so.ndebug_dirs = c.ndebug_dirs;
	so.pprof_path = c.pprof_path;
	so.flamegraph_path = c.flamegraph_path;
	so.flamegraph_map = c.flamegraph_map;
	so.unwind_budget = c.unwind_budget;
	so.unwind_stacks = c.unwind_stacks;
	so.json_frames = c.json_frames;
	so.no_merge_stacks = c.no_merge_stacks;
	so.verbose = c.verbose;
	so.dump = c.dump;
	so.dry_run = c.dry_run;
	so.announce = !c.dry_run;
	so.end_on_attach_error = true;
	so.params = c.params;
	so.nparams = c.nparams;
	if (c.pid_arg) {
		so.filter_pid = (uint32_t)atoi(c.pid_arg);
		so.uprobe_pid = (int)so.filter_pid;
	}
	s = dt_session_new(&so);
	if (!s)
		goto out;
	if (c.pid_arg && dt_session_watch_pid(s, (int)so.filter_pid) < 0)
		goto out;
	/* SIGINT/SIGTERM end the session from here on: a Ctrl-C while attaching stops attaching
	 * and what attached is released (with the maps printed), and a Ctrl-C while compiling
	 * still removes the -c command's cgroup on the way out. */
	if (!c.dry_run && dt_session_catch_signals(s) < 0)
		goto out;
	/* The child exists before compiling: the programs test its cgroup id. */
	if (c.cmd && !c.dry_run && dt_session_spawn_child(s, c.cmd, NULL) < 0) {
		status = child_status(s, 0) ? child_status(s, 0) : 1; /* could not run */
		goto out;
	}
	rc = dt_session_add(s, &src, &u);
	if (rc < 0) {
		/* An attach failure left the unit: END and every map, then the detach. */
		if (u)
			dt_session_finish(s);
		goto out;
	}
	if (c.dry_run) {
		status = 0;
		goto out;
	}
	if (dt_session_start_child(s) < 0) {
		status = child_status(s, 0) ? child_status(s, 0) : 1; /* could not run */
		goto out;
	}
	rc = dt_session_run(s);
	dt_session_finish(s);
	status = rc < 0 ? 1 : dt_session_exit_code(s);
out:
	status = child_status(s, status);
	dt_session_free(s);
	if (out)
		fclose(out);
	free(text);
	return status;
}
