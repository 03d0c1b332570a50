/* symbols.c — addresses become names, after the fact. Kernel addresses are looked up in
 * /proc/kallsyms (read once, lazily, sorted, modules and BPF programs included). User addresses go
 * through a snapshot of the process's /proc/PID/maps taken when the session first saw the pid, so
 * processes that have exited or exec'd still resolve; the snapshot's mapping gives a file offset,
 * the object's PT_LOAD headers turn it into an ELF virtual address, and the object's symbols
 * (.symtab and .dynsym through libelf, one sorted table per object, shared by every process that
 * maps it: objects are cached by device and inode, never per pid) give the name. Files in another
 * mount namespace are opened through /proc/PID/root. The vDSO is read from our own process's image
 * (every process of one kernel maps the same one). Names pass through finalize_name, the one place
 * where demangling will be added. */
#include "runtime/format_internal.h"
#include "common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#define HASH_SIZE 256
#define KSYM_MAX_OFFSET (1u << 20)
#define NOTE_INTERVAL_NS 50000000ull /* 50 ms */

/* ---------------------------------------------------------------- types */

struct ksym {
	uint64_t addr;
	uint32_t name; /* offsets into the kallsyms text, which is kept */
	uint32_t mod;  /* 0: the kernel itself */
};

struct usym {
	uint64_t addr, size;
	uint32_t name; /* offset into obj->names */
	uint32_t rank; /* which of several symbols at one address wins */
};

struct seg {
	uint64_t vaddr, off, filesz, memsz;
};

/* An ELF object, identified by the device and inode /proc/PID/maps names (the vDSO by a flag). */
struct obj {
	uint32_t major, minor;
	uint64_t ino;
	bool vdso;
	char *path;
	bool loaded;
	int err;
	struct usym *syms;
	size_t nsyms;
	char *names;
	size_t names_n, names_cap;
	struct seg *segs;
	size_t nsegs;
	struct obj *next;
};

struct mapping {
	uint64_t start, end, pgoff;
	uint32_t major, minor;
	uint64_t ino;
	char *path;
	const char *base; /* basename of path */
	struct obj *obj;  /* resolved on first use */
};

struct proc {
	uint32_t pid;
	struct mapping *m;
	size_t n;
	uint64_t hash; /* of the maps text, to make a repeated note cheap */
	uint64_t read_ns; /* when the maps were last read */
	struct proc *next;
};

struct dt_symbolizer {
	bool kloaded;
	char *ktext;
	struct ksym *ksyms;
	size_t nksyms;
	struct proc *procs[HASH_SIZE];
	struct obj *objs[HASH_SIZE];
	char *vdso_image;
	size_t vdso_size;
};

/* ---------------------------------------------------------------- names */

/* The single place a raw symbol name becomes the printed one (C++/Rust demangling goes here). */
static void finalize_name(const char *raw, uint64_t off, bool with_off, char *buf, size_t n)
{
	if (with_off)
		snprintf(buf, n, "%s+%" PRIu64, raw, off);
	else
		snprintf(buf, n, "%s", raw);
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

static void kernel_load(dt_symbolizer *s)
{
	DT_VEC(struct ksym) v = {0};
	size_t len;

	s->kloaded = true;
	if (dt_read_file("/proc/kallsyms", &s->ktext, &len))
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

int dt_sym_kernel(dt_symbolizer *s, uint64_t addr, bool with_off, char *buf, size_t n)
{
	const struct ksym *k = s ? kernel_find(s, addr) : NULL;
	/* No kernel function is a megabyte long: an address that far past the nearest symbol
	 * (the end of the image, an unlisted JIT region) is unknown, not "_einittext+1015206693". */
	if (k && addr - k->addr >= KSYM_MAX_OFFSET)
		k = NULL;
	if (!k) {
		snprintf(buf, n, "0x%" PRIx64, addr);
		return -ENOENT;
	}
	finalize_name(s->ktext + k->name, addr - k->addr, with_off, buf, n);
	return 0;
}

const char *dt_sym_kernel_module(dt_symbolizer *s, uint64_t addr)
{
	const struct ksym *k = s ? kernel_find(s, addr) : NULL;
	return k && k->mod ? s->ktext + k->mod : "kernel";
}

/* ---------------------------------------------------------------- ELF objects */

static uint32_t sym_rank(const GElf_Sym *sym)
{
	uint32_t r = 0;
	int type = GELF_ST_TYPE(sym->st_info), bind = GELF_ST_BIND(sym->st_info);
	if (sym->st_size)
		r += 8;
	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		r += 4;
	if (bind == STB_GLOBAL)
		r += 2;
	else if (bind == STB_WEAK)
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

/* Appends e's .symtab/.dynsym function symbols to v; sets *has_symtab if a full .symtab was seen. */
static void read_syms(struct obj *o, Elf *e, void *vec, bool *has_symtab)
{
	DT_VEC(struct usym) *v = vec;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		if (!sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			*has_symtab = true;
		size_t cnt = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < cnt; i++) {
			GElf_Sym sym;
			const char *name;
			int type;
			if (!gelf_getsym(d, (int)i, &sym))
				break;
			type = GELF_ST_TYPE(sym.st_info);
			if (sym.st_shndx == SHN_UNDEF || !sym.st_value ||
			    (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE))
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (!name || !*name || name[0] == '$')
				continue;
			struct usym u = { sym.st_value, sym.st_size, obj_add_name(o, name),
					  sym_rank(&sym) };
			DT_VEC_PUSH(v, u);
		}
	}
}

/* Where a stripped object's separate debug file is: /usr/lib/debug/.build-id/xx/rest.debug from
 * the GNU build-id note, else the .gnu_debuglink name next to the file or under /usr/lib/debug.
 * Returns a malloc'd path of an existing file, or NULL. */
static char *debug_file(Elf *e, const char *path)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	char *found = NULL;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while (!found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		const char *sname = elf_strptr(e, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_NOTE) {
			GElf_Nhdr nh;
			size_t off = 0, name_off, desc_off;
			while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
				if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
				    memcmp((char *)d->d_buf + name_off, "GNU", 4) || nh.n_descsz < 2)
					continue;
				const unsigned char *id = (const unsigned char *)d->d_buf + desc_off;
				char hex[160];
				size_t k = 0;
				for (size_t i = 1; i < nh.n_descsz && k + 3 < sizeof(hex); i++)
					k += (size_t)snprintf(hex + k, sizeof(hex) - k, "%02x", id[i]);
				char *p = xasprintf("/usr/lib/debug/.build-id/%02x/%s.debug", id[0], hex);
				if (access(p, R_OK) == 0) {
					found = p;
					break;
				}
				free(p);
			}
		} else if (sname && !strcmp(sname, ".gnu_debuglink") &&
			   memchr(d->d_buf, '\0', d->d_size)) {
			const char *link = d->d_buf;
			const char *slash = strrchr(path, '/');
			int dirlen = slash ? (int)(slash - path) : 0;
			char *cands[3] = {
				xasprintf("%.*s/%s", dirlen, path, link),
				xasprintf("%.*s/.debug/%s", dirlen, path, link),
				xasprintf("/usr/lib/debug%.*s/%s", dirlen, path, link),
			};
			for (int i = 0; i < 3; i++) {
				/* The link may name the file itself: that is no help. */
				if (!found && strcmp(cands[i], path) && access(cands[i], R_OK) == 0)
					found = cands[i];
				else
					free(cands[i]);
			}
		}
	}
	return found;
}

static int obj_read_elf(struct obj *o, Elf *e, const char *path)
{
	DT_VEC(struct usym) v = {0};
	DT_VEC(struct seg) segs = {0};
	size_t nph = 0;
	bool has_symtab = false;

	if (elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &nph))
		return -ENOEXEC;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
			struct seg sg = { ph.p_vaddr, ph.p_offset, ph.p_filesz, ph.p_memsz };
			DT_VEC_PUSH(&segs, sg);
		}
	}
	read_syms(o, e, &v, &has_symtab);
	/* Stripped (only .dynsym): the separate debug file has the full table, at the same
	 * addresses. */
	char *dbg = path && !has_symtab ? debug_file(e, path) : NULL;
	if (dbg) {
		int fd = open(dbg, O_RDONLY | O_CLOEXEC);
		Elf *de = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
		if (de && elf_kind(de) == ELF_K_ELF)
			read_syms(o, de, &v, &has_symtab);
		if (de)
			elf_end(de);
		if (fd >= 0)
			close(fd);
		free(dbg);
	}
	/* Sort by address, best symbol first at each address, then keep one per address. */
	qsort_r(v.v, v.n, sizeof(*v.v), cmp_usym, o->names);
	size_t k = 0;
	for (size_t i = 0; i < v.n; i++)
		if (!k || v.v[k - 1].addr != v.v[i].addr)
			v.v[k++] = v.v[i];
	o->syms = v.v;
	o->nsyms = k;
	o->segs = segs.v;
	o->nsegs = segs.n;
	return 0;
}

static int obj_open_file(struct obj *o, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err;
	Elf *e;

	if (fd < 0)
		return -errno;
	/* The file at this path must still be the one that was mapped. */
	if (fstat(fd, &st) || (uint64_t)st.st_ino != o->ino) {
		close(fd);
		return -ESTALE;
	}
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e) {
		close(fd);
		return -ENOEXEC;
	}
	err = obj_read_elf(o, e, path);
	elf_end(e);
	close(fd);
	return err;
}

static int vdso_image(dt_symbolizer *s)
{
	char *maps = NULL;
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	int err = -ENOENT;

	if (s->vdso_image)
		return 0;
	if (!base || dt_read_file("/proc/self/maps", &maps, NULL))
		return -ENOENT;
	for (char *line = maps; line && *line;) {
		char *nl = strchr(line, '\n');
		uint64_t start, end;
		if (nl)
			*nl = '\0';
		if (strstr(line, "[vdso]") && sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) == 2 &&
		    start == base && end > start) {
			s->vdso_size = end - start;
			s->vdso_image = xmalloc(s->vdso_size);
			memcpy(s->vdso_image, (const void *)(uintptr_t)start, s->vdso_size);
			err = 0;
			break;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(maps);
	return err;
}

static void obj_load(dt_symbolizer *s, struct obj *o, uint32_t pid)
{
	o->loaded = true;
	if (o->vdso) {
		Elf *e;
		o->err = vdso_image(s);
		if (o->err)
			return;
		e = elf_memory(s->vdso_image, s->vdso_size);
		o->err = e ? obj_read_elf(o, e, NULL) : -ENOEXEC;
		if (e)
			elf_end(e);
		return;
	}
	/* Through the process's root first (containers), then the path as we see it. */
	char *root = xasprintf("/proc/%u/root%s", pid, o->path);
	o->err = obj_open_file(o, root);
	free(root);
	if (o->err)
		o->err = obj_open_file(o, o->path);
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
	return o;
}

/* File offset -> ELF virtual address through the PT_LOAD segment that holds it. */
static uint64_t obj_vaddr(const struct obj *o, uint64_t off)
{
	for (size_t i = 0; i < o->nsegs; i++) {
		const struct seg *sg = &o->segs[i];
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

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static void proc_clear(struct proc *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->m[i].path);
	free(p->m);
	p->m = NULL;
	p->n = 0;
}

static struct proc *proc_find(dt_symbolizer *s, uint32_t pid)
{
	for (struct proc *p = s->procs[pid % HASH_SIZE]; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

/* Parses a maps text into p's mappings: file-backed ones and the vDSO (anonymous memory, the
 * heap and the stack have no symbols). */
static void proc_parse(struct proc *p, char *text)
{
	DT_VEC(struct mapping) v = {0};
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		struct mapping m = {0};
		char perms[8];
		int pathpos = 0;
		if (nl)
			*nl = '\0';
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &m.start, &m.end, perms, &m.pgoff, &m.major, &m.minor, &m.ino,
			   &pathpos) >= 7 && pathpos > 0) {
			char *path = line + pathpos;
			size_t len = strlen(path);
			const char *del = " (deleted)";
			if (len > strlen(del) && !strcmp(path + len - strlen(del), del))
				path[len - strlen(del)] = '\0';
			if (path[0] == '/' || !strcmp(path, "[vdso]")) {
				m.path = xstrdup(path);
				const char *slash = strrchr(m.path, '/');
				m.base = slash ? slash + 1 : m.path;
				DT_VEC_PUSH(&v, m);
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	p->m = v.v;
	p->n = v.n;
}

int dt_sym_note_pid(dt_symbolizer *s, uint32_t pid)
{
	char path[64], *text = NULL;
	size_t len;
	int err;

	/* The session may note a pid for every stack it prints: within a short window the maps
	 * cannot have changed in a way that matters, and a big process's maps take a millisecond
	 * to read. */
	struct proc *known = proc_find(s, pid);
	uint64_t now = dt_now_ns();
	if (known && known->n && now - known->read_ns < NOTE_INTERVAL_NS)
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	err = dt_read_file(path, &text, &len);
	if (err)
		return err;
	/* A process that has exited can leave an empty maps file behind (zombie): keep what we had. */
	if (!len) {
		free(text);
		return proc_find(s, pid) ? 0 : -ESRCH;
	}
	uint64_t h = fnv(text, len);
	struct proc *p = known;
	if (p && p->hash == h) {
		p->read_ns = now;
		free(text);
		return 0;
	}
	if (!p) {
		p = xcalloc(1, sizeof(*p));
		p->pid = pid;
		p->next = s->procs[pid % HASH_SIZE];
		s->procs[pid % HASH_SIZE] = p;
	}
	proc_clear(p);
	p->hash = h;
	p->read_ns = now;
	proc_parse(p, text);
	free(text);
	return 0;
}

static struct mapping *proc_mapping(dt_symbolizer *s, uint32_t pid, uint64_t addr)
{
	struct proc *p = proc_find(s, pid);
	if (!p) {
		/* Not noted by the session: snapshot it now if it still exists. When it does not,
		 * remember an empty snapshot so its other addresses don't retry /proc (a later
		 * dt_sym_note_pid still replaces it). */
		if (dt_sym_note_pid(s, pid)) {
			p = xcalloc(1, sizeof(*p));
			p->pid = pid;
			p->next = s->procs[pid % HASH_SIZE];
			s->procs[pid % HASH_SIZE] = p;
		}
		p = proc_find(s, pid);
	}
	size_t lo = 0, hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->m[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= p->m[lo - 1].end)
		return NULL;
	struct mapping *m = &p->m[lo - 1];
	if (!m->obj)
		m->obj = obj_get(s, m);
	if (!m->obj->loaded)
		obj_load(s, m->obj, pid);
	return m;
}

int dt_sym_user(dt_symbolizer *s, uint32_t pid, uint64_t addr, bool with_off, char *buf, size_t n)
{
	struct mapping *m = s ? proc_mapping(s, pid, addr) : NULL;
	if (!m) {
		snprintf(buf, n, "0x%" PRIx64, addr);
		return -ENOENT;
	}
	uint64_t off = addr - m->start + m->pgoff;
	if (!m->obj->err) {
		uint64_t vaddr = obj_vaddr(m->obj, off);
		const struct usym *u = obj_find(m->obj, vaddr);
		if (u) {
			finalize_name(m->obj->names + u->name, vaddr - u->addr, with_off, buf, n);
			return 0;
		}
	}
	snprintf(buf, n, "%s+0x%" PRIx64, m->base, off);
	return -ENOENT;
}

const char *dt_sym_user_module(dt_symbolizer *s, uint32_t pid, uint64_t addr)
{
	struct mapping *m = s ? proc_mapping(s, pid, addr) : NULL;
	return m ? m->base : NULL;
}

const char *dt_sym_user_path(dt_symbolizer *s, uint32_t pid, uint64_t addr)
{
	struct mapping *m = s ? proc_mapping(s, pid, addr) : NULL;
	return m ? m->path : NULL;
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
	elf_version(EV_CURRENT);
	return xcalloc(1, sizeof(dt_symbolizer));
}

void dt_sym_free(dt_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < HASH_SIZE; i++) {
		for (struct proc *p = s->procs[i], *next; p; p = next) {
			next = p->next;
			proc_clear(p);
			free(p);
		}
		for (struct obj *o = s->objs[i], *next; o; o = next) {
			next = o->next;
			free(o->path);
			free(o->syms);
			free(o->names);
			free(o->segs);
			free(o);
		}
	}
	free(s->ksyms);
	free(s->ktext);
	free(s->vdso_image);
	free(s);
}
