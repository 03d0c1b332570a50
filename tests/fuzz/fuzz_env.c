/* fuzz_env.c — the fuzzers' fixed world: see fuzz_env.h. */
#include "tests/fuzz/fuzz_env.h"
#include "tests/tools/fake_expand.h"

#include <string.h>

const char *fuzz_tracefs(void)
{
	return DT_FUZZ_TRACEFS;
}

static bool existing(void *ctx, const char *name, const dt_type **key, const dt_type **value)
{
	(void)ctx;
	if (strcmp(name, FUZZ_LIVE_MAP))
		return false;
	*key = dt_type_int(true, 8);
	*value = dt_type_str(16);
	return true;
}

void fuzz_check_opts(dt_check_opts *o)
{
	static const char *params[] = { "42", "str" };

	memset(o, 0, sizeof(*o));
	o->sz = sizeof(*o);
	o->tracefs = fuzz_tracefs();
	o->expand = dt_fake_expand;
	o->ctx = (void *)fuzz_tracefs();
	o->existing_map = existing;
	o->params = params;
	o->nparams = 2;
}
