/* output_internal.h — what output/'s own files (output.c, maps.c, format.c, profile.c,
 * flamegraph.c) share and its unit tests reach: a growable string buffer, the dt_out object
 * itself, and the renderers that turn one value, one stack, one histogram or one printf event into
 * bpftrace's text or JSON. Map printing is split so it can be tested without the kernel:
 * dt_out_print_map reads a BPF map into flat arrays (maps.c) and hands them to
 * dt_out_print_entries (output.h). Nobody outside output/ and its tests includes this. */
#ifndef DT_OUTPUT_INTERNAL_H
#define DT_OUTPUT_INTERNAL_H

#include "output/output.h"

#include <stdarg.h>

/* ---------------------------------------------------------------- string buffer */

/* A NUL-terminated growable string; `s` is NULL until the first write. Free with free(b.s). */
typedef struct dt_sbuf {
	char *s;
	size_t n, cap;
} dt_sbuf;

void dt_sb_putn(dt_sbuf *b, const char *s, size_t n);
void dt_sb_puts(dt_sbuf *b, const char *s);
void dt_sb_putc(dt_sbuf *b, char c);
void dt_sb_printf(dt_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dt_sb_vprintf(dt_sbuf *b, const char *fmt, va_list ap);
/* The contents ("" when empty); valid until the next write. */
const char *dt_sb_str(const dt_sbuf *b);
void dt_sb_reset(dt_sbuf *b);

/* JSON string contents (no quotes): ", \, control characters escaped; valid UTF-8 kept; bytes
 * that are not valid UTF-8 become \u00XX so the line always parses. */
void dt_json_escape(dt_sbuf *b, const char *s, size_t n);

/* ---------------------------------------------------------------- the output object */

struct dt_out {
	FILE *f;
	FILE *notice;
	dt_out_format format;
	bool json_frames, stacks_apart, debug_info_at;
	dt_symbolizer *sym;
	dt_stack_frames_fn stack_frames;
	void *stack_ctx;
	int ncpus;
	dt_sbuf line; /* scratch for one record, reused */
	int werr;     /* errno of the first write that failed (dt_out_error), 0 while none has */
	bool current; /* dt_out_set_current */
	char *trailer; /* dt_out_opts.str_trunc_trailer, never NULL */
	bool warned_no_tables; /* no_tables_warning said its piece */
};

/* ---------------------------------------------------------------- renderers (format.c) */

/* How a value is rendered: text as bpftrace prints a value, text as it prints a map key (stacks
 * are indented by 4 there, by 8 as values), or a JSON value (strings and symbols quoted, stacks as
 * arrays of frame strings, tuples as arrays). */
typedef enum dt_fmt_ctx { DT_FMT_VALUE, DT_FMT_KEY, DT_FMT_JSON } dt_fmt_ctx;

/* Signed or unsigned integer of `size` bytes (1, 2, 4, 8) at `p`, widened to 64 bits. */
int64_t dt_fmt_read_int(const void *p, uint32_t size, bool is_signed);
/* Integer v of type t (INT, PTR): its enumerator's name when t is an enum's (not in JSON), a
 * pointer in hex for a program in the current language (dt_out.current), else the number,
 * signed or not as t is. */
void dt_fmt_int(dt_out *o, dt_sbuf *b, const dt_type *t, int64_t v, bool json);

/* printf's %gr: GFP flags as the kernel's tracepoints name them (gfp.c). */
void dt_fmt_gfp(dt_sbuf *b, uint64_t flags);

/* One non-aggregation value (int, string, stack, ksym, usym, tuple). */
void dt_fmt_value(dt_out *o, dt_sbuf *b, const dt_type *t, const void *data, dt_fmt_ctx ctx);
/* A stack the way bpftrace prints it: "\n" then one line per frame (indent spaces + sym+off in
 * the default mode; "\t%lx sym+off (module)" in perf mode; the address in raw mode); "" when the
 * frames cannot be read. With DT_FMT_JSON: a JSON array of frame strings. */
void dt_fmt_stack(dt_out *o, dt_sbuf *b, const dt_type *t, const struct dt_stack_ref *ref,
		  dt_fmt_ctx ctx);
/* How a ustack_dwarf walk that did not reach the end of the stack ended, as the stack's last
 * line in every format: "[truncated at depth 127]", "[truncated: tail call limit]",
 * "[stopped: no tables yet]", "[stopped: stack read failed]", ... False (buf untouched) for a
 * complete walk and for stacks whose end is not known (ustack, kstack). */
bool dt_fmt_stack_end(const dt_type *t, const struct dt_stack_ref *ref, char *buf, size_t n);
/* hist()/lhist() bodies from per-bucket counts (bpftrace's trimming, labels and 52-column bars);
 * text ends with a newline per bucket, JSON is an array of {min,max,count} objects. */
void dt_fmt_hist(dt_sbuf *b, const uint64_t *counts, uint32_t n, uint32_t bits, uint64_t div,
		 bool json);
void dt_fmt_lhist(dt_sbuf *b, const uint64_t *counts, uint32_t n, int64_t min, int64_t max,
		  int64_t step, bool json);
/* printf: C-like conversions with bpftrace's argument handling (integers are passed as 64-bit and
 * narrowed by the conversion's length modifier, %s of symbols/stacks renders them). Arguments
 * missing from a short payload print as nothing; a malformed spec is copied literally. */
void dt_fmt_printf(dt_out *o, dt_sbuf *b, const char *fmt, const dt_type *args, const void *data,
		   size_t len);

/* ---------------------------------------------------------------- maps (maps.c) */

/* Reads a whole map into flat arrays as dt_out_print_entries takes them (values per possible CPU
 * for per-CPU maps: *ncpus says how many). 0 with the arrays malloc'd, or -errno. */
int dt_out_read_map(dt_out *o, const dt_map_sym *m, int map_fd, dt_map_layout *l, void **keys,
		    void **vals, size_t *n, int *ncpus);
/* A count/sum/int/min/max value combined over `ncpu` per-CPU copies `stride` bytes apart. */
int64_t dt_out_plain_value(const dt_type *t, const uint8_t *val, size_t ncpu, size_t stride);
/* Number of hist buckets of a map value type (dt_hist_nbuckets, or lhist's 2 + (max-min)/step). */
uint32_t dt_out_nbuckets(const dt_type *t);

/* ---------------------------------------------------------------- profiles (profile.c) */

/* Whether a map key (one element or a tuple) holds a stack. */
bool dt_prof_key_has_stack(const dt_type *key);
/* The folded form of one key: other key parts first, then user stacks and kernel stacks, each
 * from the outermost frame to the leaf, joined with ';'. Kernel frames end in "_[k]" and inlined
 * ones in "_[i]" (flamegraph.pl's and inferno's annotations). */
void dt_prof_folded_key(dt_out *o, dt_sbuf *b, const dt_type *key, const uint8_t *data);

/* What a flame graph says about itself. */
typedef struct dt_fg_head {
	const char *title;      /* the program */
	const char *subtitle;   /* map, target, rate, duration, total */
	const char *unit;       /* what a value counts: "samples" */
	uint64_t unit_ns;       /* CPU time of one unit (a profile: period), 0 = not time */
} dt_fg_head;

/* Writes folded stacks ("a;b;c") with their values as a self-contained interactive SVG flame
 * graph (flamegraph.c) under h's title and subtitle, with a details line that shows the total,
 * then the hovered frame's count, time and share, and the zoomed frame's when the pointer
 * leaves. 0 or -EIO. */
int dt_flamegraph_write(FILE *f, const dt_fg_head *h, const char *const *folded,
			const int64_t *values, size_t n);

#endif
