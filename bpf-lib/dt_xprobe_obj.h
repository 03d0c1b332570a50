/* dt_xprobe_obj.h — the compiled xprobe programs (xprobe.bpf.o) embedded in the binary at build
 * time by bpf-lib/CMakeLists.txt; runtime/xprobe.c opens it with bpf_object__open_mem. */
#ifndef DT_XPROBE_OBJ_H
#define DT_XPROBE_OBJ_H

extern const unsigned char dt_xprobe_bpf_obj[];
extern const unsigned long dt_xprobe_bpf_obj_len;

#endif
