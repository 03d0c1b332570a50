/* config.c — a script's `config = { KEY = VALUE; … }` block (bpftrace's config settings) applied
 * to the session's options before the session exists. A key is written as bpftrace allows:
 * `stack_mode`, `STACK_MODE` or `BPFTRACE_STACK_MODE`. Precedence is bpftrace's: a command-line
 * flag over the environment variable of the same setting, over the config block, over the
 * default; so a setting is taken from the block only when neither its flag nor its variable was
 * given. Settings bpftrace has and dwarftrace has no use for are accepted and said to do
 * nothing; a name neither knows is an error at the name. */
#include "runtime/runtime.h"
#include "common/common.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* CFG_STR is the license (one of gpl_licenses), CFG_TEXT any string. */
enum cfg_kind { CFG_UINT, CFG_BOOL, CFG_ENUM, CFG_STR, CFG_TEXT, CFG_NOOP };

/* What a setting is, and the environment variables that override it (NULL-ended). */
struct cfg_def {
	const char *name;
	enum cfg_kind kind;
	uint64_t min, max;      /* CFG_UINT */
	const char *const *words; /* CFG_ENUM, NULL-ended */
	const char *env[3];
	const char *noop_why;   /* CFG_NOOP: why it changes nothing here */
};

static const char *const missing_modes[] = { "error", "warn", "ignore", NULL };
static const char *const unstable_modes[] = { "error", "warn", "enable", NULL };

static const struct cfg_def defs[] = {
	{ "max_strlen", CFG_UINT, 1, DT_MAX_STRLEN, NULL, { "BPFTRACE_MAX_STRLEN", "BPFTRACE_STRLEN" } },
	{ "max_map_keys", CFG_UINT, 1, 1u << 24, NULL,
	  { "BPFTRACE_MAX_MAP_KEYS", "BPFTRACE_MAP_KEYS_MAX" } },
	{ "perf_rb_pages", CFG_UINT, 1, 1u << 18, NULL, { "BPFTRACE_PERF_RB_PAGES" } },
	{ "max_probes", CFG_UINT, 1, 1u << 24, NULL, { "BPFTRACE_MAX_PROBES" } },
	{ "log_size", CFG_UINT, 1, 1u << 30, NULL, { "BPFTRACE_LOG_SIZE" } },
	{ "max_cat_bytes", CFG_UINT, 1, 1u << 30, NULL, { "BPFTRACE_MAX_CAT_BYTES",
							    "BPFTRACE_CAT_BYTES_MAX" } },
	{ "cpp_demangle", CFG_BOOL, 0, 0, NULL, { "BPFTRACE_CPP_DEMANGLE",
						  "BPFTRACE_NO_CPP_DEMANGLE" } },
	{ "stack_mode", CFG_ENUM, 0, 0, dt_stack_mode_names, { "BPFTRACE_STACK_MODE" } },
	{ "print_maps_on_exit", CFG_BOOL, 0, 0, NULL, { "BPFTRACE_PRINT_MAPS_ON_EXIT" } },
	{ "missing_probes", CFG_ENUM, 0, 0, missing_modes, { "BPFTRACE_MISSING_PROBES" } },
	{ "show_debug_info", CFG_BOOL, 0, 0, NULL, { "BPFTRACE_SHOW_DEBUG_INFO" } },
	{ "license", CFG_STR, 0, 0, NULL, { "BPFTRACE_LICENSE" } },
	/* bpftrace's gate of tseries(), an unstable feature there: warn (default), enable, error. */
	{ "unstable_tseries", CFG_ENUM, 0, 0, unstable_modes, { "BPFTRACE_UNSTABLE_TSERIES" } },
	{ "on_stack_limit", CFG_NOOP, 0, 0, NULL, { "BPFTRACE_ON_STACK_LIMIT" },
	  "dwarftrace moves values off the BPF stack by its own budget" },
	{ "max_bpf_progs", CFG_NOOP, 0, 0, NULL, { "BPFTRACE_MAX_BPF_PROGS" },
	  "dwarftrace serves a set of attach points with one program" },
	{ "cache_user_symbols", CFG_NOOP, 0, 0, NULL, { "BPFTRACE_CACHE_USER_SYMBOLS" },
	  "user symbols are kept per process image by exec generation" },
	{ "lazy_symbolication", CFG_NOOP, 0, 0, NULL, { "BPFTRACE_LAZY_SYMBOLICATION" },
	  "symbols are always resolved when printed" },
	{ "str_trunc_trailer", CFG_TEXT, 0, 0, NULL, { "BPFTRACE_STR_TRUNC_TRAILER" } },
};

/* BPF's license strings the kernel takes as GPL-compatible (the helpers the generated programs
 * call are GPL-only, so those are the licenses they can load under). */
/* In the order bpftrace lists them when it refuses a license. */
static const char *const gpl_licenses[] = {
	"Dual MIT/GPL", "Dual BSD/GPL", "Dual MPL/GPL", "GPL and additional rights", "GPL v2",
	"GPL", NULL,
};

/* The setting a key names: `stack_mode`, `STACK_MODE`, `BPFTRACE_STACK_MODE`; the other
 * `unstable_*` settings gate nothing here and come back as NULL with *unstable set. */
static const struct cfg_def *find_def(const char *key, bool *unstable)
{
	char low[64];
	size_t n = 0;

	*unstable = false;
	if (!strncasecmp(key, "BPFTRACE_", 9))
		key += 9;
	for (; key[n] && n + 1 < sizeof(low); n++)
		low[n] = (char)tolower((unsigned char)key[n]);
	low[n] = 0;
	for (size_t i = 0; i < DT_ARRAY_SIZE(defs); i++)
		if (!strcmp(defs[i].name, low))
			return &defs[i];
	/* The older names of two settings. */
	if (!strcmp(low, "strlen"))
		return &defs[0];
	if (!strcmp(low, "map_keys_max"))
		return &defs[1];
	*unstable = !strncmp(low, "unstable_", 9);
	return NULL;
}

/* A variable set empty is not given, but for a string setting, where empty is a value. */
static bool env_given(const struct cfg_def *def)
{
	for (size_t i = 0; i < DT_ARRAY_SIZE(def->env) && def->env[i]; i++)
		if (getenv(def->env[i]) && (*getenv(def->env[i]) || def->kind == CFG_TEXT))
			return true;
	return false;
}

static int word_index(const char *const *words, const char *v)
{
	for (int i = 0; words[i]; i++)
		if (!strcmp(words[i], v))
			return i;
	return -1;
}

/* A boolean as bpftrace takes one: true/false, 1/0 (also on/off, yes/no). */
static int parse_bool(const dt_config_item *it)
{
	static const char *const yes[] = { "true", "1", "on", "yes", NULL };
	static const char *const no[] = { "false", "0", "off", "no", NULL };

	if (word_index(yes, it->value) >= 0)
		return 1;
	if (word_index(no, it->value) >= 0)
		return 0;
	return -1;
}

static void apply(const struct cfg_def *def, const dt_config_item *it, int word, int b,
		  dt_session_opts *so)
{
	const char *name = def->name;

	/* The session's copy of str_trunc_trailer: the program's text goes when this returns. */
	static char *trailer;

	if (!strcmp(name, "max_strlen"))
		so->strlen = (uint32_t)it->ival;
	else if (!strcmp(name, "str_trunc_trailer")) {
		free(trailer);
		so->str_trunc_trailer = trailer = xstrdup(it->value);
	}
	else if (!strcmp(name, "max_map_keys"))
		so->map_keys_max = (uint32_t)it->ival;
	else if (!strcmp(name, "perf_rb_pages"))
		so->events_size = dt_events_ring_size((uint32_t)(so->perf_rb_pages = (uint32_t)it->ival));
	else if (!strcmp(name, "max_probes"))
		so->max_probes = (uint32_t)it->ival;
	else if (!strcmp(name, "log_size"))
		so->log_size = (uint32_t)it->ival;
	else if (!strcmp(name, "max_cat_bytes"))
		setenv("BPFTRACE_CAT_BYTES_MAX", it->value, 1); /* cat() reads it (loop.c) */
	else if (!strcmp(name, "cpp_demangle"))
		so->no_demangle = so->no_demangle || !b;
	else if (!strcmp(name, "stack_mode"))
		so->stack_mode = (dt_stack_mode)word; /* the words are in dt_stack_mode order */
	else if (!strcmp(name, "print_maps_on_exit"))
		so->no_print_maps = !b;
	else if (!strcmp(name, "missing_probes"))
		so->missing_probes = word == 0 ? DT_MISSING_ERROR
				     : word == 1 ? DT_MISSING_WARN : DT_MISSING_IGNORE;
	else if (!strcmp(name, "unstable_tseries"))
		so->unstable_tseries = word == 0 ? DT_UNSTABLE_ERROR
				       : word == 1 ? DT_UNSTABLE_WARN : DT_UNSTABLE_ENABLE;
	else if (!strcmp(name, "show_debug_info")) {
		/* bpftrace's debug info is a frame's file:line and its inline frames. */
		if (b)
			so->srcline = so->debug_info_at = true;
		else
			so->no_inline = true;
	}
}

int dt_config_apply(const dt_source *src, dt_session_opts *so, FILE *err, bool color)
{
	dt_arena *a = dt_arena_new();
	dt_diags *d = dt_diags_new(src);
	dt_diags *pd = dt_diags_new(src);
	dt_program *p = dt_parse(a, src, pd);
	int rc = 0;

	/* A program that does not parse is reported by its compilation, config block and all. */
	for (uint32_t i = 0; !dt_diags_error_count(pd) && i < p->nconfig; i++) {
		const dt_config_item *it = &p->config[i];
		bool unstable;
		const struct cfg_def *def = find_def(it->key, &unstable);
		int word = -1, b = -1;

		if (!def) {
			if (unstable && word_index(unstable_modes, it->value) >= 0)
				continue; /* no dwarftrace feature is unstable-gated */
			if (unstable) {
				dt_diag(d, DT_DIAG_ERROR, it->value_span, "%s: give error, warn "
					"or enable", it->key);
				continue;
			}
			dt_diag(d, DT_DIAG_ERROR, it->span, "%s: not a known configuration option",
				it->key);
			continue;
		}
		switch (def->kind) {
		case CFG_UINT:
			if (!it->is_int || it->ival < def->min || it->ival > def->max)
				dt_diag(d, DT_DIAG_ERROR, it->value_span, "%s: give a number from "
					"%llu to %llu", it->key, (unsigned long long)def->min,
					(unsigned long long)def->max);
			break;
		case CFG_BOOL:
			if ((b = parse_bool(it)) < 0)
				dt_diag(d, DT_DIAG_ERROR, it->value_span, "%s: give true or false",
					it->key);
			break;
		case CFG_ENUM:
			if ((word = word_index(def->words, it->value)) < 0) {
				dt_diag(d, DT_DIAG_ERROR, it->value_span, "%s: '%s' is not one of its "
					"values", it->key, it->value);
				dt_diag_hint(d, "%s: %s, %s or %s", def->name, def->words[0],
					     def->words[1], def->words[2]);
			}
			break;
		case CFG_STR:
			if (word_index(gpl_licenses, it->value) < 0) {
				char valid[160] = "";

				for (size_t i = 0; gpl_licenses[i]; i++)
					snprintf(valid + strlen(valid), sizeof(valid) - strlen(valid),
						 "%s%s", i ? ", " : "", gpl_licenses[i]);
				/* bpftrace's words, then why. */
				dt_diag(d, DT_DIAG_ERROR, it->value_span, "Invalid value for license. "
					"Found: %s. Valid values: %s. Read more about BPF programs and "
					"licensing: https://docs.kernel.org/bpf/bpf_licensing.html"
					"#using-bpf-programs-in-the-linux-kernel", it->value, valid);
				dt_diag_hint(d, "the programs dwarftrace generates call GPL-only BPF "
						"helpers");
			}
			break;
		case CFG_TEXT:
			break;
		case CFG_NOOP:
			if (!so->no_warnings)
				dt_diag(d, DT_DIAG_WARNING, it->span, "%s has no effect in dwarftrace: "
					"%s", def->name, def->noop_why);
			break;
		}
		if (dt_diags_error_count(d) || env_given(def))
			continue;
		apply(def, it, word, b, so);
	}
	/* Unset by the block and the environment: a program in bpftrace's current language gets
	 * its default, `error` (bpftrace 0.24 made any attach point missing an error); one in
	 * 0.17's keeps 0.17's rule (a probe with others skips it with a warning). */
	if (so->missing_probes == DT_MISSING_DEFAULT && !dt_diags_error_count(pd) &&
	    dt_program_current(p))
		so->missing_probes = DT_MISSING_ERROR;
	/* Likewise its max_strlen, 1024 (0.17's: 64). */
	if (!so->strlen && !dt_diags_error_count(pd) && dt_program_current(p))
		so->strlen = DT_STRLEN_CURRENT;
	if (dt_diags_error_count(d))
		rc = -EINVAL;
	dt_diags_print(d, err, color);
	dt_diags_free(d);
	dt_diags_free(pd);
	dt_arena_free(a);
	return rc;
}

uint32_t dt_config_values(const dt_session_opts *so, dt_config_value *out)
{
	static const char *const missing[] = {
		[DT_MISSING_DEFAULT] = "warn", [DT_MISSING_ERROR] = "error",
		[DT_MISSING_WARN] = "warn", [DT_MISSING_IGNORE] = "ignore",
	};
	uint32_t n = 0;

	out[n++] = (dt_config_value){ "max_strlen", NULL, so->strlen ? so->strlen : DT_STRLEN };
	out[n++] = (dt_config_value){ "max_map_keys", NULL,
				      so->map_keys_max ? so->map_keys_max : DT_MAP_MAX_ENTRIES };
	out[n++] = (dt_config_value){ "log_size", NULL, so->log_size ? so->log_size : 1u << 18 };
	out[n++] = (dt_config_value){ "cpp_demangle", NULL, !so->no_demangle, true };
	out[n++] = (dt_config_value){ "stack_mode", dt_stack_mode_name(so->stack_mode) };
	out[n++] = (dt_config_value){ "print_maps_on_exit", NULL, !so->no_print_maps, true };
	out[n++] = (dt_config_value){ "missing_probes", missing[so->missing_probes] };
	out[n++] = (dt_config_value){ "show_debug_info", NULL, so->srcline, true };
	out[n++] = (dt_config_value){ "str_trunc_trailer",
				      so->str_trunc_trailer ? so->str_trunc_trailer : ".." };
	return n;
}
