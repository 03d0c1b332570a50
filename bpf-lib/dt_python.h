/* dt_python.h — the contract for CPython frames in ustack_dwarf: what unwind/python.c tells the
 * walker about a CPython process, how the walker's Python step (bpf-lib/walker.bpf.c,
 * dt_walk_py_SFX) writes Python frames into a stack, and the code-object records it leaves for
 * userspace to name them. Included by the BPF C and by unwind/; layouts are static-asserted.
 *
 * PROTOCOL (an addition to dt_walker.h's: entry -> walker runs -> [Python step] -> continuation)
 *
 *   1. unwind/ recognises a CPython process by what it maps (a `python3.N` executable or a
 *      `libpython3.N.so`, embedded or not), finds `_PyRuntime` and `_PyEval_EvalFrameDefault`
 *      in its dynamic symbols, and the structure offsets for its version (struct
 *      dt_py_offsets: `_Py_DebugOffsets` on 3.13+, DWARF, or the table of known releases), and
 *      writes struct dt_py_proc under the tgid in `pyprocs`, with the range of the loop's
 *      `.cold` part (GCC's unlikely blocks) when a symbol table names it.
 *   2. When the native walk is over, a walk of a process in `pyprocs` (and not asked for native
 *      frames only, DT_WALKER_NATIVE_ONLY) tail-calls DT_WALKER_SLOT_PY instead of storing
 *      (loaded only when needed: docs/DESIGN.md; empty, the native frames are stored).
 *   3. The Python step finds the thread's PyThreadState: `pythreads` caches tid -> tstate, checked
 *      on every use by tstate->thread_id == the thread's fs base (pthread_self(), which is what
 *      CPython stores there; unlike native_thread_id it needs no pid-namespace translation and
 *      exists on 3.10 too); on a miss, _PyRuntime.interpreters.head -> threads.head -> next.
 *   4. It rewrites the native frames in place, leaf first: each native frame whose pc is inside
 *      `_PyEval_EvalFrameDefault` (or its `.cold` part) is replaced by the interpreter frames that C frame runs — from
 *      the thread's current frame along `previous`, up to and including the first entry frame
 *      (3.11: is_entry; 3.12+: the owner == FRAME_OWNED_BY_CSTACK shim, which is not shown;
 *      3.10: one PyFrameObject per C frame).
 *      So a C extension calling back into Python reads Python, C, Python in true order. An
 *      evaluation frame with no interpreter frame left stays as it is.
 *   5. A Python frame is one word of the stack: DT_PY_FRAME_BIT | lasti << 48 | code object
 *      address (user addresses are below 2^47). The first time (pid, code object) is seen the
 *      step copies its name, file name, first line and line table into `pycode`, so names
 *      outlive the process; userspace computes the line from the table and lasti. A table
 *      longer than DT_PY_LT_MAX takes more records (key.part 1, 2, …, at most DT_PY_LT_PARTS),
 *      written before part 0, which marks the code object as seen.
 *   6. The step then stores the frames and tail-calls the continuation, as the walker does.
 *
 * Lazy maps: `pycode` and `pythreads` are LRU maps, which the kernel preallocates (about
 * 6.8 MB), so each is the one slot of an array of maps that unwind/python.c fills when it first
 * sees a CPython process; until then (and in a session that never sees one) the step has no
 * map to read and `pyprocs` (allocated per entry) is empty, so the step never runs.
 *
 * Counters: DT_WSTAT_PY_* in dt_walker.h's table.
 */
#ifndef DT_PYTHON_H
#define DT_PYTHON_H

#include "dt_abi.h"

#define DT_PY_FRAME_BIT (1ull << 63)
#define DT_PY_ADDR_MASK ((1ull << 48) - 1)
#define DT_PY_LASTI_SHIFT 48
#define DT_PY_LASTI_MAX 0x7fffu /* a larger instruction index is saturated (line unknown) */
#define DT_PY_IS_FRAME(w) (((w) & DT_PY_FRAME_BIT) != 0)
#define DT_PY_CODE_OF(w) ((w) & DT_PY_ADDR_MASK)
#define DT_PY_LASTI_OF(w) ((__u32)(((w) >> DT_PY_LASTI_SHIFT) & DT_PY_LASTI_MAX))

#define DT_PY_MAX_PROCS 1024      /* pyprocs entries */
#define DT_PY_MAX_CODES 4096      /* pycode entries (LRU) */
#define DT_PY_THREAD_SCAN 256     /* interpreter + thread-state steps when looking up a tstate */
#define DT_PY_NAME_MAX 128        /* bytes of a code object's name kept */
#define DT_PY_FILE_MAX 256        /* bytes of its file name kept */
#define DT_PY_LT_MAX 1024         /* bytes of its line table in one pycode record */
#define DT_PY_LT_PARTS 32         /* records a line table may take: longer tables lose their end */
#define DT_PY_MAX_THREADS 8192    /* pythreads entries (LRU) */

/* How the interpreter's frames are laid out. */
enum dt_py_layout {
	DT_PY_LAYOUT_NONE = 0,
	/* 3.11: tstate->cframe->current_frame; the frame a C eval call entered has is_entry. */
	DT_PY_LAYOUT_311 = 1,
	/* 3.12: tstate->cframe->current_frame; a C eval call pushes a shim frame with
	 * owner == owner_cstack. */
	DT_PY_LAYOUT_312 = 2,
	/* 3.13+: tstate->current_frame (tstate_cframe is its offset, cframe_current_frame 0), the
	 * shim as in 3.12, f_executable for f_code. */
	DT_PY_LAYOUT_313 = 3,
	/* 3.10: tstate->frame (tstate_cframe is its offset), a PyFrameObject chain along f_back;
	 * each C eval call runs exactly one frame; frame_instr is the int f_lasti (code units);
	 * the line table is 3.10's (byte-offset delta, line delta) pairs. */
	DT_PY_LAYOUT_310 = 4,
};

/* Byte offsets into the interpreter's structures (x86-64). */
struct dt_py_offsets {
	__u16 layout;               /* enum dt_py_layout */
	__u16 runtime_interp_head;  /* _PyRuntimeState.interpreters.head */
	__u16 interp_next;          /* PyInterpreterState.next */
	__u16 interp_threads_head;  /* PyInterpreterState.threads.head */
	__u16 tstate_next;          /* PyThreadState.next */
	__u16 tstate_thread_id;     /* PyThreadState.thread_id (pthread_self()) */
	__u16 tstate_cframe;        /* PyThreadState.cframe (3.13: .current_frame) */
	__u16 cframe_current_frame; /* _PyCFrame.current_frame (3.13: 0, unused) */
	__u16 frame_code;           /* _PyInterpreterFrame.f_code / f_executable */
	__u16 frame_previous;       /* .previous */
	__u16 frame_instr;          /* .prev_instr (3.13: .instr_ptr; 3.10: int f_lasti) */
	__u16 frame_entry;          /* .is_entry (3.11) or .owner (3.12+), one byte */
	__u16 code_firstlineno;     /* PyCodeObject.co_firstlineno (int) */
	__u16 code_filename;        /* .co_filename */
	__u16 code_name;            /* .co_name */
	__u16 code_linetable;       /* .co_linetable (bytes) */
	__u16 code_adaptive;        /* .co_code_adaptive: instruction 0 */
	__u16 bytes_size;           /* PyVarObject.ob_size */
	__u16 bytes_data;           /* PyBytesObject.ob_sval */
	__u16 str_length;           /* PyASCIIObject.length */
	__u16 str_state;            /* PyASCIIObject.state (kind bits 2-4, compact 5, ascii 6) */
	__u16 str_ascii_data;       /* sizeof(PyASCIIObject): a compact ASCII string's text */
	__u16 str_compact_data;     /* sizeof(PyCompactUnicodeObject): other compact strings' */
	__u8 owner_cstack;          /* 3.12+: the shim frame's owner */
	__u8 pad;
};
DT_ABI_ASSERT(sizeof(struct dt_py_offsets) == 48, "dt_py_offsets");

/* Value of pyprocs (key: tgid). */
struct dt_py_proc {
	__u64 runtime;              /* address of _PyRuntime */
	__u64 eval_start, eval_end; /* _PyEval_EvalFrameDefault: [start, end) in the process */
	__u64 cold_start, cold_end; /* its .cold part (GCC's unlikely blocks), [0, 0) if unknown */
	__u32 version;              /* PY_VERSION_HEX, for messages */
	__u32 pad;
	struct dt_py_offsets off;
};
DT_ABI_ASSERT(sizeof(struct dt_py_proc) == 48 + 48, "dt_py_proc");

/* Key of pycode. */
struct dt_py_code_key {
	__u32 pid;
	__u32 part;                 /* 0: names and the line table's start; k: its bytes from
				     * k * DT_PY_LT_MAX */
	__u64 code;                 /* the code object's address */
};
DT_ABI_ASSERT(sizeof(struct dt_py_code_key) == 16, "dt_py_code_key");

/* Value of pycode: what names a code object, copied while the process lives. Strings are raw
 * PEP 393 text: `kind` bytes per character (1: Latin-1, ASCII when ascii; 2: UCS-2; 4: UCS-4). */
struct dt_py_code {
	__s32 firstlineno;
	__u32 lt_len;               /* line table bytes in lt */
	__u32 lt_total;             /* the table's size in the process (part 0) */
	__u16 name_len, file_len;   /* bytes copied */
	__u8 name_kind, file_kind;
	__u8 layout;                /* enum dt_py_layout: which line-table format lt holds */
	__u8 pad[5];
	char name[DT_PY_NAME_MAX];
	char file[DT_PY_FILE_MAX];
	__u8 lt[DT_PY_LT_MAX];
};
DT_ABI_ASSERT(sizeof(struct dt_py_code) == 24 + DT_PY_NAME_MAX + DT_PY_FILE_MAX + DT_PY_LT_MAX,
	      "dt_py_code");

#endif
