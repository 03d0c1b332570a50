/* common.h — helpers shared by the target programs: a CPU burner that stops at a deadline and
 * argument parsing with defaults. Everything here is static inline so that the burning frame is
 * always the caller's own `noinline` function and never a shared helper that would appear in the
 * stacks the tests assert on. */
#ifndef DT_TARGET_COMMON_H
#define DT_TARGET_COMMON_H

#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
/* An empty asm after a call keeps the call from becoming a tail call (the frame must stay). */
#define NO_TAIL() asm volatile("" ::: "memory")

static inline double t_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline double t_arg_double(int argc, char **argv, int i, double def)
{
	return argc > i ? atof(argv[i]) : def;
}

static inline long t_arg_long(int argc, char **argv, int i, long def)
{
	return argc > i ? atol(argv[i]) : def;
}

/* Seconds are capped so that a wrong argument can never make a target hang a test run. */
static inline double t_deadline(double secs)
{
	if (secs > 60)
		secs = 60;
	return t_now() + secs;
}

#endif
