/* t.h — the unit-test harness shared by tests/unit/test_*.c: each file is one executable whose
 * main() runs its cases with T_RUN and returns t_done(). A failed CHECK prints file:line and the
 * expression and marks the case failed; t_done() prints "N passed, N failed" and returns non-zero
 * on any failure. Root-only cases call T_SKIP_UNLESS_ROOT(). */
#ifndef DT_T_H
#define DT_T_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int t_passed, t_failed, t_skipped, t_case_failed;
static const char *t_case_name;

#define CHECK(cond)                                                                          \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "%s:%d: %s: CHECK failed: %s\n", __FILE__, __LINE__,    \
				t_case_name, #cond);                                         \
			t_case_failed = 1;                                                   \
		}                                                                            \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                                   \
	do {                                                                                 \
		long long _a = (long long)(a), _b = (long long)(b);                          \
		if (_a != _b) {                                                              \
			fprintf(stderr, "%s:%d: %s: CHECK_EQ_INT failed: %s == %lld, %s == %lld\n", \
				__FILE__, __LINE__, t_case_name, #a, _a, #b, _b);            \
			t_case_failed = 1;                                                   \
		}                                                                            \
	} while (0)

#define CHECK_EQ_STR(a, b)                                                                   \
	do {                                                                                 \
		const char *_a = (a), *_b = (b);                                             \
		if (!_a || !_b || strcmp(_a, _b) != 0) {                                     \
			fprintf(stderr, "%s:%d: %s: CHECK_EQ_STR failed:\n  got:      %s\n  expected: %s\n", \
				__FILE__, __LINE__, t_case_name, _a ? _a : "(null)",         \
				_b ? _b : "(null)");                                         \
			t_case_failed = 1;                                                   \
		}                                                                            \
	} while (0)

/* Skips the current case (counted as skipped) unless running as root. */
#define T_SKIP_UNLESS_ROOT()                                                                 \
	do {                                                                                 \
		if (geteuid() != 0) {                                                        \
			t_case_failed = -1;                                                  \
			return;                                                              \
		}                                                                            \
	} while (0)

#define T_RUN(fn)                                                                            \
	do {                                                                                 \
		t_case_name = #fn;                                                           \
		t_case_failed = 0;                                                           \
		fn();                                                                        \
		if (t_case_failed < 0)                                                       \
			t_skipped++;                                                         \
		else if (t_case_failed)                                                      \
			t_failed++;                                                          \
		else                                                                         \
			t_passed++;                                                          \
	} while (0)

static inline int t_done(void)
{
	printf("%d passed, %d failed, %d skipped\n", t_passed, t_failed, t_skipped);
	return t_failed ? 1 : 0;
}

#endif
