/* fuzz_env.c — the fuzzers' fixed world: see fuzz_env.h. */
#include "tests/fuzz/fuzz_env.h"
#include "tests/tools/fake_expand.h"

#include <errno.h>
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

/* Definitions are accepted as they are: the fake type source knows FUZZ_CSTRUCT_DEF's type. */
static int fake_cdefs(void *ctx, dt_arena *a, dt_diags *d, const dt_program *p)
{
	(void)ctx, (void)a, (void)d, (void)p;
	return 0;
}

static int fake_ctype(void *ctx, dt_arena *a, const char *name, const dt_type **out)
{
	(void)ctx;
	if (strcmp(name, FUZZ_CSTRUCT))
		return -ENOENT;
	dt_type *anon = dt_type_cstruct(a, "struct (anonymous)", false);
	anon->cstruct.members = dt_arena_alloc(a, sizeof(dt_member));
	anon->cstruct.members[0] = (dt_member){ .name = "d", .type = dt_type_int(true, 2) };
	anon->cstruct.n = 1;
	anon->size = anon->align = 2;
	anon->cstruct.complete = true;
	dt_type *s = dt_type_cstruct(a, FUZZ_CSTRUCT, false);
	s->cstruct.members = dt_arena_alloc(a, 4 * sizeof(dt_member));
	s->cstruct.members[0] = (dt_member){ .name = "a", .type = dt_type_int(true, 4) };
	s->cstruct.members[1] = (dt_member){ .name = "b", .type = dt_type_int(false, 1),
					     .offset = 4, .bit_size = 3 };
	s->cstruct.members[2] = (dt_member){ .name = "c", .offset = 8,
					     .type = dt_type_array(a, dt_type_int(true, 8), 2) };
	s->cstruct.members[3] = (dt_member){ .name = "", .type = anon, .offset = 24 };
	s->cstruct.n = 4;
	s->size = 32;
	s->align = 8;
	s->cstruct.complete = true;
	*out = s;
	return 0;
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
	o->ctype = fake_ctype;
	o->cdefs = fake_cdefs;
}
