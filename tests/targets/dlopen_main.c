/* dlopen_main — waits argv[2] milliseconds, then dlopens libdlt.so (from the directory of its own
 * executable, or $DLT_LIB) and calls dlt_entry, which burns CPU for argv[1] seconds and then calls
 * dlt_tick argv[3] times: main → call_lib → dlt_entry → dlt_mid → dlt_burn.
 * Usage: dlopen_main [SECONDS [DELAY_MS [TICKS]]]. */
#include "common.h"

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

NOINLINE int call_lib(void (*entry)(double, int), double secs, int ticks)
{
	entry(t_deadline(secs), ticks);
	NO_TAIL();
	return 0;
}

int main(int argc, char **argv)
{
	double secs = t_arg_double(argc, argv, 1, 1.0);
	long delay_ms = t_arg_long(argc, argv, 2, 0);
	long ticks = t_arg_long(argc, argv, 3, 0);
	char exe[PATH_MAX], lib[PATH_MAX + 16];
	const char *env = getenv("DLT_LIB");
	void (*entry)(double, int);
	void *h;
	ssize_t n;

	if (env) {
		snprintf(lib, sizeof(lib), "%s", env);
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0) {
			perror("readlink /proc/self/exe");
			return 1;
		}
		exe[n] = '\0';
		snprintf(lib, sizeof(lib), "%s/libdlt.so", dirname(exe));
	}
	if (delay_ms > 0 && delay_ms < 60000)
		usleep(delay_ms * 1000);
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen_main: %s\n", dlerror());
		return 1;
	}
	*(void **)&entry = dlsym(h, "dlt_entry");
	if (!entry) {
		fprintf(stderr, "dlopen_main: %s\n", dlerror());
		return 1;
	}
	call_lib(entry, secs, (int)ticks);
	if (getenv("CHAIN_VERBOSE"))
		printf("dlopen_main: done\n");
	dlclose(h);
	return 0;
}
