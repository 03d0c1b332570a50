/* dt_watchpoint_obj.h — the compiled watchpoint setup uprobe (watchpoint.bpf.o) embedded in the
 * binary at build time by bpf-lib/CMakeLists.txt; runtime/watchpoint.c opens it with
 * bpf_object__open_mem. */
#ifndef DT_WATCHPOINT_OBJ_H
#define DT_WATCHPOINT_OBJ_H

extern const unsigned char dt_watchpoint_bpf_obj[];
extern const unsigned long dt_watchpoint_bpf_obj_len;

#endif
