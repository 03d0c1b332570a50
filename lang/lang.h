/* lang.h — the public face of the language front end. It owns: the per-compilation arena, sources
 * and spans, diagnostics, the AST (every node has a span), the type system and the byte layouts of
 * everything a script stores (map keys and values, event payloads), and the passes that turn text
 * into a checked program: lex, parse, check (names, types, probe validation). It knows nothing of
 * LLVM or libbpf: codegen/ turns a checked program into BPF, runtime/ loads and prints it, and both
 * read layouts from here so there is one definition of every byte. */
#ifndef DT_LANG_H
#define DT_LANG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---------------------------------------------------------------- arena */

/* One arena per compilation: AST, types and interned strings live here; one call frees them. */
typedef struct dt_arena dt_arena;
dt_arena *dt_arena_new(void);
void dt_arena_free(dt_arena *a);
/* Zeroed, 16-byte aligned memory that lives until dt_arena_free. Never NULL. */
void *dt_arena_alloc(dt_arena *a, size_t n);
char *dt_arena_strndup(dt_arena *a, const char *s, size_t n);
char *dt_arena_printf(dt_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---------------------------------------------------------------- sources, spans, diagnostics */

/* A program text. `name` is what diagnostics print before the line: a path, DT_SOURCE_STDIN or
 * "repl". The text is not copied: it must outlive every AST built from it. */
typedef struct dt_source {
	const char *name;
	const char *text;
	size_t len;
	/* The first `hidden` bytes (no newline among them) are a wrapper the user did not type —
	 * the REPL runs statements as `BEGIN { … }` — so diagnostics neither show nor count them. */
	uint32_t hidden;
	/* Positional parameters: `$N` inside an attach point (`interval:ms:$1`, `BEG$1`) is
	 * replaced by the Nth while parsing, as bpftrace does. None: `$N` there is an error. */
	const char **params;
	uint32_t nparams;
	/* Files brought in by `import` (dt_source_imports): their texts follow the root script's
	 * in `text`, each from a line of its own, in the order they were found. Diagnostics at an
	 * offset inside one name that file and count lines from its start. */
	const struct dt_source_file *files;
	uint32_t nfiles;
	/* C files brought in by `import` (.h headers, .bpf.c sources), in the order found: the
	 * type source compiles them (dt_check_opts.cdefs), codegen links the .bpf.c ones. */
	const struct dt_source_cimport *cimports;
	uint32_t ncimports;
} dt_source;

/* The name of a program that is no file — given with -e, or read from stdin (`-`) — in messages:
 * "stdin", as bpftrace names both (`stdin:1:9: ERROR: …`). */
#define DT_SOURCE_STDIN "stdin"

/* Whether SRC's text is a file's (its name a path), not -e's, stdin's or the REPL's. */
bool dt_source_is_file(const dt_source *src);


/* One imported file in a dt_source's text. */
typedef struct dt_source_file {
	const char *name; /* the path as resolved: the importer's directory joined with the import's */
	uint32_t off;     /* where its text starts */
	uint32_t line0;   /* the newlines of the text before it */
} dt_source_file;

/* A byte range [off, off+len) of a dt_source. */
typedef struct dt_span {
	uint32_t off, len;
} dt_span;

/* One imported C file. */
typedef enum dt_cimport_kind {
	DT_CIMPORT_HEADER, /* .h: its types, enums and macros join the script's C definitions */
	DT_CIMPORT_BPF_C,  /* .bpf.c: compiled to BPF; its functions are callable by name */
} dt_cimport_kind;

typedef struct dt_source_cimport {
	dt_cimport_kind kind;
	const char *name; /* as resolved (or the standard library's name, "stdlib/test/test.bpf.c") */
	const char *path; /* its real path; NULL for a file of the standard library */
	const char *text; /* a standard library file's text (len bytes); NULL for a file on disk */
	size_t len;
	dt_span at;       /* the import's PATH string: where diagnostics about it point */
} dt_source_cimport;

/* A function of an imported .bpf.c, as the type source read it (dt_check_opts.extern_fn). */
typedef struct dt_extern_fn {
	const char *name;
	const char *file;              /* the .bpf.c's name as imported */
	const struct dt_type *ret;     /* void: no value */
	const struct dt_type **params;
	const char **pnames;
	uint32_t nparams;
	bool variadic;
} dt_extern_fn;

/* The parameters after `--`: `--name[=value]` is a named one (getopt()), the rest positional. A
 * stable partition moves the named ones to the front, each kind keeping its order; their count. */
uint32_t dt_params_split(const char **v, uint32_t n);

/* 1-based line and column of a byte offset (counted in the imported file holding it, if any). */
void dt_source_linecol(const dt_source *src, uint32_t off, unsigned *line, unsigned *col);
/* The imported file holding offset `off`, or NULL when it is in the root script. */
const dt_source_file *dt_source_file_at(const dt_source *src, uint32_t off);
/* The name diagnostics print for offset `off`: its imported file's, else the source's. */
const char *dt_source_name_at(const dt_source *src, uint32_t off);

typedef enum dt_diag_level { DT_DIAG_ERROR, DT_DIAG_WARNING, DT_DIAG_NOTE } dt_diag_level;

/* bpftrace's settings for its unstable features (config `unstable_NAME`). */
typedef enum dt_unstable { DT_UNSTABLE_WARN, DT_UNSTABLE_ENABLE, DT_UNSTABLE_ERROR } dt_unstable;

/* Diagnostics accumulate; the passes keep going where they safely can so one run reports several
 * errors. They print in bpftrace's shape (dt_diag_render), each with an optional `HINT:` line. */
typedef struct dt_diags dt_diags;
dt_diags *dt_diags_new(const dt_source *src);
void dt_diags_free(dt_diags *d);
void dt_diag(dt_diags *d, dt_diag_level lvl, dt_span at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A diagnostic with no place in the source (a named parameter after `--` that no getopt() reads,
 * the use of an unstable feature): printed as bpftrace prints its own, `ERROR: message` (or
 * `WARNING: `) and `HINT: hint`, without a place or an excerpt. */
void dt_diag_unplaced(dt_diags *d, dt_diag_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Attaches a hint ("did you mean 'comm'?") to the most recent diagnostic. */
void dt_diag_hint(dt_diags *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends what `from` collected (in order, hints kept) to `to`, and frees `from`: a part of the
 * compiler run in another thread collects its own (codegen.c). */
void dt_diags_move(dt_diags *to, dt_diags *from);
/* The diags' source (diagnostics carry spans into it). */
const dt_source *dt_diags_source(const dt_diags *d);
int dt_diags_error_count(const dt_diags *d);
/* True when an error sits at the end of the source (the text stopped inside a block, string,
 * comment or call): the REPL then reads another line instead of reporting it. */
bool dt_diags_error_at_end(const dt_diags *d);
void dt_diags_print(const dt_diags *d, FILE *out, bool color);
/* Prints one message about span `at` of `src` in bpftrace's shape: on one line,
 * `FILE:L:C-E: LEVEL: msg` (E just past the span), the line and `~` under the span (a tab shown
 * as 4 spaces); over several lines, `FILE:L1-L2: LEVEL: msg` and every line of it. The compiler's
 * diagnostics (dt_diags_print) and the run-time ones (errorf, helper errors) both print so. */
void dt_diag_render(FILE *out, const dt_source *src, dt_span at, dt_diag_level lvl,
		    const char *msg, bool color);
/* Forgets the warnings and notes collected so far (--no-warnings); errors stay. */
void dt_diags_drop_warnings(dt_diags *d);

/* ---------------------------------------------------------------- types */

typedef enum dt_type_kind {
	DT_T_NONE,   /* not yet known / error recovery: never reaches codegen */
	DT_T_VOID,   /* statements, functions with no value (printf, clear, …) */
	DT_T_INT,    /* integer; arithmetic is 64-bit, `size` is the storage size (1,2,4,8) */
	DT_T_STR,    /* NUL-padded char array of `size` bytes (DT_STRLEN by default) */
	DT_T_STACK,  /* a stack reference (struct dt_stack_ref, 16 bytes), see `stack` */
	DT_T_TUPLE,  /* ordered elements at fixed offsets: map keys with several parts, printf args;
	              * a record when its elements are named (tuple.names) */
	DT_T_KSYM,   /* u64 kernel address printed as a symbol (ksym(), func in kprobes) */
	DT_T_USYM,   /* u64 user address + u32 pid, printed as a symbol (usym(), func in uprobes) */
	DT_T_TIMESTAMP, /* strftime(): u64 ns since boot, printed as wall-clock time with ts.fmt */
	DT_T_RECORD, /* a tracepoint's `args`: only valid as the base of a field access */
	DT_T_USERNAME, /* u64 uid printed as the user's name (`username`) */
	DT_T_BUF,    /* buf(): a u8 length, then `size - 1` bytes of data (printed escaped, %r) */
	DT_T_INET,   /* ntop(): u64 address family, then 16 bytes of address (printed by inet_ntop) */
	DT_T_CGROUP_PATH, /* cgroup_path(): u64 cgroup id, printed as its paths in the hierarchies */
	DT_T_PTR,    /* a C pointer: a u64 address; ptr.to (NULL: void) and its address space */
	DT_T_CSTRUCT, /* a C struct or union: members at offsets, from BTF (or, later, clang) */
	DT_T_ARRAY,  /* a C array of array.n elements (char arrays are read as strings) */
	DT_T_MACADDR, /* macaddr(): 6 bytes, printed as XX:XX:XX:XX:XX:XX */
	DT_T_STRERROR, /* strerror(), signal_name(), syscall_name(): a u64 number printed as its
	                * name (numtext.table says which): the C library's text of an errno or a
	                * signal, or the x86-64 system call's name */
	DT_T_BOOL,   /* true/false, (bool)x: a u64 0 or 1 (one byte in an array, bool[N]), printed
		      * as false/true; a condition */
	/* Map values produced by aggregation functions. */
	DT_T_COUNT, DT_T_SUM, DT_T_AVG, DT_T_MIN, DT_T_MAX, DT_T_STATS, DT_T_HIST, DT_T_LHIST,
	DT_T_TSERIES, /* tseries(v, interval_ns, n[, agg]): a ring of n intervals per key */
} dt_type_kind;

/* How tseries() combines the values of one interval. */
typedef enum dt_tseries_agg {
	DT_TS_LAST, DT_TS_AVG, DT_TS_MIN, DT_TS_MAX, DT_TS_SUM,
} dt_tseries_agg;

typedef enum dt_stack_kind {
	DT_STACK_KERNEL,     /* kstack: bpf_get_stackid into a stack-trace map */
	DT_STACK_USER_FP,    /* ustack: frame-pointer walk by the kernel (bpf_get_stackid, BPF_F_USER_STACK) */
	DT_STACK_USER_DWARF, /* ustack_dwarf: the bpf-lib DWARF walker */
} dt_stack_kind;

typedef enum dt_stack_mode {
	DT_STACKMODE_DEFAULT, /* bpftrace: `sym+off` one per line, indented */
	DT_STACKMODE_PERF,    /* `addr sym+off (module)` */
	DT_STACKMODE_RAW,     /* addresses only */
	DT_STACKMODE_BUILD_ID, /* user stacks: `<build id> 0x<file offset>` per frame */
} dt_stack_mode;

/* Default max_strlen: the characters str() keeps of a string (bpftrace 0.17's default). str()
 * reads one byte more, so a string that fills all DT_STRLEN bytes (no NUL) was cut and prints
 * with the str_trunc_trailer, as bpftrace's. */
#define DT_STRLEN 64
/* Current bpftrace's default max_strlen: a program in the current language (dt_program_current)
 * takes it when neither its config block, BPFTRACE_MAX_STRLEN nor a flag sets one. */
#define DT_STRLEN_CURRENT 1024
/* The largest max_strlen: a probe's $variables may hold two such strings, and they must fit a
 * split probe's per-CPU frame (codegen.h's dt_cg_frame_size, under the kernel's 32 KiB). */
#define DT_MAX_STRLEN 14336
#define DT_STACK_DEFAULT_DEPTH 127 /* kstack/ustack/ustack_dwarf without an argument */
#define DT_STACK_MAX_DEPTH 1024
/* argN reads the registers x86-64 passes integer arguments in: arg0 … arg5 (arg6 on are on the
 * stack; bpftrace refuses them too). */
#define DT_ARG_REGS 6
/* A USDT probe has at most 12 arguments (<sys/sdt.h>): arg0 … arg11. */
#define DT_USDT_MAX_ARGS 12

/* What a script may build, checked by dt_check with a diagnostic at the place that exceeds it.
 * The BPF side builds keys, values and events in a per-CPU scratch area of fixed size
 * (codegen.h's DT_SCRATCH_SIZE holds a statement's largest key, value and event together), so
 * the sizes are bounded; every map is a file descriptor and DT_MAP_MAX_ENTRIES preallocated
 * elements of kernel memory, so their number is too. */
#define DT_MAX_VALUE_SIZE 1024    /* bytes of any value: a string, a tuple, a map value */
#define DT_MAX_KEY_SIZE 2048      /* bytes of a map key (the whole tuple of a multi-part key) */
#define DT_MAX_VARS_SIZE 2048     /* bytes of all the $variables of one probe */
#define DT_MAX_EVENT_SIZE 2048    /* bytes of the values one printf() sends */
#define DT_MAX_MAPS 4096          /* maps in one script */

/* Those sizes for strings of `strlen` bytes (0: DT_STRLEN): each is raised, when max_strlen is
 * large, to hold two such strings and a little more (a map's key and value, a for loop's
 * (key, value) tuple, a tuple with a string in it). */
typedef struct dt_limits {
	uint32_t value, key, vars, event;
} dt_limits;
dt_limits dt_limits_of(uint32_t strlen);

typedef struct dt_type dt_type;
typedef struct dt_tp_field dt_tp_field;
typedef struct dt_member dt_member;

/* Where a pointer points: which bpf_probe_read_* reads through it. NONE means the probe's own
 * space (user in uprobes, kernel elsewhere), as bpftrace decides for casts of integers. */
typedef enum dt_addrspace { DT_AS_NONE, DT_AS_KERNEL, DT_AS_USER } dt_addrspace;

/* A C enum's enumerators: an integer of an enum type prints by name (bpftrace's enum
 * symbolization), in text output and under printf's %s. */
typedef struct dt_enum {
	const char *name; /* "enum Foo"; an anonymous enum has a name of its own, never "" */
	uint32_t n;
	const char **names;
	const int64_t *values;
} dt_enum;

/* What the number of a DT_T_STRERROR names. */
typedef enum dt_numtext { DT_NUMTEXT_ERRNO, DT_NUMTEXT_SIGNAL, DT_NUMTEXT_SYSCALL } dt_numtext;

struct dt_type {
	dt_type_kind kind;
	uint32_t size;  /* storage bytes (key/value/event); 0 for VOID/NONE/RECORD */
	uint32_t align; /* storage alignment: 1 or 8 */
	bool is_signed; /* INT, SUM, MIN, MAX, AVG, STATS: how to print and compare */
	/* INT: a C floating-point value (float, double): its bytes, unsigned; it prints as `null`
	 * (bpftrace's none type, which it makes of floats). */
	bool is_float;
	/* INT: the enum it is a value of (an enumerator, a cast to an enum, a member of enum
	 * type), else NULL. Arithmetic gives a plain integer. */
	const dt_enum *enm;
	union {
		struct {
			dt_stack_kind kind;
			dt_stack_mode mode;
			uint32_t depth;
		} stack;
		struct {
			uint32_t n;
			dt_type **elems;
			uint32_t *offsets; /* byte offset of each element */
			/* A record (`(color="green", size=2)`): each element's name; NULL in a
			 * tuple. Records of the same names in another order unify (by name). */
			const char **names;
		} tuple;
		struct {
			int64_t min, max, step; /* lhist(v, min, max, step) */
		} lhist;
		struct {
			uint32_t bits; /* hist(v, k): 2^k buckets per power of 2, 0..5 */
		} hist;
		struct {
			uint64_t interval; /* ns per interval */
			uint64_t n;        /* intervals kept */
			int agg;           /* dt_tseries_agg */
			bool dummy_ts;     /* BPFTRACE_DUMMY_TS_MAP: the call's args[4] is the time */
			bool is_unsigned;  /* the first value's type: the graph's axis stays >= 0 */
		} tseries;
		struct {
			const char *fmt; /* strftime's format (bpftrace's %f: microseconds) */
		} ts;
		struct {
			dt_numtext table;
		} numtext;
		struct {
			const char *subsys, *event; /* tracepoint of the record */
			dt_tp_field *fields;
			uint32_t nfields;
		} record;
		struct {
			const dt_type *to; /* NULL: void * */
			dt_addrspace as;
		} ptr;
		struct {
			const char *name;  /* "struct task_struct", "union bpf_attr" */
			dt_member *members;
			uint32_t n;
			bool is_union;
			/* False for a struct named through a pointer and not looked into yet: its
			 * members (and size) are fetched from the type source on first use. */
			bool complete;
			/* A uprobe's whole `args` (bpftrace 0.19's, no 0.17 program has one): it
			 * prints as current bpftrace prints it in every program, pointers in hex
			 * and the value's shape in a key. */
			bool print_current;
		} cstruct;
		struct {
			const dt_type *elem;
			uint32_t n;
		} array;
	};
};

/* A member of a C struct or union. A bitfield is bit_size bits starting bit_off bits after
 * `offset` (bit_off < 8); bit_size 0 is an ordinary member. An anonymous struct or union member
 * has name "" and its members are found through it. */
struct dt_member {
	const char *name;
	const dt_type *type;
	uint32_t offset;
	uint8_t bit_off, bit_size;
};

/* A tracepoint format field, from tracefs `events/SUBSYS/EVENT/format`. */
struct dt_tp_field {
	const char *name;
	const char *ctype;   /* as written in the format file, e.g. "const char *" */
	uint32_t offset, size;
	bool is_signed;
	bool is_data_loc;    /* __data_loc char[]: a (u16 len << 16 | u16 off) locator */
	bool is_array;       /* char comm[16] and the like */
	bool is_string;      /* char arrays, __data_loc char[], and `char *` (user or kernel pointer) */
};

/* Shared singletons for the simple types (never freed); composite types come from the arena. */
const dt_type *dt_type_void(void);
const dt_type *dt_type_int(bool is_signed, uint32_t size);
const dt_type *dt_type_str(uint32_t size);
const dt_type *dt_type_bool(void);
/* bool as an element of an array (`bool[2]`): one byte, as bpftrace's bool. */
const dt_type *dt_type_bool_elem(void);
/* A C float or double of `size` bytes (4 or 8; other sizes are rounded up to one of them). */
const dt_type *dt_type_float(uint32_t size);
/* An integer of enum e (made in `a`); the plain integer when e is NULL. */
const dt_type *dt_type_int_enum(dt_arena *a, bool is_signed, uint32_t size, const dt_enum *e);
/* The name of value v in enum e, or NULL when no enumerator has it. */
const char *dt_enum_name_of(const dt_enum *e, int64_t v);
bool dt_type_equal(const dt_type *a, const dt_type *b);
/* Deep copy into another arena (the REPL keeps map types across compilations). */
dt_type *dt_type_clone(dt_arena *a, const dt_type *t);
/* Human spelling used in diagnostics and `-d types`: "int64", "uint64", "string[64]",
 * "ustack_dwarf(127)", "(int64, string[16])", "hist", "lhist(0, 100, 10)", "count", … */
const char *dt_type_name(dt_arena *a, const dt_type *t);
bool dt_type_is_aggregation(const dt_type *t);
/* C types (pointer, struct, array), made in arena `a`. A struct starts incomplete (name only);
 * the type source (see dt_check_opts.ctype) fills it. */
const dt_type *dt_type_ptr(dt_arena *a, const dt_type *to, dt_addrspace as);
dt_type *dt_type_cstruct(dt_arena *a, const char *name, bool is_union);
const dt_type *dt_type_array(dt_arena *a, const dt_type *elem, uint32_t n);
/* The member `name` of struct/union t, looking through anonymous members; *off gets its byte
 * offset from the start of t. NULL when there is none. */
const dt_member *dt_type_member(const dt_type *t, const char *name, uint32_t *off);
/* The index of record t's element `name`, or -1 (also when t is not a record). */
int dt_record_index(const dt_type *t, const char *name);

/* ---------------------------------------------------------------- AST */

typedef enum dt_provider {
	DT_P_BEGIN, DT_P_END,
	DT_P_INTERVAL,   /* interval:s|ms|us|hz:N — one CPU */
	DT_P_PROFILE,    /* profile:s|ms|us|hz:N — every CPU */
	DT_P_UPROBE, DT_P_URETPROBE,
	DT_P_KPROBE, DT_P_KRETPROBE,
	DT_P_TRACEPOINT, /* tracepoint:SUBSYS:EVENT */
	DT_P_SOFTWARE,   /* software:EVENT[:PERIOD] */
	DT_P_HARDWARE,   /* hardware:EVENT[:PERIOD] */
	DT_P_XPROBE,     /* xprobe:BIN:FUNC[:N] — a uprobe+uretprobe pair joined with the scheduler */
	DT_P_USDT,       /* usdt:BIN:[PROVIDER:]NAME — a SystemTap SDT marker (a uprobe at each location) */
	/* watchpoint:ADDR:LEN:MODE, watchpoint:FUNC+argN:LEN:MODE — a hardware breakpoint; the
	 * function form is set when FUNC of the -c/-p program is entered (the process is held
	 * meanwhile), asyncwatchpoint: the same without holding it */
	DT_P_WATCHPOINT, DT_P_ASYNCWATCHPOINT,
	DT_P_RAWTRACEPOINT, /* rawtracepoint[:MODULE]:EVENT — args typed by BTF's btf_trace_EVENT */
	DT_P_FENTRY, DT_P_FEXIT, /* fentry/fexit[:MODULE]:FUNC (kfunc/kretfunc) — BPF trampolines */
	DT_P_ITER,          /* iter:task|task_file|task_vma — a BPF iterator, run once */
	/* self:signal:SIGUSR1 — run by dwarftrace itself (a test run) each time it gets the signal */
	DT_P_SELF,
	/* test:NAME, bench:NAME — run only with --test / --bench (ignored otherwise): each test
	 * once, each benchmark repeatedly (BPF_PROG_TEST_RUN), instead of attaching the probes */
	DT_P_TEST, DT_P_BENCH,
	DT_P__COUNT
} dt_provider;

typedef enum dt_time_unit { DT_UNIT_NONE, DT_UNIT_S, DT_UNIT_MS, DT_UNIT_US, DT_UNIT_HZ } dt_time_unit;

/* One argument of a USDT location, as its note's argument spec says (x86-64 GNU as operands,
 * `SIZE@OPERAND`, SIZE negative when signed): `-4@$5` (constant), `8@%rax` / `4@%eax` /
 * `1@%al` (register), `8@-8(%rbp)` (memory at base + displacement), `4@8(%rax,%rdx,4)` (base +
 * index * scale + displacement), `8@sym+4(%rip)` (a global: its address is found from the
 * location's own address). Registers are byte offsets into struct pt_regs (dt_reg_offset). */
typedef enum dt_usdt_arg_kind { DT_USDT_CONST, DT_USDT_REG, DT_USDT_MEM } dt_usdt_arg_kind;
typedef struct dt_usdt_arg {
	dt_usdt_arg_kind kind;
	uint8_t size;        /* 1, 2, 4 or 8 bytes */
	bool is_signed;
	uint8_t reg_shift;   /* REG: bits to shift the register right first (8 for %ah … %bh) */
	int16_t reg;         /* REG: the register; MEM: the base register (-1: none) */
	int16_t index;       /* MEM: the index register, -1 when none */
	uint8_t scale;       /* MEM: 1, 2, 4 or 8 */
	int64_t value;       /* CONST: the value; MEM: the displacement */
	const char *sym;     /* MEM through %rip: the symbol the displacement is relative to (the
	                      * resolver turns it into a displacement from the location's pc) */
} dt_usdt_arg;

/* One location of a USDT probe (a marker inlined or repeated has several), made by the
 * dt_check_opts.usdt callback in the compilation's arena. */
typedef struct dt_usdt_loc {
	const char *path;      /* the object to attach to, as attach opens it */
	const char *shown;     /* the object as `probe` and listings name it */
	const char *provider, *name;
	uint64_t pc;           /* the location's address in the object (after .stapsdt.base) */
	uint64_t offset;       /* its file offset: where the uprobe goes */
	uint64_t sema_offset;  /* the semaphore's file offset (the uprobe's ref_ctr_offset), 0: none */
	const char *argspec;   /* the note's argument text, as written */
	uint32_t nargs;
	dt_usdt_arg *args;
	/* The operand of argspec that cannot be read here (a TLS operand, a symbol that is not
	 * in the object), or NULL: the checker refuses argN of such a location with it. */
	const char *arg_error;
} dt_usdt_loc;

/* Parses a note's argument text into args (arena `a`). 0, or -EINVAL with *bad pointing at the
 * operand that is not understood (x86-64 only: a segment register, an unknown register, …). */
int dt_usdt_args_parse(dt_arena *a, const char *spec, dt_usdt_arg **args, uint32_t *n,
		       const char **bad);

/* One attach point, as written (after `-d ast` normalisation). */
typedef struct dt_attach {
	dt_provider provider;
	dt_span span;
	const char *text;     /* the whole attach point as written (without a NAME= prefix) */
	const char *name;     /* `NAME=…` (bpftrace's named probe): what `probe` says; else NULL */
	const char *target;   /* uprobe/uretprobe/xprobe/usdt: binary path or library name as written
	                       * ("libc", "/usr/bin/bash"); tracepoint: subsystem;
	                       * software/hardware: event name ("cpu-clock", "cycles"); else NULL */
	const char *func;     /* uprobe/kprobe: symbol (may contain '*' wildcards); tracepoint: event;
	                       * usdt: the probe's name */
	const char *usdt_provider; /* usdt: PROVIDER as written, NULL when left out (any) */
	const dt_usdt_loc *usdt;   /* usdt, set by dt_check: the one location this attach point is */
	uint64_t offset;      /* `symbol+offset` */
	bool has_offset;
	/* uprobe:BIN@FILE:LINE[:COL] (bpftrace's source location): FILE as written, LINE, COL (0
	 * when left out). dt_check sets `func` and `offset` to where the line table puts it
	 * (uprobe:BIN:step+17; "0x1139" outside any function symbol), so the rest of the
	 * pipeline sees that form. NULL src_file: not this form. */
	const char *src_file;
	uint32_t src_line, src_col;
	dt_time_unit unit;    /* interval/profile */
	uint64_t rate;        /* interval/profile: N; software/hardware: period (0 = default);
	                       * xprobe: measure one call in N, at random (`xprobe:BIN:FUNC:N`) */
	/* Set by dt_check. */
	/* kprobe/kretprobe: the absolute address of kprobe:ADDR (`func` keeps the text), else 0.
	 * watchpoint/asyncwatchpoint: the absolute address (0 in the function form, where `func`
	 * is the function, `target` the -c/-p program and wp_arg the N of argN), the length and
	 * the mode as written ("w", "rw", "x"). */
	uint64_t addr;
	/* uprobe/uretprobe with --unsafe, which takes what bpftrace's takes unchecked: an address in
	 * a file that is not ELF (a flat binary, JIT code written to a file) as its file offset, and
	 * the start of a symbol of size 0 (`_init`), whose instructions cannot be told. */
	bool unsafe;
	bool from_wildcard;   /* set by dt_check: one of a wildcard's expansions */
	uint32_t wp_arg;
	uint64_t wp_len;
	const char *wp_mode;
	/* rawtracepoint/fentry/fexit: the BTF prototype, set by dt_check through
	 * dt_check_opts.kernel_args: `args` (parameter i is member i at offset 8 * i) and the return
	 * type (fexit's retval, at offset 8 * nargs). iter: `ctx`'s type. */
	const dt_type *kargs, *kret;
	uint64_t period_ns;   /* interval/profile with s/ms/us: the period in ns; 0 when hz */
	/* tracepoint, set by dt_check when the probe reads args: this tracepoint's record. When
	 * a field the probe reads sits at different offsets in its tracepoints, every attach point
	 * of the probe gets its own program (own_prog), which reads the field where its
	 * tracepoint has it, as bpftrace does. */
	const dt_type *tp_record;
	bool own_prog;
	uint32_t index;       /* position among all attach points of the program (for naming) */
} dt_attach;

typedef enum dt_builtin {
	DT_B_PID, DT_B_TID, DT_B_UID, DT_B_GID, DT_B_COMM, DT_B_NSECS, DT_B_ELAPSED, DT_B_CPU,
	DT_B_CGROUP, DT_B_ARG /* argN, see builtin.arg */, DT_B_RETVAL, DT_B_FUNC, DT_B_PROBE,
	DT_B_KSTACK, DT_B_USTACK, DT_B_USTACK_DWARF, DT_B_ARGS /* tracepoint args record */,
	DT_B_RAND, DT_B_CURTASK,
	/* xprobe only: this call's time in ns (nswitch: context switches), see bpf-lib/dt_xprobe.h */
	DT_B_WALL, DT_B_ONCPU, DT_B_OFFCPU, DT_B_RUNQ, DT_B_BLOCKED, DT_B_IOWAIT, DT_B_NSWITCH,
	DT_B_CPID,     /* the -c command's pid (0 without -c) */
	DT_B_NUMAID, DT_B_JIFFIES, DT_B_NCPUS,
	DT_B_USERMODE, /* 1 when the probe interrupted user mode */
	DT_B_USERNAME, /* the user's name, from uid at print time */
	DT_B_SARG,     /* sargN: the Nth 64-bit word above the stack pointer, see builtin.arg */
	DT_B_CTX,      /* the program's context pointer, as an integer (cast it to a struct pointer) */
	DT_B_PPID,     /* the parent's pid: (uint32)TASK->real_parent->pid, TASK = builtin.task or
	                * curtask; dt_check rewrites it into that expression */
	/* bpftrace's standard library, each rewritten by dt_check into what it stands for:
	 * pcomm = TASK->real_parent->comm, leader_comm = TASK->group_leader->comm, leader_tid =
	 * TASK->group_leader->pid (TASK as for ppid); probetype: the probe type's name, a string
	 * constant ("special" in BEGIN/END); has_cpid: whether a -c command runs, a bool constant;
	 * config: the session's config settings, a record of constants. */
	DT_B_PCOMM, DT_B_LEADER_COMM, DT_B_LEADER_TID, DT_B_PROBETYPE, DT_B_HAS_CPID, DT_B_CONFIG,
	DT_B__COUNT
} dt_builtin;

/* The clock of nsecs(CLOCK) (bpftrace's TimestampMode); bare `nsecs` and `nsecs()` read
 * MONOTONIC, as 0.17's nsecs did. */
typedef enum dt_clock { DT_CLOCK_MONOTONIC, DT_CLOCK_BOOT, DT_CLOCK_TAI, DT_CLOCK_SW_TAI } dt_clock;
/* pid(NS) / tid(NS): as seen from dwarftrace's pid namespace (the default) or the initial one. */
typedef enum dt_pid_ns { DT_PIDNS_CURR, DT_PIDNS_INIT } dt_pid_ns;

typedef enum dt_func {
	DT_F_PRINTF, DT_F_PRINT, DT_F_CLEAR, DT_F_DELETE, DT_F_ZERO, DT_F_EXIT, DT_F_TIME, DT_F_STR,
	DT_F_KSYM, DT_F_USYM,
	DT_F_COUNT, DT_F_SUM, DT_F_AVG, DT_F_MIN, DT_F_MAX, DT_F_STATS, DT_F_HIST, DT_F_LHIST,
	DT_F_TSERIES,
	DT_F_STRNCMP, DT_F_STRCONTAINS, DT_F_BSWAP, DT_F_BUF, DT_F_STRFTIME,
	/* bpftrace's current string functions: strlen(s), strcap(s) (a string's capacity),
	 * strstr(h, n) (index or -1), str_concat(a, b), memcmp(l, r, count) */
	DT_F_STRLEN, DT_F_STRCAP, DT_F_STRSTR, DT_F_STR_CONCAT, DT_F_MEMCMP,
	DT_F_CAT, DT_F_SYSTEM, /* printf-like: userspace formats, then reads the file / runs it */
	DT_F_SIGNAL, DT_F_NTOP, DT_F_PTON, DT_F_KADDR,
	DT_F_HAS_KEY, /* has_key(@m, key): dt_check moves the key into args[0]'s map.keys */
	DT_F_REG, DT_F_CGROUPID, DT_F_OVERRIDE, DT_F_CGROUP_PATH,
	DT_F_JOIN,    /* join(argv[, delim]): userspace joins the strings, delim in the event's fmt */
	DT_F_MACADDR, DT_F_STRERROR,
	DT_F_SIGNAL_NAME, DT_F_SYSCALL_NAME, /* the number, printed as its name (DT_T_STRERROR) */
	/* bpftrace's standard-library macros, rewritten by dt_check: assert(cond, "msg") into
	 * `if (!cond) { errorf("assert failed: %s", msg); exit(1); }`; container_of(ptr,
	 * typeof(TYPE), member) into `(TYPE *)((uint64)ptr - offsetof(TYPE, member))`; fail("fmt",
	 * literals…) is an error with that text where the checker meets it. */
	DT_F_ASSERT, DT_F_CONTAINER_OF, DT_F_FAIL,
	DT_F_WRITE_USER, /* write_user(dst, src, len) (--unsafe): bpf_probe_write_user, a bool */
	DT_F_UPTR, DT_F_KPTR, /* the pointer (or address) argument, read from user / kernel memory */
	DT_F_DEBUGF,  /* bpf_trace_printk: the kernel's trace buffer, not dwarftrace's output */
	DT_F_UADDR,   /* uaddr("sym"): the run-time address of a symbol of the uprobe's binary */
	DT_F_LEN,     /* len(kstack|ustack): the frames of the stack here (bpf_get_stack) */
	DT_F_UNWATCH, /* unwatch(addr): userspace removes every watchpoint on addr */
	DT_F_PATH,    /* path(struct path [*][, size]): bpf_d_path's string (fentry/fexit/iter) */
	DT_F_SOCKET_COOKIE, /* socket_cookie(struct sock *): the kernel's cookie (fentry/fexit/iter) */
	/* skboutput("file", struct sk_buff *, len, offset): bpf_skb_output's copy of the packet,
	 * written by userspace to a pcap file (event desc: fmt is the file) */
	DT_F_SKBOUTPUT,
	DT_F_PERCPU_KADDR, /* percpu_kaddr("var"[, cpu]): that CPU's (this CPU's) copy of var */
	/* errorf/warnf(fmt, args…): printf's event; userspace prints the text on stderr as an
	 * error/warning at the call's place in the script (warnf not under --no-warnings) */
	DT_F_ERRORF, DT_F_WARNF,
	DT_F_GETOPT, /* getopt("name"[, default[, "description"]]): folded by dt_check */
	/* Questions about an expression's type, answered by dt_check with a bool literal. */
	DT_F_IS_INTEGER, DT_F_IS_UNSIGNED_INTEGER, DT_F_IS_STR, DT_F_IS_PTR, DT_F_IS_ARRAY,
	DT_F_IS_LITERAL,
	DT_F_IS_ERR, /* is_err(ptr): rewritten by dt_check to `(uint64)ptr >= -4095` */
	DT_F_STATIC_ASSERT, /* static_assert(cond, "msg"): a constant cond, else an error */
	DT_F_EXTERN,  /* a function of an imported .bpf.c (call.ext, set by dt_check); no name of
	               * its own: the parser makes one for a call of an unknown name when the
	               * program imports a .bpf.c */
	DT_F__COUNT
} dt_func;

typedef enum dt_binop {
	DT_OP_NONE, /* plain `=` in an assignment */
	DT_OP_ADD, DT_OP_SUB, DT_OP_MUL, DT_OP_DIV, DT_OP_MOD,
	DT_OP_BAND, DT_OP_BOR, DT_OP_BXOR, DT_OP_SHL, DT_OP_SHR,
	DT_OP_LAND, DT_OP_LOR,
	DT_OP_EQ, DT_OP_NE, DT_OP_LT, DT_OP_LE, DT_OP_GT, DT_OP_GE,
} dt_binop;

typedef enum dt_unop {
	DT_UOP_NEG, DT_UOP_LNOT, DT_UOP_BNOT,
	DT_UOP_PREINC, DT_UOP_PREDEC, DT_UOP_POSTINC, DT_UOP_POSTDEC, /* operand: var or map */
} dt_unop;

typedef enum dt_expr_kind {
	DT_E_INT, DT_E_STR, DT_E_BUILTIN, DT_E_VAR, DT_E_MAP, DT_E_CALL, DT_E_BINOP, DT_E_UNOP,
	DT_E_TERNARY, DT_E_FIELD, DT_E_TUPLE, DT_E_POSPARAM,
	DT_E_TUPLE_GET, /* $t.0: one element of a tuple value */
	DT_E_PARAMCOUNT, /* $#: substituted by dt_check with the number of positional parameters */
	DT_E_CAST,    /* (type)e */
	DT_E_DEREF,   /* *e (un.e) */
	DT_E_INDEX,   /* e[i] on a pointer or an array */
	DT_E_SIZEOF,  /* sizeof(type) or sizeof(e): folded to DT_E_INT by dt_check */
	DT_E_OFFSETOF, /* offsetof(type, member): folded to DT_E_INT by dt_check */
	DT_E_IDENT,   /* a bare name: an enum value or a #define of the C definitions or of kernel
	               * BTF's enums, folded to DT_E_INT by dt_check (else "unknown identifier") */
	DT_E_BLOCK,   /* `{ stmts; value }`: the statements in a scope of their own, then the value
	               * (NULL: none, the block is a statement). Macro calls expand to these. */
	DT_E_MACRO,   /* a call of a script macro, `name(args)` or a bare `name`: replaced by its
	               * expansion (a DT_E_BLOCK) before dt_parse returns; never reaches dt_check */
	DT_E_TYPEOF,  /* typeof(…) as a macro's argument (tyof.ref): a type the expansion puts
	               * where the body names the parameter in a type; anywhere else an error */
	DT_E_ADDROF,  /* &$x (un.e, a $variable): a kernel pointer to where the variable lives */
} dt_expr_kind;

/* A type modifier, bpftrace's postfix syntax read left to right: `*` (a pointer to what is to
 * its left) or `[N]` (an array of N of it; `[]` in a cast: N from the size of the value).
 * For string, buffer and inet a first `[N]` is their size instead (`string[64]`). */
typedef struct dt_type_mod {
	bool is_array;
	bool n_omitted;   /* `[]` */
	uint32_t n;
} dt_type_mod;

#define DT_MAX_TYPE_MODS 8

/* A type as written in a cast, sizeof, offsetof, typeof or `let $x: TYPE`: a base name
 * ("uint8", "struct task_struct", "pid_t", "void", "string"), or typeof(…) — the type of an
 * expression (never evaluated) or of a type — then modifiers: `int32*[4]`, `struct foo*`. */
typedef struct dt_ctype_ref {
	const char *name;     /* "typeof" when the base is typeof_e / typeof_ty */
	uint32_t nptr;        /* how many of mods are '*' */
	dt_type_mod mods[DT_MAX_TYPE_MODS];
	uint32_t nmods;
	struct dt_expr *typeof_e;          /* typeof(expr) */
	struct dt_ctype_ref *typeof_ty;    /* typeof(type) */
	dt_span span;
} dt_ctype_ref;

typedef struct dt_expr dt_expr;
typedef struct dt_stmt dt_stmt;
typedef struct dt_stmt_list {
	dt_stmt **v;
	uint32_t n;
} dt_stmt_list;
typedef struct dt_map_sym dt_map_sym;
typedef struct dt_var_sym dt_var_sym;

struct dt_expr {
	dt_expr_kind kind;
	dt_span span;
	const dt_type *type; /* set by dt_check */
	union {
		struct {
			uint64_t value;
			bool is_bool, is_unsigned;
			const dt_enum *enm; /* an enumerator folded by dt_check: its enum */
		} i;                        /* 42, 0x2a; true, false */
		struct { const char *s; uint32_t len; } str;         /* escapes already decoded */
		struct {
			dt_builtin id;
			uint32_t arg;         /* argN: N */
			uint32_t depth;       /* kstack/ustack/ustack_dwarf(N): N, or 0 = default */
			uint32_t depth_param; /* kstack($N): N, the depth dt_check reads from $N */
			dt_stack_mode mode;   /* kstack(perf) etc. */
			bool mode_set;        /* written in the call; else the session's default */
			uint32_t variant;     /* nsecs(CLOCK): dt_clock; pid/tid(NS): dt_pid_ns */
			bool native;          /* ustack_dwarf(native): no interpreter (CPython) frames */
			dt_expr *task;        /* ppid/pcomm/leader_comm/leader_tid(task): the task;
			                       * comm(pid): the pid; NULL for the current one */
		} builtin;
		struct { const char *name; dt_var_sym *sym; } var;   /* name includes the '$' */
		struct {
			const char *name;     /* "@" or "@name" */
			dt_map_sym *sym;      /* set by dt_check */
			dt_expr **keys;
			uint32_t nkeys;       /* 0: scalar map (@x) */
		} map;
		struct {
			dt_func id;
			const char *name;
			dt_expr **args;
			uint32_t nargs;
			/* Set by dt_check: */
			uint32_t event_id;        /* printf/time/print(value): index into dt_program.events */
			const dt_type *args_type; /* printf: tuple of the value args as sent in the event;
			                           * join: the type of each string slot */
			/* uaddr: the symbol's ELF address; when `biased` (a PIE or library), the
			 * probed instruction's ELF address `at`, which the program subtracts from
			 * its IP to find the load bias. */
			struct { uint64_t addr, at; bool biased; } uaddr;
			/* percpu_kaddr: the variable's offset in the per-cpu area and the address
			 * of the kernel's __per_cpu_offset[] (each CPU's area). */
			struct { uint64_t off, table; } percpu;
			/* A call in a macro's body: the call of that macro it was expanded from
			 * (len 0: none). errorf/warnf name it. */
			dt_span expanded_from;
			const struct dt_extern_fn *ext; /* DT_F_EXTERN: the C function */
		} call;
		struct { dt_binop op; dt_expr *l, *r; } bin;
		struct { dt_unop op; dt_expr *e; } un; /* also DT_E_DEREF, DT_E_ADDROF (e only) */
		/* t NULL: `cond ?: f`, cond's value. comptime: an `if comptime` used as a value,
		 * which the checker replaces with the branch it picks. */
		struct { dt_expr *cond, *t, *f; bool comptime; } tern;
		struct {
			dt_expr *base;
			const char *field;
			bool arrow;                 /* args->x rather than args.x */
			const dt_tp_field *tp;      /* set by dt_check for tracepoint args */
			const dt_member *m;         /* set by dt_check for C struct members */
			uint32_t off;               /* its byte offset in the struct */
		} field;
		struct { dt_ctype_ref to; dt_expr *e; } cast;
		struct { dt_expr *base, *index; } index;
		/* sizeof: ty.name NULL when it measures an expression e. offsetof: ty, field. */
		struct { dt_ctype_ref ty; dt_expr *e; const char *field; } size;
		/* names: a record literal's field names, NULL for a tuple */
		struct { dt_expr **elems; uint32_t n; const char **names; } tuple;
		struct { uint32_t n; } posparam; /* $1, $2: substituted from the command line by dt_check */
		struct { const char *name; } ident;
		struct { dt_expr *base; uint32_t index; } tget;
		struct { dt_stmt_list stmts; dt_expr *value; } block;
		struct { const char *name; dt_expr **args; uint32_t nargs; bool bare; } macro;
		struct { struct dt_ctype_ref *ref; } tyof;
	};
};

typedef enum dt_stmt_kind {
	DT_S_EXPR,    /* an expression evaluated for effect: calls, x++ */
	DT_S_ASSIGN,  /* $x = e; @m[k] = e; @m[k] += e; @m[k] = count(); */
	DT_S_IF,
	DT_S_UNROLL,
	DT_S_RETURN,
	DT_S_WHILE,
	DT_S_BREAK, DT_S_CONTINUE, /* inside a while or for loop only */
	DT_S_BLOCK,
	DT_S_FOR,     /* for ($kv : @map) { … } and for ($i : START..END) { … } */
} dt_stmt_kind;

struct dt_stmt {
	dt_stmt_kind kind;
	dt_span span;
	bool discard; /* DT_S_EXPR written `_ = expr;`: its value is dropped without a warning */
	union {
		dt_expr *expr;
		struct {
			dt_expr *target; /* DT_E_VAR or DT_E_MAP */
			dt_binop op;     /* DT_OP_NONE for '=', else the compound operator of `op=` */
			dt_expr *value;  /* NULL only in `let $x;` (the variable is zeroed) */
			/* `let $x [: TYPE] [= value]`: declares a new $variable in this block. */
			bool decl;
			dt_ctype_ref decl_type; /* `let $x: TYPE`: name NULL when none is written */
			/* Set by dt_check: the value was wrapped in a cast to the declared type. */
			bool converted;
		} assign;
		/* then_value/els_value: the block ends in an expression with no ';' after it,
		 * which an `if` used as a value (parser.c's if_value) gives as its value. */
		/* `if comptime (cond)`: cond is known to the checker, which keeps the branch it
		 * picks (a block) and never checks the other. */
		struct {
			dt_expr *cond;
			dt_stmt_list then, els;
			bool then_value, els_value, comptime;
		} if_;
		/* count_expr is an integer literal or a positional parameter; dt_check sets count. */
		struct { uint32_t count; dt_expr *count_expr; dt_stmt_list body; } unroll;
		struct { dt_expr *cond; dt_stmt_list body; } while_;
		dt_stmt_list block;
		/* `for (var : map)` (map set, start/end NULL) or `for (var : start..end)`. The
		 * variable is the probe's own, of the loop's block; the body runs as a callback
		 * that reaches the probe's variables through their addresses (codegen), so what it
		 * writes is seen after the loop, as bpftrace defines. */
		struct {
			dt_expr *var, *map, *start, *end;
			dt_stmt_list body;
		} for_;
	};
};

/* A script map. Its key and value types are fixed by the first use that determines them; every
 * later use must agree (a clear diagnostic otherwise). Strings widen: a map (or $var) written
 * with string[16] and string[64] holds string[64], so a use's expr->type may be narrower than the
 * slot — copy what the expression has and zero-pad. Ints in maps and vars are always 8 bytes
 * (printf's arguments keep an int's own size, so %x of an int32 prints 32 bits); inside a tuple
 * an int keeps its own size ((int8)1 is one byte: tuples are laid out as
 * C structs, as bpftrace lays them out), as does a field or cast read. */
struct dt_map_sym {
	const char *name;       /* "@" or "@name" */
	dt_span decl;           /* first use */
	const dt_type *key;     /* NULL for a scalar map; one element or a DT_T_TUPLE */
	const dt_type *value;
	uint32_t id;            /* index in dt_program.maps */
	/* From its declaration (`let @m = lruhash(100);`), set by dt_check: the BPF map type
	 * and max entries it is created with; 0 when undeclared (the layout's defaults). */
	uint32_t decl_bpf_type;
	uint32_t decl_max_entries;
	/* Its program is in bpftrace's current language (dt_program_current): clear() and delete()
	 * empty a keyless count() map, stats print as a record, print() of an empty scalar map
	 * prints the zero value. Else 0.17's behaviour. */
	bool current;
};

/* A scratch variable, scoped to one probe block (bpftrace's rule). */
struct dt_var_sym {
	const char *name;
	dt_span decl;
	const dt_type *type;
	uint32_t id;            /* index in dt_probe.vars */
};

typedef struct dt_probe {
	dt_span span;
	dt_attach **attach;
	uint32_t nattach;
	dt_expr *pred;          /* NULL if none */
	dt_stmt_list body;
	bool angle_block;       /* written `< … >` rather than `{ … }` */
	/* Set by dt_check. */
	dt_var_sym **vars;
	uint32_t nvars;
	bool uses_ustack_dwarf; /* body or predicate evaluates ustack_dwarf */
	bool pred_uses_ustack_dwarf;
	/* ustack_dwarf(native) / plain ustack_dwarf was seen (one walk serves a probe: not both) */
	bool ustack_dwarf_native, ustack_dwarf_mixed;
	/* Its rawtracepoints are loaded as BTF tracepoints (BPF_PROG_TYPE_TRACING, tp_btf): it
	 * calls what only tracing programs have (socket_cookie, comm(PID)). */
	bool rawtp_btf;
	uint32_t index;
} dt_probe;

/* Things the BPF side sends to userspace through the event ring buffer that need a table entry
 * userspace can look up by id: a printf format, a time() format, a print() of a value. */
typedef struct dt_event_desc {
	dt_func func;           /* DT_F_PRINTF, DT_F_TIME, DT_F_PRINT (of a non-map value), DT_F_CAT,
	                         * DT_F_SYSTEM, DT_F_JOIN (fmt: the delimiter; args: the type of
	                         * one string slot) */
	const dt_expr *call;
	const char *fmt;        /* printf/time format string (escapes decoded) */
	const dt_type *args;    /* tuple type of the payload after struct dt_event_hdr */
} dt_event_desc;

/* One setting of a `config = { KEY = VALUE; … }` block, as written: the key (any spelling:
 * stack_mode, STACK_MODE, BPFTRACE_STACK_MODE) and its value (an identifier, a number or a
 * string, escapes decoded). The block is read by the driver (runtime/cli.c), before the
 * session exists, since its settings shape the session; the checker ignores it. */
typedef struct dt_config_item {
	const char *key, *value;
	bool is_int;
	uint64_t ival;
	dt_span span, value_span;
} dt_config_item;

/* A map declaration at the top level, `let @name = TYPE(N);` (bpftrace's): the map is created
 * as BPF map TYPE (hash, lruhash, percpuhash, percpulruhash; checked by dt_check) with N
 * entries at most. */
typedef struct dt_map_decl {
	const char *name;       /* "@name" */
	const char *type;       /* as written */
	uint64_t max_entries;
	dt_span span, type_span;
} dt_map_decl;

typedef struct dt_program {
	const dt_source *src;
	dt_map_decl *map_decls;
	uint32_t nmap_decls;
	dt_config_item *config; /* the config block's settings, in order */
	uint32_t nconfig;
	/* C definitions at the top level, in source order: preprocessor lines (#include, #define,
	 * #if …) and struct/union/enum/typedef declarations, each its exact source text; the
	 * type source (dt_check_opts.cdefs) compiles them with clang. */
	dt_span *cdecls;
	uint32_t ncdecls;
	dt_probe **probes;
	uint32_t nprobes;
	/* Set by dt_check. */
	dt_map_sym **maps;
	uint32_t nmaps;
	dt_event_desc *events;
	uint32_t nevents;
	bool uses_ustack_dwarf;
	/* len() counts the frames of a stack value ($s = ustack; len($s)): every kstack/ustack
	 * then stores its frame count beside its id (the upper half of dt_stack_ref.id). */
	bool stack_counts;
	uint32_t strlen;        /* max_strlen the program was checked with (never 0) */
} dt_program;

/* Whether p is written in bpftrace's current language rather than 0.17's: some probe is spelled
 * begin/end, or it has a config block or map declarations, which 0.17 did not have. Where the two
 * versions differ for the same program (when a begin-only program ends, what clear() leaves of a
 * count() map, how stats print, print() of an empty scalar map), such a program behaves as
 * bpftrace now does and any other as 0.17 did, so old scripts run unchanged. */
bool dt_program_current(const dt_program *p);

/* Which bpftrace the programs of this process are read as where the two differ on the same text:
 * DT_LANG_AUTO (the default) decides by each program as dt_program_current says; the others
 * force it for every program (dwarftrace --language, DWARFTRACE_LANGUAGE), for scripts written
 * for current bpftrace that use no construct 0.17 lacked (DT_LANG_CURRENT), or for 0.17's
 * behaviour in a program that does (DT_LANG_V017). Set once, before any program is read. */
typedef enum dt_lang_mode { DT_LANG_AUTO, DT_LANG_CURRENT, DT_LANG_V017 } dt_lang_mode;
void dt_lang_set_mode(dt_lang_mode m);
/* "auto", "current", "0.17" (and "latest", "head" for current): the mode, or -1. */
int dt_lang_mode_parse(const char *s);

/* ---------------------------------------------------------------- passes */

/* Prints the token stream, one token per line: `line:col KIND 'text'`. Used by `-d tokens`. */
void dt_dump_tokens(const dt_source *src, FILE *out);

/* Brings in the script's `import "PATH";` statements (top level, after the C definitions, before
 * anything else; C files also inside a block), and theirs: each .bt file found — PATH relative to the importing script's
 * directory (the working directory for -e/stdin), or every .bt of a directory — is appended to
 * src->text (a copy in `a`) and listed in src->files, so dt_parse reads it with the rest; each
 * .h and .bpf.c (named, or of a directory) is listed in src->cimports. A PATH on no disk may
 * name a file or directory of the standard library (stdlib/, compiled in). A path already
 * imported (or the root script itself) is skipped: duplicates and cycles end there. Missing
 * files, other file types and world-writable directories are errors at the PATH. */
void dt_source_imports(dt_source *src, dt_arena *a, dt_diags *d);

/* Parses a whole program. Never NULL: on syntax errors the diagnostics say what was wrong and the
 * returned program holds what could be recovered (check dt_diags_error_count before going on). */
dt_program *dt_parse(dt_arena *a, const dt_source *src, dt_diags *d);

/* What a run does with the probes: attach them (the default), or run the test:NAME probes once
 * each (--test), or the bench:NAME probes repeatedly (--bench); the other mode's probes are
 * dropped by dt_check. */
typedef enum dt_run_mode { DT_MODE_RUN, DT_MODE_TEST, DT_MODE_BENCH } dt_run_mode;

/* How dt_check learns about the world and about maps that already exist (the REPL). All optional. */
/* One of bpftrace's config settings as the session has it, for config(): a string (s) or a
 * number (v), a bool when is_bool. */
typedef struct dt_config_value {
	const char *name;
	const char *s;
	uint64_t v;
	bool is_bool;
} dt_config_value;

typedef struct dt_check_opts {
	size_t sz;                  /* sizeof(struct dt_check_opts) */
	/* Maps that already exist in a live session: return the types, or false if unknown. */
	bool (*existing_map)(void *ctx, const char *name, const dt_type **key, const dt_type **value);
	void *ctx;
	/* Root of tracefs for tracepoint formats; NULL = /sys/kernel/tracing, then /sys/kernel/debug/tracing. */
	const char *tracefs;
	/* Expands an attach point whose func (uprobe/kprobe) or event (tracepoint) has '*' wildcards:
	 * sets *names to a malloc'd array of malloc'd concrete names (caller frees); 0 or -errno.
	 * NULL, or no match: a diagnostic at the attach point. Each match becomes its own dt_attach. */
	int (*expand)(void *ctx, const dt_attach *a, char ***names, uint32_t *n);
	/* Positional parameters $1..$n from the command line. */
	const char **params;
	uint32_t nparams;
	/* Bytes of a str() without a length, and of tracepoint strings (0: DT_STRLEN). */
	uint32_t strlen;
	/* A -c command runs (or would, under --dry-run): `cpid` is its pid. */
	bool has_child;
	/* --unsafe: system() and signal(), which act outside tracing, are allowed. */
	bool unsafe;
	/* The program watchpoint:FUNC+argN attach points name: the -c command's file, else the
	 * -p process's executable; NULL when there is neither. */
	const char *watch_binary;
	/* C types the script names without defining them ("struct task_struct", "union bpf_attr",
	 * "enum bpf_map_type", a typedef such as "pid_t"): sets *out to a type made in `a`, a
	 * complete one for a struct. 0, -ENOENT when there is no such type, or another -errno
	 * (the message says what failed). NULL: only the integer types are known. */
	int (*ctype)(void *ctx, dt_arena *a, const char *name, const dt_type **out);
	/* Called first for every program: compiles its C definitions (dt_program.cdecls, and any
	 * the type source adds itself) so that the ctype lookups of this compilation see them
	 * first; reports what the C compiler rejects into d, located in the script. 0, or -EINVAL
	 * with diagnostics. NULL: C definitions are refused. */
	int (*cdefs)(void *ctx, dt_arena *a, dt_diags *d, const dt_program *p);
	/* A uprobe's `args`: the parameters of `func` in the binary at `path` as a struct whose
	 * member i, at offset 8 * i, is parameter i (codegen reads it from its register). 0,
	 * -ENOENT (no such function in the debug info), -ENODATA (no debug info). */
	int (*uprobe_args)(void *ctx, dt_arena *a, const char *path, const char *func,
			   const dt_type **out);
	/* The BTF prototype of a kernel attach point: rawtracepoint (btf_trace_EVENT), fentry and
	 * fexit (the function), iter (the iterator's context, as *args): the parameters as a struct
	 * whose member i is at offset 8 * i, and the return type (fentry/fexit). `module` may be
	 * NULL. 0, -ENOENT (no such function/event/iterator), -ENODATA (no BTF). */
	int (*kernel_args)(void *ctx, dt_arena *a, dt_provider p, const char *module,
			   const char *name, const dt_type **args, const dt_type **ret);
	void *ctype_ctx;
	/* The locations a usdt attach point names (its binary, provider and name may hold
	 * wildcards): *locs, an array of *n made in `a`, each becomes its own dt_attach. 0 with
	 * *n = 0 when nothing matches; -errno with *why (malloc'd) the reason when the binary
	 * cannot be read. Takes `ctx`. NULL: usdt probes are refused. */
	int (*usdt)(void *ctx, dt_arena *a, const dt_attach *at, dt_usdt_loc **locs, uint32_t *n,
		    char **why);
	/* The value of a bare name a script uses as a number: an enumerator or an integer #define
	 * of its C definitions (and their headers), else an enumerator of the kernel's BTF. 0, or
	 * -ENOENT; *enm (when not NULL) gets the enum an enumerator belongs to, NULL for a
	 * #define. NULL: no such names. Called with ctype_ctx. */
	int (*constant)(void *ctx, dt_arena *a, const char *name, int64_t *out,
			const dt_enum **enm);
	/* uaddr(): symbol `name` (any type: a variable, a function) of the uprobe binary `target`
	 * as written: its ELF address and size, and whether the object is loaded at a bias (PIE,
	 * shared library). 0, -ENOENT (no such symbol) or -errno. Takes `ctx`. */
	int (*usym_addr)(void *ctx, const char *target, const char *name, uint64_t *addr,
			 uint64_t *size, bool *biased);
	/* uprobe:BIN@FILE:LINE[:COL]: where the first statement at FILE:LINE[:COL] is in the
	 * binary `a->target` as written, from its DWARF line table: as FUNC+OFF in *func (malloc'd)
	 * and *off when a function symbol holds it, else as "0xADDR" and 0. 0, or -errno with *why
	 * (malloc'd) saying what is missing. Takes `ctx`. NULL: refused. */
	int (*uprobe_line)(void *ctx, const dt_attach *a, char **func, uint64_t *off, char **why);
	/* How kstack/ustack/ustack_dwarf print when the script names no mode (BPFTRACE_STACK_MODE). */
	dt_stack_mode stack_mode;
	/* --test / --bench: which of test:/bench: probes are kept (neither by default). */
	dt_run_mode mode;
	/* Named parameters after `--` on the command line, each as written ("--aa=20", "--bb"):
	 * getopt() reads them; one that no getopt() names is an error. */
	const char **named;
	uint32_t nnamed;
	/* config(): the settings, in the order the record lists them. */
	const dt_config_value *config;
	uint32_t nconfig;
	/* --probe-filter: a POSIX extended regex; after wildcards are expanded, an attach point
	 * whose full name ("interval:ms:200") it does not match is dropped, and a probe left with
	 * none (BEGIN and END are kept). Matching nothing is an error. NULL: every one is kept. */
	const char *probe_filter;
	/* A function of the program's imported .bpf.c files (`name(args)` in the script): 0, or
	 * -ENOENT. Called with ctype_ctx after cdefs. NULL: none. */
	int (*extern_fn)(void *ctx, dt_arena *a, const char *name, const dt_extern_fn **out);
	/* BPFTRACE_DUMMY_TS_MAP, bpftrace's test hook ("@name"): tseries takes its time from that
	 * scalar map. NULL: the clock. */
	const char *dummy_ts_map;
	/* config's unstable_tseries (bpftrace's gate of tseries()): warn (the default: a WARNING
	 * once), enable (silent) or error (an error at each call). */
	dt_unstable unstable_tseries;
} dt_check_opts;

/* The address space a C value designated by e lives in (the pointer it was reached through),
 * DT_AS_NONE when that is the probe's own. */
dt_addrspace dt_expr_addrspace(const dt_expr *e);

/* Resolves names, infers and checks types, validates attach points (units, rates, known software
 * and hardware events, builtins allowed in the probe type: retval only in *retprobe, args only in
 * tracepoints, …), fills the symbol tables and dt_program.events. 0 if no errors, else -EINVAL
 * with diagnostics. */
int dt_check(dt_program *p, dt_arena *a, dt_diags *d, const dt_check_opts *opts);

/* `-d ast` and `-d types`: designed, stable renderings (golden-tested). */
void dt_dump_ast(const dt_program *p, FILE *out);
void dt_dump_types(const dt_program *p, FILE *out);

/* The byte offset in struct pt_regs (x86-64) of a register named as bpftrace's reg() names it
 * ("ip", "sp", "ax", "r8", …), or -1. */
int dt_reg_offset(const char *name);

/* What `probe` says of attach point a: its NAME= when it has one, else its text. */
const char *dt_attach_probe_name(const dt_attach *a);

/* Names for messages and completion. */
const char *dt_provider_name(dt_provider p);
/* bpftrace's words for an attach point that matches nothing, into buf (cut to n):
 * "No matches for PROVIDER [TARGET:]FUNC" (`No matches for uprobe ./a.out:f`). */
void dt_attach_no_match(const dt_attach *a, char *buf, size_t n);
/* Provider lookup from the first field of an attach point ("profile", "p", "BEGIN"). */
bool dt_provider_lookup(const char *s, size_t n, dt_provider *out);
const char *dt_builtin_name(dt_builtin b);
const char *dt_func_name(dt_func f);
/* bpftrace's name of a stack mode ("bpftrace", "perf", "raw", "build_id"), and the mode a name
 * gives (false when it names none). One table for the parser, config, the environment, dumps. */
const char *dt_stack_mode_name(dt_stack_mode m);
bool dt_stack_mode_lookup(const char *s, size_t n, dt_stack_mode *out);
/* The stack mode names, NULL-terminated and in dt_stack_mode order (config's enum words). */
extern const char *const dt_stack_mode_names[];
/* All builtin and function names, NULL-terminated (REPL completion, "did you mean"). */
/* Edit distance "did you mean": the closest of `cands` to `name` if it is close enough to be a
 * typo, else NULL. `cands` is NULL-terminated. One rule for every name a user can misspell:
 * builtins, functions, events, tracepoints, uprobe symbols (runtime/attach.c). */
const char *dt_closest(const char *name, size_t name_len, const char *const *cands);
const char *const *dt_builtin_names(void);
const char *const *dt_func_names(void);

/* A perf event software: or hardware: accepts: perf's name, its short alias (or NULL), and what
 * perf_event_open needs. One table (names.c) serves the checker, attach and completion. */
typedef struct dt_perf_event {
	const char *name, *alias;
	uint32_t type;           /* PERF_TYPE_SOFTWARE or PERF_TYPE_HARDWARE */
	uint64_t config;         /* PERF_COUNT_SW_* or PERF_COUNT_HW_* */
	uint64_t default_period; /* when the attach point gives none */
} dt_perf_event;

/* The event of provider p (DT_P_SOFTWARE or DT_P_HARDWARE) spelled `name` (perf's name or its
 * alias), or NULL when there is none (or name is NULL). */
const dt_perf_event *dt_perf_event_find(dt_provider p, const char *name);
/* Event names software:/hardware: accept, aliases included, NULL-terminated. */
const char *const *dt_software_event_names(void);
const char *const *dt_hardware_event_names(void);

/* ---------------------------------------------------------------- layouts (the bytes) */

/* How a script map is stored in BPF: codegen writes keys and values this way, runtime creates the
 * map and decodes it this way.
 *   - key: the script key encoded with its type's layout (tuple offsets, strings NUL-padded, stack
 *     refs as struct dt_stack_ref); a scalar map uses an 8-byte zero key.
 *   - hist/lhist maps append a u64 bucket index after the key (user_key_size is where it starts);
 *     the value is one u64 count per CPU.
 *   - count/sum/min/max/avg/stats values are the structs of bpf-lib/dt_abi.h, one per CPU
 *     (BPF_MAP_TYPE_PERCPU_HASH); every other value type is stored as itself in a BPF_MAP_TYPE_HASH.
 */
typedef struct dt_map_layout {
	uint32_t bpf_map_type;   /* BPF_MAP_TYPE_HASH or BPF_MAP_TYPE_PERCPU_HASH */
	uint32_t key_size;       /* bytes, including a hist bucket suffix */
	uint32_t user_key_size;  /* bytes of the script's own key (0 + 8 zero bytes for scalar) */
	uint32_t value_size;     /* bytes per CPU */
	uint32_t max_entries;
	bool percpu;
	bool bucketed;           /* hist/lhist/tseries: key ends with a u64 bucket (tseries: slot) */
	/* A keyless count() map is zeroed, not emptied, by clear() and delete(), so it still
	 * prints `@: 0` (bpftrace 0.17 kept it in an array map, whose element cannot go); not in
	 * a program of the current language (dt_map_sym.current), where bpftrace now empties it. */
	bool zero_not_delete;
} dt_map_layout;

#define DT_MAP_MAX_ENTRIES 4096 /* bpftrace's default */

void dt_map_layout_of(const dt_map_sym *m, dt_map_layout *out);

/* hist(v, bits): bucket index of a value, bpftrace's log2 buckets with 2^bits buckets per power of
 * 2: index 0 holds negative values, 1 + v the values below 2^(bits+1) (one value each), then for
 * larger v, with l = floor(log2 v) - bits, ((l + 1) << bits) + 1 + the bits after v's leading 1
 * (bits 0: 1 holds 0, 2 holds 1, then [2^k, 2^(k+1)) ). dt_hist_nbuckets: how many indexes s64
 * values reach. lhist(): index 0 is below min, then one per step, last is >= max. Shared by
 * codegen's expectations and the printer. */
uint32_t dt_hist_bucket(int64_t v, uint32_t bits);
uint32_t dt_hist_nbuckets(uint32_t bits);
/* The first value of hist bucket `index` (>= 1) of hist(v, bits). */
uint64_t dt_hist_bucket_start(uint32_t index, uint32_t bits);
uint32_t dt_lhist_nbuckets(int64_t min, int64_t max, int64_t step);

#endif
