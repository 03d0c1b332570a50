/* py_embed.c — a C program that embeds CPython through libpython3.N.so: main -> embed_run -> the
 * interpreter running tests/targets/python/pyprog.py (argv[1]) with MODE and SECS (argv[2..3]).
 * ustack_dwarf must find the interpreter in a library this program maps, not in a python3.N
 * executable, and interleave: C (main, embed_run), the interpreter, Python (pyprog's chain). */
#include <Python.h>
#include <stdio.h>

static int __attribute__((noinline)) embed_run(const char *path, const char *mode, const char *secs)
{
	char code[4096];
	int rc;

	snprintf(code, sizeof(code),
		 "import sys\n"
		 "sys.argv = ['%s', '%s', '%s']\n"
		 "src = open(sys.argv[0]).read()\n"
		 "exec(compile(src, sys.argv[0], 'exec'), {'__name__': '__main__'})\n",
		 path, mode, secs);
	Py_Initialize();
	rc = PyRun_SimpleString(code);
	if (Py_FinalizeEx() < 0)
		rc = 1;
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s PYPROG.PY [MODE [SECS]]\n", argv[0]);
		return 2;
	}
	return embed_run(argv[1], argc > 2 ? argv[2] : "chain", argc > 3 ? argv[3] : "3") ? 1 : 0;
}
