/* elfobj.c — finding the CFI of an ELF object: its .eh_frame (what the runtime unwinder of C++ and
 * Rust uses, so it is present in nearly every binary), else its .debug_frame (possibly compressed),
 * else the .debug_frame of a separate debug file found by build-id or .gnu_debuglink. Also the
 * object identity (build-id, else dev:ino:mtime) under which unwind/ shares tables between
 * processes. The bytes themselves are parsed by cfi.c. */
#include "unwind/unwind_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct elf_cfi {
	Elf_Scn *eh, *dbg;
	uint8_t build_id[64];
	size_t build_id_len;
	char debuglink[256];
} elf_cfi;

static void libelf_init(void)
{
	static bool done;

	if (!done) {
		elf_version(EV_CURRENT);
		done = true;
	}
}

static int scan_sections(Elf *e, elf_cfi *ec, char *err, size_t errlen)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	memset(ec, 0, sizeof(*ec));
	if (elf_kind(e) != ELF_K_ELF) {
		snprintf(err, errlen, "not an ELF file");
		return -EINVAL;
	}
	if (gelf_getclass(e) != ELFCLASS64) {
		snprintf(err, errlen, "not a 64-bit ELF file");
		return -EINVAL;
	}
	if (elf_getshdrstrndx(e, &shstrndx) < 0) {
		snprintf(err, errlen, "ELF: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (sh.sh_type == SHT_NOBITS)
			continue;
		if (!strcmp(name, ".eh_frame")) {
			ec->eh = scn;
		} else if (!strcmp(name, ".debug_frame")) {
			ec->dbg = scn;
		} else if (!strcmp(name, ".gnu_debuglink")) {
			Elf_Data *d = elf_getdata(scn, NULL);

			if (d && d->d_buf && d->d_size > 0)
				snprintf(ec->debuglink, sizeof(ec->debuglink), "%.*s",
					 (int)strnlen(d->d_buf, d->d_size), (const char *)d->d_buf);
		} else if (sh.sh_type == SHT_NOTE) {
			Elf_Data *d = elf_getdata(scn, NULL);
			size_t off = 0, noff, doff;
			GElf_Nhdr nh;

			while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
				if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
				    !memcmp((char *)d->d_buf + noff, "GNU", 4) &&
				    nh.n_descsz <= sizeof(ec->build_id)) {
					memcpy(ec->build_id, (char *)d->d_buf + doff, nh.n_descsz);
					ec->build_id_len = nh.n_descsz;
				}
			}
		}
	}
	return 0;
}

static int parse_scn(Elf_Scn *scn, bool is_eh, dt_ruleset *rs, dt_rows *out, char *err,
		     size_t errlen)
{
	GElf_Shdr sh;
	Elf_Data *d;

	if (!gelf_getshdr(scn, &sh))
		goto bad;
	if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		goto bad;
	d = elf_getdata(scn, NULL);
	if (!d)
		goto bad;
	if (!d->d_buf || d->d_size == 0)
		return 0;
	return dt_cfi_parse(d->d_buf, d->d_size, sh.sh_addr, is_eh, rs, out, err, errlen);
bad:
	snprintf(err, errlen, "%s: %s", is_eh ? ".eh_frame" : ".debug_frame", elf_errmsg(-1));
	return -EINVAL;
}

/* Parses the CFI `e` has: .eh_frame, gaps filled from .debug_frame. *have_dbg says whether a
 * .debug_frame was there (else a separate debug file may hold one). */
static int build_elf(Elf *e, dt_ruleset *rs, dt_rows *out, elf_cfi *ec, bool *have_dbg, char *err,
		     size_t errlen)
{
	dt_rows dbg = {0};
	int ret = scan_sections(e, ec, err, errlen);

	*have_dbg = false;
	if (ret < 0)
		return ret;
	if (ec->eh) {
		ret = parse_scn(ec->eh, true, rs, out, err, errlen);
		if (ret < 0)
			return ret;
	}
	if (ec->dbg) {
		*have_dbg = true;
		ret = parse_scn(ec->dbg, false, rs, &dbg, err, errlen);
		if (ret == 0)
			dt_rows_merge(out, &dbg);
		dt_rows_fini(&dbg);
	}
	return ret;
}

typedef struct mapped {
	int fd;
	void *map;
	size_t size;
	Elf *e;
} mapped;

static int map_open(const char *path, mapped *m, char *err, size_t errlen)
{
	struct stat st;
	int ret;

	libelf_init();
	memset(m, 0, sizeof(*m));
	m->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (m->fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	if (fstat(m->fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		snprintf(err, errlen, "%s: not a regular non-empty file", path);
		ret = -EINVAL;
		goto close_fd;
	}
	m->size = (size_t)st.st_size;
	/* MAP_PRIVATE: libelf may decompress sections in place of the image. */
	m->map = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, m->fd, 0);
	if (m->map == MAP_FAILED) {
		ret = -errno;
		snprintf(err, errlen, "%s: mmap: %s", path, strerror(errno));
		goto close_fd;
	}
	m->e = elf_memory(m->map, m->size);
	if (!m->e) {
		snprintf(err, errlen, "%s: %s", path, elf_errmsg(-1));
		ret = -EINVAL;
		goto unmap;
	}
	return 0;
unmap:
	munmap(m->map, m->size);
close_fd:
	close(m->fd);
	m->fd = -1;
	return ret;
}

static void map_close(mapped *m)
{
	if (m->e)
		elf_end(m->e);
	if (m->map && m->map != MAP_FAILED)
		munmap(m->map, m->size);
	if (m->fd >= 0)
		close(m->fd);
}

/* Merges the .debug_frame of a separate debug file into `out`; *found when it had one. A broken
 * debug file is not the object's fault: its error is reported, the object keeps its own rows. */
static int try_debug_file(const char *path, dt_ruleset *rs, dt_rows *out, bool *found, char *err,
			  size_t errlen)
{
	dt_rows dbg = {0};
	elf_cfi ec;
	mapped m;
	int ret;

	*found = false;
	if (access(path, R_OK) != 0)
		return 0;
	ret = map_open(path, &m, err, errlen);
	if (ret < 0)
		return ret;
	ret = scan_sections(m.e, &ec, err, errlen);
	if (ret == 0 && ec.dbg) {
		*found = true;
		if (parse_scn(ec.dbg, false, rs, &dbg, err, errlen) == 0)
			dt_rows_merge(out, &dbg);
	}
	dt_rows_fini(&dbg);
	map_close(&m);
	return 0;
}

int dt_cfi_build_file(const char *path, dt_ruleset *rs, dt_rows *out, char *err, size_t errlen)
{
	char dpath[PATH_MAX + 64], dir[PATH_MAX];
	bool found;
	elf_cfi ec;
	mapped m;
	size_t i;
	int ret, n;

	ret = map_open(path, &m, err, errlen);
	if (ret < 0)
		return ret;
	dpath[0] = 0;
	ret = build_elf(m.e, rs, out, &ec, &found, dpath, sizeof(dpath));
	if (ret < 0 || out->nbad) {
		/* An error, or the warning about skipped FDEs (out->nbad). */
		snprintf(err, errlen, "%s: %s", path, dpath);
		if (ret < 0)
			goto out;
	}
	if (found)
		goto out;
	/* No .debug_frame in the file itself: a stripped binary with a separate debug file. */
	if (ec.build_id_len >= 2) {
		n = snprintf(dpath, sizeof(dpath), "/usr/lib/debug/.build-id/%02x/", ec.build_id[0]);
		for (i = 1; i < ec.build_id_len; i++)
			n += snprintf(dpath + n, sizeof(dpath) - n, "%02x", ec.build_id[i]);
		snprintf(dpath + n, sizeof(dpath) - n, ".debug");
		ret = try_debug_file(dpath, rs, out, &found, err, errlen);
		if (ret < 0 || found)
			goto out;
	}
	if (ec.debuglink[0] && !strchr(ec.debuglink, '/')) {
		const char *fmts[] = {"%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s"};
		char real[PATH_MAX];
		const char *slash;
		ssize_t rl;

		/* /proc/PID/map_files/… links: the debug link is relative to the real file. */
		rl = readlink(path, real, sizeof(real) - 1);
		if (rl > 0 && real[0] == '/') {
			real[rl] = 0;
			path = real;
		}
		slash = strrchr(path, '/');

		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1,
			 slash ? path : ".");
		for (i = 0; i < DT_ARRAY_SIZE(fmts); i++) {
			snprintf(dpath, sizeof(dpath), fmts[i], dir, ec.debuglink);
			if (!strcmp(dpath, path))
				continue;
			ret = try_debug_file(dpath, rs, out, &found, err, errlen);
			if (ret < 0 || found)
				goto out;
		}
	}
	ret = 0;
out:
	map_close(&m);
	return ret;
}

int dt_cfi_build_mem(const void *buf, size_t size, dt_ruleset *rs, dt_rows *out, char *err,
		     size_t errlen)
{
	void *copy;
	bool found;
	elf_cfi ec;
	Elf *e;
	int ret;

	libelf_init();
	/* libelf may write into the image (decompression), and the caller's buffer is const. */
	copy = xmalloc(size ? size : 1);
	memcpy(copy, buf, size);
	e = elf_memory(copy, size);
	if (!e) {
		snprintf(err, errlen, "ELF: %s", elf_errmsg(-1));
		ret = -EINVAL;
		goto out;
	}
	ret = build_elf(e, rs, out, &ec, &found, err, errlen);
	elf_end(e);
out:
	free(copy);
	return ret;
}

int dt_elf_identity(const char *path, char *id, size_t idlen)
{
	char err[256];
	struct stat st;
	elf_cfi ec;
	mapped m;
	size_t i;
	int n = 0;

	if (stat(path, &st) < 0)
		return -errno;
	if (map_open(path, &m, err, sizeof(err)) == 0) {
		if (scan_sections(m.e, &ec, err, sizeof(err)) == 0 && ec.build_id_len) {
			for (i = 0; i < ec.build_id_len && (size_t)n + 3 < idlen; i++)
				n += snprintf(id + n, idlen - n, "%02x", ec.build_id[i]);
			map_close(&m);
			return 0;
		}
		map_close(&m);
	}
	snprintf(id, idlen, "%llx:%llu:%lld.%09ld", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	return 0;
}

static int segments_of(Elf *e, dt_elf_seg *segs, int max)
{
	size_t i, n;
	int k = 0;

	if (elf_getphdrnum(e, &n) < 0)
		return -EINVAL;
	for (i = 0; i < n && k < max; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		segs[k].vaddr = ph.p_vaddr;
		segs[k].off = ph.p_offset;
		segs[k].filesz = ph.p_filesz;
		segs[k].exec = !!(ph.p_flags & PF_X);
		k++;
	}
	return k;
}

int dt_elf_segments(const char *path, dt_elf_seg *segs, int max)
{
	char err[256];
	mapped m;
	int n;

	n = map_open(path, &m, err, sizeof(err));
	if (n < 0)
		return n;
	n = segments_of(m.e, segs, max);
	map_close(&m);
	return n;
}

int dt_elf_segments_mem(const void *buf, size_t size, dt_elf_seg *segs, int max)
{
	Elf *e;
	int n;

	libelf_init();
	e = elf_memory((char *)buf, size);
	if (!e)
		return -EINVAL;
	n = segments_of(e, segs, max);
	elf_end(e);
	return n;
}
