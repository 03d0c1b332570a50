/* symbols.c — addresses become names, after the fact. Kernel addresses are looked up in
 * /proc/kallsyms (read once, lazily, sorted, modules and BPF programs included); one inside a
 * module's image (/proc/modules) that no symbol of that module covers is "[mod]+0xoff". User
 * addresses go through a snapshot of the process's /proc/PID/maps taken when the session first saw
 * the pid (the generated code tells it, DT_EV_PID_SEEN), so processes that have exited or exec'd
 * still resolve. A snapshot belongs to one image of the process: exec starts a new address-space
 * generation (the session says which one runs now), every recorded address carries its
 * generation, and it is resolved against that image's snapshot only (an image never snapshotted
 * prints hex, never a later image's names);
 * the snapshot's mapping gives a file offset, the object's PT_LOAD headers turn it into an ELF
 * virtual address, and the object's symbols give the name: .symtab and .dynsym, else a separate
 * debug file (build-id tree, debuglink, --debuginfo dirs), MiniDebugInfo (debuginfo.c) or
 * debuginfod in the background. The files, their symbol tables, the debug-file search and the
 * maps parser are elfproc's, whose ELF cache the session shares with the unwinder. One sorted
 * table per object, shared by every process that maps it: objects are cached by device and
 * inode, never per pid, and opened while the process still lives. Files in another mount
 * namespace are opened through /proc/PID/root. The vDSO is read from our own process's image
 * (every process of one kernel maps the same one). Names are
 * demangled (C++, Rust legacy and v0, through libiberty) once per symbol; with DWARF, inlined
 * callees at an address become frames of their own, with source lines (libdw), cached per
 * address. Every string handed out is interned and lives until dt_sym_free. */
#include "symbols/symbols_internal.h"
#include "bpf-lib/dt_abi.h"
#include "bpf-lib/dt_python.h"
#include "common/common.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libiberty/demangle.h>
#include <inttypes.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#define HASH_SIZE 256
#define KSYM_MAX_OFFSET (1u << 20)
#define NOTE_INTERVAL_NS (DT_PID_NOTE_NS / 2)
/* Objects whose DWARF is open at once: libdw keeps a debug file's parsed units, abbreviations
 * and line tables for as long as it is open (MiBs for a big library), and printing at exit may
 * name frames of a hundred objects. Answers are cached per address, so an object closed for
 * another is opened again only for an address it has not answered yet. */
#define DWARF_OPEN_MAX 8
/* Objects no snapshot maps any more, kept for the next process that maps them (a program started
 * again and again is read once), the least recently dropped released beyond this many or this
 * much of our memory (their symbols and cached answers): builds and upgrades make new files all
 * the time, and a big object's symbols take MiBs. */
#define IDLE_OBJ_MAX 64
#define IDLE_OBJ_BYTES (32u << 20)

/* ---------------------------------------------------------------- types */

struct ksym {
	uint64_t addr;
	uint32_t name; /* offsets into the kallsyms text, which is kept */
	uint32_t mod;  /* 0: the kernel itself */
};

/* A loaded module's core image, from /proc/modules: where it is even where kallsyms has no
 * symbol for an address (stripped modules, data, trampolines), so its frames say "[mod]+0xoff". */
struct kmod {
	uint64_t start, end;
	char *name; /* "[name]", as kallsyms spells the module */
};

struct usym {
	uint64_t addr, size;
	uint32_t name; /* offset into obj->names */
	uint32_t rank; /* which of several symbols at one address wins */
	const char *shown; /* the demangled (or raw) interned name, computed on first use */
};

/* A cached answer for one (address, is-return) in an object: frames [first, first + n). */
struct pc_slot {
	uint64_t key; /* vaddr * 2 + is_return, + 1 so that 0 marks an empty slot */
	uint32_t first, n;
};

/* An ELF object, identified by the device and inode /proc/PID/maps names (the vDSO by a flag). */
struct obj {
	uint32_t major, minor;
	uint64_t ino;
	bool vdso;
	char *path;
	uint64_t entry;     /* e_entry: where a process that runs this file starts (0: none) */
	bool loaded;
	int err;
	struct usym *syms;
	size_t nsyms;
	char *names;
	size_t names_n, names_cap;
	/* What is kept of the object's file once its symbols are read (its image is released: the
	 * pages of its symbol tables would stay in our memory for the whole session). */
	dt_elf_seg *segs;
	size_t nsegs;
	uint8_t bid[64];
	size_t bidn;
	/* DWARF for inline frames and lines: the object's own file or a debug file, at dw_path,
	 * mapped (dwelf) only while its DWARF is open: a held image kept the pages of its symbol
	 * table in our memory for every object ever seen (hundreds of MiB of fresh builds on a
	 * busy machine). dw_own: the object's own file, which must still be the one mapped. */
	dt_elf *dwelf;
	char *dw_path;
	bool dw_own;
	bool dw_tried;
	Dwarf *dw;
	bool dw_ok;            /* dw was opened once (a later debuginfod download is not better) */
	uint64_t dw_use;       /* when dw last answered (the DWARF_OPEN_MAX budget closes the oldest) */
	bool dbgd_wait;        /* a debuginfod fetch was queued for this object */
	uint32_t refs;         /* mappings of snapshots bound to it */
	size_t idle_bytes;     /* what it counted in the idle budget when refs dropped to 0 */
	uint64_t idle_since;   /* when refs last dropped to 0 (IDLE_OBJ_MAX keeps the newest) */
	/* Cache of resolved addresses (open addressing, power-of-two size). */
	struct pc_slot *slots;
	size_t nslots, used;
	DT_VEC(dt_sym_frame) frames;
	struct obj *next;
};

struct mapping {
	uint64_t start, end, pgoff;
	uint32_t major, minor;
	uint64_t ino;
	/* Interned: frames hand them out (dt_sym_frame.module, dt_sym_user_path) and they must
	 * outlive the snapshot, which a later note of the process replaces (dlopen, dlclose). */
	const char *path;
	const char *base; /* basename of path */
	struct obj *obj;  /* resolved on first use */
};

/* One image of a process: exec starts a new generation, with its own snapshot. */
/* A page the kernel names in brackets, not a file: frames in it are named after it. */
struct special {
	uint64_t start, end;
	const char *path; /* interned */
};

struct proc {
	uint32_t pid, gen;
	struct mapping *m; /* the snapshot's files and the vDSO, sorted by start */
	size_t n;
	struct special *sp; /* the kernel's named pages ("[uprobes]", "[vsyscall]"), by start */
	size_t nsp;
	uint64_t hash; /* of the maps text, to make a repeated note cheap */
	uint64_t read_ns; /* when the maps were last read */
	/* The census (dt_sym_census_begin) that last found an address of this image held, and the
	 * first that found the image no longer running (0: running at the last one). */
	uint64_t held, gone;
	struct proc *next;
};

struct dt_symbolizer {
	dt_sym_opts opts;
	dt_elf_cache *elfc;    /* opts.elf_cache, or our own */
	bool own_elfc;
	dt_dbgd *dbgd;
	char **strs;           /* interned strings: open addressing, power-of-two size */
	size_t nstrs, strs_used;
	bool kloaded;
	char *ktext;
	struct ksym *ksyms;
	size_t nksyms;
	struct kmod *kmods;    /* sorted by start */
	size_t nkmods;
	char *kallsyms_path, *modules_path; /* NULL: /proc's */
	struct proc *procs[HASH_SIZE];
	/* The segments of the fixed-address executables the session traces (dt_sym_add_fixed_image):
	 * where a process's maps could not be read (it exited first), an address in one is its. */
	struct mapping *fixed;
	size_t nfixed;
	struct obj *objs[HASH_SIZE];
	dt_sym_py_fn py_fn;    /* names Python frames (dt_sym_set_py_fn); NULL: none */
	void *py_ctx;
	dt_sym_gen_fn gen_fn;  /* which image of a pid runs now; NULL: every process is gen 0 */
	void *gen_ctx;
	/* The last generation read per pid (direct-mapped): the session notes the pid of every
	 * stack it prints, and asking it each time (a map lookup, a syscall) would cost more than
	 * the note. */
	struct gen_memo { uint32_t pid, gen; uint64_t ns; } gen_cache[HASH_SIZE];
	uint64_t census;       /* the current or last census of held addresses, from 1 */
	bool census_open;
	uint64_t nprocs, procs_released;
	uint32_t dw_open;      /* objects whose DWARF is open now (at most DWARF_OPEN_MAX) */
	uint64_t nobjs, idle_objs, obj_clock, objs_released;
	size_t idle_bytes;
	uint64_t dw_clock, dw_opens, dw_closes;
};

/* ---------------------------------------------------------------- names */

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* One copy of every string handed out, so frames can point at names for the symbolizer's life. */
static const char *intern(dt_symbolizer *s, const char *str)
{
	if (s->strs_used * 2 >= s->nstrs) {
		size_t n = s->nstrs ? s->nstrs * 2 : 1024;
		char **v = xcalloc(n, sizeof(*v));
		for (size_t i = 0; i < s->nstrs; i++) {
			if (!s->strs[i])
				continue;
			size_t h = fnv(s->strs[i], strlen(s->strs[i])) & (n - 1);
			while (v[h])
				h = (h + 1) & (n - 1);
			v[h] = s->strs[i];
		}
		free(s->strs);
		s->strs = v;
		s->nstrs = n;
	}
	size_t h = fnv(str, strlen(str)) & (s->nstrs - 1);
	while (s->strs[h]) {
		if (!strcmp(s->strs[h], str))
			return s->strs[h];
		h = (h + 1) & (s->nstrs - 1);
	}
	s->strs[h] = xstrdup(str);
	s->strs_used++;
	return s->strs[h];
}

char *dt_sym_demangle(const char *raw)
{
	/* Only mangled-looking names go to the demangler: "_Z" (C++ and Rust legacy) and "_R"
	 * (Rust v0). DMGL_AUTO tries Rust first (legacy Rust looks like C++ but ends in a hash the
	 * Rust demangler drops), then the C++ ABI. */
	if (!raw || raw[0] != '_' || (raw[1] != 'Z' && raw[1] != 'R'))
		return NULL;
	return cplus_demangle(raw, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}

/* The printed form of a raw symbol or linkage name, interned. */
static const char *shown_name(dt_symbolizer *s, const char *raw)
{
	char *d = s->opts.no_demangle ? NULL : dt_sym_demangle(raw);
	const char *r = intern(s, d ? d : raw);
	free(d);
	return r;
}

static void finalize_name(const char *name, uint64_t off, bool with_off, char *buf, size_t n)
{
	if (with_off)
		snprintf(buf, n, "%s+%" PRIu64, name, off);
	else
		snprintf(buf, n, "%s", name);
}

/* ---------------------------------------------------------------- kernel */

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Several names at one address: keep the file's order (the first listed wins). */
	return x->name < y->name ? -1 : x->name > y->name;
}

static int cmp_kmod(const void *a, const void *b)
{
	const struct kmod *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* /proc/modules: "name size refcount deps state address [taint]" per line. Addresses read as 0
 * when kptr_restrict hides them: those modules are skipped. */
static void modules_load(dt_symbolizer *s)
{
	DT_VEC(struct kmod) v = {0};
	char *text = NULL;
	size_t len;

	if (dt_read_file(s->modules_path ? s->modules_path : "/proc/modules", &text, &len))
		return;
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		char name[64];
		uint64_t size, start;

		if (nl)
			*nl = '\0';
		if (sscanf(line, "%63s %" SCNu64 " %*s %*s %*s %" SCNx64, name, &size, &start) == 3 &&
		    start && size && start + size > start) {
			struct kmod m = { .start = start, .end = start + size,
					  .name = xasprintf("[%s]", name) };
			DT_VEC_PUSH(&v, m);
		}
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	qsort(v.v, v.n, sizeof(*v.v), cmp_kmod);
	s->kmods = v.v;
	s->nkmods = v.n;
}

static const struct kmod *kmod_find(const dt_symbolizer *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nkmods;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->kmods[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < s->kmods[lo - 1].end ? &s->kmods[lo - 1] : NULL;
}

static void kernel_load(dt_symbolizer *s)
{
	DT_VEC(struct ksym) v = {0};
	size_t len;

	s->kloaded = true;
	modules_load(s);
	if (dt_read_file(s->kallsyms_path ? s->kallsyms_path : "/proc/kallsyms", &s->ktext, &len))
		return;
	/* Lines are "ADDR TYPE NAME[\t[MODULE]]"; the text is cut in place into NUL-ended names. */
	for (char *p = s->ktext, *end = s->ktext + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *eol = nl ? nl : end;
		char *q;
		uint64_t addr = strtoull(p, &q, 16);
		if (q + 3 < eol && q[0] == ' ' && q[2] == ' ' && addr) {
			char type = q[1];
			char *name = q + 3, *tab = memchr(name, '\t', (size_t)(eol - name));
			struct ksym k = { .addr = addr, .name = (uint32_t)(name - s->ktext) };
			*eol = '\0';
			if (tab) {
				*tab = '\0';
				k.mod = (uint32_t)(tab + 1 - s->ktext);
			}
			/* Data symbols are skipped as bcc (and so bpftrace) skips them: a stack
			 * frame or a ksym() then never lands on a variable between two functions. */
			if (!strchr("bBdDrR", type))
				DT_VEC_PUSH(&v, k);
		}
		p = eol + 1;
	}
	qsort(v.v, v.n, sizeof(*v.v), cmp_ksym);
	s->ksyms = v.v;
	s->nksyms = v.n;
}

/* The last kernel symbol at or below addr, or NULL. */
static const struct ksym *kernel_find(dt_symbolizer *s, uint64_t addr)
{
	if (!s->kloaded)
		kernel_load(s);
	size_t lo = 0, hi = s->nksyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->ksyms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* Step back to the first name listed at that address. */
	size_t i = lo - 1;
	while (i > 0 && s->ksyms[i - 1].addr == s->ksyms[i].addr)
		i--;
	return &s->ksyms[i];
}

/* The symbol naming a kernel address, or NULL; *mod the module whose image holds it, if any. */
static const struct ksym *kernel_lookup(dt_symbolizer *s, uint64_t addr, const struct kmod **mod)
{
	const struct ksym *k = kernel_find(s, addr);
	const struct kmod *m = kmod_find(s, addr);

	/* No kernel function is a megabyte long: an address that far past the nearest symbol
	 * (the end of the image, an unlisted JIT region) is unknown, not "_einittext+1015206693". */
	if (k && addr - k->addr >= KSYM_MAX_OFFSET)
		k = NULL;
	/* Inside a module, only that module's symbols name it: the nearest symbol below may be the
	 * previous module's last function, or the core kernel's. */
	if (k && m && (!k->mod || strcmp(s->ktext + k->mod, m->name) || k->addr < m->start))
		k = NULL;
	/* And a module's symbol does not name an address past that module's image (pseudo-modules
	 * of kallsyms such as [bpf] or [__builtin__ftrace] have no range: they keep their names). */
	for (size_t i = 0; k && k->mod && !m && i < s->nkmods; i++)
		if (!strcmp(s->ktext + k->mod, s->kmods[i].name))
			k = NULL;
	*mod = m;
	return k;
}

int dt_sym_kernel(dt_symbolizer *s, uint64_t addr, bool with_off, char *buf, size_t n)
{
	const struct kmod *m = NULL;
	const struct ksym *k = s ? kernel_lookup(s, addr, &m) : NULL;

	if (!k) {
		if (m)
			snprintf(buf, n, "%s+0x%" PRIx64, m->name, addr - m->start);
		else
			snprintf(buf, n, "0x%" PRIx64, addr);
		return -ENOENT;
	}
	finalize_name(s->ktext + k->name, addr - k->addr, with_off, buf, n);
	return 0;
}

const char *dt_sym_kernel_module(dt_symbolizer *s, uint64_t addr)
{
	const struct kmod *m = NULL;
	const struct ksym *k = s ? kernel_lookup(s, addr, &m) : NULL;
	if (m)
		return m->name;
	return k && k->mod ? s->ktext + k->mod : "kernel";
}

void dt_sym_set_kernel_files(dt_symbolizer *s, const char *kallsyms, const char *modules)
{
	free(s->kallsyms_path);
	free(s->modules_path);
	s->kallsyms_path = kallsyms ? xstrdup(kallsyms) : NULL;
	s->modules_path = modules ? xstrdup(modules) : NULL;
}

/* ---------------------------------------------------------------- ELF objects */

static uint32_t sym_rank(const dt_elf_sym *sym)
{
	uint32_t r = 0;
	if (sym->size)
		r += 8;
	if (sym->type == STT_FUNC || sym->type == STT_GNU_IFUNC)
		r += 4;
	if (sym->bind == STB_GLOBAL)
		r += 2;
	else if (sym->bind == STB_WEAK)
		r += 1;
	return r;
}

static int cmp_usym(const void *a, const void *b, void *names)
{
	const struct usym *x = a, *y = b;
	const char *cmp_names_base = names;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1; /* best first */
	return strcmp(cmp_names_base + x->name, cmp_names_base + y->name);
}

static uint32_t obj_add_name(struct obj *o, const char *name)
{
	size_t len = strlen(name) + 1;
	if (o->names_n + len > o->names_cap) {
		o->names_cap = DT_MAX(o->names_cap * 2, o->names_n + len + 4096);
		o->names = xrealloc(o->names, o->names_cap);
	}
	memcpy(o->names + o->names_n, name, len);
	o->names_n += len;
	return (uint32_t)(o->names_n - len);
}

typedef DT_VEC(struct usym) usym_vec;

struct read_ctx {
	struct obj *o;
	usym_vec *v;
};

static int read_sym_cb(void *ctx, const dt_elf_sym *sym)
{
	struct read_ctx *r = ctx;

	if (!sym->value || sym->name[0] == '$' ||
	    (sym->type != STT_FUNC && sym->type != STT_GNU_IFUNC && sym->type != STT_NOTYPE))
		return 0;
	struct usym u = { sym->value, sym->size, obj_add_name(r->o, sym->name), sym_rank(sym) };
	DT_VEC_PUSH(r->v, u);
	return 0;
}

/* A PLT stub: "NAME@plt", so that a sample in the stub is not named after whatever symbol
 * precedes .plt (often _init). */
static int read_plt_cb(void *ctx, const dt_elf_sym *sym)
{
	struct read_ctx *r = ctx;
	char *name = xasprintf("%s@plt", sym->name);
	struct usym u = { sym->value, sym->size, obj_add_name(r->o, name), sym_rank(sym) };

	free(name);
	DT_VEC_PUSH(r->v, u);
	return 0;
}

/* Appends e's .symtab/.dynsym function symbols and its PLT stubs to v; sets *has_symtab if e
 * has a full .symtab. */
static void read_syms(struct obj *o, dt_elf *e, usym_vec *v, bool *has_symtab)
{
	struct read_ctx r = { o, v };

	dt_elf_sym_each(e, read_sym_cb, &r);
	dt_elf_plt_each(e, read_plt_cb, &r);
	if (dt_elf_has_symtab(e))
		*has_symtab = true;
}

/* Remembers where the object's DWARF is (for inline frames and lines), if the object has none
 * yet: its own image `own` (kept), or the debug file at `path`. libdw starts on it at first use
 * (dwarf_open): it reads and inflates the debug sections up front, which noting a process must
 * not pay for every library it maps; and a debug file is only mapped then, so the pages of its
 * symbol table (read at load) do not stay in memory. */
static void obj_open_dwarf(struct obj *o, const char *path, bool own)
{
	if (o->dwelf || o->dw_path)
		return;
	o->dw_path = xstrdup(path);
	o->dw_own = own;
}

/* Ends o's libdw session and unmaps its file (opened again by path if needed). */
static void dwarf_close(dt_symbolizer *s, struct obj *o)
{
	if (!o->dw)
		return;
	dwarf_end(o->dw);
	o->dw = NULL;
	o->dw_tried = false;
	dt_elf_put(o->dwelf);
	o->dwelf = NULL;
	s->dw_open--;
	s->dw_closes++;
}

/* Keeps the DWARF_OPEN_MAX budget before another object's DWARF opens: closes the one that
 * answered least recently. */
static void dwarf_make_room(dt_symbolizer *s)
{
	while (s->dw_open >= DWARF_OPEN_MAX) {
		struct obj *oldest = NULL;
		for (size_t i = 0; i < HASH_SIZE; i++)
			for (struct obj *o = s->objs[i]; o; o = o->next)
				if (o->dw && (!oldest || o->dw_use < oldest->dw_use))
					oldest = o;
		if (!oldest)
			return;
		dwarf_close(s, oldest);
	}
}

static Dwarf *dwarf_open(dt_symbolizer *s, struct obj *o)
{
	if (o->dw || o->dw_tried) {
		o->dw_use = ++s->dw_clock;
		return o->dw;
	}
	o->dw_tried = true;
	if (!o->dwelf && o->dw_path)
		o->dwelf = dt_elf_open(s->elfc, o->dw_path);
	if (o->dwelf && o->dw_own) {
		/* Replaced since it was mapped (a rebuild): its DWARF is not this object's. */
		dev_t dev;
		ino_t ino;
		struct timespec mtime;
		dt_elf_file_id(o->dwelf, &dev, &ino, &mtime);
		if ((uint64_t)ino != o->ino) {
			dt_elf_put(o->dwelf);
			o->dwelf = NULL;
		}
	}
	if (o->dwelf && dt_elf_has_section(o->dwelf, ".debug_info")) {
		dwarf_make_room(s);
		o->dw = dwarf_begin_elf(dt_elf_handle(o->dwelf), DWARF_C_READ, NULL);
	}
	if (o->dw) {
		o->dw_ok = true;
		o->dw_use = ++s->dw_clock;
		s->dw_open++;
		s->dw_opens++;
	} else {
		dt_elf_put(o->dwelf); /* nothing to read in it: not held for nothing */
		o->dwelf = NULL;
	}
	return o->dw;
}

/* Whether vaddr lies in an executable PT_LOAD segment (true when there are none to go by). */
static bool in_exec(const dt_elf_seg *segs, size_t n, uint64_t vaddr)
{
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		if (!segs[i].exec)
			continue;
		any = true;
		if (vaddr >= segs[i].vaddr && vaddr < segs[i].vaddr + segs[i].memsz)
			return true;
	}
	return !any;
}

/* Sorts by address, best symbol first at each address, then keeps one per address. Only code can
 * be a frame: symbols outside executable segments (_end, _edata, data objects typed NOTYPE)
 * would otherwise swallow every unnamed address after them. */
static void obj_finish_syms(struct obj *o, struct usym *v, size_t n)
{
	size_t k = 0;

	if (n)
		qsort_r(v, n, sizeof(*v), cmp_usym, o->names);
	for (size_t i = 0; i < n; i++)
		if ((!k || v[k - 1].addr != v[i].addr) && in_exec(o->segs, o->nsegs, v[i].addr))
			v[k++] = v[i];
	o->syms = v;
	o->nsyms = k;
}

static void obj_cache_reset(struct obj *o)
{
	free(o->slots);
	o->slots = NULL;
	o->nslots = o->used = 0;
	o->frames.n = 0;
}

/* Adds the symbols and DWARF of a debug file found later (a debuginfod download). */
static void obj_merge_debug(dt_symbolizer *s, struct obj *o, const char *path)
{
	usym_vec v = { .v = o->syms, .n = o->nsyms, .cap = o->nsyms };
	bool has_symtab = false;
	dt_elf *e = dt_elf_open(s->elfc, path);

	if (e)
		read_syms(o, e, &v, &has_symtab);
	obj_finish_syms(o, v.v, v.n);
	/* The download is the better DWARF source when the object had only a debuglink. */
	if (e && !o->dw_ok) {
		dt_elf_put(o->dwelf);
		o->dwelf = NULL;
		free(o->dw_path);
		o->dw_path = NULL;
		o->dw_tried = false;
		obj_open_dwarf(o, path, false);
	}
	dt_elf_put(e);
	obj_cache_reset(o);
}

/* Symbols and the DWARF source of the object e (a file when `file`, else the vDSO). */
static int obj_read_elf(dt_symbolizer *s, struct obj *o, dt_elf *e, bool file)
{
	usym_vec v = {0};
	bool has_symtab = false, has_dwarf;
	const uint8_t *bid;
	const dt_elf_seg *segs = dt_elf_segments(e, &o->nsegs);

	o->segs = xcalloc(o->nsegs + 1, sizeof(*o->segs));
	if (o->nsegs) /* segs is NULL for an object without segments */
		memcpy(o->segs, segs, o->nsegs * sizeof(*segs));
	o->bidn = dt_elf_build_id(e, &bid);
	if (o->bidn)
		memcpy(o->bid, bid, o->bidn);
	GElf_Ehdr eh;
	if (gelf_getehdr(dt_elf_handle(e), &eh))
		o->entry = eh.e_entry;
	read_syms(o, e, &v, &has_symtab);
	has_dwarf = file && dt_elf_has_section(e, ".debug_info");
	if (has_dwarf)
		obj_open_dwarf(o, o->path, true);

	/* Stripped: a separate debug file has the full table (at the same addresses) and the DWARF
	 * the object lacks. */
	dt_elf *dbg = !has_symtab || !has_dwarf ? dt_elf_debug_file(s->elfc, e) : NULL;
	if (dbg) {
		if (!has_symtab)
			read_syms(o, dbg, &v, &has_symtab);
		obj_open_dwarf(o, dt_elf_path(dbg), false);
		dt_elf_put(dbg);
	}
	/* MiniDebugInfo: the local symbols a stripped Fedora/CentOS object keeps, xz'd. */
	if (!has_symtab) {
		dt_elf *mini = dt_dbg_minidebuginfo(e);
		if (mini) {
			/* read_syms copies the names: the image is not kept. */
			read_syms(o, mini, &v, &has_symtab);
			dt_elf_put(mini);
		}
	}
	/* Still no full table or no DWARF: ask debuginfod, in the background. */
	if ((!has_symtab || (!o->dwelf && !o->dw_path)) && s->dbgd && o->bidn > 0 && file) {
		if (!dt_dbgd_request(s->dbgd, o->bid, o->bidn))
			o->dbgd_wait = true;
	}
	obj_finish_syms(o, v.v, v.n);
	return 0;
}

static int obj_open_file(dt_symbolizer *s, struct obj *o, const char *path)
{
	dt_elf *e = dt_elf_open(s->elfc, path);
	struct timespec mtime;
	dev_t dev;
	ino_t ino;
	int err = -ESTALE;

	if (!e)
		return -errno;
	/* The file at this path must still be the one that was mapped. */
	dt_elf_file_id(e, &dev, &ino, &mtime);
	if ((uint64_t)ino == o->ino)
		err = obj_read_elf(s, o, e, true);
	dt_elf_put(e);
	return err;
}

static void obj_load(dt_symbolizer *s, struct obj *o, uint32_t pid)
{
	o->loaded = true;
	if (o->vdso) {
		dt_elf *e = dt_elf_open_vdso(s->elfc);
		o->err = e ? obj_read_elf(s, o, e, false) : -ENOENT;
		dt_elf_put(e);
		return;
	}
	/* Through the process's root first (containers), then the path as we see it. */
	char *root = xasprintf("/proc/%u/root%s", pid, o->path);
	o->err = obj_open_file(s, o, root);
	free(root);
	if (o->err)
		o->err = obj_open_file(s, o, o->path);
}

static struct obj *obj_get(dt_symbolizer *s, const struct mapping *m)
{
	bool vdso = strcmp(m->path, "[vdso]") == 0;
	uint32_t h = (uint32_t)((m->ino * 31 + m->major * 7 + m->minor) % HASH_SIZE);
	struct obj *o;

	if (vdso)
		h = 0;
	for (o = s->objs[h]; o; o = o->next)
		if (o->vdso == vdso && (vdso || (o->ino == m->ino && o->major == m->major &&
						 o->minor == m->minor)))
			return o;
	o = xcalloc(1, sizeof(*o));
	o->major = m->major;
	o->minor = m->minor;
	o->ino = m->ino;
	o->vdso = vdso;
	o->path = xstrdup(m->path);
	o->next = s->objs[h];
	s->objs[h] = o;
	s->nobjs++;
	s->idle_objs++; /* until a mapping binds it */
	return o;
}

/* The memory an object holds (its symbols, names and cached answers). */
static size_t obj_bytes(const struct obj *o)
{
	return sizeof(*o) + o->nsyms * sizeof(*o->syms) + o->names_cap +
	       o->nslots * sizeof(*o->slots) + o->frames.cap * sizeof(*o->frames.v) +
	       o->nsegs * sizeof(*o->segs);
}

/* Everything an object holds. */
static void obj_free(dt_symbolizer *s, struct obj *o)
{
	if (o->dw) {
		dwarf_end(o->dw);
		s->dw_open--;
	}
	dt_elf_put(o->dwelf);
	free(o->dw_path);
	free(o->segs);
	free(o->slots);
	free(o->frames.v);
	free(o->path);
	free(o->syms);
	free(o->names);
	free(o);
}

/* Keeps at most IDLE_OBJ_MAX objects that no snapshot maps: releases the ones idle longest. The
 * frames they named stay named (their strings are interned). */
static void objs_trim(dt_symbolizer *s)
{
	while (s->idle_objs > IDLE_OBJ_MAX || s->idle_bytes > IDLE_OBJ_BYTES) {
		struct obj **oldest = NULL;
		for (size_t i = 0; i < HASH_SIZE; i++)
			for (struct obj **pp = &s->objs[i]; *pp; pp = &(*pp)->next)
				if (!(*pp)->refs && (!oldest || (*pp)->idle_since < (*oldest)->idle_since))
					oldest = pp;
		if (!oldest)
			return;
		struct obj *o = *oldest;
		*oldest = o->next;
		s->idle_bytes -= o->idle_bytes;
		obj_free(s, o);
		s->nobjs--;
		s->idle_objs--;
		s->objs_released++;
	}
}

/* The object of a snapshot's mapping, bound once (and loaded while the process lives). */
static struct obj *mapping_obj(dt_symbolizer *s, struct mapping *m, uint32_t pid)
{
	if (!m->obj) {
		m->obj = obj_get(s, m);
		if (!m->obj->refs++) {
			s->idle_objs--;
			s->idle_bytes -= m->obj->idle_bytes;
			m->obj->idle_bytes = 0;
		}
	}
	if (!m->obj->loaded)
		obj_load(s, m->obj, pid);
	return m->obj;
}

/* Unbinds a snapshot's mappings from their objects (then frees them). */
static void mappings_release(dt_symbolizer *s, struct mapping *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct obj *o = m[i].obj;
		if (o && !--o->refs) {
			o->idle_since = ++s->obj_clock;
			o->idle_bytes = obj_bytes(o);
			s->idle_objs++;
			s->idle_bytes += o->idle_bytes;
		}
	}
	free(m);
	objs_trim(s);
}

/* File offset -> ELF virtual address through the PT_LOAD segment that holds it. */
static uint64_t obj_vaddr(const struct obj *o, uint64_t off)
{
	for (size_t i = 0; i < o->nsegs; i++) {
		const dt_elf_seg *sg = &o->segs[i];
		if (off >= sg->off && off < sg->off + DT_MAX(sg->filesz, sg->memsz))
			return off - sg->off + sg->vaddr;
	}
	return off;
}

/* The symbol covering vaddr: the nearest one at or below it whose size covers it, else the
 * nearest zero-size one when no sized symbol covers the address (hand-written assembly). */
static const struct usym *obj_find(const struct obj *o, uint64_t vaddr)
{
	size_t lo = 0, hi = o->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct usym *zero = o->syms[lo - 1].size ? NULL : &o->syms[lo - 1];
	/* A few steps back are enough: symbols nest rarely and shallowly. */
	for (size_t i = lo, steps = 0; i-- > 0 && steps < 64; steps++) {
		const struct usym *u = &o->syms[i];
		if (u->size && vaddr < u->addr + u->size)
			return u;
	}
	return zero;
}

/* ---------------------------------------------------------------- processes */

static void proc_clear(dt_symbolizer *s, struct proc *p)
{
	mappings_release(s, p->m, p->n);
	p->m = NULL;
	p->n = 0;
	free(p->sp);
	p->sp = NULL;
	p->nsp = 0;
}

static size_t proc_bucket(uint32_t pid, uint32_t gen)
{
	return (pid ^ gen * 0x9e3779b1u) % HASH_SIZE;
}

static struct proc *proc_find(dt_symbolizer *s, uint32_t pid, uint32_t gen)
{
	for (struct proc *p = s->procs[proc_bucket(pid, gen)]; p; p = p->next)
		if (p->pid == pid && p->gen == gen)
			return p;
	return NULL;
}

static struct proc *proc_add(dt_symbolizer *s, uint32_t pid, uint32_t gen)
{
	struct proc *p = xcalloc(1, sizeof(*p));
	size_t b = proc_bucket(pid, gen);

	p->pid = pid;
	p->gen = gen;
	p->held = s->census; /* new during a census: its addresses may be on their way to a map */
	p->next = s->procs[b];
	s->procs[b] = p;
	s->nprocs++;
	return p;
}

/* The generation the process runs now (what a snapshot read now shows), masked as records
 * carry it. */
static uint32_t cur_gen(const dt_symbolizer *s, uint32_t pid)
{
	return s->gen_fn ? s->gen_fn(s->gen_ctx, pid) & DT_GEN_MASK : 0;
}

/* Parses a maps text (taken over and freed) into p's mappings: file-backed ones and the vDSO
 * (anonymous memory, the heap and the stack have no symbols). Only those are kept, with
 * interned paths: the text itself is as long as the process has mappings. */
static void proc_parse(dt_symbolizer *s, struct proc *p, char *text)
{
	DT_VEC(struct mapping) v = {0};
	DT_VEC(struct special) sp = {0};
	dt_proc_mappings pm_all;

	dt_proc_mappings_parse(text, &pm_all);
	for (size_t i = 0; i < pm_all.n; i++) {
		const dt_proc_mapping *pm = &pm_all.v[i];

		/* The heap, the stack and anonymous memory are not code: no name for them. */
		if (pm->path[0] == '[' && strcmp(pm->path, "[vdso]") && strcmp(pm->path, "[heap]") &&
		    strncmp(pm->path, "[stack", 6) && strncmp(pm->path, "[anon", 5)) {
			DT_VEC_PUSH(&sp, ((struct special){ .start = pm->start, .end = pm->end,
							    .path = intern(s, pm->path) }));
			continue;
		}
		if (pm->path[0] != '/' && strcmp(pm->path, "[vdso]"))
			continue;
		const char *path = intern(s, pm->path), *slash = strrchr(path, '/');
		struct mapping m = { .start = pm->start, .end = pm->end, .pgoff = pm->offset,
				     .major = pm->dev_major, .minor = pm->dev_minor,
				     .ino = pm->inode, .path = path,
				     .base = slash ? slash + 1 : path };
		DT_VEC_PUSH(&v, m);
	}
	dt_proc_mappings_free(&pm_all);
	p->m = v.v;
	p->n = v.n;
	/* The kernel's pages hold no object (their names are interned): the old snapshot's go now.
	 * The mappings are the caller's to release, after the new ones hold their objects. */
	free(p->sp);
	p->sp = sp.v;
	p->nsp = sp.n;
}

/* Snapshots the maps of image `gen` of pid. Only the image running now can be read: for an older
 * one -ESTALE (its addresses then print as hex, not with the names of a later image). */
static int note_pid(dt_symbolizer *s, uint32_t pid, uint32_t gen, bool force)
{
	char path[64], *text = NULL;
	size_t len;
	int err;

	/* The session may note a pid for every stack it prints: within a short window the maps
	 * cannot have changed in a way that matters, and a big process's maps take a millisecond
	 * to read. */
	struct proc *known = proc_find(s, pid, gen);
	uint64_t now = dt_now_ns();
	if (!force && known && known->n && now - known->read_ns < NOTE_INTERVAL_NS)
		return 0;
	if (cur_gen(s, pid) != gen)
		return -ESTALE;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	err = dt_read_file(path, &text, &len);
	if (err)
		return err;
	/* A process that has exited can leave an empty maps file behind (zombie): keep what we had.
	 * One that exec'd while we read shows the next image: not this generation's. */
	if (!len || cur_gen(s, pid) != gen) {
		free(text);
		return len ? -ESTALE : known ? 0 : -ESRCH;
	}
	uint64_t h = fnv(text, len);
	struct proc *p = known;
	if (p && p->hash == h) {
		p->read_ns = now;
		free(text);
		return 0;
	}
	if (!p)
		p = proc_add(s, pid, gen);
	struct mapping *old = p->m;
	size_t oldn = p->n;
	p->hash = h;
	p->read_ns = now;
	proc_parse(s, p, text);
	/* Open the objects now, while the process lives: its files may be gone or replaced (a
	 * rebuilt binary, a container that stops) by the time stacks print, and a debuginfod fetch
	 * started now has the whole session to finish. Objects are shared, so this is paid once. */
	for (size_t i = 0; i < p->n; i++)
		mapping_obj(s, &p->m[i], pid);
	/* The old snapshot's objects are let go after the new one holds its own: a library still
	 * mapped is not released and read again. */
	mappings_release(s, old, oldn);
	return 0;
}

int dt_sym_note_pid(dt_symbolizer *s, uint32_t pid)
{
	/* A stale answer only picks which image to try: note_pid checks the generation again
	 * before it reads anything. */
	struct gen_memo *c = &s->gen_cache[pid % HASH_SIZE];
	uint64_t now = dt_now_ns();
	if (c->pid != pid || !c->ns || now - c->ns >= NOTE_INTERVAL_NS) {
		c->pid = pid;
		c->gen = cur_gen(s, pid);
		c->ns = now;
	}
	return note_pid(s, pid, c->gen, false);
}

int dt_sym_refresh_pid(dt_symbolizer *s, uint32_t pid)
{
	return note_pid(s, pid, cur_gen(s, pid), true);
}

int dt_sym_seen_pid(dt_symbolizer *s, uint32_t pid, uint32_t gen)
{
	return note_pid(s, pid, gen & DT_GEN_MASK, true);
}

void dt_sym_set_py_fn(dt_symbolizer *s, dt_sym_py_fn fn, void *ctx)
{
	s->py_fn = fn;
	s->py_ctx = ctx;
}

/* A Python frame: "function (file.py:line)"; the module is "python". */
static int python_frame(dt_symbolizer *s, uint32_t pid, uint64_t word, dt_sym_frame *out)
{
	char name[512], file[1024];
	uint32_t line = 0;

	out->module = "[python]";
	if (!s || !s->py_fn || s->py_fn(s->py_ctx, pid, word, name, sizeof(name), file,
					 sizeof(file), &line) < 0)
		return -ENOENT;
	out->name = intern(s, name[0] ? name : "<unnamed>");
	out->python = true;
	if (file[0]) {
		out->file = out->src_file = intern(s, file);
		out->line = out->src_line = line;
	}
	return 1;
}

void dt_sym_set_gen_fn(dt_symbolizer *s, dt_sym_gen_fn fn, void *ctx)
{
	s->gen_fn = fn;
	s->gen_ctx = ctx;
}

void dt_sym_census_begin(dt_symbolizer *s)
{
	s->census++;
	s->census_open = true;
}

void dt_sym_hold(dt_symbolizer *s, uint32_t pid, uint32_t gen)
{
	struct proc *p = s->census_open ? proc_find(s, pid, gen & DT_GEN_MASK) : NULL;

	if (p)
		p->held = s->census;
}

/* Whether image `gen` of pid may still run (and so record addresses): the process exists and
 * has not exec'd since. A reused pid counts as running: its snapshot waits for that one. */
static bool image_running(const dt_symbolizer *s, const struct proc *p)
{
	if (kill((pid_t)p->pid, 0) < 0 && errno == ESRCH)
		return false;
	return cur_gen(s, p->pid) == p->gen;
}

int dt_sym_census_end(dt_symbolizer *s, bool complete)
{
	int released = 0;

	if (!s->census_open)
		return 0;
	s->census_open = false;
	for (size_t b = 0; b < HASH_SIZE; b++) {
		for (struct proc **pp = &s->procs[b]; *pp;) {
			struct proc *p = *pp;

			if (p->held == s->census || image_running(s, p)) {
				p->gone = 0;
			} else if (!p->gone) {
				p->gone = s->census;
			} else if (complete && p->gone < s->census) {
				/* It had stopped before this census began, so every address it
				 * recorded was in the maps this census read, or in events long
				 * since printed: none of them is this image's. */
				*pp = p->next;
				proc_clear(s, p);
				free(p);
				s->nprocs--;
				s->procs_released++;
				released++;
				continue;
			}
			pp = &p->next;
		}
	}
	return released;
}

void dt_sym_get_stats(const dt_symbolizer *s, dt_sym_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->procs = s->nprocs;
	st->procs_released = s->procs_released;
	st->objects = s->nobjs;
	st->objects_idle = s->idle_objs;
	st->objects_released = s->objs_released;
	st->dwarf_open = s->dw_open;
	st->dwarf_opens = s->dw_opens;
	st->dwarf_closes = s->dw_closes;
	st->strings = s->strs_used;
}

void dt_sym_print_stats(const dt_symbolizer *s, FILE *f)
{
	dt_sym_stats st;

	dt_sym_get_stats(s, &st);
	fprintf(f, "symbols procs %" PRIu64 "\n", st.procs);
	fprintf(f, "symbols procs_released %" PRIu64 "\n", st.procs_released);
	fprintf(f, "symbols objects %" PRIu64 "\n", st.objects);
	fprintf(f, "symbols objects_idle %" PRIu64 " (at most %d, %u MiB)\n", st.objects_idle,
		IDLE_OBJ_MAX, IDLE_OBJ_BYTES >> 20);
	fprintf(f, "symbols objects_released %" PRIu64 "\n", st.objects_released);
	fprintf(f, "symbols dwarf_open %" PRIu64 " (at most %d)\n", st.dwarf_open, DWARF_OPEN_MAX);
	fprintf(f, "symbols dwarf_opens %" PRIu64 "\n", st.dwarf_opens);
	fprintf(f, "symbols dwarf_closes %" PRIu64 "\n", st.dwarf_closes);
	fprintf(f, "symbols strings %" PRIu64 "\n", st.strings);
}

static struct mapping *proc_mapping(dt_symbolizer *s, uint32_t pid, uint32_t gen, uint64_t addr)
{
	gen &= DT_GEN_MASK;
	struct proc *p = proc_find(s, pid, gen);
	if (!p) {
		/* Not noted by the session: snapshot it now if it still exists and still runs this
		 * image. When it does not, remember an empty snapshot so its other addresses don't
		 * retry /proc (a later note still replaces it). */
		if (note_pid(s, pid, gen, false))
			proc_add(s, pid, gen);
		p = proc_find(s, pid, gen);
	}
	size_t lo = 0, hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->m[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!p->n) {
		/* No maps of this image (it exited before they were read): a fixed-address
		 * executable the session traces is where it was, whatever the process. */
		for (size_t i = 0; i < s->nfixed; i++)
			if (addr >= s->fixed[i].start && addr < s->fixed[i].end) {
				mapping_obj(s, &s->fixed[i], pid);
				return &s->fixed[i];
			}
		return NULL;
	}
	if (!lo || addr >= p->m[lo - 1].end)
		return NULL;
	struct mapping *m = &p->m[lo - 1];
	mapping_obj(s, m, pid);
	return m;
}

bool dt_sym_user_at_entry(dt_symbolizer *s, uint32_t pid, uint32_t gen, uint64_t addr)
{
	struct mapping *m = s ? proc_mapping(s, pid, gen, addr) : NULL;

	if (!m || !m->obj || m->obj->err || !m->obj->entry)
		return false;
	return obj_vaddr(m->obj, addr - m->start + m->pgoff) == m->obj->entry;
}

int dt_sym_add_fixed_image(dt_symbolizer *s, const char *path)
{
	char *real = realpath(path, NULL);
	dt_elf *e = real ? dt_elf_open(s->elfc, real) : NULL;
	GElf_Ehdr eh;
	int rc = 0;

	if (!e) {
		rc = -errno;
		goto out;
	}
	dev_t dev;
	ino_t ino;
	struct timespec mt;
	dt_elf_file_id(e, &dev, &ino, &mt);
	for (size_t i = 0; i < s->nfixed; i++)
		if (s->fixed[i].ino == ino && s->fixed[i].major == major(dev) &&
		    s->fixed[i].minor == minor(dev))
			goto out; /* added already */
	if (!gelf_getehdr(dt_elf_handle(e), &eh) || eh.e_type != ET_EXEC)
		goto out; /* position-independent: where it was is unknown without the maps */
	size_t n;
	const dt_elf_seg *sg = dt_elf_segments(e, &n);
	const char *base = strrchr(real, '/');
	for (size_t i = 0; i < n; i++) {
		if (!sg[i].exec)
			continue;
		s->fixed = xrealloc(s->fixed, (s->nfixed + 1) * sizeof(*s->fixed));
		/* As the kernel maps it: from the page the segment starts in. */
		uint64_t skew = sg[i].vaddr & 4095;
		s->fixed[s->nfixed++] = (struct mapping){
			.start = sg[i].vaddr - skew, .end = sg[i].vaddr + sg[i].memsz,
			.pgoff = sg[i].off - skew, .major = major(dev), .minor = minor(dev),
			.ino = ino, .path = intern(s, real), .base = intern(s, base ? base + 1 : real),
		};
	}
out:
	dt_elf_put(e);
	free(real);
	return rc;
}

/* The page the kernel names in brackets ("[uprobes]", "[vsyscall]") that covers addr in the
 * snapshot; NULL if none. */
static const struct special *special_mapping(dt_symbolizer *s, uint32_t pid, uint32_t gen,
					     uint64_t addr)
{
	struct proc *p = proc_find(s, pid, gen & DT_GEN_MASK);

	for (size_t i = 0; p && i < p->nsp; i++)
		if (addr >= p->sp[i].start && addr < p->sp[i].end)
			return &p->sp[i];
	return NULL;
}

/* ---------------------------------------------------------------- DWARF: inline frames, lines */

static const char *die_str(Dwarf_Die *d, int at)
{
	Dwarf_Attribute a;
	return dwarf_formstring(dwarf_attr_integrate(d, at, &a));
}

/* A subprogram's or inlined subroutine's printed name: the linkage name demangled (it carries the
 * namespace and the parameters), else DW_AT_name. */
static const char *die_name(dt_symbolizer *s, Dwarf_Die *d)
{
	const char *n = die_str(d, DW_AT_linkage_name);
	if (!n)
		n = die_str(d, DW_AT_MIPS_linkage_name);
	if (n)
		return shown_name(s, n);
	n = die_str(d, DW_AT_name);
	return n ? intern(s, n) : NULL;
}

static void call_site(dt_symbolizer *s, Dwarf_Die *cu, Dwarf_Die *inl, const char **file,
		      uint32_t *line)
{
	Dwarf_Attribute a;
	Dwarf_Word w;
	Dwarf_Files *files;
	size_t nfiles;

	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &w) == 0)
		*line = (uint32_t)w;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &w) == 0 &&
	    dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && w < nfiles) {
		const char *f = dwarf_filesrc(files, w, NULL, NULL);
		*file = f ? intern(s, f) : NULL;
	}
}

/* The innermost DIE under `die` whose ranges hold pc (a subprogram, an inlined instance, a
 * lexical block), into *out; false when no child holds it. The children are searched level by
 * level, as dwarf_getscopes' traversal prunes what does not hold pc. Ours because libdw 0.188's
 * dwarf_getscopes loses its array (a leak under ASan, and no frames) when an inlined instance's
 * abstract origin is not where it looks; the concrete DIE's parents, dwarf_getscopes_die, are
 * the chain of inlined calls anyway (as eu-addr2line -i walks it). */
static bool innermost_at(Dwarf_Die *die, uint64_t pc, Dwarf_Die *out, int depth)
{
	Dwarf_Die child;
	bool found = false;

	if (depth > 64 || dwarf_child(die, &child) != 0)
		return false;
	do {
		if (dwarf_haspc(&child, pc) <= 0)
			continue;
		*out = child;
		found = true;
		innermost_at(&child, pc, out, depth + 1);
		break;
	} while (dwarf_siblingof(&child, &child) == 0);
	return found;
}

/* Appends the frames DWARF knows at pc to o->frames, innermost first: each inlined callee
 * (inlined = true), then the function they were inlined into, whose name the caller replaces by
 * the symbol table's. Returns how many were added (0: no DWARF covers pc). */
static uint32_t dwarf_frames(dt_symbolizer *s, struct obj *o, uint64_t pc)
{
	Dwarf_Die cu, inner, *scopes = NULL;
	int n;
	uint32_t added = 0;
	const char *file = NULL;
	uint32_t line = 0;

	if (!dwarf_open(s, o) || !dwarf_addrdie(o->dw, pc, &cu))
		return 0;
	Dwarf_Line *l = dwarf_getsrc_die(&cu, pc);
	if (l) {
		int ln = 0;
		const char *f = dwarf_linesrc(l, NULL, NULL);
		dwarf_lineno(l, &ln);
		file = f ? intern(s, f) : NULL;
		line = (uint32_t)DT_MAX(ln, 0);
	}
	n = innermost_at(&cu, pc, &inner, 0) ? dwarf_getscopes_die(&inner, &scopes) : 0;
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		dt_sym_frame f = { .name = die_name(s, &scopes[i]), .file = file, .line = line,
				   .inlined = tag == DW_TAG_inlined_subroutine };
		DT_VEC_PUSH(&o->frames, f);
		added++;
		if (tag == DW_TAG_subprogram || added >= DT_SYM_MAX_INLINE)
			break;
		/* The caller's line is where this callee was inlined. */
		call_site(s, &cu, &scopes[i], &file, &line);
	}
	free(scopes);
	/* Only inlined scopes and no enclosing subprogram (odd DWARF): the function frame is
	 * still needed, it comes from the symbol table. */
	if (added && o->frames.v[o->frames.n - 1].inlined) {
		dt_sym_frame f = { .file = file, .line = line };
		DT_VEC_PUSH(&o->frames, f);
		added++;
	}
	return added;
}

static struct pc_slot *cache_slot(struct obj *o, uint64_t key)
{
	if (!o->nslots)
		return NULL;
	for (size_t h = (key * 0x9e3779b97f4a7c15ull >> 20) & (o->nslots - 1);;
	     h = (h + 1) & (o->nslots - 1))
		if (!o->slots[h].key || o->slots[h].key == key)
			return &o->slots[h];
}

static struct pc_slot *cache_insert(struct obj *o, uint64_t key)
{
	if ((o->used + 1) * 2 > o->nslots) {
		struct pc_slot *old = o->slots;
		size_t oldn = o->nslots;
		o->nslots = oldn ? oldn * 2 : 256;
		o->slots = xcalloc(o->nslots, sizeof(*o->slots));
		for (size_t i = 0; i < oldn; i++)
			if (old[i].key)
				*cache_slot(o, old[i].key) = old[i];
		free(old);
	}
	struct pc_slot *sl = cache_slot(o, key);
	sl->key = key;
	o->used++;
	return sl;
}

/* A debuginfod download that has arrived is merged before the object answers again. */
static void obj_poll_dbgd(dt_symbolizer *s, struct obj *o)
{
	char *path = NULL;
	int rc;

	if (!o->dbgd_wait)
		return;
	rc = dt_dbgd_result(s->dbgd, o->bid, o->bidn, &path);
	if (rc == -EINPROGRESS)
		return;
	o->dbgd_wait = false;
	if (rc == 0)
		obj_merge_debug(s, o, path);
	free(path);
}

/* Resolves one object-relative address: the cached frames, computed on first use. */
static const struct pc_slot *obj_resolve(dt_symbolizer *s, struct obj *o, uint64_t vaddr,
					 bool is_return)
{
	uint64_t key = (vaddr * 2 + is_return) + 1;
	struct pc_slot *sl = cache_slot(o, key);

	if (sl && sl->key == key)
		return sl;
	uint32_t first = (uint32_t)o->frames.n, n = 0;
	const struct usym *u = obj_find(o, vaddr);

	/* A return address points after the call: the call itself (vaddr - 1) is the line and the
	 * inline context that was running. The offset printed stays the return address's. */
	if (!s->opts.no_inline || s->opts.srcline)
		n = dwarf_frames(s, o, is_return && vaddr ? vaddr - 1 : vaddr);
	if (n && s->opts.no_inline) {
		/* Only the line was wanted: keep the outermost frame, with the call's line. */
		dt_sym_frame last = o->frames.v[first + n - 1];
		o->frames.n = first;
		DT_VEC_PUSH(&o->frames, last);
		n = 1;
	}
	if (!n) {
		dt_sym_frame f = { 0 };
		DT_VEC_PUSH(&o->frames, f);
		n = 1;
	}
	dt_sym_frame *fn = &o->frames.v[first + n - 1];
	if (u) {
		if (!u->shown)
			((struct usym *)u)->shown = shown_name(s, o->names + u->name);
		fn->name = u->shown;
		fn->off = vaddr - u->addr;
	} else if (fn->name) {
		fn->off = 0; /* named by DWARF only: no symbol to measure from */
	}
	fn->inlined = false;
	for (uint32_t i = 0; i < n; i++) {
		dt_sym_frame *f = &o->frames.v[first + i];
		f->src_file = f->file;
		f->src_line = f->line;
		if (!s->opts.srcline)
			f->file = NULL, f->line = 0;
	}
	sl = cache_insert(o, key);
	sl->first = first;
	sl->n = n;
	return sl;
}

int dt_sym_user_frames(dt_symbolizer *s, uint32_t pid, uint32_t gen, uint64_t addr,
		       bool is_return, dt_sym_frame *out, int max)
{
	struct mapping *m;

	if (max <= 0)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (DT_PY_IS_FRAME(addr))
		return python_frame(s, pid, addr, out);
	m = s ? proc_mapping(s, pid, gen, addr) : NULL;
	if (!m) {
		/* The kernel's own pages ([uprobes], the trampoline a uprobe runs its copied
		 * instruction in; [vsyscall]) are named as perf names them. */
		const struct special *pm = s && max > 0 ? special_mapping(s, pid, gen, addr) : NULL;
		if (pm) {
			out->module = pm->path;
			out->module_off = addr - pm->start;
		}
		return -ENOENT;
	}
	uint64_t off = addr - m->start + m->pgoff;
	out->module = m->base;
	out->module_off = off;
	if (m->obj->err)
		return -ENOENT;
	obj_poll_dbgd(s, m->obj);
	const struct pc_slot *sl = obj_resolve(s, m->obj, obj_vaddr(m->obj, off), is_return);
	int n = (int)DT_MIN(sl->n, (uint32_t)max);
	/* Keep the outermost (the function) when the caller has less room than inline frames. */
	const dt_sym_frame *src = &m->obj->frames.v[sl->first + sl->n - (uint32_t)n];
	for (int i = 0; i < n; i++) {
		out[i] = src[i];
		out[i].module = m->base;
		out[i].module_off = off;
	}
	return out[n - 1].name ? n : -ENOENT;
}

void dt_sym_frame_text(const dt_sym_frame *f, uint64_t addr, bool with_off, char *buf, size_t n)
{
	int k;

	if (f->name && (f->inlined || f->python || !with_off))
		k = snprintf(buf, n, "%s", f->name);
	else if (f->name)
		k = snprintf(buf, n, "%s+%" PRIu64, f->name, f->off);
	else if (f->module && f->module[0] == '[')
		k = snprintf(buf, n, "%s", f->module); /* a kernel page: [uprobes], as perf says */
	else if (f->module)
		/* Bracketed, so that "[sleep]+0x64af" (in /bin/sleep, no symbol) never reads as
		 * libc's sleep(). */
		k = snprintf(buf, n, "[%s]+0x%" PRIx64, f->module, f->module_off);
	else
		k = snprintf(buf, n, "0x%" PRIx64, addr);
	if (k < 0 || (size_t)k >= n)
		return;
	if (f->inlined)
		k += snprintf(buf + k, n - (size_t)k, " [inlined]");
	if (f->file && (size_t)k < n) {
		const char *base = strrchr(f->file, '/');
		snprintf(buf + k, n - (size_t)k, " (%s:%u)", base ? base + 1 : f->file, f->line);
	}
}

int dt_sym_user(dt_symbolizer *s, uint32_t pid, uint32_t gen, uint64_t addr, bool with_off,
		char *buf, size_t n)
{
	dt_sym_frame f[DT_SYM_MAX_INLINE];
	int k = dt_sym_user_frames(s, pid, gen, addr, false, f, DT_SYM_MAX_INLINE);
	const dt_sym_frame *fn = k > 0 ? &f[k - 1] : &f[0];

	/* One name for usym() and callers that want one: the real function, not inlined ones. */
	dt_sym_frame plain = *fn;
	plain.file = NULL;
	if (k < 0 && !s)
		plain.module = NULL;
	dt_sym_frame_text(&plain, addr, with_off, buf, n);
	return k > 0 ? 0 : -ENOENT;
}

const char *dt_sym_user_module(dt_symbolizer *s, uint32_t pid, uint32_t gen, uint64_t addr)
{
	struct mapping *m = s ? proc_mapping(s, pid, gen, addr) : NULL;
	return m ? m->base : NULL;
}

const char *dt_sym_user_path(dt_symbolizer *s, uint32_t pid, uint32_t gen, uint64_t addr)
{
	struct mapping *m = s ? proc_mapping(s, pid, gen, addr) : NULL;
	return m ? m->path : NULL;
}

size_t dt_sym_user_build_id(dt_symbolizer *s, uint32_t pid, uint32_t gen, uint64_t addr,
			    const uint8_t **id, uint64_t *file_off)
{
	struct mapping *m = s && !DT_PY_IS_FRAME(addr) ? proc_mapping(s, pid, gen, addr) : NULL;

	if (!m || m->obj->err || !m->obj->bidn)
		return 0;
	*id = m->obj->bid;
	*file_off = addr - m->start + m->pgoff;
	return m->obj->bidn;
}

size_t dt_sym_objects_loaded(const dt_symbolizer *s)
{
	size_t n = 0;
	for (size_t i = 0; i < HASH_SIZE; i++)
		for (const struct obj *o = s->objs[i]; o; o = o->next)
			n += o->loaded;
	return n;
}

/* ---------------------------------------------------------------- lifetime */

dt_symbolizer *dt_sym_new(void)
{
	dt_symbolizer *s = xcalloc(1, sizeof(dt_symbolizer));

	s->elfc = dt_elf_cache_new();
	s->own_elfc = true;
	s->dbgd = dt_dbgd_new();
	return s;
}

void dt_sym_set_opts(dt_symbolizer *s, const dt_sym_opts *o)
{
	s->opts = *o;
	if (o->elf_cache && o->elf_cache != s->elfc) {
		if (s->own_elfc)
			dt_elf_cache_free(s->elfc);
		s->elfc = o->elf_cache;
		s->own_elfc = false;
	}
	if (o->no_debuginfod) {
		dt_dbgd_free(s->dbgd);
		s->dbgd = NULL;
	}
}

int dt_sym_debuginfod_file(dt_symbolizer *s, const uint8_t *id, size_t idn, uint64_t timeout_ns,
			   char **path)
{
	int rc;

	*path = NULL;
	if (!s || !s->dbgd || !idn)
		return -ENOENT;
	rc = dt_dbgd_request(s->dbgd, id, idn);
	if (rc < 0 && rc != -EEXIST)
		return rc;
	/* The client's wait is for every queued fetch; the result says whether this one is in. */
	dt_dbgd_wait(s->dbgd, timeout_ns);
	rc = dt_dbgd_result(s->dbgd, id, idn, path);
	return rc == -EINPROGRESS ? -ETIMEDOUT : rc;
}

bool dt_sym_wait_downloads(dt_symbolizer *s, uint64_t timeout_ns)
{
	return dt_dbgd_wait(s ? s->dbgd : NULL, timeout_ns);
}

void dt_sym_free(dt_symbolizer *s)
{
	if (!s)
		return;
	dt_dbgd_free(s->dbgd);
	mappings_release(s, s->fixed, s->nfixed);
	for (size_t i = 0; i < HASH_SIZE; i++) {
		for (struct proc *p = s->procs[i], *next; p; p = next) {
			next = p->next;
			free(p->m);
			free(p->sp);
			free(p);
		}
		for (struct obj *o = s->objs[i], *next; o; o = next) {
			next = o->next;
			obj_free(s, o);
		}
	}
	for (size_t i = 0; i < s->nstrs; i++)
		free(s->strs[i]);
	free(s->strs);
	if (s->own_elfc)
		dt_elf_cache_free(s->elfc);
	free(s->ksyms);
	free(s->ktext);
	for (size_t i = 0; i < s->nkmods; i++)
		free(s->kmods[i].name);
	free(s->kmods);
	free(s->kallsyms_path);
	free(s->modules_path);
	free(s);
}
