/* python.c — CPython frames in ustack_dwarf, the userspace half (protocol: bpf-lib/dt_python.h).
 * When the unwinder reads a process's mappings it asks here whether the process runs CPython: an
 * object named `python3.N` or `libpython3.N….so` (the interpreter, or an embedding program's
 * library) with `_PyRuntime` and `_PyEval_EvalFrameDefault` among its dynamic symbols. Its
 * version comes from the `Py_Version` word (3.11+) or the name; its structure offsets from what
 * the interpreter publishes (3.13's _Py_DebugOffsets), else from its DWARF (its own or its debug
 * file's: python_dwarf.c), else from the table of known releases below (3.10-3.13, release
 * builds only); and the walker's `pyprocs` entry for the pid is written from them. A version
 * without offsets is said once, and the process keeps native frames. A symbol table (the
 * object's or its debug file's) also gives the range of `_PyEval_EvalFrameDefault.cold`.
 * The walker's LRU maps are made here when the first CPython process is seen.
 * Afterwards the Python frames of a stack are named from the code-object records the walker's
 * Python step copied (`pycode`): name, file, and the line computed from CPython's line table
 * for the frame's instruction. */
#include "unwind/unwind.h"
#include "unwind/unwind_internal.h"
#include "bpf-lib/dt_python.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- known releases */

/* Offsets of the releases whose layout is known without DWARF (x86-64, the default build).
 * 3.11's were checked with offsetof against Debian 12's python3.11-dev headers
 * (Py_BUILD_CORE, internal/pycore_frame.h, pycore_runtime.h) and are the same for every 3.11.x. */
struct known_release {
	uint32_t minor;
	struct dt_py_offsets off;
};

static const struct known_release known[] = {
	/* 3.10: checked against pyenv's 3.10.13 headers (frameobject.h, pycore_interp.h). */
	{ 10, { .layout = DT_PY_LAYOUT_310,
		.runtime_interp_head = 32,
		.interp_next = 0,
		.interp_threads_head = 8,    /* tstate_head */
		.tstate_next = 8,
		.tstate_thread_id = 176,
		.tstate_cframe = 24,         /* frame */
		.frame_code = 32,
		.frame_previous = 24,        /* f_back */
		.frame_instr = 96,           /* f_lasti */
		.frame_entry = 96,           /* unused */
		.code_firstlineno = 40,
		.code_filename = 104,
		.code_name = 112,
		.code_linetable = 120,
		.bytes_size = 16,
		.bytes_data = 32,
		.str_length = 16,
		.str_state = 32,
		.str_ascii_data = 48,
		.str_compact_data = 72 } },
	{ 11, { .layout = DT_PY_LAYOUT_311,
		.runtime_interp_head = 40,   /* _PyRuntimeState.interpreters.head */
		.interp_next = 0,
		.interp_threads_head = 16,
		.tstate_next = 8,
		.tstate_thread_id = 152,
		.tstate_cframe = 56,
		.cframe_current_frame = 8,
		.frame_code = 32,
		.frame_previous = 48,
		.frame_instr = 56,           /* prev_instr */
		.frame_entry = 68,           /* is_entry */
		.code_firstlineno = 72,
		.code_filename = 112,
		.code_name = 120,
		.code_linetable = 136,
		.code_adaptive = 184,
		.bytes_size = 16,
		.bytes_data = 32,
		.str_length = 16,
		.str_state = 32,
		.str_ascii_data = 48,
		.str_compact_data = 72 } },
	/* 3.12 and 3.13: checked the same way against pyenv's 3.12.1 and 3.13.0 headers. 3.13
	 * publishes its own (_Py_DebugOffsets, read first: debug_offsets()); this row is for a
	 * build whose _PyRuntime cannot be read from its file. */
	{ 12, { .layout = DT_PY_LAYOUT_312,
		.runtime_interp_head = 40,
		.interp_next = 0,
		.interp_threads_head = 72,
		.tstate_next = 8,
		.tstate_thread_id = 136,
		.tstate_cframe = 56,
		.cframe_current_frame = 0,
		.frame_code = 0,
		.frame_previous = 8,
		.frame_instr = 56,           /* prev_instr */
		.frame_entry = 70,           /* owner */
		.code_firstlineno = 68,
		.code_filename = 112,
		.code_name = 120,
		.code_linetable = 136,
		.code_adaptive = 192,
		.bytes_size = 16,
		.bytes_data = 32,
		.str_length = 16,
		.str_state = 32,
		.str_ascii_data = 40,
		.str_compact_data = 56,
		.owner_cstack = 3 } },
	{ 13, { .layout = DT_PY_LAYOUT_313,
		.runtime_interp_head = 632,
		.interp_next = 7264,
		.interp_threads_head = 7344,
		.tstate_next = 8,
		.tstate_thread_id = 152,
		.tstate_cframe = 72,         /* current_frame */
		.frame_code = 0,             /* f_executable */
		.frame_previous = 8,
		.frame_instr = 56,           /* instr_ptr */
		.frame_entry = 70,           /* owner */
		.code_firstlineno = 68,
		.code_filename = 112,
		.code_name = 120,
		.code_linetable = 136,
		.code_adaptive = 200,
		.bytes_size = 16,
		.bytes_data = 32,
		.str_length = 16,
		.str_state = 32,
		.str_ascii_data = 40,
		.str_compact_data = 56,
		.owner_cstack = 3 } },
};

static int read_vaddr(dt_elf *e, const char *path, uint64_t va, void *buf, size_t n);

/* CPython 3.13's _Py_DebugOffsets, the first member of _PyRuntime (Include/internal/
 * pycore_runtime.h of 3.13): 64-bit words, by index. The interpreter publishes where its
 * structures' members are, for out-of-process readers like this one. */
enum {
	DBG_VERSION = 1, DBG_FREE_THREADED = 2, DBG_RT_INTERP_HEAD = 5, DBG_IS_NEXT = 8,
	DBG_IS_THREADS_HEAD = 9, DBG_TS_NEXT = 21, DBG_TS_CURRENT_FRAME = 23, DBG_TS_THREAD_ID = 24,
	DBG_IF_PREVIOUS = 29, DBG_IF_EXECUTABLE = 30, DBG_IF_INSTR_PTR = 31, DBG_IF_OWNER = 33,
	DBG_CO_FILENAME = 35, DBG_CO_NAME = 36, DBG_CO_LINETABLE = 38, DBG_CO_FIRSTLINENO = 39,
	DBG_CO_ADAPTIVE = 43, DBG_BYTES_OB_SIZE = 65, DBG_BYTES_OB_SVAL = 66, DBG_STR_STATE = 68,
	DBG_STR_LENGTH = 69, DBG_STR_ASCII_SIZE = 70, DBG_WORDS = 73,
};

/* The offsets a 3.13 interpreter publishes in the _Py_DebugOffsets at the start of its
 * _PyRuntime (initialized data, so read from the file): 0, or -ENOENT when there is none or its
 * layout is not 3.13's, -EOVERFLOW when an offset does not fit, -EOPNOTSUPP for a free-threaded
 * build (its frames are not read). */
static int debug_offsets(dt_elf *e, const char *path, uint64_t runtime, uint32_t *version,
			 struct dt_py_offsets *o)
{
	uint64_t w[DBG_WORDS];
	static const int idx[] = { DBG_RT_INTERP_HEAD, DBG_IS_NEXT, DBG_IS_THREADS_HEAD,
				   DBG_TS_NEXT, DBG_TS_CURRENT_FRAME, DBG_TS_THREAD_ID,
				   DBG_IF_PREVIOUS, DBG_IF_EXECUTABLE, DBG_IF_INSTR_PTR,
				   DBG_IF_OWNER, DBG_CO_FILENAME, DBG_CO_NAME, DBG_CO_LINETABLE,
				   DBG_CO_FIRSTLINENO, DBG_CO_ADAPTIVE, DBG_BYTES_OB_SIZE,
				   DBG_BYTES_OB_SVAL, DBG_STR_STATE, DBG_STR_LENGTH,
				   DBG_STR_ASCII_SIZE };

	if (read_vaddr(e, path, runtime, w, sizeof(w)) < 0 || memcmp(w, "xdebugpy", 8) ||
	    (w[DBG_VERSION] >> 16) != 0x030d)
		return -ENOENT;
	if (w[DBG_FREE_THREADED])
		return -EOPNOTSUPP;
	for (size_t i = 0; i < DT_ARRAY_SIZE(idx); i++)
		if (w[idx[i]] > UINT16_MAX - 16)
			return -EOVERFLOW;
	*version = (uint32_t)w[DBG_VERSION];
	*o = (struct dt_py_offsets){
		.layout = DT_PY_LAYOUT_313,
		.runtime_interp_head = (uint16_t)w[DBG_RT_INTERP_HEAD],
		.interp_next = (uint16_t)w[DBG_IS_NEXT],
		.interp_threads_head = (uint16_t)w[DBG_IS_THREADS_HEAD],
		.tstate_next = (uint16_t)w[DBG_TS_NEXT],
		.tstate_thread_id = (uint16_t)w[DBG_TS_THREAD_ID],
		.tstate_cframe = (uint16_t)w[DBG_TS_CURRENT_FRAME],
		.frame_code = (uint16_t)w[DBG_IF_EXECUTABLE],
		.frame_previous = (uint16_t)w[DBG_IF_PREVIOUS],
		.frame_instr = (uint16_t)w[DBG_IF_INSTR_PTR],
		.frame_entry = (uint16_t)w[DBG_IF_OWNER],
		.code_firstlineno = (uint16_t)w[DBG_CO_FIRSTLINENO],
		.code_filename = (uint16_t)w[DBG_CO_FILENAME],
		.code_name = (uint16_t)w[DBG_CO_NAME],
		.code_linetable = (uint16_t)w[DBG_CO_LINETABLE],
		.code_adaptive = (uint16_t)w[DBG_CO_ADAPTIVE],
		.bytes_size = (uint16_t)w[DBG_BYTES_OB_SIZE],
		.bytes_data = (uint16_t)w[DBG_BYTES_OB_SVAL],
		.str_length = (uint16_t)w[DBG_STR_LENGTH],
		.str_state = (uint16_t)w[DBG_STR_STATE],
		.str_ascii_data = (uint16_t)w[DBG_STR_ASCII_SIZE],
		/* PyCompactUnicodeObject: PyASCIIObject, then utf8_length and utf8 */
		.str_compact_data = (uint16_t)(w[DBG_STR_ASCII_SIZE] + 16),
		.owner_cstack = 3, /* FRAME_OWNED_BY_CSTACK, not published */
	};
	return 0;
}

/* ---------------------------------------------------------------- discovery */

/* What an interpreter object gave: the same for every process that maps it. */
typedef struct pyobj {
	char *ident;          /* dt_elf_ident */
	bool ok;              /* offsets known and symbols found */
	uint32_t version;     /* PY_VERSION_HEX, or 3.N as 0x030N0000 from the name */
	uint64_t runtime, eval_start, eval_end; /* ELF vaddrs */
	uint64_t cold_start, cold_end;          /* _PyEval_EvalFrameDefault.cold, 0 if unknown */
	struct dt_py_offsets off;
} pyobj;

struct dt_py {
	int procs_fd, codes_fd, threads_fd; /* pyprocs, and the outer maps of pycode, pythreads */
	int code_fd, thread_fd;             /* their inner maps once made, else -1 */
	bool maps_failed;                   /* making them failed (said once) */
	int (*load_step)(void *ctx);        /* loads the walker's Python step (unwinder.c) */
	void *step_ctx;
	bool step_loaded, step_failed;
	int (*debug_file)(void *ctx, const uint8_t *id, size_t idn, char **path);
	void *debug_file_ctx;
	dt_elf_cache *elfc;
	void (*notice)(void *ctx, const char *msg);
	void *notice_ctx;
	void (*log)(void *ctx, const char *msg);
	void *log_ctx;
	DT_VEC(pyobj) objs;
};

dt_py *dt_py_new(dt_elf_cache *elfc, int procs_fd, int codes_fd, int threads_fd,
		 int (*load_step)(void *ctx), void *step_ctx,
		 void (*notice)(void *ctx, const char *msg), void *notice_ctx,
		 void (*log)(void *ctx, const char *msg), void *log_ctx)
{
	dt_py *p = xcalloc(1, sizeof(*p));

	p->log = log;
	p->log_ctx = log_ctx;
	p->elfc = elfc;
	p->procs_fd = procs_fd;
	p->codes_fd = codes_fd;
	p->threads_fd = threads_fd;
	p->code_fd = p->thread_fd = -1;
	p->load_step = load_step;
	p->step_ctx = step_ctx;
	p->notice = notice;
	p->notice_ctx = notice_ctx;
	return p;
}

void dt_py_set_debug_file(dt_py *p, int (*fn)(void *ctx, const uint8_t *id, size_t idn,
					     char **path), void *ctx)
{
	p->debug_file = fn;
	p->debug_file_ctx = ctx;
}

/* The debug file of e by its build-id from p->debug_file (debuginfod), when e has no DWARF and
 * no local debug file has it either; NULL otherwise. */
static dt_elf *fetched_debug_file(dt_py *p, dt_elf *e, dt_elf *dbg)
{
	const uint8_t *id;
	size_t idn = dt_elf_build_id(e, &id);
	char *path = NULL;
	dt_elf *f;
	int rc;

	if (!p->debug_file || !idn || dt_elf_has_section(e, ".debug_info") ||
	    (dbg && dt_elf_has_section(dbg, ".debug_info")))
		return NULL;
	rc = p->debug_file(p->debug_file_ctx, id, idn, &path);
	if (rc < 0) {
		dt_unwind_log(p->log, p->log_ctx, "python: no debug file from debuginfod for %s: %s",
			      dt_elf_ident(e), dt_strerror(-rc));
		return NULL;
	}
	f = dt_elf_open(p->elfc, path);
	free(path);
	return f;
}

void dt_py_free(dt_py *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->objs.n; i++)
		free(p->objs.v[i].ident);
	free(p->objs.v);
	if (p->code_fd >= 0)
		close(p->code_fd);
	if (p->thread_fd >= 0)
		close(p->thread_fd);
	free(p);
}

/* An LRU map of `max` entries in slot 0 of outer map `outer`: its fd, or -errno. */
static int make_inner(int outer, const char *name, uint32_t ksize, uint32_t vsize, uint32_t max)
{
	uint32_t zero = 0;
	int fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, name, ksize, vsize, max, NULL), ret;

	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(outer, &zero, &fd, BPF_ANY) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

static void notice(dt_py *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The walker's pycode and pythreads, made when the first CPython process is seen: false (said
 * once) when the kernel refuses them. */
static bool make_maps(dt_py *p)
{
	int fd;

	if (p->code_fd >= 0 && p->thread_fd >= 0)
		return true;
	if (p->maps_failed)
		return false;
	if (p->code_fd < 0) {
		fd = make_inner(p->codes_fd, "pycode", sizeof(struct dt_py_code_key),
				sizeof(struct dt_py_code), DT_PY_MAX_CODES);
		if (fd < 0)
			goto fail;
		p->code_fd = fd;
	}
	fd = make_inner(p->threads_fd, "pythreads", sizeof(uint32_t), sizeof(uint64_t),
			DT_PY_MAX_THREADS);
	if (fd >= 0) {
		p->thread_fd = fd;
		return true;
	}
fail:
	p->maps_failed = true;
	notice(p, "cannot create the maps of Python frames: %s; stacks of CPython processes show "
	       "the interpreter's native frames", dt_strerror(-fd));
	return false;
}

/* The walker's Python step, loaded when the first CPython process is seen (before its pyprocs
 * entry, so that a held process has Python frames from its first sample): false (said once)
 * when it does not load. */
static bool load_step(dt_py *p)
{
	int ret;

	if (p->step_loaded || !p->load_step)
		return true;
	if (p->step_failed)
		return false;
	ret = p->load_step(p->step_ctx);
	if (ret < 0) {
		p->step_failed = true;
		notice(p, "cannot load the walker's Python step: %s; stacks of CPython processes "
		       "show the interpreter's native frames", dt_strerror(-ret));
		return false;
	}
	p->step_loaded = true;
	return true;
}

/* The minor version N when `path`'s basename names a CPython 3.N interpreter object
 * (python3.N, libpython3.N.so…, libpython3.Nd.so…), else -1. */
static int py_minor_of(const char *path)
{
	const char *b = strrchr(path, '/');
	char *end;
	long minor;

	b = b ? b + 1 : path;
	if (!strncmp(b, "libpython3.", 11)) {
		minor = strtol(b + 11, &end, 10);
		if (end == b + 11)
			return -1;
		while (*end >= 'a' && *end <= 'z')
			end++; /* ABI flags: d, m, t */
		return !strncmp(end, ".so", 3) && minor >= 0 && minor < 100 ? (int)minor : -1;
	}
	if (!strncmp(b, "python3.", 8)) {
		minor = strtol(b + 8, &end, 10);
		return end != b + 8 && (*end == '\0' || !strcmp(end, "d")) && minor >= 0 &&
		       minor < 100 ? (int)minor : -1;
	}
	return -1;
}

struct symfind {
	uint64_t runtime, eval, eval_size, version, cold, cold_size;
	bool debug_build;
};

static int symfind_cb(void *ctx, const dt_elf_sym *s)
{
	struct symfind *f = ctx;

	if (!strcmp(s->name, "_PyRuntime"))
		f->runtime = s->value;
	else if (!strcmp(s->name, "_PyEval_EvalFrameDefault")) {
		f->eval = s->value;
		f->eval_size = s->size;
	} else if (!strcmp(s->name, "_PyEval_EvalFrameDefault.cold")) {
		f->cold = s->value;
		f->cold_size = s->size;
	} else if (!strcmp(s->name, "Py_Version"))
		f->version = s->value;
	else if (!strcmp(s->name, "_Py_NegativeRefcount"))
		f->debug_build = true; /* Py_DEBUG: the table's layouts are not its */
	return 0;
}

/* Reads `n` bytes at ELF vaddr `va` of the file behind e (opened as `path`). */
static int read_vaddr(dt_elf *e, const char *path, uint64_t va, void *buf, size_t n)
{
	size_t nsegs, i;
	const dt_elf_seg *segs = dt_elf_segments(e, &nsegs);
	int fd, ret = -ERANGE;

	for (i = 0; i < nsegs; i++)
		if (va >= segs[i].vaddr && va + n <= segs[i].vaddr + segs[i].filesz)
			break;
	if (i == nsegs)
		return -ERANGE;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, buf, n, (off_t)(segs[i].off + (va - segs[i].vaddr))) == (ssize_t)n)
		ret = 0;
	close(fd);
	return ret;
}

static void notice(dt_py *p, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!p->notice)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->notice(p->notice_ctx, msg);
}

/* -v: which interpreter, and where its offsets came from. */
static void log_found(dt_py *p, const char *display, uint32_t version, const char *from)
{
	char ver[32];

	/* A micro version only from Py_Version (3.11+); the file's name gives 3.N. */
	if (version & 0xffff)
		snprintf(ver, sizeof(ver), "%u.%u.%u", version >> 24, (version >> 16) & 0xff,
			 (version >> 8) & 0xff);
	else
		snprintf(ver, sizeof(ver), "%u.%u", version >> 24, (version >> 16) & 0xff);
	dt_unwind_log(p->log, p->log_ctx, "python: %s: CPython %s, offsets from %s", display, ver,
		      from);
}

const struct dt_py_offsets *dt_py_table_offsets(int minor)
{
	for (size_t i = 0; i < DT_ARRAY_SIZE(known); i++)
		if (known[i].minor == (uint32_t)minor)
			return &known[i].off;
	return NULL;
}

/* The offsets from the DWARF of e (shown as display) or of its debug file dbg: 0, or why not
 * (`missing`: what the DWARF lacks). */
static int dwarf_offsets(dt_elf *e, dt_elf *dbg, const char *display, int minor,
			 struct dt_py_offsets *o, char *from, size_t fromn, char *missing,
			 size_t mn)
{
	dt_elf *src = dt_elf_has_section(e, ".debug_info") ? e :
		      dbg && dt_elf_has_section(dbg, ".debug_info") ? dbg : NULL;
	int rc;

	missing[0] = '\0';
	if (!src)
		return -ENODATA;
	rc = dt_py_dwarf_offsets(dt_elf_handle(src), minor, o, missing, mn);
	if (rc == 0)
		snprintf(from, fromn, "its DWARF (%s)", src == e ? display : dt_elf_path(src));
	return rc;
}

/* Whether the table of known releases may be used (DT_PY_NO_TABLE=1 turns it off: a test hook
 * for the DWARF path and the unknown-version line on an interpreter the table knows). */
static bool table_allowed(void)
{
	const char *v = getenv("DT_PY_NO_TABLE");

	return !v || !*v || !strcmp(v, "0");
}

/* The interpreter facts of the object at `path` (a map_files link) shown as `display`; NULL when
 * it is no CPython runtime (no _PyRuntime: e.g. python3.N linked to libpython, which has it). */
static const pyobj *py_object(dt_py *p, const char *path, const char *display, int minor)
{
	struct symfind f = {0}, fd = {0};
	pyobj o = {0};
	uint32_t hex = 0;
	int rc;
	char from[600] = "", missing[160] = "";
	dt_elf *e = dt_elf_open(p->elfc, path), *dbg, *fetched;

	if (!e)
		return NULL;
	for (size_t i = 0; i < p->objs.n; i++)
		if (!strcmp(p->objs.v[i].ident, dt_elf_ident(e))) {
			dt_elf_put(e);
			return &p->objs.v[i];
		}
	dt_elf_sym_each(e, symfind_cb, &f);
	if (!f.runtime || !f.eval) {
		dt_elf_put(e);
		return NULL; /* not the object holding the runtime */
	}
	/* The separate debug file (elfproc's search): DWARF, and a full symbol table for .cold. */
	dbg = dt_elf_has_symtab(e) && dt_elf_has_section(e, ".debug_info") ? NULL :
	      dt_elf_debug_file(p->elfc, e);
	if (dbg)
		dt_elf_sym_each(dbg, symfind_cb, &fd);
	o.ident = xstrdup(dt_elf_ident(e));
	o.runtime = f.runtime;
	o.eval_start = f.eval;
	o.eval_end = f.eval + (f.eval_size ? f.eval_size : 1);
	if (!f.cold && fd.cold) {
		f.cold = fd.cold;
		f.cold_size = fd.cold_size;
	}
	if (f.cold && f.cold_size) {
		o.cold_start = f.cold;
		o.cold_end = f.cold + f.cold_size;
	}
	/* The version: Py_Version (3.11+) over the file's name. */
	o.version = 0x03000000u | (uint32_t)minor << 16;
	if (f.version && read_vaddr(e, path, f.version, &hex, sizeof(hex)) == 0 &&
	    (hex >> 24) == 3)
		o.version = hex;
	minor = (int)((o.version >> 16) & 0xff);
	/* The offsets: what the interpreter publishes, else its DWARF, else the table of known
	 * releases (release builds: a debug build's structures are not the table's). */
	rc = debug_offsets(e, path, f.runtime, &o.version, &o.off);
	o.ok = rc == 0;
	if (o.ok)
		snprintf(from, sizeof(from), "its _Py_DebugOffsets");
	if (rc == -ENOENT) {
		/* No DWARF here: the DEBUGINFOD_URLS servers' debug file (by build-id), if any. */
		fetched = fetched_debug_file(p, e, dbg);
		if (fetched) {
			dt_elf_put(dbg);
			dbg = fetched;
			if (!o.cold_end) {
				dt_elf_sym_each(dbg, symfind_cb, &fd);
				if (fd.cold && fd.cold_size) {
					o.cold_start = fd.cold;
					o.cold_end = fd.cold + fd.cold_size;
				}
			}
		}
		o.ok = dwarf_offsets(e, dbg, display, minor, &o.off, from, sizeof(from), missing,
				     sizeof(missing)) == 0;
	}
	if (!o.ok && rc == -ENOENT && table_allowed() && !f.debug_build && !fd.debug_build &&
	    dt_py_table_offsets(minor)) {
		o.off = *dt_py_table_offsets(minor);
		o.ok = true;
		snprintf(from, sizeof(from), "the table of known releases");
	}
	dt_elf_put(dbg);
	dt_elf_put(e);
	if (rc == -EOPNOTSUPP)
		notice(p, "%s: CPython 3.%d built free-threaded: its stacks show the "
		       "interpreter's native frames, not Python's", display, minor);
	else if (!o.ok)
		notice(p, "%s: CPython 3.%d%s has no known structure offsets here (%s%s); its stacks "
		       "show the interpreter's native frames, not Python's", display, minor,
		       f.debug_build || fd.debug_build ? ", a debug build," : "",
		       missing[0] ? "its DWARF has no " : "no debug file with DWARF",
		       missing);
	else
		log_found(p, display, o.version, from);
	if (o.ok && o.cold_end)
		dt_unwind_log(p->log, p->log_ctx, "python: %s: the evaluation loop's .cold part at "
			      "0x%" PRIx64 "-0x%" PRIx64, display, o.cold_start, o.cold_end);
	DT_VEC_PUSH(&p->objs, o);
	return &p->objs.v[p->objs.n - 1];
}

/* The load bias of a mapping of e's file at `start` with file offset `off`. */
static bool map_bias(dt_elf *e, uint64_t start, uint64_t off, uint64_t *bias)
{
	size_t nsegs;
	const dt_elf_seg *segs = dt_elf_segments(e, &nsegs);

	for (size_t i = 0; i < nsegs; i++)
		if (off >= (segs[i].off & ~4095ull) && off < segs[i].off + DT_MAX(segs[i].filesz, 1)) {
			*bias = start - (segs[i].vaddr - (segs[i].off - off));
			return true;
		}
	return false;
}

void dt_py_scan(dt_py *p, uint32_t pid, const dt_proc_mappings *maps)
{
	struct dt_py_proc pp = {0};
	bool found = false;
	char mf[96];

	for (size_t k = 0; k < maps->n && !found; k++) {
		const dt_proc_mapping *mp = &maps->v[k];
		const pyobj *o;
		uint64_t bias;
		dt_elf *e;
		int minor;

		if (mp->path[0] != '/' || !mp->inode || mp->perms[2] != 'x' ||
		    (minor = py_minor_of(mp->path)) < 0)
			continue;
		snprintf(mf, sizeof(mf), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, mp->start,
			 mp->end);
		o = py_object(p, mf, mp->path, minor);
		if (!o || !o->ok)
			continue;
		e = dt_elf_open(p->elfc, mf);
		if (!e)
			continue;
		if (map_bias(e, mp->start, mp->offset, &bias)) {
			pp.runtime = o->runtime + bias;
			pp.eval_start = o->eval_start + bias;
			pp.eval_end = o->eval_end + bias;
			if (o->cold_end) {
				pp.cold_start = o->cold_start + bias;
				pp.cold_end = o->cold_end + bias;
			}
			pp.version = o->version;
			pp.off = o->off;
			found = true;
		}
		dt_elf_put(e);
	}
	if (found && make_maps(p) && load_step(p))
		bpf_map_update_elem(p->procs_fd, &pid, &pp, BPF_ANY);
	else
		bpf_map_delete_elem(p->procs_fd, &pid);
}

void dt_py_forget(dt_py *p, uint32_t pid)
{
	bpf_map_delete_elem(p->procs_fd, &pid);
}

/* ---------------------------------------------------------------- naming frames */

/* PEP 393 text (kind bytes a character) as UTF-8. */
static void utf8_of(const uint8_t *s, uint32_t len, uint8_t kind, char *out, size_t n)
{
	size_t o = 0;

	for (uint32_t i = 0; i + kind <= len && o + 5 < n; i += kind) {
		uint32_t c = kind == 1 ? s[i] : kind == 2 ? (uint32_t)(s[i] | s[i + 1] << 8) :
			     (uint32_t)(s[i] | s[i + 1] << 8 | s[i + 2] << 16 | (uint32_t)s[i + 3] << 24);

		if (c < 0x80) {
			out[o++] = (char)c;
		} else if (c < 0x800) {
			out[o++] = (char)(0xc0 | c >> 6);
			out[o++] = (char)(0x80 | (c & 63));
		} else if (c < 0x10000) {
			out[o++] = (char)(0xe0 | c >> 12);
			out[o++] = (char)(0x80 | ((c >> 6) & 63));
			out[o++] = (char)(0x80 | (c & 63));
		} else {
			out[o++] = (char)(0xf0 | c >> 18);
			out[o++] = (char)(0x80 | ((c >> 12) & 63));
			out[o++] = (char)(0x80 | ((c >> 6) & 63));
			out[o++] = (char)(0x80 | (c & 63));
		}
	}
	out[o] = '\0';
}

static uint32_t varint(const uint8_t **p, const uint8_t *end)
{
	uint32_t val = 0, shift = 0;
	uint8_t b;

	do {
		if (*p >= end)
			return val;
		b = *(*p)++;
		val |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while ((b & 64) && shift < 32);
	return val;
}

static int32_t svarint(const uint8_t **p, const uint8_t *end)
{
	uint32_t u = varint(p, end);

	return u & 1 ? -(int32_t)(u >> 1) : (int32_t)(u >> 1);
}

int dt_py_line_311(const uint8_t *lt, uint32_t len, int32_t firstlineno, uint32_t lasti)
{
	const uint8_t *p = lt, *end = lt + len;
	int32_t line = firstlineno;
	uint32_t addr = 0;

	while (p < end) {
		uint8_t b = *p++;
		uint32_t code = (b >> 3) & 15, n = (b & 7) + 1;
		bool none = false;

		if (!(b & 0x80))
			return -1; /* not the start of an entry: a malformed table */
		switch (code) {
		case 15: /* no location */
			none = true;
			break;
		case 14: /* long form: line delta, end line delta, column, end column */
			line += svarint(&p, end);
			varint(&p, end);
			varint(&p, end);
			varint(&p, end);
			break;
		case 13: /* no column */
			line += svarint(&p, end);
			break;
		case 10: case 11: case 12: /* one line, two column bytes */
			line += (int32_t)code - 10;
			p += 2;
			break;
		default: /* short form, one column byte */
			p += 1;
			break;
		}
		if (lasti < addr + n)
			return none ? -1 : line;
		addr += n;
	}
	return -1;
}

int dt_py_line_310(const uint8_t *lt, uint32_t len, int32_t firstlineno, uint32_t lasti)
{
	uint32_t addr = lasti * 2, start, end = 0; /* 3.10's table counts bytes */
	int32_t line = firstlineno, cur;

	for (uint32_t i = 0; i + 1 < len; i += 2) {
		start = end;
		end += lt[i];
		if ((int8_t)lt[i + 1] == -128) {
			cur = -1;
		} else {
			line += (int8_t)lt[i + 1];
			cur = line;
		}
		if (addr >= start && addr < end)
			return cur;
	}
	return -1;
}

/* The line table of a pycode record v whose table is longer than one record: its parts put
 * together (malloc'd, *len bytes), up to the first part missing (an LRU eviction). */
static uint8_t *long_table(dt_py *p, struct dt_py_code_key key, const struct dt_py_code *v,
			   uint32_t *len)
{
	uint32_t total = DT_MIN(v->lt_total, (uint32_t)DT_PY_LT_MAX * DT_PY_LT_PARTS);
	uint8_t *lt = xmalloc(total);
	struct dt_py_code *part = xmalloc(sizeof(*part));
	uint32_t n = DT_MIN(v->lt_len, DT_PY_LT_MAX);

	memcpy(lt, v->lt, n);
	for (key.part = 1; n == key.part * DT_PY_LT_MAX && n < total; key.part++) {
		if (bpf_map_lookup_elem(p->code_fd, &key, part) < 0)
			break;
		memcpy(lt + n, part->lt, DT_MIN(DT_MIN(part->lt_len, DT_PY_LT_MAX), total - n));
		n += DT_MIN(DT_MIN(part->lt_len, DT_PY_LT_MAX), total - n);
	}
	free(part);
	*len = n;
	return lt;
}

int dt_py_frame_name(dt_py *p, uint32_t pid, uint64_t word, char *name, size_t nn, char *file,
		     size_t fnn, uint32_t *line)
{
	struct dt_py_code_key key = {.pid = pid, .code = DT_PY_CODE_OF(word)};
	struct dt_py_code *v = xmalloc(sizeof(*v));
	uint32_t lasti = DT_PY_LASTI_OF(word), ltn;
	const uint8_t *lt;
	uint8_t *big = NULL;
	int l = -1;

	if (p->code_fd < 0 || bpf_map_lookup_elem(p->code_fd, &key, v) < 0) {
		free(v);
		return -ENOENT;
	}
	utf8_of((const uint8_t *)v->name, DT_MIN(v->name_len, DT_PY_NAME_MAX), v->name_kind, name,
		nn);
	utf8_of((const uint8_t *)v->file, DT_MIN(v->file_len, DT_PY_FILE_MAX), v->file_kind, file,
		fnn);
	lt = v->lt;
	ltn = DT_MIN(v->lt_len, DT_PY_LT_MAX);
	if (v->lt_total > ltn && ltn == DT_PY_LT_MAX)
		lt = big = long_table(p, key, v, &ltn);
	if (lasti < DT_PY_LASTI_MAX && v->layout == DT_PY_LAYOUT_310)
		l = dt_py_line_310(lt, ltn, v->firstlineno, lasti);
	else if (lasti < DT_PY_LASTI_MAX)
		l = dt_py_line_311(lt, ltn, v->firstlineno, lasti);
	*line = l > 0 ? (uint32_t)l : 0;
	free(big);
	free(v);
	return 0;
}
