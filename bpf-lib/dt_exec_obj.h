/* dt_exec_obj.h — the compiled exec follower (exec.bpf.o) embedded in the binary at build time by
 * bpf-lib/CMakeLists.txt; unwind/exec.c opens it with bpf_object__open_mem. */
#ifndef DT_EXEC_OBJ_H
#define DT_EXEC_OBJ_H

extern const unsigned char dt_exec_bpf_obj[];
extern const unsigned long dt_exec_bpf_obj_len;

#endif
