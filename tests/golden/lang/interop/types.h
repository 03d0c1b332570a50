/* interop/types.h — a header the interop_* golden tests import. */
struct point { int x, y; };
