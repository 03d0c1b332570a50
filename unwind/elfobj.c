/* elfobj.c — finding the CFI of an ELF object: its .eh_frame (what the runtime unwinder of C++ and
 * Rust uses, so it is present in nearly every binary), with the gaps filled from its .debug_frame
 * (possibly compressed), or when it has none, from the .debug_frame of its separate debug file
 * (elfproc's one search: --debuginfo dirs, build-id, .gnu_debuglink). The object itself comes from
 * elfproc (opened once, shared with the symbolizer); the bytes are parsed by cfi.c. */
#include "unwind/unwind_internal.h"

#include <errno.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Parses section `name` of e into rows; 0 with nothing added when e has no such section. */
static int parse_section(dt_elf *e, const char *name, bool is_eh, dt_ruleset *rs, dt_rows *out,
			 bool *found, char *err, size_t errlen)
{
	dt_elf_section sec;
	int ret = dt_elf_section_get(e, name, &sec);

	*found = ret == 0;
	if (ret == -ENOENT)
		return 0;
	if (ret < 0) {
		snprintf(err, errlen, "%s: %s", name, elf_errmsg(-1));
		return -EINVAL;
	}
	if (!sec.data || !sec.size)
		return 0;
	return dt_cfi_parse(sec.data, sec.size, sec.addr, is_eh, rs, out, err, errlen);
}

/* Merges e's .debug_frame into out; *found when e had one. */
static int merge_debug_frame(dt_elf *e, dt_ruleset *rs, dt_rows *out, bool *found, char *err,
			     size_t errlen)
{
	dt_rows dbg = {0};
	int ret = parse_section(e, ".debug_frame", false, rs, &dbg, found, err, errlen);

	if (ret == 0)
		dt_rows_merge(out, &dbg);
	dt_rows_fini(&dbg);
	return ret;
}

static int cfi_build(dt_elf_cache *c, dt_elf *e, dt_ruleset *rs, dt_rows *out, char *err,
		     size_t errlen);

/* An object's entry point is where a process that runs it starts: the outermost frame, whose
 * return address the ABI leaves undefined. crt1's _start says so in its CFI; glibc's dynamic
 * loader has none for its own entry (_start, then _dl_start_user up to the jump to the program's
 * entry), so a walk that reached a process's start-up in the loader ended "no CFI and no frame
 * pointer". Where no CFI covers the entry, it ends the stack from there to the next row (at most
 * 256 bytes: the function the entry starts). */
static void entry_is_outermost(dt_elf *e, dt_ruleset *rs, dt_rows *out)
{
	GElf_Ehdr eh;
	struct dt_unwind_rule end_rule = { .cfa_kind = DT_CFA_END };
	int id;

	if (!gelf_getehdr(dt_elf_handle(e), &eh) || !eh.e_entry || eh.e_entry >= UINT32_MAX - 256)
		return;
	uint32_t at = (uint32_t)eh.e_entry, end = at + 256;
	for (uint32_t i = 0; i < out->n; i++)
		if (out->pc[i] > at) {
			end = DT_MIN(end, out->pc[i]);
			break;
		}
	id = dt_ruleset_intern(rs, &end_rule);
	if (id <= 0)
		return;
	uint32_t pc[2] = { at, end };
	uint16_t rule[2] = { (uint16_t)id, 0 };
	dt_rows entry = { .pc = pc, .rule = rule, .n = 2, .cap = 2 };

	dt_rows_merge(out, &entry); /* only where out has no rule */
}

int dt_cfi_build(dt_elf_cache *c, dt_elf *e, dt_ruleset *rs, dt_rows *out, char *err,
		 size_t errlen)
{
	int rc = cfi_build(c, e, rs, out, err, errlen);

	if (rc == 0 && out->n)
		entry_is_outermost(e, rs, out);
	return rc;
}

static int cfi_build(dt_elf_cache *c, dt_elf *e, dt_ruleset *rs, dt_rows *out, char *err,
		     size_t errlen)
{
	char why[512] = "";
	bool found;
	dt_elf *dbg;
	int ret;

	ret = parse_section(e, ".eh_frame", true, rs, out, &found, why, sizeof(why));
	if (ret == 0)
		ret = merge_debug_frame(e, rs, out, &found, why, sizeof(why));
	if (ret < 0 || out->nbad) {
		/* An error, or the warning about skipped FDEs (out->nbad). */
		snprintf(err, errlen, "%s: %s", dt_elf_path(e), why);
		if (ret < 0)
			return ret;
	}
	if (found)
		return 0;
	/* No .debug_frame in the object itself: a stripped binary with a separate debug file. A
	 * broken debug file is not the object's fault: its error is reported, the object keeps its
	 * own rows. */
	dbg = dt_elf_debug_file(c, e);
	if (dbg && merge_debug_frame(dbg, rs, out, &found, why, sizeof(why)) < 0)
		snprintf(err, errlen, "%s: %s", dt_elf_path(dbg), why);
	dt_elf_put(dbg);
	return 0;
}

int dt_cfi_build_file(const char *path, dt_ruleset *rs, dt_rows *out, char *err, size_t errlen)
{
	dt_elf *e = dt_elf_open(NULL, path);
	int ret;

	if (!e) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, dt_elf_strerror(-ret));
		return ret == -ENOEXEC ? -EINVAL : ret;
	}
	ret = dt_cfi_build(NULL, e, rs, out, err, errlen);
	dt_elf_put(e);
	return ret;
}
