/* names.c — the name tables of the language: providers and their short aliases, builtins,
 * functions, the perf software and hardware events (with what perf_event_open needs), and "did
 * you mean" by edit distance over any of them. One table per concept so the parser, the checker,
 * attach, the dumps and REPL completion cannot disagree about a spelling. */
#include "lang/lang_internal.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

static const char *const provider_names[DT_P__COUNT] = {
	[DT_P_BEGIN] = "BEGIN", [DT_P_END] = "END", [DT_P_INTERVAL] = "interval",
	[DT_P_PROFILE] = "profile", [DT_P_UPROBE] = "uprobe", [DT_P_URETPROBE] = "uretprobe",
	[DT_P_KPROBE] = "kprobe", [DT_P_KRETPROBE] = "kretprobe", [DT_P_TRACEPOINT] = "tracepoint",
	[DT_P_SOFTWARE] = "software", [DT_P_HARDWARE] = "hardware", [DT_P_XPROBE] = "xprobe",
	[DT_P_USDT] = "usdt",
	[DT_P_WATCHPOINT] = "watchpoint", [DT_P_ASYNCWATCHPOINT] = "asyncwatchpoint",
	[DT_P_RAWTRACEPOINT] = "rawtracepoint", [DT_P_FENTRY] = "fentry", [DT_P_FEXIT] = "fexit",
	[DT_P_ITER] = "iter", [DT_P_SELF] = "self", [DT_P_TEST] = "test", [DT_P_BENCH] = "bench",
};

/* Everything a user may write before the first ':' (NULL-terminated for dt_closest). `begin`
 * and `end` are bpftrace's current spellings of BEGIN and END; both are kept. */
static const char *const provider_spellings[] = {
	"BEGIN", "END", "begin", "end", "interval", "i", "profile", "p", "uprobe", "u",
	"uretprobe", "ur", "kprobe", "k", "kretprobe", "kr", "tracepoint", "t", "software", "s",
	"hardware", "h", "xprobe", "x", "usdt", "U", "watchpoint", "w", "asyncwatchpoint", "rawtracepoint", "rt",
	"fentry", "f", "kfunc", "fexit", "fr", "kretfunc", "iter", "it", "self", "test", "bench", NULL,
};
static const dt_provider provider_of_spelling[] = {
	DT_P_BEGIN, DT_P_END, DT_P_BEGIN, DT_P_END, DT_P_INTERVAL, DT_P_INTERVAL, DT_P_PROFILE,
	DT_P_PROFILE,
	DT_P_UPROBE, DT_P_UPROBE, DT_P_URETPROBE, DT_P_URETPROBE, DT_P_KPROBE, DT_P_KPROBE,
	DT_P_KRETPROBE, DT_P_KRETPROBE, DT_P_TRACEPOINT, DT_P_TRACEPOINT, DT_P_SOFTWARE,
	DT_P_SOFTWARE, DT_P_HARDWARE, DT_P_HARDWARE, DT_P_XPROBE, DT_P_XPROBE, DT_P_USDT, DT_P_USDT,
	DT_P_WATCHPOINT, DT_P_WATCHPOINT, DT_P_ASYNCWATCHPOINT, DT_P_RAWTRACEPOINT,
	DT_P_RAWTRACEPOINT, DT_P_FENTRY, DT_P_FENTRY, DT_P_FENTRY, DT_P_FEXIT, DT_P_FEXIT, DT_P_FEXIT,
	DT_P_ITER, DT_P_ITER, DT_P_SELF, DT_P_TEST, DT_P_BENCH,
};

const char *dt_provider_name(dt_provider p)
{
	return p < DT_P__COUNT ? provider_names[p] : "?";
}

void dt_attach_no_match(const dt_attach *a, char *buf, size_t n)
{
	snprintf(buf, n, "No matches for %s %s%s%s", dt_provider_name(a->provider),
		 a->target ? a->target : "", a->target ? ":" : "", a->func ? a->func : "");
}

const char *const *dt_provider_names(void)
{
	return provider_spellings;
}

bool dt_provider_lookup(const char *s, size_t n, dt_provider *out)
{
	for (size_t i = 0; provider_spellings[i]; i++) {
		if (strlen(provider_spellings[i]) == n && memcmp(provider_spellings[i], s, n) == 0) {
			*out = provider_of_spelling[i];
			return true;
		}
	}
	return false;
}

/* Builtin spellings (completion, "did you mean"); argN is arg0..arg5 (DT_ARG_REGS) and maps to
 * DT_B_ARG. dt_builtin_lookup also takes arg6..arg11, for the checker to say why not. */
static const char *const builtin_spellings[] = {
	"pid", "tid", "uid", "gid", "comm", "nsecs", "elapsed", "cpu", "cgroup", "arg0", "arg1",
	"arg2", "arg3", "arg4", "arg5", "retval", "func", "probe",
	"kstack", "ustack", "ustack_dwarf", "dw_ustack", "args", "rand", "curtask", "wall", "oncpu", "offcpu", "runq", "blocked", "iowait",
	"nswitch", "cpid", "numaid", "jiffies", "ncpus", "usermode", "username", "sarg0", "sarg1",
	"sarg2", "sarg3", "sarg4", "sarg5", "ctx", "ppid", "pcomm", "leader_comm", "leader_tid",
	"probetype", "has_cpid", "config", NULL,
};

static const char *const builtin_names[DT_B__COUNT] = {
	[DT_B_PID] = "pid", [DT_B_TID] = "tid", [DT_B_UID] = "uid", [DT_B_GID] = "gid",
	[DT_B_COMM] = "comm", [DT_B_NSECS] = "nsecs", [DT_B_ELAPSED] = "elapsed", [DT_B_CPU] = "cpu",
	[DT_B_CGROUP] = "cgroup", [DT_B_ARG] = "arg", [DT_B_RETVAL] = "retval", [DT_B_FUNC] = "func",
	[DT_B_PROBE] = "probe", [DT_B_KSTACK] = "kstack", [DT_B_USTACK] = "ustack",
	[DT_B_USTACK_DWARF] = "ustack_dwarf", [DT_B_ARGS] = "args", [DT_B_RAND] = "rand",
	[DT_B_CURTASK] = "curtask", [DT_B_WALL] = "wall", [DT_B_ONCPU] = "oncpu",
	[DT_B_OFFCPU] = "offcpu", [DT_B_RUNQ] = "runq", [DT_B_BLOCKED] = "blocked",
	[DT_B_IOWAIT] = "iowait", [DT_B_NSWITCH] = "nswitch", [DT_B_CPID] = "cpid",
	[DT_B_NUMAID] = "numaid", [DT_B_JIFFIES] = "jiffies", [DT_B_NCPUS] = "ncpus",
	[DT_B_USERMODE] = "usermode", [DT_B_USERNAME] = "username", [DT_B_SARG] = "sarg",
	[DT_B_CTX] = "ctx", [DT_B_PPID] = "ppid", [DT_B_PCOMM] = "pcomm",
	[DT_B_LEADER_COMM] = "leader_comm", [DT_B_LEADER_TID] = "leader_tid",
	[DT_B_PROBETYPE] = "probetype", [DT_B_HAS_CPID] = "has_cpid", [DT_B_CONFIG] = "config",
};

const char *dt_builtin_name(dt_builtin b)
{
	return b < DT_B__COUNT ? builtin_names[b] : "?";
}

const char *const *dt_builtin_names(void)
{
	return builtin_spellings;
}

const char *const dt_stack_mode_names[] = {
	[DT_STACKMODE_DEFAULT] = "bpftrace", [DT_STACKMODE_PERF] = "perf",
	[DT_STACKMODE_RAW] = "raw", [DT_STACKMODE_BUILD_ID] = "build_id", NULL,
};

const char *dt_stack_mode_name(dt_stack_mode m)
{
	return m <= DT_STACKMODE_BUILD_ID ? dt_stack_mode_names[m] : "?";
}

bool dt_stack_mode_lookup(const char *s, size_t n, dt_stack_mode *out)
{
	for (int m = DT_STACKMODE_DEFAULT; m <= DT_STACKMODE_BUILD_ID; m++)
		if (strlen(dt_stack_mode_names[m]) == n && !memcmp(s, dt_stack_mode_names[m], n)) {
			*out = (dt_stack_mode)m;
			return true;
		}
	return false;
}

const char *dt_attach_probe_name(const dt_attach *a)
{
	return a->name ? a->name : a->text ? a->text : "";
}

int dt_reg_offset(const char *name)
{
	/* struct pt_regs, x86-64, in order, 8 bytes each. */
	static const char *const regs[] = {
		"r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax", "cx",
		"dx", "si", "di", "orig_ax", "ip", "cs", "flags", "sp", "ss",
	};
	/* Current bpftrace's other names: "pc" for ip (its architecture-neutral name) and
	 * "orig_rax" (0.17 said "orig_ax"); both are kept. */
	if (!strcmp(name, "pc"))
		name = "ip";
	else if (!strcmp(name, "orig_rax"))
		name = "orig_ax";
	for (size_t i = 0; i < DT_ARRAY_SIZE(regs); i++)
		if (!strcmp(name, regs[i]))
			return (int)(i * 8);
	return -1;
}

bool dt_builtin_lookup(const char *s, size_t n, dt_builtin *out, uint32_t *argn)
{
	*argn = 0;
	/* `__builtin_comm`: bpftrace's name for the builtin itself, beside the standard library's
	 * `comm` a script macro may replace. */
	if (n > 10 && !memcmp(s, "__builtin_", 10))
		return dt_builtin_lookup(s + 10, n - 10, out, argn);
	if (n == 4 && memcmp(s, "arg", 3) == 0 && s[3] >= '0' && s[3] <= '9') {
		*out = DT_B_ARG;
		*argn = (uint32_t)(s[3] - '0');
		return true;
	}
	/* arg10 and arg11: a USDT probe has up to 12 arguments. */
	if (n == 5 && memcmp(s, "arg1", 4) == 0 && s[4] >= '0' && s[4] <= '1') {
		*out = DT_B_ARG;
		*argn = (uint32_t)(10 + s[4] - '0');
		return true;
	}
	/* dw_ustack: bpftrace's name of its DWARF unwinding, which ustack_dwarf is. */
	if (n == 9 && !memcmp(s, "dw_ustack", 9)) {
		*out = DT_B_USTACK_DWARF;
		return true;
	}
	if (n == 5 && memcmp(s, "sarg", 4) == 0 && s[4] >= '0' && s[4] <= '9') {
		*out = DT_B_SARG;
		*argn = (uint32_t)(s[4] - '0');
		return true;
	}
	for (int b = 0; b < DT_B__COUNT; b++) {
		if (b == DT_B_ARG || b == DT_B_SARG)
			continue;
		if (strlen(builtin_names[b]) == n && memcmp(builtin_names[b], s, n) == 0) {
			*out = (dt_builtin)b;
			return true;
		}
	}
	return false;
}

static const char *const func_names[DT_F__COUNT + 1] = {
	[DT_F_PRINTF] = "printf", [DT_F_PRINT] = "print", [DT_F_CLEAR] = "clear",
	[DT_F_DELETE] = "delete", [DT_F_ZERO] = "zero", [DT_F_EXIT] = "exit", [DT_F_TIME] = "time",
	[DT_F_STR] = "str", [DT_F_KSYM] = "ksym", [DT_F_USYM] = "usym", [DT_F_COUNT] = "count",
	[DT_F_SUM] = "sum", [DT_F_AVG] = "avg", [DT_F_MIN] = "min", [DT_F_MAX] = "max",
	[DT_F_STATS] = "stats", [DT_F_HIST] = "hist", [DT_F_LHIST] = "lhist",
	[DT_F_TSERIES] = "tseries",
	[DT_F_STRNCMP] = "strncmp", [DT_F_STRCONTAINS] = "strcontains", [DT_F_BSWAP] = "bswap",
	[DT_F_STRLEN] = "strlen", [DT_F_STRCAP] = "strcap", [DT_F_STRSTR] = "strstr",
	[DT_F_STR_CONCAT] = "str_concat", [DT_F_MEMCMP] = "memcmp",
	[DT_F_BUF] = "buf", [DT_F_STRFTIME] = "strftime", [DT_F_CAT] = "cat",
	[DT_F_SYSTEM] = "system", [DT_F_SIGNAL] = "signal", [DT_F_NTOP] = "ntop",
	[DT_F_PTON] = "pton", [DT_F_KADDR] = "kaddr", [DT_F_HAS_KEY] = "has_key",
	[DT_F_REG] = "reg", [DT_F_CGROUPID] = "cgroupid", [DT_F_OVERRIDE] = "override",
	[DT_F_CGROUP_PATH] = "cgroup_path", [DT_F_JOIN] = "join", [DT_F_MACADDR] = "macaddr",
	[DT_F_STRERROR] = "strerror", [DT_F_SIGNAL_NAME] = "signal_name",
	[DT_F_SYSCALL_NAME] = "syscall_name", [DT_F_ASSERT] = "assert",
	[DT_F_CONTAINER_OF] = "container_of", [DT_F_FAIL] = "fail", [DT_F_WRITE_USER] = "write_user", [DT_F_UPTR] = "uptr", [DT_F_KPTR] = "kptr",
	[DT_F_DEBUGF] = "debugf", [DT_F_UADDR] = "uaddr", [DT_F_LEN] = "len",
	[DT_F_UNWATCH] = "unwatch", [DT_F_PATH] = "path", [DT_F_SOCKET_COOKIE] = "socket_cookie",
	[DT_F_SKBOUTPUT] = "skboutput", [DT_F_PERCPU_KADDR] = "percpu_kaddr",
	[DT_F_ERRORF] = "errorf", [DT_F_WARNF] = "warnf", [DT_F_GETOPT] = "getopt",
	[DT_F_IS_INTEGER] = "is_integer", [DT_F_IS_UNSIGNED_INTEGER] = "is_unsigned_integer",
	[DT_F_IS_STR] = "is_str", [DT_F_IS_PTR] = "is_ptr", [DT_F_IS_ARRAY] = "is_array",
	[DT_F_IS_LITERAL] = "is_literal", [DT_F_STATIC_ASSERT] = "static_assert", [DT_F_IS_ERR] = "is_err",
	[DT_F_EXTERN] = NULL, /* named by its C function; ends the list dt_func_names gives */
	[DT_F__COUNT] = NULL,
};

const char *dt_func_name(dt_func f)
{
	return f < DT_F__COUNT && func_names[f] ? func_names[f] : "?";
}

const char *const *dt_func_names(void)
{
	return func_names;
}

bool dt_func_lookup(const char *s, size_t n, dt_func *out)
{
	for (int f = 0; f < DT_F__COUNT; f++) {
		if (func_names[f] && strlen(func_names[f]) == n && memcmp(func_names[f], s, n) == 0) {
			*out = (dt_func)f;
			return true;
		}
	}
	return false;
}

/* The perf events software: and hardware: accept, one row each: SW or HW(the PERF_COUNT_SW_ or
 * PERF_COUNT_HW_ suffix, the default period, perf's name[, its alias]). The checker's names,
 * aliases and "did you mean", attach's perf_event_attr and REPL completion all read this table.
 * Names, aliases and periods are bpftrace's (src/probe_matcher.h) plus perf's `migrations`, except
 * task-clock, which samples every ms of task time like cpu-clock: bpftrace's period of 1 would
 * fire every nanosecond. The order is the tie-break of "did you mean". */
#define DT_PERF_EVENTS(SW, HW)                                                               \
	SW(CPU_CLOCK, 1000000, "cpu-clock", "cpu")                                            \
	SW(TASK_CLOCK, 1000000, "task-clock")                                                 \
	SW(PAGE_FAULTS, 100, "page-faults", "faults")                                         \
	SW(CONTEXT_SWITCHES, 1000, "context-switches", "cs")                                  \
	SW(CPU_MIGRATIONS, 1, "cpu-migrations", "migrations")                                 \
	SW(PAGE_FAULTS_MIN, 100, "minor-faults")                                              \
	SW(PAGE_FAULTS_MAJ, 1, "major-faults")                                                \
	SW(ALIGNMENT_FAULTS, 1, "alignment-faults")                                           \
	SW(EMULATION_FAULTS, 1, "emulation-faults")                                           \
	SW(DUMMY, 1, "dummy")                                                                 \
	SW(BPF_OUTPUT, 1, "bpf-output")                                                       \
	HW(CPU_CYCLES, 1000000, "cpu-cycles", "cycles")                                       \
	HW(INSTRUCTIONS, 1000000, "instructions")                                             \
	HW(CACHE_REFERENCES, 1000000, "cache-references")                                     \
	HW(CACHE_MISSES, 1000000, "cache-misses")                                             \
	HW(BRANCH_INSTRUCTIONS, 100000, "branch-instructions", "branches")                    \
	HW(BRANCH_MISSES, 100000, "branch-misses")                                            \
	HW(BUS_CYCLES, 100000, "bus-cycles")                                                  \
	HW(STALLED_CYCLES_FRONTEND, 1000000, "frontend-stalls")                               \
	HW(STALLED_CYCLES_BACKEND, 1000000, "backend-stalls")                                 \
	HW(REF_CPU_CYCLES, 1000000, "ref-cycles")

/* A row's spellings are its last arguments; `~` pads them so that a row without an alias still
 * passes the variadic part (C11 wants at least one argument there). */
#define EV_NAME(name, ...) name
#define EV_ALIAS(name, alias, ...) alias
#define EV_SW(cfg, period, ...)                                                              \
	{ EV_NAME(__VA_ARGS__, ~), EV_ALIAS(__VA_ARGS__, NULL, ~), PERF_TYPE_SOFTWARE,       \
	  PERF_COUNT_SW_##cfg, period },
#define EV_HW(cfg, period, ...)                                                              \
	{ EV_NAME(__VA_ARGS__, ~), EV_ALIAS(__VA_ARGS__, NULL, ~), PERF_TYPE_HARDWARE,       \
	  PERF_COUNT_HW_##cfg, period },
#define EV_SPELLINGS(cfg, period, ...) __VA_ARGS__,
#define EV_NONE(cfg, period, ...)

static const dt_perf_event perf_events[] = { DT_PERF_EVENTS(EV_SW, EV_HW) };
static const char *const sw_spellings[] = { DT_PERF_EVENTS(EV_SPELLINGS, EV_NONE) NULL };
static const char *const hw_spellings[] = { DT_PERF_EVENTS(EV_NONE, EV_SPELLINGS) NULL };

const dt_perf_event *dt_perf_event_find(dt_provider p, const char *name)
{
	uint32_t type = p == DT_P_SOFTWARE ? PERF_TYPE_SOFTWARE : PERF_TYPE_HARDWARE;

	if (!name || (p != DT_P_SOFTWARE && p != DT_P_HARDWARE))
		return NULL;
	for (size_t i = 0; i < DT_ARRAY_SIZE(perf_events); i++) {
		const dt_perf_event *e = &perf_events[i];

		if (e->type == type &&
		    (!strcmp(e->name, name) || (e->alias && !strcmp(e->alias, name))))
			return e;
	}
	return NULL;
}

const char *const *dt_software_event_names(void)
{
	return sw_spellings;
}

const char *const *dt_hardware_event_names(void)
{
	return hw_spellings;
}

/* Edit distance where swapping two neighbours counts as one edit (optimal string alignment):
 * `prinft` is one typo from `printf`, two from `print`. Names are short: a small matrix suffices.
 * Anything over `max` comes back as SIZE_MAX: once two rows in a row are all over it, every later
 * row is too (each cell derives from the two rows above it and the column that grows with i). */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb, size_t max)
{
	static size_t m[65][65];
	if (la > 64 || lb > 64)
		return SIZE_MAX;
	for (size_t i = 0; i <= la; i++)
		m[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		m[0][j] = j;
	size_t prev_min = 0;
	for (size_t i = 1; i <= la; i++) {
		size_t row_min = m[i][0];
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = m[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			size_t best = DT_MIN(sub, DT_MIN(m[i - 1][j] + 1, m[i][j - 1] + 1));
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
				best = DT_MIN(best, m[i - 2][j - 2] + 1);
			m[i][j] = best;
			row_min = DT_MIN(row_min, best);
		}
		if (row_min > max && prev_min > max)
			return SIZE_MAX;
		prev_min = row_min;
	}
	return m[la][lb] <= max ? m[la][lb] : SIZE_MAX;
}

/* The set of characters in a name, folded onto 64 bits. One edit changes that set by at most two
 * bits (a substitution drops one character and brings one; an insertion or a deletion one; a swap
 * none), so two names whose sets differ in more than 2 * max bits are more than max edits apart:
 * a test of a few instructions that spares most candidates their matrix. */
static uint64_t char_set(const char *s, size_t n)
{
	uint64_t m = 0;
	for (size_t i = 0; i < n; i++)
		m |= 1ull << ((unsigned char)s[i] & 63);
	return m;
}

const char *dt_closest(const char *name, size_t name_len, const char *const *cands)
{
	/* Close enough to be a typo: at most a third of the name, and never 0-length matches. */
	size_t limit = name_len < 3 ? 1 : name_len / 3 + 1;
	uint64_t name_set = char_set(name, name_len);
	const char *best = NULL;
	size_t best_d = SIZE_MAX;
	for (size_t i = 0; cands[i]; i++) {
		size_t len = strlen(cands[i]);
		/* The distance is at least the difference in length: a candidate that far off
		 * cannot be within the limit, so skip its matrix (unknown names are frequent in
		 * broken input, and each costs a matrix per candidate). */
		if ((len > name_len ? len - name_len : name_len - len) > limit)
			continue;
		if ((size_t)__builtin_popcountll(name_set ^ char_set(cands[i], len)) > 2 * limit)
			continue;
		size_t d = edit_distance(name, name_len, cands[i], len, limit);
		if (d < best_d) {
			best_d = d;
			best = cands[i];
		}
	}
	return best && best_d > 0 && best_d <= limit ? best : NULL;
}

void dt_unknown_name_hint(dt_diags *d, const char *s, size_t n, bool call)
{
	const char *sugg = NULL;
	if (!dt_diag_hint_wanted(d))
		return;
	sugg = dt_closest(s, n, call ? dt_func_names() : dt_builtin_names());
	if (!sugg)
		sugg = dt_closest(s, n, call ? dt_builtin_names() : dt_func_names());
	if (sugg)
		dt_diag_hint(d, "did you mean '%s'?", sugg);
	else if (!call)
		dt_diag_hint(d, "scratch variables start with '$' and maps with '@'");
}

uint32_t dt_params_split(const char **v, uint32_t n)
{
	uint32_t nnamed = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (strncmp(v[i], "--", 2) || !v[i][2])
			continue;
		const char *named = v[i];
		memmove(&v[nnamed + 1], &v[nnamed], sizeof(*v) * (i - nnamed));
		v[nnamed++] = named;
	}
	return nnamed;
}
