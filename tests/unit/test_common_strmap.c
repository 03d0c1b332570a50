/* test_common_strmap.c — dt_strmap (common.h): values come back under their names across growth,
 * a put replaces, a NULL value reads as absent, and names that differ in one byte stay apart. */
#include "common/common.h"
#include "t.h"

#include <stdio.h>
#include <stdlib.h>

static void many_names_grow_and_find(void)
{
	enum { N = 5000 };
	static char names[N][16];
	dt_strmap m = { 0 };

	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "@m%d", i);
		dt_strmap_put(&m, names[i], &names[i]);
	}
	CHECK_EQ_INT(m.n, N);
	for (int i = 0; i < N; i++) {
		char key[16];

		snprintf(key, sizeof(key), "@m%d", i); /* another copy: found by content */
		CHECK(dt_strmap_get(&m, key) == &names[i]);
	}
	CHECK(dt_strmap_get(&m, "@m") == NULL);
	CHECK(dt_strmap_get(&m, "@m5000") == NULL);
	dt_strmap_fini(&m);
	CHECK(dt_strmap_get(&m, "@m1") == NULL);
}

static void put_replaces_and_null_is_absent(void)
{
	dt_strmap m = { 0 };
	int a, b;

	CHECK(dt_strmap_get(&m, "x") == NULL);
	dt_strmap_put(&m, "x", &a);
	dt_strmap_put(&m, "x", &b);
	CHECK(dt_strmap_get(&m, "x") == &b);
	CHECK_EQ_INT(m.n, 1);
	dt_strmap_put(&m, "x", NULL);
	CHECK(dt_strmap_get(&m, "x") == NULL);
	dt_strmap_put(&m, "x", &a);
	CHECK(dt_strmap_get(&m, "x") == &a);
	dt_strmap_fini(&m);
}

int main(void)
{
	T_RUN(many_names_grow_and_find);
	T_RUN(put_replaces_and_null_is_absent);
	return t_done();
}
