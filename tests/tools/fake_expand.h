/* fake_expand.h — wildcard expansion for dt_check against a tracefs directory rather than the
 * machine: tracepoint wildcards match its events/SUBSYS/EVENT directories, kprobe wildcards the
 * lines of its available_filter_functions. The golden tests (dt-langdump) and the fuzzers check
 * scripts against tests/golden/lang/tracefs with it, so their results do not depend on the
 * machine. */
#ifndef DT_FAKE_EXPAND_H
#define DT_FAKE_EXPAND_H

#include "lang/lang.h"

/* A dt_check_opts.expand: `ctx` is the tracefs root (NULL: /sys/kernel/tracing). The names come
 * sorted, so the output is stable whatever order readdir gives. -ENOTSUP for other providers. */
int dt_fake_expand(void *ctx, const dt_attach *a, char ***names, uint32_t *n);

#endif
