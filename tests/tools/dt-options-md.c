/* dt-options-md — prints the CLI's option table (runtime/cli.c, the one -h prints), or with
 * `env` its environment variables, as the Markdown tables README.md holds;
 * tests/readme_options.sh diffs them. */
#include "runtime/runtime.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "env"))
		dt_cli_env_markdown(stdout);
	else
		dt_cli_options_markdown(stdout);
	return fflush(stdout) ? 1 : 0;
}
