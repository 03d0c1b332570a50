/* interop/lib.bpf.c — a C file the interop_* golden tests import (never compiled by them). */
int add_one(int v)
{
	return v + 1;
}
