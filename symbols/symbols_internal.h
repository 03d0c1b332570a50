/* symbols_internal.h — what symbols.c asks of debuginfo.c: finding the symbols and DWARF of a
 * stripped object elsewhere (MiniDebugInfo, a debuginfod server fetched in the background); and
 * what the symbols/ unit tests reach besides symbols.h. Nobody outside symbols/ and its tests
 * includes this. */
#ifndef DT_SYMBOLS_INTERNAL_H
#define DT_SYMBOLS_INTERNAL_H

#include "symbols/symbols.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The MiniDebugInfo of e (.gnu_debugdata, an xz-compressed ELF image) as an object of its own,
 * or NULL with errno ENOENT if e has none, EINVAL if it does not decompress. */
dt_elf *dt_dbg_minidebuginfo(dt_elf *e);

/* A .dwp package of split DWARF units (dwp.c): NULL when `path` is none. dt_dwp_unit gives the
 * unit DIE of the split unit whose id (the skeleton's dwo_id) is `id`, valid until the close:
 * 0, or -ENOENT when the package has no such unit. */
struct dt_dwp *dt_dwp_open(const char *path);
int dt_dwp_unit(struct dt_dwp *p, uint64_t id, Dwarf_Die *die);
void dt_dwp_close(struct dt_dwp *p);

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

/* Whether `tail` is the whole last components of `path` ("./" at its start left out). */
bool dt_sym_path_ends_with(const char *path, const char *tail);

/* How many ELF objects the symbolizer has opened (tests: objects are shared, not per pid). */
size_t dt_sym_objects_loaded(const dt_symbolizer *s);

#endif
