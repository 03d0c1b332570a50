/* repl.c — the interactive REPL: one live session that grows and shrinks while the user types.
 * A complete probe block is compiled, loaded and attached at once and keeps running; a line of
 * top-level statements (`print(@m)`, `clear(@m)`, `printf(…)`, `exit()`) runs once against the live
 * maps, as a BEGIN probe that is detached right after; `.` meta-commands inspect and edit the
 * session. One epoll waits on stdin (GNU readline's callback interface), the REPL's own signalfd
 * and the session's fd (dt_session_poll_fd), whose work — probe output, unwinder requests, timers,
 * the -p process's exit — is done by the same dt_session_dispatch the CLI's loop calls. Probe
 * output is printed above the line being typed (the session's before_output hides the line, it
 * is redrawn after the dispatch), and Ctrl-C cancels the entry being typed rather than the
 * session, which is why the REPL keeps the signals while it reads instead of handing them to the
 * session (SIGTERM, SIGHUP and SIGQUIT end it, SIGUSR1 prints every map). Ctrl-D, `.quit` or one
 * of those signals ends it like a script run: END probes, then every map. An entry continues over
 * several lines while the parser reports that the text ended inside something open (a block, a
 * string, a comment, a call). Written against runtime.h only. */
#include "runtime/runtime.h"
#include "common/common.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#define PROMPT "dt> "
#define STMT_WRAP_OPEN "BEGIN { "
#define PROMPT_MORE "..> "
#define HISTORY_MAX 1000
/* A history file holds one entry per line: a multi-line entry's newlines are stored as this
 * byte (ASCII record separator, never typed) and restored when the file is read. */
#define HISTORY_NL '\x1e'

typedef DT_VEC(char *) strvec;

static struct repl {
	dt_session *s;
	FILE *out;            /* program output: the session's */
	bool tty;             /* stdin is a terminal: readline; else plain lines */
	bool quit;
	bool line_hidden;     /* readline's line is cleared while output is printed */
	char *entry;          /* the entry being typed, over one or more lines */
	size_t entry_len;
	char *history_path;
	/* The probe ids the user sees: 1, 2, 3 for the probes attached, whatever statements ran in
	 * between (each is a unit of the session too, with an id of its own). */
	DT_VEC(struct probe_id { dt_unit *u; uint32_t id; }) ids;
	uint32_t next_id;
	bool in_entry;        /* running an entry: its output follows the accepted line */
	/* plain (non-tty) input */
	char *inbuf;
	size_t inlen;
} R;

/* ---------------------------------------------------------------- output around the prompt */

/* Clears the line being typed so that output lands on a clean line. */
static void hide_line(void)
{
	if (!R.tty || R.line_hidden)
		return;
	rl_save_prompt();
	rl_replace_line("", 0);
	rl_redisplay();
	R.line_hidden = true;
}

static char *saved_text;
static int saved_point;

static void hide_line_keep(void)
{
	if (!R.tty || R.line_hidden)
		return;
	free(saved_text);
	saved_text = rl_copy_text(0, rl_end);
	saved_point = rl_point;
	hide_line();
}

/* Redraws the prompt and what was typed after output. */
static void show_line(void)
{
	if (!R.tty || !R.line_hidden)
		return;
	fflush(R.out);
	rl_restore_prompt();
	rl_replace_line(saved_text ? saved_text : "", 0);
	rl_point = saved_point;
	rl_forced_update_display();
	R.line_hidden = false;
}

/* The session's before_output: output of running probes (printf lines, interval prints) goes
 * above the prompt, on a cleared line; the loop redraws the line after the dispatch. */
static void before_output(void *ctx)
{
	(void)ctx;
	if (!R.in_entry)
		hide_line_keep();
}

/* ---------------------------------------------------------------- entries */

/* A probe program starts with an attach point (`BEGIN`, `end`, `word:`); anything else is a
 * statement list run once. */
static bool is_probe_text(const char *t)
{
	size_t n;

	while (isspace((unsigned char)*t))
		t++;
	static const char *const words[] = { "BEGIN", "END", "begin", "end" };
	for (size_t i = 0; i < DT_ARRAY_SIZE(words); i++) {
		n = strlen(words[i]);
		if (!strncmp(t, words[i], n) && !isalnum((unsigned char)t[n]) && t[n] != '_')
			return true;
	}
	n = strspn(t, "abcdefghijklmnopqrstuvwxyz_");
	return n > 0 && t[n] == ':';
}

/* The text a statement entry is compiled as. */
static char *wrap_statements(const char *t)
{
	return xasprintf(STMT_WRAP_OPEN "%s\n}", t);
}

/* True when the text ends inside something still open: the parser's only complaint is at the
 * end of the input, so more lines will tell. */
static bool entry_incomplete(const char *text)
{
	dt_source src = { .name = "repl", .text = text, .len = strlen(text) };
	dt_arena *a = dt_arena_new();
	dt_diags *d = dt_diags_new(&src);
	bool more;

	dt_parse(a, &src, d);
	more = dt_diags_error_count(d) > 0 && dt_diags_error_at_end(d);
	dt_diags_free(d);
	dt_arena_free(a);
	return more;
}

static void run_statements(const char *text)
{
	char *wrapped = wrap_statements(text);
	dt_source src = { .name = "repl", .text = wrapped, .len = strlen(wrapped),
			  .hidden = (uint32_t)strlen(STMT_WRAP_OPEN) };
	dt_unit *u = NULL;

	/* The BEGIN probe runs inside dt_session_add; its events are in the ring buffer on return. */
	if (dt_session_add(R.s, &src, &u) == 0) {
		dt_session_dispatch(R.s, 0);
		fflush(R.out);
		if (u)
			dt_session_detach(R.s, u);
	}
	free(wrapped);
	if (dt_session_stopped(R.s))
		R.quit = true;
}

/* The id the user sees for a live probe unit (0 if it is none of the REPL's probes). */
static uint32_t probe_id(const dt_unit *u)
{
	for (size_t i = 0; i < R.ids.n; i++)
		if (R.ids.v[i].u == u)
			return R.ids.v[i].id;
	return 0;
}

static void add_probes(const char *name, const char *text)
{
	dt_source src = { .name = name, .text = text, .len = strlen(text) };
	dt_unit *u = NULL;

	if (dt_session_add(R.s, &src, &u) == 0 && u) {
		struct probe_id pi = { u, ++R.next_id };

		DT_VEC_PUSH(&R.ids, pi);
		fprintf(stderr, "probe %u attached (%u attach point%s)\n", pi.id,
			dt_unit_nprobes(u), dt_unit_nprobes(u) == 1 ? "" : "s");
	}
	if (dt_session_stopped(R.s))
		R.quit = true;
}

/* ---------------------------------------------------------------- meta-commands */

static const char *const meta_names[] = {
	".help", ".probes", ".detach", ".maps", ".load", ".save", ".quit", NULL,
};

static dt_unit *live_unit(uint32_t id)
{
	dt_unit *u;

	for (uint32_t i = 0; (u = dt_session_unit(R.s, i)); i++)
		if (probe_id(u) == id)
			return u;
	return NULL;
}

static void meta_probes(void)
{
	dt_unit *u;
	int shown = 0;

	for (uint32_t i = 0; (u = dt_session_unit(R.s, i)); i++) {
		const char *t = dt_unit_text(u);
		uint64_t hits = 0;

		if (!probe_id(u))
			continue;
		if (dt_unit_hits(u, &hits) < 0)
			hits = 0;
		/* The whole body: its first line beside the id, the others under it. */
		for (int first = 1; *t || first; first = 0) {
			int len = (int)strcspn(t, "\n");

			if (first)
				printf("%4u  %10llu hits  %.*s\n", probe_id(u),
				       (unsigned long long)hits, len, t);
			else
				printf("%*s%.*s\n", 22, "", len, t);
			t += len + (t[len] == '\n');
		}
		shown++;
	}
	if (!shown)
		printf("no probes attached\n");
}

static void meta_maps(void)
{
	dt_arena *a = dt_arena_new();
	const dt_type *key, *value;
	const char *name;
	uint32_t i;

	for (i = 0; (name = dt_session_map(R.s, i, &key, &value)); i++) {
		uint64_t n = 0;

		dt_session_map_entries(R.s, i, &n);
		printf("%-16s %s%s%s  %llu %s\n", name, key ? "[" : "",
		       key ? dt_type_name(a, key) : "", key ? "] " : "", (unsigned long long)n,
		       n == 1 ? "entry" : "entries");
		printf("%-16s value %s\n", "", dt_type_name(a, value));
	}
	if (!i)
		printf("no maps\n");
	dt_arena_free(a);
}

static void meta_save(const char *path)
{
	FILE *f;
	dt_unit *u;
	int n = 0;

	if (!*path) {
		fprintf(stderr, ".save: give a file name, e.g. .save session.dt\n");
		return;
	}
	f = fopen(path, "we");
	if (!f) {
		fprintf(stderr, ".save: cannot write %s: %s\n", path, dt_strerror(errno));
		return;
	}
	/* A #! script runs as it is: executable as a new file would be, within the umask. */
	mode_t mask = umask(0);
	umask(mask);
	if (fchmod(fileno(f), 0777 & ~mask) < 0)
		fprintf(stderr, ".save: cannot make %s executable: %s\n", path, strerror(errno));
	fprintf(f, "#!/usr/bin/env dwarftrace\n");
	for (uint32_t i = 0; (u = dt_session_unit(R.s, i)); i++) {
		const char *t = dt_unit_text(u);
		size_t len = strlen(t);

		fprintf(f, "\n%s%s", t, len && t[len - 1] == '\n' ? "" : "\n");
		n++;
	}
	if (fclose(f) != 0) {
		fprintf(stderr, ".save: cannot write %s: %s\n", path, dt_strerror(errno));
		return;
	}
	printf("saved %d probe block%s to %s (run it with: dwarftrace %s)\n", n, n == 1 ? "" : "s",
	       path, path);
}

static void meta_load(const char *path)
{
	char *text;
	size_t len;
	int rc;

	if (!*path) {
		fprintf(stderr, ".load: give a file name, e.g. .load session.dt\n");
		return;
	}
	rc = dt_read_file(path, &text, &len);
	if (rc < 0) {
		fprintf(stderr, ".load: cannot read %s: %s\n", path, dt_strerror(-rc));
		return;
	}
	add_probes(path, text);
	free(text);
}

static void meta_help(void)
{
	printf("Type a probe block to attach it; it runs while you type:\n"
	       "    profile:hz:99 { @[ustack_dwarf] = count(); }\n"
	       "Type statements to run them once against the live maps:\n"
	       "    print(@m)   clear(@m)   delete(@m[k])   printf(\"%%d\\n\", 1)   exit()\n"
	       "An entry goes on over several lines while a block, string or comment is open.\n"
	       "Meta-commands:\n"
	       "    .probes        live probes: id, hit count, source\n"
	       "    .detach ID     detach probe ID (its maps live on)\n"
	       "    .maps          maps with their key and value types and sizes\n"
	       "    .load FILE     attach the probes of a script file\n"
	       "    .save FILE     write the live probes as a script `dwarftrace FILE` runs\n"
	       "    .quit          end the session (also Ctrl-D): END probes run, maps print\n"
	       "    .help          this text\n"
	       "Tab completes probe types, tracepoints, binaries and their symbols, builtins,\n"
	       "functions, maps and meta-commands. Ctrl-C cancels the entry being typed.\n"
	       "Up/Down recall whole entries, Ctrl-R searches them, Ctrl-O runs the recalled\n"
	       "entry and brings up the next; Ctrl-D ends the session.\n");
}

static void run_meta(const char *line)
{
	char cmd[32];
	const char *arg;
	size_t n = strcspn(line, " \t\n");

	snprintf(cmd, sizeof(cmd), "%.*s", (int)DT_MIN(n, sizeof(cmd) - 1), line);
	arg = line + n;
	while (isspace((unsigned char)*arg))
		arg++;
	char *a = xstrdup(arg);
	size_t al = strlen(a);
	while (al && isspace((unsigned char)a[al - 1]))
		a[--al] = 0;

	if (!strcmp(cmd, ".help")) {
		meta_help();
	} else if (!strcmp(cmd, ".probes")) {
		meta_probes();
	} else if (!strcmp(cmd, ".maps")) {
		meta_maps();
	} else if (!strcmp(cmd, ".quit") || !strcmp(cmd, ".exit")) {
		R.quit = true;
	} else if (!strcmp(cmd, ".save")) {
		meta_save(a);
	} else if (!strcmp(cmd, ".load")) {
		meta_load(a);
	} else if (!strcmp(cmd, ".detach")) {
		char *end;
		unsigned long id = strtoul(a, &end, 10);
		dt_unit *u = (*a && !*end) ? live_unit((uint32_t)id) : NULL;

		if (!*a) {
			fprintf(stderr, ".detach: give a probe id, e.g. .detach 1 (.probes lists them)\n");
		} else if (!u) {
			fprintf(stderr, ".detach: no live probe with id '%s' (see .probes)\n", a);
		} else if (dt_session_detach(R.s, u) == 0) {
			for (size_t i = 0; i < R.ids.n; i++)
				if (R.ids.v[i].u == u)
					R.ids.v[i] = R.ids.v[--R.ids.n];
			printf("probe %lu detached\n", id);
		}
	} else {
		fprintf(stderr, "unknown command '%s' (see .help)\n", cmd);
	}
	free(a);
	fflush(stdout);
}

/* One complete entry. */
static void run_entry(const char *text)
{
	const char *t = text;

	while (isspace((unsigned char)*t))
		t++;
	if (!*t)
		return;
	R.in_entry = true;
	if (*t == '.')
		run_meta(t);
	else if (is_probe_text(t))
		add_probes("repl", t);
	else
		run_statements(t);
	R.in_entry = false;
	fflush(R.out);
	fflush(stderr);
}

static void reset_entry(void)
{
	free(R.entry);
	R.entry = NULL;
	R.entry_len = 0;
}

/* A line typed (or read): add it to the entry; run the entry once it is complete. */
static void on_line(char *line)
{
	const char *t;

	if (!line) { /* Ctrl-D */
		if (R.tty)
			printf("\n");
		R.quit = true;
		return;
	}
	if (R.entry) {
		R.entry = xrealloc(R.entry, R.entry_len + strlen(line) + 2);
		R.entry[R.entry_len++] = '\n';
		strcpy(R.entry + R.entry_len, line);
		R.entry_len += strlen(line);
	} else {
		R.entry = xstrdup(line);
		R.entry_len = strlen(line);
	}
	t = R.entry;
	while (isspace((unsigned char)*t))
		t++;
	if (*t && *t != '.') {
		char *wrapped = is_probe_text(t) ? NULL : wrap_statements(t);
		bool more = entry_incomplete(wrapped ? wrapped : t);

		free(wrapped);
		if (more) {
			if (R.tty)
				rl_set_prompt(PROMPT_MORE);
			return;
		}
	}
	if (R.tty && *t)
		add_history(R.entry);
	{
		char *e = R.entry;

		R.entry = NULL;
		R.entry_len = 0;
		run_entry(e);
		free(e);
	}
	if (R.tty)
		rl_set_prompt(PROMPT);
}

/* ---------------------------------------------------------------- completion */

static strvec cands;
static size_t cand_i;

static void cands_reset(void)
{
	for (size_t i = 0; i < cands.n; i++)
		free(cands.v[i]);
	cands.n = 0;
	cand_i = 0;
}

static void cand_add(const char *prefix, const char *name, const char *text)
{
	char *c = xasprintf("%s%s", prefix, name);

	if (!strncmp(c, text, strlen(text))) {
		for (size_t i = 0; i < cands.n; i++)
			if (!strcmp(cands.v[i], c)) {
				free(c);
				return;
			}
		DT_VEC_PUSH(&cands, c);
	} else {
		free(c);
	}
}

static char *cand_gen(const char *text, int state)
{
	(void)text;
	if (!state)
		cand_i = 0;
	return cand_i < cands.n ? xstrdup(cands.v[cand_i++]) : NULL;
}

static const char *const probe_types[] = {
	"BEGIN", "END", "begin", "end", "interval:", "profile:", "uprobe:", "uretprobe:", "kprobe:", "kretprobe:",
	"tracepoint:", "software:", "hardware:", NULL,
};

static const char *const keywords[] = { "if", "else", "unroll", "return", NULL };

static const char *const common_libs[] = {
	"libc", "libm", "libpthread", "libdl", "libstdc++", "libz", "libssl", "libcrypto", NULL,
};

static void add_list(const char *prefix, const char *const *names, const char *text)
{
	for (; *names; names++)
		cand_add(prefix, *names, text);
}

/* Names from the runtime's wildcard expansion (uprobe symbols, tracepoints). */
static void add_expanded(dt_provider p, const char *target, const char *func_pat,
			 const char *prefix, const char *text, bool subsystems)
{
	dt_attach a = { .provider = p, .target = target, .func = func_pat };
	char **names = NULL;
	uint32_t n = 0;

	if (dt_session_expand(R.s, &a, &names, &n) < 0)
		return;
	for (uint32_t i = 0; i < n; i++) {
		if (subsystems) {
			char *colon = strchr(names[i], ':');
			if (colon)
				colon[1] = 0; /* "sched:" */
		}
		if (cands.n < 5000)
			cand_add(prefix, names[i], text);
		free(names[i]);
	}
	free(names);
}

/* Completes what follows "PROVIDER:" in `text`. */
static void complete_probe(const char *text)
{
	const char *c1 = strchr(text, ':');
	size_t plen = (size_t)(c1 - text);
	char prov[32];
	const char *rest = c1 + 1, *c2 = strchr(rest, ':');

	snprintf(prov, sizeof(prov), "%.*s", (int)DT_MIN(plen, sizeof(prov) - 1), text);
	if (!strcmp(prov, "tracepoint") || !strcmp(prov, "t")) {
		char *pfx = xasprintf("%s:", prov);
		if (!c2) {
			char *pat = xasprintf("%s*", rest);
			add_expanded(DT_P_TRACEPOINT, pat, "*", pfx, text, true);
			free(pat);
		} else {
			char *sub = xstrndup(rest, (size_t)(c2 - rest)), *pat = xasprintf("%s*", c2 + 1);
			char *pfx2 = xasprintf("%s%s:", pfx, sub);
			add_expanded(DT_P_TRACEPOINT, sub, pat, pfx2, text, false);
			free(sub);
			free(pat);
			free(pfx2);
		}
		free(pfx);
	} else if (!strcmp(prov, "uprobe") || !strcmp(prov, "uretprobe") || !strcmp(prov, "u") ||
		   !strcmp(prov, "ur")) {
		char *pfx = xasprintf("%s:", prov);
		if (!c2) {
			/* A binary: library names, then paths. */
			char *f;
			int st = 0;

			add_list(pfx, common_libs, text);
			while ((f = rl_filename_completion_function(rest, st++))) {
				cand_add(pfx, f, text);
				free(f);
			}
		} else {
			char *bin = xstrndup(rest, (size_t)(c2 - rest)), *pat = xasprintf("%s*", c2 + 1);
			char *pfx2 = xasprintf("%s%s:", pfx, bin);
			add_expanded(DT_P_UPROBE, bin, pat, pfx2, text, false);
			free(bin);
			free(pat);
			free(pfx2);
		}
		free(pfx);
	} else if (!strcmp(prov, "kprobe") || !strcmp(prov, "kretprobe") || !strcmp(prov, "k") ||
		   !strcmp(prov, "kr")) {
		char *pfx = xasprintf("%s:", prov), *pat = xasprintf("%s*", rest);
		add_expanded(DT_P_KPROBE, NULL, pat, pfx, text, false);
		free(pfx);
		free(pat);
	} else if (!strcmp(prov, "profile") || !strcmp(prov, "interval")) {
		static const char *const units[] = { "hz:", "s:", "ms:", "us:", NULL };
		char *pfx = xasprintf("%s:", prov);
		add_list(pfx, units, text);
		free(pfx);
	} else if (!strcmp(prov, "software") || !strcmp(prov, "hardware")) {
		char *pfx = xasprintf("%s:", prov);
		add_list(pfx, prov[0] == 's' ? dt_software_event_names() : dt_hardware_event_names(),
			 text);
		free(pfx);
	}
}

static char **repl_complete(const char *text, int start, int end)
{
	(void)end;
	rl_attempted_completion_over = 1;
	cands_reset();
	if (text[0] == '.' && start == 0 && !R.entry) {
		add_list("", meta_names, text);
	} else if (text[0] == '@') {
		const char *name;

		for (uint32_t i = 0; (name = dt_session_map(R.s, i, NULL, NULL)); i++)
			cand_add("", name, text);
	} else if (strchr(text, ':')) {
		complete_probe(text);
	} else if (!strncmp(rl_line_buffer, ".load ", 6) || !strncmp(rl_line_buffer, ".save ", 6)) {
		char *f;
		int st = 0;

		while ((f = rl_filename_completion_function(text, st++))) {
			cand_add("", f, text);
			free(f);
		}
	} else {
		add_list("", probe_types, text);
		add_list("", dt_builtin_names(), text);
		add_list("", dt_func_names(), text);
		add_list("", keywords, text);
	}
	/* A space only after a meta-command (its argument follows): inside a probe or an
	 * expression a word is followed by '(', '[', ':', ';' or ')' as often as by a space, and a
	 * stray one reads `@execs[comm ]`. */
	rl_completion_suppress_append = !(text[0] == '.' && start == 0 && !R.entry);
	if (!cands.n)
		return NULL;
	return rl_completion_matches(text, cand_gen);
}

/* ---------------------------------------------------------------- the loop */

/* Replaces byte `from` with `to` in every history entry: one entry per line in the file, a
 * multi-line entry recalled whole by one Up or Ctrl-R. */
static void history_newlines(char from, char to)
{
	HIST_ENTRY **h = history_list();

	for (size_t i = 0; h && h[i]; i++)
		for (char *p = h[i]->line; *p; p++)
			if (*p == from)
				*p = to;
}

static void on_sigint(void)
{
	if (R.tty) {
		/* Cancel what is being typed, like a shell. */
		reset_entry();
		rl_replace_line("", 0);
		printf("^C\n");
		rl_set_prompt(PROMPT);
		rl_on_new_line();
		rl_redisplay();
	} else {
		R.quit = true;
	}
}

/* Non-terminal input: whole lines from a pipe or file. */
static void read_plain(void)
{
	char buf[4096];
	ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));

	if (n <= 0) {
		if (R.inlen) {
			char *last = xstrndup(R.inbuf, R.inlen);
			R.inlen = 0;
			on_line(last);
			free(last);
		}
		if (R.entry) /* an entry left open at end of input: run it for its diagnostic */
			run_entry(R.entry), reset_entry();
		on_line(NULL);
		return;
	}
	R.inbuf = xrealloc(R.inbuf, R.inlen + (size_t)n + 1);
	memcpy(R.inbuf + R.inlen, buf, (size_t)n);
	R.inlen += (size_t)n;
	for (;;) {
		char *nl = memchr(R.inbuf, '\n', R.inlen);
		char *line;
		size_t used;

		if (!nl || R.quit)
			break;
		used = (size_t)(nl - R.inbuf) + 1;
		line = xstrndup(R.inbuf, used - 1);
		memmove(R.inbuf, R.inbuf + used, R.inlen - used);
		R.inlen -= used;
		on_line(line);
		free(line);
	}
}

static void watch(int ep, int fd, uint32_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };

	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

enum { TAG_STDIN = 1, TAG_SIG, TAG_SESSION };

int dt_repl_main(const dt_session_opts *so_in, bool watch_pid)
{
	dt_session_opts so = *so_in;
	struct epoll_event evs[8];
	sigset_t set;
	int ep = -1, sfd = -1, sessfd, rc = 0;
	const char *home = getenv("HOME");

	memset(&R, 0, sizeof(R));
	R.tty = isatty(STDIN_FILENO);
	so.count_hits = true;
	so.announce = false;
	so.before_output = before_output;
	R.s = dt_session_new(&so);
	if (!R.s)
		return 1;
	R.out = so.out ? so.out : stdout;
	if (watch_pid && dt_session_watch_pid(R.s, (int)so.filter_pid) < 0) {
		rc = 1;
		goto out;
	}

	/* Signals are the REPL's, not the session's, while it reads: Ctrl-C cancels the entry being
	 * typed. The others mean what they mean to a script run (dt_session_catch_signals). */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	ep = epoll_create1(EPOLL_CLOEXEC);
	sessfd = dt_session_poll_fd(R.s);
	if (sfd < 0 || ep < 0 || sessfd < 0) {
		fprintf(stderr, "dwarftrace: cannot set up the REPL: %s\n",
			dt_strerror(sessfd < 0 ? -sessfd : errno));
		rc = 1;
		goto out;
	}
	watch(ep, STDIN_FILENO, TAG_STDIN);
	watch(ep, sfd, TAG_SIG);
	/* The session's work — probe output, unwinder requests, timers, -p's exit — is done by the
	 * same dispatch the CLI's loop calls. */
	watch(ep, sessfd, TAG_SESSION);

	if (R.tty) {
		rl_catch_signals = 0;
		rl_catch_sigwinch = 1;
		rl_readline_name = "dwarftrace";
		rl_attempted_completion_function = repl_complete;
		rl_completer_word_break_characters = " \t\n\"'`=;|&{}()[],!*%^~?<>";
		using_history();
		stifle_history(HISTORY_MAX);
		if (home) {
			R.history_path = xasprintf("%s/.dwarftrace_history", home);
			read_history(R.history_path);
			history_newlines(HISTORY_NL, '\n');
		}
		printf("dwarftrace %s — type a probe block, statements, or .help; Ctrl-D ends\n",
		       DT_VERSION);
		rl_callback_handler_install(PROMPT, on_line);
	}

	while (!R.quit && !dt_session_stopped(R.s)) {
		int n = epoll_wait(ep, evs, (int)DT_ARRAY_SIZE(evs), -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < n && !R.quit; i++) {
			switch (evs[i].data.u32) {
			case TAG_STDIN:
				if (R.tty)
					rl_callback_read_char();
				else
					read_plain();
				break;
			case TAG_SIG: {
				struct signalfd_siginfo si;

				while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
					if (si.ssi_signo == SIGINT) {
						on_sigint();
					} else if (si.ssi_signo == SIGUSR1) {
						/* Every map, above the line; tracing goes on. */
						before_output(NULL);
						dt_session_print_maps(R.s);
						show_line();
					} else {
						R.quit = true; /* SIGTERM, SIGHUP, SIGQUIT */
					}
				}
				break;
			}
			case TAG_SESSION:
				dt_session_dispatch(R.s, 0);
				show_line();
				break;
			}
		}
	}
	if (R.tty) {
		rl_callback_handler_remove();
		if (R.history_path) {
			history_newlines('\n', HISTORY_NL);
			write_history(R.history_path);
		}
	}
	/* Ending the REPL ends the session as a script run would: END probes, every map, then the
	 * detach — during which Ctrl-C no longer cancels an entry but, as in a script run, stops a
	 * slow detach from being waited for: the session takes the signals from here on. */
	close(sfd);
	sfd = -1;
	dt_session_catch_signals(R.s);
	dt_session_finish(R.s);
	rc = dt_session_exit_code(R.s);
out:
	if (ep >= 0)
		close(ep);
	if (sfd >= 0)
		close(sfd);
	dt_session_free(R.s);
	cands_reset();
	free(cands.v);
	free(R.history_path);
	free(R.ids.v);
	free(R.inbuf);
	free(saved_text);
	reset_entry();
	return rc;
}
