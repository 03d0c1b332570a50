/* elf.c — ELF objects and their cache. An object is a private mapping of the file (the fd is closed
 * at once, so an object opened through /proc/PID/map_files outlives the process) read by libelf;
 * opening it finds in one pass over the section headers what every user asks for: the build-id
 * note, .gnu_debuglink, the symbol tables, and the PT_LOAD segments. The cache keys objects by the
 * file (dev:ino:mtime): a stat tells whether a path is an object already open, which is what the
 * unwinder and the symbolizer ask for each mapping of each process. It does not merge files by
 * build-id, because a separate debug file shares its object's build-id; users that share derived
 * data per build-id (the unwinder's tables) compare dt_elf_ident. Symbol tables have one reader,
 * dt_elf_sym_each, under both the address -> name table and the name -> address lookup. */
#include "elfproc/elfproc_internal.h"
#include "common/common.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void libelf_init(void)
{
	static bool done;

	if (!done) {
		elf_version(EV_CURRENT);
		done = true;
	}
}

/* ---------------------------------------------------------------- reading an image */

static void scan_notes(dt_elf *e, Elf_Scn *scn)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t off = 0, noff, doff;
	GElf_Nhdr nh;

	while (d && d->d_buf && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((char *)d->d_buf + noff, "GNU", 4) && nh.n_descsz >= 2 &&
		    nh.n_descsz <= sizeof(e->build_id)) {
			memcpy(e->build_id, (char *)d->d_buf + doff, nh.n_descsz);
			e->build_id_len = nh.n_descsz;
			return;
		}
	}
}

static bool past_end(uint64_t off, uint64_t len, uint64_t size)
{
	return off > size || len > size - off;
}

/* A file cut short (a copy that stopped, a download in progress) or with headers pointing out of
 * it: libelf reads such a file without complaint and finds no sections, so every question asked
 * of it would be answered "not there". Said once here instead: -EBADMSG. */
static int check_bounds(dt_elf *e)
{
	GElf_Ehdr eh;
	size_t nph = 0;

	if (!gelf_getehdr(e->elf, &eh))
		return -EBADMSG;
	if (eh.e_shoff && past_end(eh.e_shoff, (uint64_t)(eh.e_shnum ? eh.e_shnum : 1) *
				   eh.e_shentsize, e->size))
		return -EBADMSG;
	if (eh.e_phnum && past_end(eh.e_phoff, (uint64_t)eh.e_phnum * eh.e_phentsize, e->size))
		return -EBADMSG;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e->elf, scn));) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    past_end(sh.sh_offset, sh.sh_size, e->size))
			return -EBADMSG;
	}
	if (elf_getphdrnum(e->elf, &nph) < 0)
		nph = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e->elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    past_end(ph.p_offset, ph.p_filesz, e->size))
			return -EBADMSG;
	}
	return 0;
}

const char *dt_elf_strerror(int err)
{
	switch (err) {
	case ENOEXEC:
		return "not a 64-bit ELF file";
	case EBADMSG:
		return "truncated or corrupt ELF file (its headers point past its end)";
	default:
		return dt_strerror(err);
	}
}

/* One pass over the section headers and the program headers. */
static int scan(dt_elf *e)
{
	Elf_Scn *scn = NULL;
	size_t nph, i;
	DT_VEC(dt_elf_seg) segs = {0};
	int ret;

	if (elf_kind(e->elf) != ELF_K_ELF || gelf_getclass(e->elf) != ELFCLASS64)
		return -ENOEXEC;
	ret = check_bounds(e);
	if (ret < 0)
		return ret;
	if (elf_getshdrstrndx(e->elf, &e->shstrndx) < 0)
		return -EBADMSG;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		if (sh.sh_type == SHT_SYMTAB && !e->symtab) {
			e->symtab = scn;
		} else if (sh.sh_type == SHT_DYNSYM && !e->dynsym) {
			e->dynsym = scn;
		} else if (sh.sh_type == SHT_NOTE && !e->build_id_len) {
			scan_notes(e, scn);
		} else if (!e->debuglink && (name = elf_strptr(e->elf, e->shstrndx, sh.sh_name)) &&
			   !strcmp(name, ".gnu_debuglink")) {
			Elf_Data *d = elf_getdata(scn, NULL);

			if (d && d->d_buf && d->d_size > 1 && memchr(d->d_buf, '\0', d->d_size) &&
			    *(const char *)d->d_buf)
				e->debuglink = d->d_buf;
		}
	}
	if (elf_getphdrnum(e->elf, &nph) < 0)
		nph = 0;
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		dt_elf_seg s = { ph.p_vaddr, ph.p_offset, ph.p_filesz, ph.p_memsz,
				 (ph.p_flags & PF_X) != 0 };
		DT_VEC_PUSH(&segs, s);
	}
	e->segs = segs.v;
	e->nsegs = segs.n;
	if (e->build_id_len) {
		int n = 0;

		for (i = 0; i < e->build_id_len; i++)
			n += snprintf(e->ident + n, sizeof(e->ident) - (size_t)n, "%02x",
				      e->build_id[i]);
	}
	return 0;
}

static void obj_free(dt_elf *e)
{
	if (e->elf)
		elf_end(e->elf);
	if (e->image && e->has_file)
		munmap(e->image, e->size);
	else
		free(e->image);
	dt_elf_put(e->dbg);
	free(e->segs);
	free(e->path);
	free(e);
}

/* An object over `image` (taken over). */
static dt_elf *obj_new(void *image, size_t size, bool has_file, const char *path)
{
	dt_elf *e = xcalloc(1, sizeof(*e));
	int ret;

	libelf_init();
	e->refs = 1;
	e->image = image;
	e->size = size;
	e->has_file = has_file;
	e->path = xstrdup(path);
	e->elf = elf_memory(image, size);
	ret = e->elf ? scan(e) : -ENOEXEC;
	if (ret < 0) {
		obj_free(e);
		errno = -ret;
		return NULL;
	}
	return e;
}

/* ---------------------------------------------------------------- the cache */

/* The process's --debuginfo directories (dt_elf_set_debug_dirs): every cache starts with them,
 * and the search of an object opened without a cache uses them. */
static char **g_dirs;
static size_t g_ndirs;

static void copy_dirs(char ***to, size_t *nto, const char *const *dirs, size_t n)
{
	for (size_t i = 0; i < *nto; i++)
		free((*to)[i]);
	free(*to);
	*to = n ? xcalloc(n, sizeof(**to)) : NULL;
	for (size_t i = 0; i < n; i++)
		(*to)[i] = xstrdup(dirs[i]);
	*nto = n;
}

void dt_elf_set_debug_dirs(const char *const *dirs, size_t n)
{
	copy_dirs(&g_dirs, &g_ndirs, dirs, n);
}

const char *const *dt_elf_debug_dirs(const dt_elf_cache *c, size_t *n)
{
	*n = c ? c->ndirs : g_ndirs;
	return (const char *const *)(c ? c->dirs : g_dirs);
}

dt_elf_cache *dt_elf_cache_new(void)
{
	dt_elf_cache *c = xcalloc(1, sizeof(dt_elf_cache));

	copy_dirs(&c->dirs, &c->ndirs, (const char *const *)g_dirs, g_ndirs);
	return c;
}

void dt_elf_cache_set_debug_dirs(dt_elf_cache *c, const char *const *dirs, size_t n)
{
	copy_dirs(&c->dirs, &c->ndirs, dirs, n);
}

void dt_elf_cache_free(dt_elf_cache *c)
{
	if (!c)
		return;
	for (size_t b = 0; b < DT_ELF_BUCKETS; b++)
		for (dt_elf *e = c->buckets[b], *next; e; e = next) {
			next = e->next;
			e->cache = NULL;
			e->next = NULL;
		}
	if (c->vdso)
		c->vdso->cache = NULL;
	dt_elf_cache_set_debug_dirs(c, NULL, 0);
	free(c);
}

size_t dt_elf_cache_count(const dt_elf_cache *c)
{
	return c ? c->count + (c->vdso != NULL) : 0;
}

static size_t bucket_of(dev_t dev, ino_t ino)
{
	return (size_t)(((uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev) >> 24) %
	       DT_ELF_BUCKETS;
}

static bool same_file(const dt_elf *e, const struct stat *st)
{
	return e->dev == st->st_dev && e->ino == st->st_ino &&
	       e->mtime.tv_sec == st->st_mtim.tv_sec && e->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

dt_elf *dt_elf_open(dt_elf_cache *c, const char *path)
{
	struct stat st;
	void *image;
	dt_elf *e;
	int fd, err;

	if (c) {
		if (stat(path, &st) < 0)
			return NULL;
		for (e = c->buckets[bucket_of(st.st_dev, st.st_ino)]; e; e = e->next)
			if (same_file(e, &st))
				return dt_elf_ref(e);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	/* The identity is the opened file's, whatever the path names by now. */
	err = fstat(fd, &st) < 0 ? errno : !S_ISREG(st.st_mode) || st.st_size <= 0 ? ENOEXEC : 0;
	if (err) {
		close(fd);
		errno = err;
		return NULL;
	}
	/* Private and writable: libelf may decompress sections in place of the image. */
	image = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	err = errno;
	close(fd);
	if (image == MAP_FAILED) {
		errno = err;
		return NULL;
	}
	e = obj_new(image, (size_t)st.st_size, true, path);
	if (!e)
		return NULL;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->mtime = st.st_mtim;
	if (!e->build_id_len)
		snprintf(e->ident, sizeof(e->ident), "%llx:%llu:%lld.%09ld",
			 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
			 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	if (c) {
		size_t b = bucket_of(st.st_dev, st.st_ino);

		e->cache = c;
		e->next = c->buckets[b];
		c->buckets[b] = e;
		c->count++;
	}
	return e;
}

dt_elf *dt_elf_open_mem(const void *buf, size_t size, const char *name)
{
	void *copy = xmalloc(size ? size : 1);
	dt_elf *e;

	memcpy(copy, buf, size);
	e = obj_new(copy, size, false, name);
	if (e && !e->build_id_len)
		snprintf(e->ident, sizeof(e->ident), "mem");
	return e;
}

dt_elf *dt_elf_open_vdso(dt_elf_cache *c)
{
	const unsigned char *img = (const void *)getauxval(AT_SYSINFO_EHDR);
	uint64_t shoff, size;
	uint16_t shnum, shentsize;
	dt_elf *e;

	if (c && c->vdso)
		return dt_elf_ref(c->vdso);
	if (!img) {
		errno = ENOENT;
		return NULL;
	}
	/* The image ends with its section headers (as the kernel links it): that is its size,
	 * without reading /proc/self/maps for the mapping's bounds. */
	if (memcmp(img, ELFMAG, SELFMAG) || img[EI_CLASS] != ELFCLASS64) {
		errno = ENOEXEC;
		return NULL;
	}
	memcpy(&shoff, img + offsetof(Elf64_Ehdr, e_shoff), 8);
	memcpy(&shentsize, img + offsetof(Elf64_Ehdr, e_shentsize), 2);
	memcpy(&shnum, img + offsetof(Elf64_Ehdr, e_shnum), 2);
	size = shoff + (uint64_t)shnum * shentsize;
	if (!shoff || size > (1u << 20)) {
		errno = ENOEXEC;
		return NULL;
	}
	e = dt_elf_open_mem(img, (size_t)size, "[vdso]");
	if (!e)
		return NULL;
	snprintf(e->ident, sizeof(e->ident), "vdso");
	if (c) {
		e->cache = c;
		c->vdso = e;
	}
	return e;
}

dt_elf *dt_elf_ref(dt_elf *e)
{
	e->refs++;
	return e;
}

void dt_elf_put(dt_elf *e)
{
	dt_elf_cache *c;

	if (!e || --e->refs)
		return;
	c = e->cache;
	if (c && c->vdso == e) {
		c->vdso = NULL;
	} else if (c) {
		dt_elf **pp = &c->buckets[bucket_of(e->dev, e->ino)];

		while (*pp && *pp != e)
			pp = &(*pp)->next;
		if (*pp) {
			*pp = e->next;
			c->count--;
		}
	}
	obj_free(e);
}

/* ---------------------------------------------------------------- what an object says */

Elf *dt_elf_handle(const dt_elf *e)
{
	return e->elf;
}

const char *dt_elf_path(const dt_elf *e)
{
	return e->path;
}

bool dt_elf_has_file(const dt_elf *e)
{
	return e->has_file;
}

const char *dt_elf_ident(const dt_elf *e)
{
	return e->ident;
}

size_t dt_elf_build_id(const dt_elf *e, const uint8_t **id)
{
	*id = e->build_id;
	return e->build_id_len;
}

const char *dt_elf_debuglink(const dt_elf *e)
{
	return e->debuglink;
}

void dt_elf_file_id(const dt_elf *e, dev_t *dev, ino_t *ino, struct timespec *mtime)
{
	*dev = e->dev;
	*ino = e->ino;
	*mtime = e->mtime;
}

const dt_elf_seg *dt_elf_segments(const dt_elf *e, size_t *n)
{
	*n = e->nsegs;
	return e->segs;
}

int dt_elf_vaddr_to_offset(const dt_elf *e, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < e->nsegs; i++) {
		const dt_elf_seg *s = &e->segs[i];

		if (s->exec && vaddr >= s->vaddr && vaddr < s->vaddr + s->memsz) {
			*off = vaddr - s->vaddr + s->off;
			return 0;
		}
	}
	return -ERANGE;
}

static Elf_Scn *find_section(const dt_elf *e, const char *want)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (name = elf_strptr(e->elf, e->shstrndx, sh.sh_name)) && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

bool dt_elf_has_section(const dt_elf *e, const char *name)
{
	return find_section(e, name) != NULL;
}

int dt_elf_section_get(dt_elf *e, const char *name, dt_elf_section *out)
{
	Elf_Scn *scn = find_section(e, name);
	GElf_Shdr sh;
	Elf_Data *d;

	memset(out, 0, sizeof(*out));
	if (!scn)
		return -ENOENT;
	if (!gelf_getshdr(scn, &sh))
		return -EINVAL;
	/* Decompressed once: libelf keeps the inflated data in the section from then on. */
	if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return -EINVAL;
	d = elf_getdata(scn, NULL);
	if (!d)
		return -EINVAL;
	out->data = d->d_buf;
	out->size = d->d_buf ? d->d_size : 0;
	out->addr = sh.sh_addr;
	return 0;
}

/* ---------------------------------------------------------------- symbols */

bool dt_elf_has_symtab(const dt_elf *e)
{
	return e->symtab != NULL;
}

static int each_in(dt_elf *e, Elf_Scn *scn, bool dynamic,
		   int (*fn)(void *ctx, const dt_elf_sym *sym), void *ctx)
{
	GElf_Shdr sh;
	Elf_Data *d;

	if (!scn || !gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
		return 0;
	for (size_t i = 0, n = sh.sh_size / sh.sh_entsize; i < n; i++) {
		dt_elf_sym s = { .dynamic = dynamic };
		GElf_Sym sym;
		int r;

		if (!gelf_getsym(d, (int)i, &sym))
			break;
		if (sym.st_shndx == SHN_UNDEF)
			continue;
		s.name = elf_strptr(e->elf, sh.sh_link, sym.st_name);
		if (!s.name || !*s.name)
			continue;
		s.value = sym.st_value;
		s.size = sym.st_size;
		s.type = (uint8_t)GELF_ST_TYPE(sym.st_info);
		s.bind = (uint8_t)GELF_ST_BIND(sym.st_info);
		r = fn(ctx, &s);
		if (r)
			return r;
	}
	return 0;
}

int dt_elf_sym_each(dt_elf *e, int (*fn)(void *ctx, const dt_elf_sym *sym), void *ctx)
{
	int r = each_in(e, e->symtab, false, fn, ctx);

	return r ? r : each_in(e, e->dynsym, true, fn, ctx);
}

int dt_elf_plt_each(dt_elf *e, int (*fn)(void *ctx, const dt_elf_sym *sym), void *ctx)
{
	Elf_Scn *rela = find_section(e, ".rela.plt"), *sec = find_section(e, ".plt.sec");
	Elf_Scn *plt = sec ? sec : find_section(e, ".plt");
	GElf_Shdr rsh, psh, dsh;
	Elf_Data *rd, *dd;
	Elf_Scn *dyn;

	if (!rela || !plt || !gelf_getshdr(rela, &rsh) || rsh.sh_type != SHT_RELA ||
	    !rsh.sh_entsize || !gelf_getshdr(plt, &psh) || !(rd = elf_getdata(rela, NULL)) ||
	    !(dyn = elf_getscn(e->elf, rsh.sh_link)) || !gelf_getshdr(dyn, &dsh) ||
	    !(dd = elf_getdata(dyn, NULL)))
		return 0;
	/* x86-64's layout: .plt starts with the resolver stub PLT0, then one 16-byte stub per
	 * .rela.plt entry in order; with IBT (.plt.sec) the stubs called are there, from 0. */
	uint64_t stride = 16, base = psh.sh_addr + (sec ? 0 : stride);
	for (size_t i = 0, n = rsh.sh_size / rsh.sh_entsize; i < n; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		dt_elf_sym s = { .size = stride, .type = STT_FUNC, .bind = STB_LOCAL };
		int rc;

		if (!gelf_getrela(rd, (int)i, &r))
			break;
		if (base + (i + 1) * stride > psh.sh_addr + psh.sh_size)
			break;
		if (!gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &sym))
			continue;
		s.name = elf_strptr(e->elf, dsh.sh_link, sym.st_name);
		if (!s.name || !*s.name)
			continue;
		s.value = base + i * stride;
		rc = fn(ctx, &s);
		if (rc)
			return rc;
	}
	return 0;
}

struct find_ctx {
	const char *want;
	size_t n;
	dt_elf_sym *out;
};

static int find_cb(void *ctx, const dt_elf_sym *s)
{
	struct find_ctx *f = ctx;

	/* Versioned names in .symtab ("memcpy@@GLIBC_2.14") match their base name. */
	if (strncmp(s->name, f->want, f->n) || (s->name[f->n] && s->name[f->n] != '@'))
		return 0;
	if (s->type != STT_FUNC && s->type != STT_GNU_IFUNC && s->type != STT_NOTYPE)
		return 0;
	*f->out = *s;
	return 1;
}

int dt_elf_sym_find(dt_elf *e, const char *name, dt_elf_sym *out)
{
	struct find_ctx f = { name, strlen(name), out };

	return dt_elf_sym_each(e, find_cb, &f) ? 0 : -ENOENT;
}
