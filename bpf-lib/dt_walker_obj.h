/* dt_walker_obj.h — the compiled walker (walker.bpf.o) embedded in the binary at build time by
 * bpf-lib/CMakeLists.txt; unwind/ opens it with bpf_object__open_mem. */
#ifndef DT_WALKER_OBJ_H
#define DT_WALKER_OBJ_H

extern const unsigned char dt_walker_bpf_obj[];
extern const unsigned long dt_walker_bpf_obj_len;

#endif
