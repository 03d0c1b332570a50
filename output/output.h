/* output.h — what the session asks of output/: how values, printf events and maps become text,
 * JSON or folded stacks, and how stack-keyed maps become pprof or flame-graph files. The session
 * owns the maps and the stack sources (it hands in a dt_stack_frames_fn); output owns formatting,
 * and names addresses through the symbolizer (symbols/symbols.h) it is given. */
#ifndef DT_OUTPUT_H
#define DT_OUTPUT_H

#include "lang/lang.h"
#include "bpf-lib/dt_abi.h"
#include "symbols/symbols.h"

#include <stdio.h>

/* ---------------------------------------------------------------- stacks */

/* How output gets the frames behind a struct dt_stack_ref: the session reads the stack-trace map
 * of (kind, depth) or the DWARF walker's frames. Returns the number of frames (>= 0), or -errno. */
typedef int (*dt_stack_frames_fn)(void *ctx, const dt_type *stack_type,
				  const struct dt_stack_ref *ref, uint64_t *frames, uint32_t max);

/* ---------------------------------------------------------------- output */

/* The data formats. TEXT is bpftrace's. JSON is NDJSON: one object per line, bpftrace's shapes
 * (attached_probes, printf, map, hist, ...), no blank lines. FOLDED: the data stream holds only
 * `frames count` lines of maps keyed by stacks; what that format cannot carry (printf, other maps,
 * the "Attaching" banner) goes to the notice stream in TEXT. */
typedef enum dt_out_format { DT_OUT_TEXT, DT_OUT_JSON, DT_OUT_FOLDED } dt_out_format;

typedef struct dt_out dt_out;

typedef struct dt_out_opts {
	FILE *file;             /* the data (-o FILE or stdout) */
	FILE *notice;           /* banners, and with FOLDED what is not folded (NULL = stderr) */
	dt_out_format format;
	/* JSON: stacks as arrays of frame objects {"addr", "func", "offset", "module", ...} and maps
	 * keyed by a stack as {"@m": [{"key": ..., "value": ...}, ...]} (a JSON object key cannot
	 * hold an array). Off: bpftrace's strings. */
	bool json_frames;
	/* User frames in bpftrace's show_debug_info shapes: `func+off@file:line`, `[inlined]
	 * func@file:line`, in perf mode `func (inlined)`. Off: dt_sym_frame_text's. */
	bool debug_info_at;
	/* Keep one entry per stack as bpftrace does, even where their printed forms are equal. */
	bool stacks_apart;
	dt_symbolizer *sym;
	dt_stack_frames_fn stack_frames;
	void *stack_ctx;
	int ncpus;              /* possible CPUs: per-CPU values are arrays of this many */
	/* Printed after a string that fills its bytes with no NUL (it was cut at max_strlen):
	 * bpftrace's str_trunc_trailer. NULL: ".."; "": nothing. */
	const char *str_trunc_trailer;
} dt_out_opts;

dt_out *dt_out_new(const dt_out_opts *o);
void dt_out_free(dt_out *o);
/* Values print as current bpftrace prints them (the program is in its current language,
 * dt_program_current) where it differs from 0.17: JSON structs without inner spaces. */
void dt_out_set_current(dt_out *o, bool current);

/* A printf event: the format and the payload laid out as `args` (a tuple, possibly empty). */
void dt_out_printf(dt_out *o, const char *fmt, const dt_type *args, const void *data, size_t len);
/* The text printf would print, malloc'd (cat()'s path, system()'s command). */
char *dt_out_sprintf(dt_out *o, const char *fmt, const dt_type *args, const void *data, size_t len);
/* `n` bytes of text as they are (a file cat() read, what system() ran printed); in JSON an
 * object of `type` ("cat", "syscall") with the text as data. */
void dt_out_text(dt_out *o, const char *type, const char *s, size_t n);
/* A join() event's payload (struct dt_ev_join_hdr and its strings): the strings with `delim`
 * between them, a line in TEXT, {"type": "join", …} in JSON. */
void dt_out_join(dt_out *o, const char *delim, const void *data, size_t len);
/* print(value) and the text of one value (used for keys too). */
void dt_out_value(dt_out *o, const dt_type *t, const void *data);
/* time(fmt): the current wall-clock time through strftime. */
void dt_out_time(dt_out *o, const char *fmt);
/* A message from the runtime that belongs in the output stream (bpftrace's "Attaching 2 probes..."). */
void dt_out_message(dt_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "Attaching N probes..." / {"type": "attached_probes", ...}, bpftrace's shapes. */
void dt_out_attached(dt_out *o, uint64_t nprobes);
/* -k's report of a helper that failed, in JSON: {"type": "helper_error", …} on the output,
 * true; false in the other formats, where the caller warns on its error stream. With `msg`
 * (the current language), current bpftrace's shape: the error's words and the script's file
 * name too; without, 0.17's. */
bool dt_out_helper_error(dt_out *o, const char *helper, int64_t retcode, const char *msg,
			 const char *file, unsigned line, unsigned col);
/* A run-time warning at a place in the script (division by 0), in JSON: {"type":
 * "runtime_error", "msg", "filename", "line", "col"} on the output (bpftrace's), true; false in
 * the other formats, where the caller warns on its error stream. */
bool dt_out_runtime_error(dt_out *o, const char *msg, const char *file, unsigned line,
			  unsigned col);
/* "Lost N events" / {"type": "lost_events", ...}. */
void dt_out_lost_events(dt_out *o, uint64_t lost);
/* What bpftrace prints before the maps at exit: two newlines in TEXT; nothing in JSON (NDJSON
 * has no blank lines) or FOLDED. */
void dt_out_maps_start(dt_out *o);

/* Reads a whole script map from the kernel (fd) and prints it the way bpftrace does: entries
 * sorted by value (ascending, so the biggest is last) or by key for hist/lhist, `@name[key]: value`
 * lines, stacks one frame per line, histograms with bpftrace's bucket labels and @ bars, avg/stats
 * combined across CPUs. top: only the last `top` entries (0 = all); div: divide values. A map with
 * no entries prints what bpftrace 0.17 prints: an empty line ("\n\n" for avg/stats) in text,
 * nothing in JSON; but with `call` (print()'s, not the maps at exit) a scalar map of the current
 * language (dt_map_sym.current) but hist/lhist/tseries prints its zero value, as bpftrace's print()
 * now does. Stats print as 0.17's `count N, average A, total T`, or in the current language as
 * bpftrace's record `{ .count = N, .average = A, .total = T }`. 0 or -errno. */
int dt_out_print_map(dt_out *o, const dt_map_sym *m, int map_fd, uint64_t top, uint64_t div,
		     bool call);
/* The same from entries already in memory (no kernel): `keys` holds n keys of layout->key_size
 * bytes and `values` n values of layout->value_size bytes (times o->ncpus, each rounded up to 8
 * bytes, for per-CPU maps), both in the map's iteration order. 0 or -errno. */
int dt_out_print_entries(dt_out *o, const dt_map_sym *m, const dt_map_layout *l, const void *keys,
			 const void *values, size_t n, uint64_t top, uint64_t div);

/* Profile files written at exit from maps whose key holds a stack (the value summed over other
 * key parts; maps with hist/lhist/avg/stats values are skipped). */
typedef enum dt_profile_kind { DT_PROFILE_PPROF, DT_PROFILE_FLAMEGRAPH } dt_profile_kind;

/* One map offered to a profile, with what the session knows of it. */
typedef struct dt_profile_map {
	const dt_map_sym *sym;
	int fd;
	/* Every probe that writes the map is profile: at this one period (ns): each count() is
	 * that much CPU time (pprof's cpu/nanoseconds, the flame graph's CPU time). 0: unknown. */
	uint64_t period_ns;
	const char *rate;       /* that probe as written ("profile:hz:99"), or NULL */
} dt_profile_map;

/* What a profile says about its run, so that a file read later explains itself. */
typedef struct dt_profile_info {
	const char *program;    /* the program text, or the script's name */
	const char *target;     /* "-c CMD" / "-p PID", or NULL (the whole system) */
	uint64_t start_unix_ns; /* wall-clock start of tracing */
	uint64_t duration_ns;
} dt_profile_info;

/* pprof: every stack map in one profile, its sample types "samples/count" for a count() map
 * (the map's name for another value, or beside other maps) and "cpu/nanoseconds" for a map of
 * profile: samples at one period (then also the profile's period and period type), the start
 * time, duration and the program as a comment. Flame graph: one map per SVG, drawn under a
 * title (the program), a subtitle (map, target, rate, duration, total) and a details line;
 * `map` (--flamegraph-map) names the one to draw; without it, the first stack map goes to
 * `path` and each other one to a file of its own (PATH with "-NAME" before the extension), and
 * *written (if not NULL) gets a malloc'd, comma-separated list of the files written. 0 or
 * -errno (-ENOENT: `map` names no stack map). */
int dt_out_write_profile(dt_out *o, dt_profile_kind kind, const char *path,
			 const dt_profile_map *maps, size_t n, const dt_profile_info *info,
			 const char *map, char **written);

/* Flushes the underlying FILE; a failure is kept for dt_out_error. Call it right after writing
 * to the FILE directly, so that errno still tells why such a write failed. */
void dt_out_flush(dt_out *o);
/* 0 while every write of the output succeeded, else -errno of the first that failed (-EIO when
 * only the FILE's error flag tells). Write errors do not stop the output: the caller decides. */
int dt_out_error(const dt_out *o);

#endif
