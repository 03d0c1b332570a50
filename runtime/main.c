/* main.c — the dwarftrace executable: everything is in the runtime library (cli.c), so tests and
 * the REPL share it; this file only hands over argv. */
#include "runtime/runtime.h"

int main(int argc, char **argv)
{
	return dt_cli_main(argc, argv);
}
