/* symbols_internal.h — what symbols.c asks of debuginfo.c: finding the symbols and DWARF of a
 * stripped object elsewhere (MiniDebugInfo, separate debug files, a debuginfod server fetched in
 * the background); and what the symbols/ unit tests reach besides symbols.h. Nobody outside
 * symbols/ and its tests includes this. */
#ifndef DT_SYMBOLS_INTERNAL_H
#define DT_SYMBOLS_INTERNAL_H

#include "symbols/symbols.h"

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The GNU build-id of e into id (at most max bytes): its length, or -ENOENT. */
int dt_dbg_build_id(Elf *e, uint8_t *id, size_t max);

/* A separate debug file for the object e (at `path`, NULL for memory images) on this machine:
 * DIR/.build-id/xx/rest.debug, DIR/<object dir>/<debuglink>, DIR/<debuglink> for each of `dirs`
 * and then /usr/lib/debug, then <object dir>/<debuglink> and <object dir>/.debug/<debuglink>.
 * A malloc'd path of a readable file, or NULL. */
char *dt_dbg_find_local(Elf *e, const char *path, const char *const *dirs, size_t ndirs);

/* The decompressed MiniDebugInfo ELF image of e (.gnu_debugdata, xz): 0 with *out malloc'd,
 * -ENOENT if e has none, -EINVAL if it does not decompress. */
int dt_dbg_minidebuginfo(Elf *e, void **out, size_t *out_len);

/* A debuginfod client working in the background; NULL when DEBUGINFOD_URLS is unset or empty. */
typedef struct dt_dbgd dt_dbgd;
dt_dbgd *dt_dbgd_new(void);
void dt_dbgd_free(dt_dbgd *d);
/* Queues a fetch of the debug file of build-id `id` (once per id). Never blocks on the network. */
int dt_dbgd_request(dt_dbgd *d, const uint8_t *id, size_t idn);
/* 0 with *path malloc'd once the file is in the local cache; -EINPROGRESS while the fetch runs;
 * -ENOENT if never requested or the servers do not have it; another -errno on failure. */
int dt_dbgd_result(dt_dbgd *d, const uint8_t *id, size_t idn, char **path);
/* Waits at most timeout_ns for every queued fetch to finish; true if none is left. */
bool dt_dbgd_wait(dt_dbgd *d, uint64_t timeout_ns);

/* How many ELF objects the symbolizer has opened (tests: objects are shared, not per pid). */
size_t dt_sym_objects_loaded(const dt_symbolizer *s);

#endif
