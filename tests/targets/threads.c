/* threads — four threads, each in its own known chain, burning CPU for argv[1] seconds:
 * thread k runs worker_k → stage_k → spin (k = 0..3), so a stack ending in spin tells which
 * thread it came from by its middle frame. Threads are named "dtw0".."dtw3" (comm) for filters.
 * Usage: threads [SECONDS]. */
#include "common.h"

#include <pthread.h>
#include <stdio.h>

volatile unsigned long thr_sink;

NOINLINE void spin(double deadline)
{
	while (t_now() < deadline)
		for (int i = 0; i < 100000; i++)
			thr_sink += i;
	NO_TAIL();
}

#define STAGE(k)                                                                                   \
	NOINLINE void stage_##k(double deadline)                                                   \
	{                                                                                          \
		spin(deadline);                                                                    \
		NO_TAIL();                                                                         \
	}                                                                                          \
	NOINLINE void *worker_##k(void *arg)                                                       \
	{                                                                                          \
		pthread_setname_np(pthread_self(), "dtw" #k);                                      \
		stage_##k(*(double *)arg);                                                         \
		NO_TAIL();                                                                         \
		return NULL;                                                                       \
	}

STAGE(0)
STAGE(1)
STAGE(2)
STAGE(3)

int main(int argc, char **argv)
{
	void *(*fns[4])(void *) = { worker_0, worker_1, worker_2, worker_3 };
	double deadline = t_deadline(t_arg_double(argc, argv, 1, 1.0));
	pthread_t th[4];

	for (int i = 0; i < 4; i++)
		if (pthread_create(&th[i], NULL, fns[i], &deadline) != 0) {
			fprintf(stderr, "threads: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	if (getenv("CHAIN_VERBOSE"))
		printf("threads: done\n");
	return 0;
}
