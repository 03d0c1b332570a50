/* cli.c — the command line: `dwarftrace [options] [FILE | -e PROGRAM] [--] [params]`. Parses the
 * options (exit status 1 on misuse, as bpftrace), reads the program (a file, `#!` scripts, stdin
 * for `-`), sets up -p/-c/-o/-f/-d/-v/--dry-run, and drives one session: add the program, let a
 * -c child run, loop, finish — through the public session API (runtime.h) only. Exit status 0, 1 for
 * errors in the script, at run time (a failed write of the output included) or on the command
 * line (as bpftrace's), or a failed -c command's own status. */
#include "runtime/runtime.h"
#include "common/common.h"
#include "unwind/unwind.h"
#include "elfproc/elfproc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The options, once: -h prints them, getopt is built from them, and README.md's "Command line"
 * table is generated from them (dt_cli_options_markdown; tests/readme_options.sh fails when the
 * README differs). `syntax` is what a user types; `help` is written for both: `code` in
 * backquotes, which -h drops. A row with no short or long name documents an argument. */
struct cli_opt {
	char short_name;        /* 0: none */
	const char *long_name;  /* NULL: none */
	int has_arg;            /* getopt's no_argument / required_argument */
	int id;                 /* what getopt_long returns: short_name, or >= 1000 */
	const char *syntax;
	const char *help;
};

enum {
	OPT_DRY_RUN = 1000, OPT_NO_DEMANGLE, OPT_NO_INLINE, OPT_SRCLINE, OPT_DEBUGINFO, OPT_PPROF,
	OPT_FLAMEGRAPH, OPT_UNWIND_BUDGET, OPT_UNWIND_STACKS, OPT_NO_WARNINGS, OPT_INFO, OPT_UNSAFE,
	OPT_LANGUAGE,
	OPT_INCLUDE, OPT_JSON_FRAMES, OPT_NO_MERGE_STACKS, OPT_FLAMEGRAPH_MAP,
	OPT_USDT_FILE_ACTIVATION, OPT_TEST, OPT_BENCH, OPT_MODE, OPT_PROBE_FILTER, OPT_DWARF_PID,
};

static const struct cli_opt cli_opts[] = {
	{ 'e', NULL, required_argument, 'e', "-e PROGRAM",
	  "the program text (given again, the last one runs, as in bpftrace, with a warning)" },
	{ 0, NULL, 0, 0, "FILE",
	  "a program file (`-` reads stdin); `#!/usr/bin/env dwarftrace` scripts run as they are" },
	{ 0, NULL, 0, 0, "PARAM...", "positional parameters `$1`, `$2`, ... (`$#` counts them; in an attach point, or as the whole attach point: `-e '$1 { … }' i:ms:1`); after `--`, `--NAME[=VALUE]` are named ones, read by `getopt()` (`-- --help` lists those the program reads)" },
	{ 'p', "pid", required_argument, 'p', "-p, --pid PID",
	  "trace only that process (every probe but `BEGIN`, `END` and `interval`, which fire "
	  "regardless, as in bpftrace); stop when it exits" },
	{ 'c', "cmd", required_argument, 'c', "-c, --cmd CMD",
	  "run CMD and trace only it and the processes it starts (they share a cgroup made for it; "
	  "without cgroup v2, its pid alone; `interval` probes fire regardless); stop when it exits "
	  "(maps print then). If CMD fails, that is said in one line and dwarftrace exits with "
	  "CMD's status (128+N if signal N killed it, 127/126 if it could not run)" },
	{ 'o', "output", required_argument, 'o', "-o, --output FILE", "write the output to FILE" },
	{ 'f', NULL, required_argument, 'f', "-f text|json|folded",
	  "output format: bpftrace's text; json: one JSON object per line in bpftrace's shapes; "
	  "folded: only `outer;...;leaf count` lines of stack maps. With json or folded, banners, "
	  "notices (and for folded, printf output and maps without stacks) go to stderr; -o keeps "
	  "a -c command's own stdout out of the data" },
	{ 0, "json-frames", no_argument, OPT_JSON_FRAMES, "--json-frames",
	  "with `-f json`: stacks as arrays of `{addr, func, offset, module}` objects, and "
	  "stack-keyed maps as lists of `{key, value}` entries" },
	{ 0, "no-merge-stacks", no_argument, OPT_NO_MERGE_STACKS, "--no-merge-stacks",
	  "one entry per recorded stack, as bpftrace prints them, even when their printed forms "
	  "are the same (by default they are printed once, their counts added)" },
	{ 0, "pprof", required_argument, OPT_PPROF, "--pprof FILE",
	  "also write every stack-keyed map to FILE, a gzipped pprof profile.proto (go tool pprof, "
	  "Pyroscope, Parca, Grafana): `count()` maps as samples/count, `profile:` maps also as "
	  "cpu/nanoseconds, with the program, start time and duration" },
	{ 0, "flamegraph", required_argument, OPT_FLAMEGRAPH, "--flamegraph FILE",
	  "also write each stack-keyed map as an interactive SVG flame graph (the first to FILE, "
	  "the others to FILE-NAME.svg), titled with the program, map, target, rate, duration and "
	  "total" },
	{ 0, "flamegraph-map", required_argument, OPT_FLAMEGRAPH_MAP, "--flamegraph-map @NAME",
	  "draw only that map, to FILE" },
	{ 0, "no-demangle", no_argument, OPT_NO_DEMANGLE, "--no-demangle",
	  "print C++/Rust symbol names as they are in the binary" },
	{ 0, "no-inline", no_argument, OPT_NO_INLINE, "--no-inline",
	  "no frames for inlined functions (shown by default where DWARF has them)" },
	{ 0, "srcline", no_argument, OPT_SRCLINE, "--srcline",
	  "add `(file:line)` to frames when debug info has it" },
	{ 'I', NULL, required_argument, 'I', "-I DIR",
	  "search DIR for the program's `#include` files (repeatable)" },
	{ 0, "include", required_argument, OPT_INCLUDE, "--include FILE",
	  "`#include` FILE before the program's C definitions (repeatable)" },
	{ 0, "debuginfo", required_argument, OPT_DEBUGINFO, "--debuginfo DIR[:DIR]",
	  "look for separate debug files in DIR first (repeatable; also DIR/.build-id; a "
	  "relative DIR also under each object's own folder, as libdwfl does); "
	  "DEBUGINFOD_URLS servers are asked in the background" },
	{ 0, "dwarf-pid", required_argument, OPT_DWARF_PID, "--dwarf-pid PID",
	  "bpftrace's way to give `dw_ustack` (`ustack_dwarf`) a process: its unwind tables are "
	  "built before anything attaches (repeatable). Without -p/-c every running process's "
	  "already are, and any process is picked up when first sampled; traces no process more "
	  "or less" },
	{ 'l', "list", no_argument, 'l', "-l, --list [SEARCH|FILE]",
	  "list probes as bpftrace does: tracepoints (`-lv`: their fields), software and hardware "
	  "events, `interval` and `profile` units, kprobes where the kernel has them, the "
	  "functions of a binary (`uprobe:BIN:*`; `-lv`: their parameters from DWARF) or of every "
	  "object of `-p PID` (`uprobe:*:FUNC`), USDT probes (`usdt:BIN:*`, `usdt:*` with "
	  "`-p PID`), kernel types (`'struct task_struct'`, `-lv`: with members); SEARCH has "
	  "wildcards, `TYPE:...` or a bare pattern (`'*sched_switch*'`), several are split at "
	  "commas. `-l FILE` and `-l -e PROGRAM` list what the program's probes name" },
	{ 'q', "quiet", no_argument, 'q', "-q, --quiet",
	  "quiet: no `Attaching N probes...` and `Attached N probes` lines (printed, otherwise, "
	  "once the probes are live)" },
	{ 'k', "warnings", no_argument, 'k', "-k, -kk, --warnings",
	  "warn (bpftrace's words, with the place in the script) when a map update or delete "
	  "fails at run time; `-kk` also when a map read finds nothing or a read of memory "
	  "faults; `-f json`: `helper_error` objects. A program in the current language warns "
	  "of updates and deletes always and `-k` adds the rest, as bpftrace now" },
	{ 'B', NULL, required_argument, 'B', "-B line|full|none", "output buffering (default: line)" },
	{ 0, "no-warnings", no_argument, OPT_NO_WARNINGS, "--no-warnings", "print no warnings" },
	{ 0, "info", no_argument, OPT_INFO, "--info",
	  "the kernel's BPF support, in bpftrace's lines (current and 0.17's): helpers, features "
	  "(the verifier's instruction limit, BTF), map types and probe types (kprobe_multi, "
	  "kprobe_session, uprobe_multi, iter, ...), each asked of the running kernel" },
	{ 'v', "verbose", no_argument, 'v', "-v, --verbose",
	  "verbose: what was attached, loss counters, map memory, stage timings" },
	{ 0, "language", required_argument, OPT_LANGUAGE, "--language auto|current|0.17",
	  "which bpftrace the program is read as where current bpftrace and 0.17 differ on the same "
	  "text (-k, -p's checks, missing probes, how structs, stats and errors print, ...): "
	  "`auto` (default) takes current bpftrace's for a program using a construct 0.17 lacked "
	  "(`begin`/`end`, a config block, map declarations) and 0.17's for any other; `current` "
	  "and `0.17` choose for every program. DWARFTRACE_LANGUAGE sets it too" },
	{ 0, "dry-run", no_argument, OPT_DRY_RUN, "--dry-run",
	  "compile and load everything, attach nothing; what could not attach on this machine "
	  "(kprobes, hardware events) is an error, as in the real run" },
	{ 0, "unsafe", no_argument, OPT_UNSAFE, "--unsafe",
	  "allow `system()`, `signal()` and `override()`, which act outside tracing" },
	{ 0, "test", no_argument, OPT_TEST, "--test",
	  "run the program's `test:NAME` probes, each once, and report which pass (return 0, "
	  "no `exit()` with a status); `BEGIN` and `END` run, nothing attaches. Without it "
	  "`test:` probes are ignored" },
	{ 0, "bench", no_argument, OPT_BENCH, "--bench",
	  "run the program's `bench:NAME` probes repeatedly (the kernel's timed test run) and "
	  "print each one's average time in ns; `BEGIN` and `END` run, nothing attaches. "
	  "Without it `bench:` probes are ignored" },
	{ 0, "mode", required_argument, OPT_MODE, "--mode test|bench",
	  "bpftrace's spelling of `--test` and `--bench`" },
	{ 0, "probe-filter", required_argument, OPT_PROBE_FILTER, "--probe-filter REGEX",
	  "attach and run only the attach points whose full name (`interval:ms:200`, "
	  "`uprobe:/bin/bash:readline`, after wildcards are expanded) REGEX (POSIX extended) "
	  "matches; `BEGIN` and `END` always run. No match is an error" },
	{ 'b', "btf", no_argument, 'b', "-b, --btf",
	  "accepted for bpftrace's scripts: the kernel's BTF is always used where it has it" },
	{ 0, "usdt-file-activation", no_argument, OPT_USDT_FILE_ACTIVATION, "--usdt-file-activation",
	  "accepted for bpftrace's scripts: USDT semaphores are always counted by the kernel while "
	  "a probe is attached" },
	{ 0, "unwind-budget", required_argument, OPT_UNWIND_BUDGET, "--unwind-budget MiB",
	  "kernel memory for `ustack_dwarf`'s unwind tables (default 64)" },
	{ 0, "unwind-stacks", required_argument, OPT_UNWIND_STACKS, "--unwind-stacks N",
	  "distinct `ustack_dwarf` stacks kept (default 16384)" },
	{ 'd', "debug", required_argument, 'd', "-d, --debug WHAT",
	  "dump a stage: tokens, ast, types, ir, asm, verifier, unwind (repeatable, or a comma "
	  "list); `-d unwind FILE` dumps the unwind rows of the ELF file FILE. With only tokens, "
	  "ast and types nothing is loaded or run, and no root is needed" },
	{ 'i', NULL, no_argument, 'i', "-i",
	  "the interactive REPL (also with no program on a terminal)" },
	{ 'h', "help", no_argument, 'h', "-h, --help",
	  "this help: every option, probe type and an example of each" },
	{ 'V', "version", no_argument, 'V', "-V, --version", "the version" },
};

/* bpftrace's environment variables (read here in read_env and in config.c, with the config
 * block's settings), as -h and README.md's table (between `<!-- env:begin -->` and
 * `<!-- env:end -->`) show them; cli.test checks that every BPFTRACE_ name the sources read is
 * here. */
static const struct cli_env {
	const char *name;
	const char *help;
} cli_env[] = {
	{ "DWARFTRACE_LANGUAGE", "`auto`, `current` or `0.17`: --language's setting (the option "
	  "wins)" },
	{ "BPFTRACE_STRLEN", "characters a `str()` without a length and a tracepoint string "
	  "keep, 1..14336 (default 64; 1024 in a program of bpftrace's current language, as "
	  "current bpftrace's); a longer string prints cut, with the trailer" },
	{ "BPFTRACE_MAX_STRLEN", "the newer name of BPFTRACE_STRLEN; it wins when both are set" },
	{ "BPFTRACE_MAP_KEYS_MAX", "entries a map holds (default 4096)" },
	{ "BPFTRACE_PERF_RB_PAGES", "pages per CPU of the events buffer: the one events ring gets "
	  "as many bytes for all CPUs; skboutput's perf buffers, that many pages each CPU "
	  "(default 64)" },
	{ "BPFTRACE_MAX_PROBES", "attach points a program may have (no limit unless set)" },
	{ "BPFTRACE_LOG_SIZE", "the verifier log's first size in bytes; it still grows" },
	{ "BPFTRACE_NO_CPP_DEMANGLE", "1: C++ and Rust names as they are in the binary (as "
	  "`--no-demangle`)" },
	{ "BPFTRACE_STACK_MODE", "`bpftrace`, `perf`, `raw` or `build_id` (user stacks; kernel "
	  "stacks then print raw): how stacks print when the script names no mode" },
	{ "BPFTRACE_CAT_BYTES_MAX", "bytes one `cat()` prints at most (default 10240)" },
	{ "BPFTRACE_MAX_MAP_KEYS", "the newer name of BPFTRACE_MAP_KEYS_MAX" },
	{ "BPFTRACE_MAX_CAT_BYTES", "the newer name of BPFTRACE_CAT_BYTES_MAX" },
	{ "BPFTRACE_CPP_DEMANGLE", "0: C++ and Rust names as they are in the binary (the newer "
	  "form of BPFTRACE_NO_CPP_DEMANGLE)" },
	{ "BPFTRACE_PRINT_MAPS_ON_EXIT", "0: the maps are not printed at exit" },
	{ "BPFTRACE_DUMMY_TS_MAP", "`@name`: tseries takes its time (ns) from that scalar map, not "
	  "the clock (bpftrace's test hook)" },
	{ "BPFTRACE_MISSING_PROBES", "`error`, `warn` or `ignore`: what an attach point that "
	  "cannot be had does (unset: error in a program of bpftrace's current language; in "
	  "0.17's, skipped with a warning when the probe has others)" },
	{ "BPFTRACE_SHOW_DEBUG_INFO", "1: user frames as bpftrace prints them with debug info, "
	  "`func+off@/path/file.c:12`, `[inlined] func@/path/file.c:9` (perf mode: `func "
	  "(inlined)`); 0: no inline frames (as `--no-inline`)" },
	{ "BPFTRACE_LICENSE", "the programs' license: a GPL-compatible one (default GPL)" },
	{ "BPFTRACE_UNSTABLE_TSERIES", "`warn` (default: a warning when the program uses "
	  "`tseries()`), `enable` or `error`, as the config's `unstable_tseries`" },
	{ "BPFTRACE_ON_STACK_LIMIT", "accepted; changes nothing here (values move off the BPF "
	  "stack by dwarftrace's own budget)" },
	{ "BPFTRACE_MAX_BPF_PROGS", "accepted; changes nothing here (one program serves a set of "
	  "attach points)" },
	{ "BPFTRACE_CACHE_USER_SYMBOLS", "accepted; changes nothing here (user symbols are kept "
	  "per process image)" },
	{ "BPFTRACE_LAZY_SYMBOLICATION", "accepted; changes nothing here (symbols are resolved "
	  "when printed)" },
	{ "BPFTRACE_STR_TRUNC_TRAILER", "printed after a string cut at max_strlen (default `..`; "
	  "empty: none)" },
};

static const char usage_line[] =
	"USAGE:\n  dwarftrace [options] [FILE | -e PROGRAM] [--] [PARAM...]\n";

static const char usage_intro[] =
	"\n"
	"Traces the system with probes written in bpftrace's language; ustack_dwarf gives\n"
	"user stacks unwound from DWARF CFI, so code built without frame pointers still\n"
	"has stacks.\n"
	"\n"
	"OPTIONS:\n";

static const char usage_rest[] =
	"\n"
	"PROBES:\n"
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
	"  usdt:BIN:[PROVIDER:]NAME        usdt:./app:myapp:request { @[arg0] = count(); }\n"
	"                                  BIN empty or '*' with -p: every object it maps\n"
	"  Blocks are written { ... } or < ... >; FUNC and EVENT may hold '*' wildcards.\n"
	"\n"
	"EXIT STATUS:\n"
	"  0; 1 for errors in the program, when attaching, when the output (stdout, -o,\n"
	"  --pprof, --flamegraph) cannot be written, or on the command line (as bpftrace);\n"
	"  with -c, a command that fails gives its own status\n"
	"\n"
	"EXAMPLES:\n"
	"  dwarftrace -e 'profile:hz:19 < @[ustack_dwarf] = count(); >'\n"
	"  dwarftrace -p 1234 -e 'profile:hz:99 { @[kstack, ustack_dwarf] = count(); }'\n"
	"  dwarftrace -c ./a.out -e 'uprobe:./a.out:work { @[ustack_dwarf] = count(); }'\n";

/* -h's column for the descriptions, and its width. */
#define HELP_COL 18
#define HELP_WIDTH 80

/* One option as -h prints it: the syntax, then its help wrapped at HELP_WIDTH under HELP_COL,
 * backquotes dropped. */
static void print_option_help(FILE *f, const char *syntax, const char *help)
{
	const char *w = help;
	int col = fprintf(f, "  %s", syntax);

	if (col > HELP_COL - 2) {
		fputc('\n', f);
		col = 0;
	}
	while (*w) {
		size_t len = strcspn(w, " "), shown = 0;

		for (size_t i = 0; i < len; i++)
			shown += w[i] != '`';
		if (col < HELP_COL) {
			col += fprintf(f, "%*s", HELP_COL - col, "");
		} else if (col + 1 + (int)shown > HELP_WIDTH) {
			col = fprintf(f, "\n%*s", HELP_COL, "") - 1;
		} else {
			fputc(' ', f);
			col++;
		}
		for (size_t i = 0; i < len; i++)
			if (w[i] != '`')
				fputc(w[i], f);
		col += (int)shown;
		w += len;
		w += strspn(w, " ");
	}
	fputc('\n', f);
}

/* The two tables -h and README.md show, cli_opts and cli_env, as rows of (what a user types, its
 * help), walked by the same code. */
struct help_table {
	size_t n;
	void (*row)(size_t i, const char **label, const char **help);
	const char *head; /* the markdown table's first column */
};

static void opt_row(size_t i, const char **label, const char **help)
{
	*label = cli_opts[i].syntax;
	*help = cli_opts[i].help;
}

static void env_row(size_t i, const char **label, const char **help)
{
	*label = cli_env[i].name;
	*help = cli_env[i].help;
}

static const struct help_table opt_table = { DT_ARRAY_SIZE(cli_opts), opt_row, "option" };
static const struct help_table env_table = { DT_ARRAY_SIZE(cli_env), env_row, "variable" };

static void print_table_help(FILE *f, const struct help_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const char *label, *help;

		t->row(i, &label, &help);
		print_option_help(f, label, help);
	}
}

static void print_help(FILE *f)
{
	fputs(usage_line, f);
	fputs(usage_intro, f);
	print_table_help(f, &opt_table);
	fputs("\nENVIRONMENT (as in bpftrace):\n", f);
	print_table_help(f, &env_table);
	fputs(usage_rest, f);
}

/* A markdown table cell: a `|` inside one is written `\|`. */
static void markdown_cell(FILE *f, const char *text)
{
	for (const char *c = text; *c; c++) {
		if (*c == '|')
			fputc('\\', f);
		fputc(*c, f);
	}
}

static void markdown_table(FILE *f, const struct help_table *t)
{
	fprintf(f, "| %s | |\n|---|---|\n", t->head);
	for (size_t i = 0; i < t->n; i++) {
		const char *label, *help;

		t->row(i, &label, &help);
		fputs("| `", f);
		markdown_cell(f, label);
		fputs("` | ", f);
		markdown_cell(f, help);
		fputs(" |\n", f);
	}
}

void dt_cli_env_markdown(FILE *f)
{
	markdown_table(f, &env_table);
}

void dt_cli_options_markdown(FILE *f)
{
	markdown_table(f, &opt_table);
}

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
	uint32_t dwarf_pids[16];
	uint32_t ndwarf_pids;
	const char *include_dirs[16], *include_files[16];
	uint32_t ninclude_dirs, ninclude_files;
	int verbose;
	uint32_t dump;
	bool dry_run, repl, quiet, list, no_warnings, unsafe;
	dt_run_mode mode;      /* --test, --bench */
	uint32_t helper_check; /* -k, -kk */
	const char *search;       /* -l SEARCH */
	const char *probe_filter; /* --probe-filter REGEX */
	uint32_t nprogs;          /* -e given this many times: the last one runs */
	const char **params;
	uint32_t nparams;
	const char **named; /* the `--name[=value]` of params after `--`, for getopt() */
	uint32_t nnamed;
};

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "dwarftrace: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%sTry 'dwarftrace -h' for the list of options.\n", usage_line);
	return 1;
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

/* An option that takes one value: given twice, the first would be dropped without a word (two
 * -e programs, two -p pids). Non-zero (a usage error, said) then. */
static int set_once(const char **slot, const char *arg, const char *opt)
{
	if (*slot)
		return usage_error("%s can be given once", opt);
	*slot = arg;
	return 0;
}

/* -p PID: a decimal number in the kernel's pid range. The messages are bpftrace's, word for
 * word (scripts around bpftrace look for them): a program in bpftrace's current language
 * (dt_program_current) gets current bpftrace's, any other 0.17's. The exit status is a usage
 * error's (1, as bpftrace's). */
static int check_pid(const char *arg, bool current)
{
	/* The kernel's PID_MAX_LIMIT on 64-bit; a pid past this host's pid_max is "no such
	 * process" later, as for any pid not running. */
	const unsigned long long max = 4194304;
	unsigned long long pid = 0;
	char *end = (char *)arg;
	bool digits = isdigit((unsigned char)arg[0]);

	if (digits) {
		errno = 0;
		pid = strtoull(arg, &end, 10);
	}
	if (!current && (!digits || *end || errno)) {
		fprintf(stderr, "ERROR: pid '%s' is not a valid decimal number\n", arg);
		return 1;
	}
	if (!current && (pid < 1 || pid > max)) {
		fprintf(stderr, "ERROR: pid '%s' out of valid pid range [1,%llu]\n", arg, max);
		return 1;
	}
	if (!digits || *end) {
		fprintf(stderr, "ERROR: Failed to parse pid: %s: %s\n",
			!digits ? "invalid integer" : "invalid trailing bytes", arg);
		return 1;
	}
	if (errno) {
		fprintf(stderr, "ERROR: Failed to parse pid: overflow error, maximum value is %llu: "
			"%s\n", ULLONG_MAX, arg);
		return 1;
	}
	if (pid < 1 || pid > max) {
		fprintf(stderr, "ERROR: Pid out of range: %s\n", arg);
		return 1;
	}
	return 0;
}

/* The parameters after the program: with named ones (current bpftrace: after `--`, `--NAME[=V]`
 * are the program's options, read by getopt(), and `-- --help` lists them), or, for a program in
 * 0.17's language, all positional as 0.17 had them (`x.bt -- --help` gives `$1` = `--help`). A
 * program that calls getopt(), which 0.17 did not have, has named ones. */
static void split_params(struct cli *c, bool named)
{
	uint32_t n = named ? dt_params_split(c->params, c->nparams) : 0;

	c->named = c->params;
	c->nnamed = n;
	c->params += n;
	c->nparams -= n;
}

/* Whether TEXT, a program, is in bpftrace's current language (dt_program_current); a program
 * that does not parse is 0.17's here (its errors come later, from its compilation). */
static bool text_current(const char *name, const char *text, size_t len)
{
	dt_source src = { .name = name, .text = text, .len = len };
	dt_arena *a = dt_arena_new();
	dt_diags *d = dt_diags_new(&src);
	dt_program *p = dt_parse(a, &src, d);
	bool current = p && !dt_diags_error_count(d) && dt_program_current(p);

	dt_diags_free(d);
	dt_arena_free(a);
	return current;
}

/* 0 to go on, or the exit status (also 0 for -h/-V, signalled through *done). */
static int parse_args(struct cli *c, int argc, char **argv, bool *done)
{
	struct option longs[DT_ARRAY_SIZE(cli_opts) + 1] = { { 0 } };
	char shorts[2 * DT_ARRAY_SIZE(cli_opts) + 1] = "";
	size_t nlongs = 0, nshorts = 0;
	char *argv0 = argv[0];

	for (size_t i = 0; i < DT_ARRAY_SIZE(cli_opts); i++) {
		const struct cli_opt *o = &cli_opts[i];

		if (o->short_name) {
			shorts[nshorts++] = o->short_name;
			if (o->has_arg == required_argument)
				shorts[nshorts++] = ':';
		}
		if (o->long_name)
			longs[nlongs++] = (struct option){ o->long_name, o->has_arg, NULL, o->id };
	}
	shorts[nshorts] = 0;
	int opt, rc;

	*done = false;
	/* --language's variable; the option, read below, wins. */
	const char *lang = getenv("DWARFTRACE_LANGUAGE");

	if (lang && *lang) {
		int m = dt_lang_mode_parse(lang);

		if (m < 0)
			return usage_error("DWARFTRACE_LANGUAGE: '%s' is not auto, current or 0.17",
					   lang);
		dt_lang_set_mode((dt_lang_mode)m);
	} else {
		dt_lang_set_mode(DT_LANG_AUTO);
	}
	opterr = 1;
	argv[0] = (char *)"dwarftrace"; /* getopt's messages start with it, not the path run */
	optind = 0; /* glibc: a full re-scan, so dt_cli_main can run more than once (tests) */
	/* GNU order, as bpftrace's: options may follow the program file (`dwarftrace x.dt -c CMD`);
	 * `--` ends them, so parameters may look like options. */
	while ((opt = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		switch (opt) {
		case 'e':
			/* bpftrace keeps the last -e; the dropped ones are said (parse_args' end). */
			c->prog_text = optarg;
			c->nprogs++;
			break;
		case OPT_PROBE_FILTER: {
			regex_t re;
			int err = regcomp(&re, optarg, REG_EXTENDED | REG_NOSUB);

			if (err) {
				char why[128];

				regerror(err, &re, why, sizeof(why));
				fprintf(stderr, "dwarftrace: Invalid --probe-filter regex '%s': %s\n",
					optarg, why);
				return 1;
			}
			regfree(&re);
			c->probe_filter = optarg;
			break;
		}
		case 'b':
			/* bpftrace's old switch for BTF, a no-op there too. */
			break;
		case 'p':
			if (set_once(&c->pid_arg, optarg, "-p"))
				return 1;
			break;
		case 'c':
			if (set_once(&c->cmd, optarg, "-c"))
				return 1;
			break;
		case 'o':
			if (set_once(&c->out_path, optarg, "-o"))
				return 1;
			break;
		case 'f':
			if (!strcmp(optarg, "text"))
				c->format = DT_FORMAT_TEXT;
			else if (!strcmp(optarg, "json"))
				c->format = DT_FORMAT_JSON;
			else if (!strcmp(optarg, "folded"))
				c->format = DT_FORMAT_FOLDED;
			else {
				/* bpftrace's words (0.17 and now), then ours. */
				fprintf(stderr, "ERROR: Invalid output format \"%s\"\n"
						"Valid formats: 'text', 'json', 'folded'\n", optarg);
				return 1;
			}
			break;
		case OPT_NO_DEMANGLE:
			c->no_demangle = true;
			break;
		case OPT_NO_INLINE:
			c->no_inline = true;
			break;
		case OPT_SRCLINE:
			c->srcline = true;
			break;
		case OPT_DWARF_PID:
			if (c->ndwarf_pids == DT_ARRAY_SIZE(c->dwarf_pids))
				return usage_error("%s", "--dwarf-pid: at most 16 processes");
			if (check_pid(optarg, false))
				return 1;
			/* Said now, as -p says it: tables of a process that is not there are none. */
			if (kill((pid_t)atoi(optarg), 0) < 0 && errno == ESRCH) {
				fprintf(stderr, "dwarftrace: --dwarf-pid %s: no such process\n", optarg);
				return 1;
			}
			c->dwarf_pids[c->ndwarf_pids++] = (uint32_t)atoi(optarg);
			break;
		case OPT_DEBUGINFO: {
			/* DIR[:DIR…], as bpftrace takes it. */
			char *list = optarg, *dir, *save = NULL;

			for (dir = strtok_r(list, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
				struct stat st;
				int err;

				if (c->ndebug_dirs == DT_ARRAY_SIZE(c->debug_dirs))
					return usage_error("%s", "--debuginfo: at most 16 directories");
				/* Said now: a misspelt directory would only show as stacks without
				 * names. A relative DIR is also looked for under each object's own
				 * folder (libdwfl's rule), so it need not be here. */
				err = stat(dir, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
				if (err && (dir[0] == '/' || err != ENOENT)) {
					fprintf(stderr, "dwarftrace: --debuginfo: %s: %s\n", dir,
						dt_strerror(err));
					return 1;
				}
				c->debug_dirs[c->ndebug_dirs++] = dir;
			}
			break;
		}
		case 'I':
		case OPT_INCLUDE:
			if (opt == 'I' ? c->ninclude_dirs == DT_ARRAY_SIZE(c->include_dirs)
				       : c->ninclude_files == DT_ARRAY_SIZE(c->include_files))
				return usage_error("%s: at most 16", opt == 'I' ? "-I" : "--include");
			if (opt == 'I')
				c->include_dirs[c->ninclude_dirs++] = optarg;
			else
				c->include_files[c->ninclude_files++] = optarg;
			break;
		case OPT_PPROF:
			if (set_once(&c->pprof_path, optarg, "--pprof"))
				return 1;
			break;
		case OPT_FLAMEGRAPH:
			if (set_once(&c->flamegraph_path, optarg, "--flamegraph"))
				return 1;
			break;
		case OPT_UNWIND_BUDGET:
		case OPT_UNWIND_STACKS: {
			char *end;
			unsigned long long v = strtoull(optarg, &end, 10);

			if (*end || !v || v > (opt == OPT_UNWIND_BUDGET ? 65536ull : 1u << 24))
				return usage_error("%s", opt == OPT_UNWIND_BUDGET ?
						   "--unwind-budget: give MiB, 1..65536" :
						   "--unwind-stacks: give a count, 1..16777216");
			if (opt == OPT_UNWIND_BUDGET)
				c->unwind_budget = v << 20;
			else
				c->unwind_stacks = (uint32_t)v;
			break;
		}
		case OPT_JSON_FRAMES:
			c->json_frames = true;
			break;
		case OPT_NO_MERGE_STACKS:
			c->no_merge_stacks = true;
			break;
		case OPT_FLAMEGRAPH_MAP:
			if (optarg[0] != '@')
				return usage_error("--flamegraph-map: '%s' is not a map name (@NAME, "
						   "or @ for the map without a name)", optarg);
			c->flamegraph_map = optarg;
			break;
		case 'v':
			c->verbose++;
			break;
		case 'q':
			c->quiet = true;
			break;
		case 'k':
			if (c->helper_check < 2)
				c->helper_check++;
			break;
		case 'l':
			c->list = true;
			break;
		case 'B':
			/* bpftrace's modes; output goes through stdio, so setvbuf is the whole of it. */
			if (!strcmp(optarg, "line"))
				setvbuf(stdout, NULL, _IOLBF, BUFSIZ);
			else if (!strcmp(optarg, "full"))
				setvbuf(stdout, NULL, _IOFBF, BUFSIZ);
			else if (!strcmp(optarg, "none"))
				setvbuf(stdout, NULL, _IONBF, BUFSIZ);
			else
				return usage_error("-B: unknown buffering mode '%s' (line, full or "
						   "none)", optarg);
			break;
		case OPT_NO_WARNINGS:
			c->no_warnings = true;
			break;
		case OPT_INFO:
			*done = true;
			return dt_info_print(stdout) < 0 ? 1 : 0;
		case 'd':
			rc = parse_dump(c, optarg);
			if (rc)
				return rc;
			break;
		case 'i':
			c->repl = true;
			break;
		case OPT_DRY_RUN:
			c->dry_run = true;
			break;
		case OPT_LANGUAGE: {
			int m = dt_lang_mode_parse(optarg);

			if (m < 0)
				return usage_error("--language: '%s' is not auto, current or 0.17",
						   optarg);
			dt_lang_set_mode((dt_lang_mode)m);
			break;
		}
		case OPT_UNSAFE:
			c->unsafe = true;
			break;
		case OPT_TEST:
			c->mode = DT_MODE_TEST;
			break;
		case OPT_BENCH:
			c->mode = DT_MODE_BENCH;
			break;
		case OPT_MODE:
			if (!strcmp(optarg, "test"))
				c->mode = DT_MODE_TEST;
			else if (!strcmp(optarg, "bench"))
				c->mode = DT_MODE_BENCH;
			else
				return usage_error("--mode: '%s' is not a mode here (test or bench)",
						   optarg);
			break;
		case OPT_USDT_FILE_ACTIVATION:
			/* bpftrace's way to count USDT semaphores up in the processes that map
			 * the binary, for kernels without uprobe reference counters. Here the
			 * kernel always counts them (attach.c, attach_usdt), in every process
			 * that maps it, including those started later: as bpftrace documents,
			 * the option is then a no-op. */
			break;
		case 'h':
			print_help(stdout);
			*done = true;
			return 0;
		case 'V':
			/* The bpftrace version whose scripts, options and output it follows, for
			 * what checks `bpftrace --version`. */
			printf("dwarftrace v%s\nbpftrace v0.26 (development) and v0.17 scripts: the "
			       "language, options and output it follows\n", DT_VERSION);
			*done = true;
			return 0;
		default:
			/* getopt said what is wrong, naming the option as it was written
			 * (unrecognized, ambiguous, a value missing or not allowed), as
			 * bpftrace's does; the usage follows. */
			argv[0] = argv0;
			fprintf(stderr, "%sTry 'dwarftrace -h' for the list of options.\n",
				usage_line);
			return 1;
		}
	}
	argv[0] = argv0;
	if (c->list) {
		/* `-l [SEARCH|FILE]` or `-l -e PROGRAM`: one search or program at most. */
		if (optind < argc && !strcmp(argv[optind], "--"))
			optind++;
		if (optind < argc && c->prog_text)
			return usage_error("-l -e PROGRAM lists the program's probes: '%s' is one "
					   "search too many", argv[optind]);
		if (optind < argc)
			c->search = argv[optind++];
		if (optind < argc)
			return usage_error("-l: one search at most ('%s' is one too many)",
					   argv[optind]);
	} else if (c->dump & DT_DUMP_UNWIND) {
		/* `-d unwind FILE`: the argument is a binary to dump, not a program. */
		if (!c->prog_text && optind < argc)
			c->unwind_file = argv[optind++];
	} else if (!c->prog_text && optind < argc && strcmp(argv[optind], "--")) {
		c->file = argv[optind++];
	}
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	/* Split into named and positional ones once the program is known (split_params). */
	c->params = (const char **)&argv[optind];
	c->nparams = (uint32_t)(argc - optind);
	/* Dumps of the front end only (tokens, ast, types) show the script as it is understood:
	 * nothing is loaded or run, as in bpftrace's -d, so they need no privileges. */
	if (c->dump && !(c->dump & ~DT_DUMP_FRONT_END))
		c->dry_run = true;
	if (c->nprogs > 1 && !c->no_warnings)
		fprintf(stderr, "dwarftrace: warning: -e was given %u times: only the last program "
			"runs, as in bpftrace (put every probe in one program)\n", c->nprogs);
	if (c->pid_arg && c->cmd)
		return usage_error("%s", "-p and -c cannot be used together");
	if (c->cmd && !c->cmd[strspn(c->cmd, " \t\n")])
		return usage_error("%s", "-c: the command is empty");
	return 0;
}

uint32_t dt_events_ring_size(uint32_t pages_per_cpu)
{
	/* bpftrace's pages per CPU of its perf buffers: the one shared ring gets as many bytes
	 * for all CPUs, rounded up to a power of two as the kernel wants. */
	unsigned long long want = (unsigned long long)pages_per_cpu *
				  (unsigned long long)getpagesize() *
				  (unsigned long long)sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t size = (uint32_t)getpagesize();

	while (size < want && size < (1u << 30))
		size <<= 1;
	return size;
}

/* bpftrace's environment variables that mean something here (its `-h` lists them); a value
 * that is not a number in range is an error, as in bpftrace. 0 to go on, else the exit status. */
static int read_env(dt_session_opts *so)
{
	static const struct {
		const char *name;
		unsigned long long min, max;
	} vars[] = {
		{ "BPFTRACE_STRLEN", 1, DT_MAX_STRLEN },  /* 0 */
		{ "BPFTRACE_MAX_STRLEN", 1, DT_MAX_STRLEN },
		{ "BPFTRACE_MAP_KEYS_MAX", 1, 1u << 24 },
		{ "BPFTRACE_PERF_RB_PAGES", 1, 1u << 18 },
		{ "BPFTRACE_MAX_PROBES", 1, 1u << 24 },
		{ "BPFTRACE_LOG_SIZE", 1, 1u << 30 },  /* 5 */
		{ "BPFTRACE_NO_CPP_DEMANGLE", 0, 1 },
	};
	unsigned long long v[DT_ARRAY_SIZE(vars)] = { 0 };
	bool set[DT_ARRAY_SIZE(vars)] = { false };

	for (size_t i = 0; i < DT_ARRAY_SIZE(vars); i++) {
		const char *e = getenv(vars[i].name);
		char *end;

		if (!e || !*e)
			continue;
		errno = 0;
		v[i] = strtoull(e, &end, 10);
		if (*end || errno || !isdigit((unsigned char)e[0]) || v[i] < vars[i].min ||
		    v[i] > vars[i].max) {
			fprintf(stderr, "dwarftrace: %s='%s': give a number from %llu to %llu\n",
				vars[i].name, e, vars[i].min, vars[i].max);
			return 1;
		}
		set[i] = true;
	}
	/* BPFTRACE_MAX_STRLEN is the newer name of BPFTRACE_STRLEN; it wins when both are set. */
	so->strlen = (uint32_t)(set[1] ? v[1] : v[0]);
	so->map_keys_max = (uint32_t)v[2];
	if (set[3]) {
		so->events_size = dt_events_ring_size((uint32_t)v[3]);
		so->perf_rb_pages = (uint32_t)v[3];
	}
	so->max_probes = (uint32_t)v[4];
	so->log_size = (uint32_t)v[5];
	if (v[6])
		so->no_demangle = true;
	so->dummy_ts_map = getenv("BPFTRACE_DUMMY_TS_MAP");
	/* Set, even to nothing (no trailer), it is taken as it is. */
	if (getenv("BPFTRACE_STR_TRUNC_TRAILER"))
		so->str_trunc_trailer = getenv("BPFTRACE_STR_TRUNC_TRAILER");
	const char *ut = getenv("BPFTRACE_UNSTABLE_TSERIES");
	if (ut && *ut) {
		if (!strcmp(ut, "enable"))
			so->unstable_tseries = DT_UNSTABLE_ENABLE;
		else if (!strcmp(ut, "error"))
			so->unstable_tseries = DT_UNSTABLE_ERROR;
		else if (strcmp(ut, "warn")) {
			fprintf(stderr, "dwarftrace: BPFTRACE_UNSTABLE_TSERIES='%s': give enable, warn "
				"or error\n", ut);
			return 1;
		}
	}
	const char *mp = getenv("BPFTRACE_MISSING_PROBES");
	if (mp && *mp) {
		if (!strcmp(mp, "error"))
			so->missing_probes = DT_MISSING_ERROR;
		else if (!strcmp(mp, "warn"))
			so->missing_probes = DT_MISSING_WARN;
		else if (!strcmp(mp, "ignore"))
			so->missing_probes = DT_MISSING_IGNORE;
		else {
			fprintf(stderr, "dwarftrace: BPFTRACE_MISSING_PROBES='%s': give error, warn "
				"or ignore\n", mp);
			return 1;
		}
	}
	const char *sm = getenv("BPFTRACE_STACK_MODE");
	if (sm && *sm && !dt_stack_mode_lookup(sm, strlen(sm), &so->stack_mode)) {
		fprintf(stderr, "dwarftrace: BPFTRACE_STACK_MODE='%s': give bpftrace, perf, raw or "
			"build_id\n", sm);
		return 1;
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

/* The end of an output stream: whatever is buffered is written, and a write that failed on the
 * way (the session says those it sees while tracing, with a non-zero status) is said here when
 * nothing else was — `dwarftrace -h >/dev/full`, a dump. Returns the status to exit with. */
static int finish_output(FILE *f, const char *name, bool close_it, int status)
{
	int before = errno, err = 0;

	errno = 0;
	if (fflush(f))
		err = errno ? errno : EIO;
	else if (ferror(f))
		err = before ? before : EIO; /* the failed write was the last thing done (-h) */
	errno = 0;
	if (close_it && fclose(f) && !err)
		err = errno ? errno : EIO;
	if (err && status == 0) {
		fprintf(stderr, "dwarftrace: cannot write the output to %s: %s\n", name,
			dt_strerror(err));
		status = 1;
	}
	return status;
}

/* -o FILE, opened (created) before anything else happens. 0 (*out NULL without -o) or -errno,
 * said. */
static int open_output(const struct cli *c, FILE **out)
{
	*out = NULL;
	if (!c->out_path)
		return 0;
	*out = fopen(c->out_path, "we");
	if (!*out) {
		int err = errno;

		fprintf(stderr, "dwarftrace: -o: cannot write %s: %s\n", c->out_path,
			dt_strerror(err));
		return -err;
	}
	return 0;
}

/* -l: the probes a search names, or those of a program (-e, or a search that is a file). */
static int list(const struct cli *c)
{
	int pid = c->pid_arg ? atoi(c->pid_arg) : 0;
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (c->prog_text) {
		dt_source src = { .name = DT_SOURCE_STDIN, .text = c->prog_text, .len = strlen(c->prog_text) };

		return dt_list_program(&src, pid, c->verbose > 0, c->no_warnings, stdout,
				       stderr) < 0 ? 1 : 0;
	}
	if (!c->search || stat(c->search, &st) < 0 || !S_ISREG(st.st_mode))
		return dt_list_probes(c->search, pid, c->verbose > 0, c->no_warnings, stdout,
				      stderr) < 0 ? 1 : 0;
	rc = read_program(c->search, &text, &len);
	if (rc < 0) {
		fprintf(stderr, "ERROR: failed to open file '%s': %s\n", c->search,
			dt_strerror(-rc));
		return 1;
	}
	dt_source src = { .name = c->search, .text = text, .len = len };

	rc = dt_list_program(&src, pid, c->verbose > 0, c->no_warnings, stdout, stderr);
	free(text);
	return rc < 0 ? 1 : 0;
}

static int cli_run(int argc, char **argv)
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
	/* Every debug-file search of the run (-lv's parameters, args, source lines, stacks). */
	dt_elf_set_debug_dirs(c.debug_dirs, c.ndebug_dirs);
	/* -p's number is checked once the program is known (its language picks bpftrace's words),
	 * before a program file that cannot be read is said (as bpftrace does). */
	if (c.pid_arg && c.prog_text &&
	    (rc = check_pid(c.pid_arg, text_current(DT_SOURCE_STDIN, c.prog_text, strlen(c.prog_text)))))
		return rc;
	if (c.list) {
		if (c.pid_arg && (rc = check_pid(c.pid_arg, false)))
			return rc;
		return list(&c);
	}
	if (c.dump & DT_DUMP_UNWIND && c.unwind_file) {
		/* `-d unwind FILE` is the unwinder's table dump; it reports its own errors. */
		return dt_unwind_dump(c.unwind_file, stdout) < 0 ? 1 : 0;
	}
	if (c.dump & DT_DUMP_UNWIND && !c.prog_text && !c.file && !c.unwind_file)
		return usage_error("%s", "-d unwind: give the ELF file to dump (-d unwind FILE)");
	if (!c.prog_text && !c.file) {
		if (c.repl || isatty(STDIN_FILENO)) {
			/* The REPL: one session that grows while the user types (repl.c). */
			if (open_output(&c, &out) < 0)
				return 1;
			so.out = out ? out : stdout;
			so.err = stderr;
			so.format = c.format;
			so.json_frames = c.json_frames;
			so.no_merge_stacks = c.no_merge_stacks;
			so.verbose = c.verbose;
			so.no_warnings = c.no_warnings;
			so.dump = c.dump;
			split_params(&c, true);
			so.params = c.params;
			so.nparams = c.nparams;
			so.named = c.named;
			so.nnamed = c.nnamed;
			if (c.pid_arg && (rc = check_pid(c.pid_arg, false)))
				return rc;
			if (c.pid_arg)
				so.filter_pid = (uint32_t)atoi(c.pid_arg);
			so.uprobe_pid = c.pid_arg ? (int)so.filter_pid : -1;
			so.out_name = out ? c.out_path : "stdout";
			/* The same BPFTRACE_* variables as a script run. */
			status = read_env(&so);
			if (!status)
				status = dt_repl_main(&so, c.pid_arg != NULL);
			if (out)
				status = finish_output(out, c.out_path, true, status);
			return status;
		}
		return usage_error("%s", "no program: give FILE or -e PROGRAM");
	}
	if (c.prog_text) {
		src = (dt_source){ .name = DT_SOURCE_STDIN, .text = c.prog_text, .len = strlen(c.prog_text) };
	} else {
		rc = read_program(c.file, &text, &len);
		if (c.pid_arg &&
		    (status = check_pid(c.pid_arg, rc == 0 && text_current(c.file, text, len))))
			goto out;
		status = 1;
		if (rc < 0) {
			/* bpftrace's words (scripts around it look for them). */
			fprintf(stderr, "ERROR: failed to open file '%s': %s\n", c.file,
				dt_strerror(-rc));
			return 1;
		}
		src = (dt_source){ .name = strcmp(c.file, "-") ? c.file : DT_SOURCE_STDIN, .text = text,
				   .len = len };
	}
	if (open_output(&c, &out) < 0)
		goto out;
	so.out = out ? out : stdout;
	so.out_name = out ? c.out_path : "stdout";
	so.err = stderr;
	so.format = c.format;
	so.no_demangle = c.no_demangle;
	status = read_env(&so);
	if (status)
		goto out;
	status = 1;
	so.no_inline = c.no_inline;
	so.srcline = c.srcline;
	so.debug_dirs = c.debug_dirs;
	so.ndebug_dirs = c.ndebug_dirs;
	so.dwarf_pids = c.dwarf_pids;
	so.ndwarf_pids = c.ndwarf_pids;
	so.include_dirs = c.include_dirs;
	so.ninclude_dirs = c.ninclude_dirs;
	so.include_files = c.include_files;
	so.ninclude_files = c.ninclude_files;
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
	so.announce = !c.dry_run && !c.quiet && c.mode == DT_MODE_RUN;
	so.mode = c.mode;
	so.no_warnings = c.no_warnings;
	so.end_on_attach_error = true;
	split_params(&c, strstr(src.text, "getopt") ||
			     text_current(src.name, src.text, src.len));
	so.params = c.params;
	so.nparams = c.nparams;
	so.named = c.named;
	so.nnamed = c.nnamed;
	so.has_child = c.cmd != NULL;
	so.child_cmd = c.dry_run ? c.cmd : NULL;
	so.unsafe = c.unsafe;
	so.probe_filter = c.probe_filter;
	/* The script's config block, under the flags and variables given (set above). */
	if (dt_config_apply(&src, &so, stderr, isatty(STDERR_FILENO)) < 0)
		goto out;
	so.helper_check = c.helper_check;
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
		status = dt_session_exit_code(s); /* 1 when the dumps could not be written */
		goto out;
	}
	if (dt_session_start_child(s) < 0) {
		status = child_status(s, 0) ? child_status(s, 0) : 1; /* could not run */
		goto out;
	}
	/* bpftrace's word to its test runner that the probes are live and the command runs
	 * (after "Attaching N probes..."; -q leaves only this). A program in the current language
	 * gets it on stdout, where current bpftrace writes it (its tests drop that line with
	 * `| tail -n +2`); a 0.17 one on stderr (0.17's tests drop "Attaching" that way, and parse
	 * the rest of stdout as JSON). */
	if (getenv("__BPFTRACE_NOTIFY_PROBES_ATTACHED")) {
		FILE *f = u && dt_unit_current(u) ? stdout : stderr;
		fflush(stdout);
		fprintf(f, "__BPFTRACE_NOTIFY_PROBES_ATTACHED\n");
		fflush(f);
	}
	/* --test/--bench: BEGIN has run; the tests or benchmarks run, then END. */
	if (u && c.mode != DT_MODE_RUN) {
		rc = dt_session_run_tests(s, u);
		dt_session_finish(s);
		status = rc < 0 ? 1 : rc ? rc : dt_session_exit_code(s);
		goto out;
	}
	/* Only BEGIN and END: BEGIN has run, its output is delivered, and the run ends — but
	 * for a -c command, which runs to its end as it did in 0.17 (bpftrace would end it). */
	if (u && !c.cmd && dt_unit_begin_end_only(u))
		rc = dt_session_dispatch(s, 0) < 0 ? -1 : 0;
	else
		rc = dt_session_run(s);
	dt_session_finish(s);
	status = rc < 0 ? 1 : dt_session_exit_code(s);
out:
	status = child_status(s, status);
	dt_session_free(s);
	if (out)
		status = finish_output(out, c.out_path, true, status);
	free(text);
	return status;
}

/* Started with stdin, stdout or stderr closed (`dwarftrace ... >&-`), the first file or BPF
 * object opened would take that number, and the output would be written into it. Each closed one
 * is held by /dev/null opened read-only: reading gives end of file, and writing fails with EBADF,
 * which is said as for any output that cannot be written. */
static void hold_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int nfd;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		nfd = open("/dev/null", O_RDONLY);
		if (nfd >= 0 && nfd != fd) {
			dup2(nfd, fd);
			close(nfd);
		}
	}
}

int dt_cli_main(int argc, char **argv)
{
	hold_std_fds();
	return finish_output(stdout, "stdout", false, cli_run(argc, argv));
}
