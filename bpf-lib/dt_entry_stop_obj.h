/* dt_entry_stop_obj.h — the compiled entry-point stop (entry_stop.bpf.o) embedded in the binary at
 * build time by bpf-lib/CMakeLists.txt; runtime/child.c opens it with bpf_object__open_mem. */
#ifndef DT_ENTRY_STOP_OBJ_H
#define DT_ENTRY_STOP_OBJ_H

extern const unsigned char dt_entry_stop_bpf_obj[];
extern const unsigned long dt_entry_stop_bpf_obj_len;

#endif
