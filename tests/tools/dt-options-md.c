/* dt-options-md — prints the CLI's option table (runtime/cli.c, the one -h prints) as the
 * Markdown table README.md holds; tests/readme_options.sh diffs the two. */
#include "runtime/runtime.h"

#include <stdio.h>

int main(void)
{
	dt_cli_options_markdown(stdout);
	return fflush(stdout) ? 1 : 0;
}
