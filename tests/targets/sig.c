/* sig — stacks through a signal frame: main → sig_loop raises SIGUSR1 over and over, and the
 * handler sig_handler → sig_work burns CPU, so samples land in sig_work with the kernel's signal
 * trampoline (__restore_rt) between the handler and sig_loop. With argv[2] == "alt" the handler
 * runs on a sigaltstack, which an unwinder must cross back to the thread's stack.
 * Usage: sig [SECONDS [alt]]. */
#include "common.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

volatile unsigned long sig_sink;

NOINLINE void sig_work(void)
{
	for (int i = 0; i < 200000; i++)
		sig_sink += i;
	NO_TAIL();
}

NOINLINE void sig_handler(int signo)
{
	sig_work();
	NO_TAIL();
}

NOINLINE void sig_loop(double deadline)
{
	while (t_now() < deadline)
		raise(SIGUSR1);
	NO_TAIL();
}

int main(int argc, char **argv)
{
	static char altstack[64 * 1024];
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sig_handler;
	if (argc > 2 && strcmp(argv[2], "alt") == 0) {
		stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };

		if (sigaltstack(&ss, NULL) != 0) {
			perror("sigaltstack");
			return 1;
		}
		sa.sa_flags |= SA_ONSTACK;
	}
	if (sigaction(SIGUSR1, &sa, NULL) != 0) {
		perror("sigaction");
		return 1;
	}
	sig_loop(t_deadline(t_arg_double(argc, argv, 1, 1.0)));
	if (getenv("CHAIN_VERBOSE"))
		printf("sig: done\n");
	return 0;
}
